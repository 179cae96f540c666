/* dump.c - the readable text form of a graph (kf_graph_dump), one line per
 * value, then the outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "ir/graph.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "ir/shape.h"

typedef core_str sbuf;
#define sb_printf core_str_printf

static void sb_number(sbuf *b, double v) {
  if (isinf(v)) {
    sb_printf(b, v < 0 ? "-inf" : "inf");
    return;
  }
  if (isnan(v)) {
    sb_printf(b, "nan");
    return;
  }
  char tmp[40];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (strtod(tmp, NULL) == v) break;
  }
  sb_printf(b, "%s", tmp);
}

static void sb_value(sbuf *b, const kf_graph *g, kf_value v) {
  char label[300];
  sb_printf(b, "%s", ir_node_label(g, v, label, sizeof label));
}

static void dump_attrs(sbuf *b, const kf_graph *g, const ir_node *n) {
  if (n->op == IR_OP_CLAMP) {
    if (!isinf(n->lo) || n->lo > 0) {
      sb_printf(b, " min=");
      sb_number(b, n->lo);
    }
    if (!isinf(n->hi) || n->hi < 0) {
      sb_printf(b, " max=");
      sb_number(b, n->hi);
    }
  } else if (n->op == IR_OP_TRANSPOSE) {
    sb_printf(b, " perm=[");
    for (int i = 0; i < n->rank; i++) sb_printf(b, i ? ",%d" : "%d", n->perm[i]);
    sb_printf(b, "]");
  } else if (n->op == IR_OP_SLICE) {
    sb_printf(b, " axis=%d start=%lld step=%lld", n->axis, (long long)n->start, (long long)n->step);
  } else if (n->op == IR_OP_CONCAT || n->op == IR_OP_GATHER || n->op == IR_OP_IOTA) {
    sb_printf(b, " axis=%d", n->axis);
  } else if (ir_ops[n->op].kind == KIND_REDUCE) {
    int in_rank = ir_valid(g, n->args[0]) ? g->nodes[n->args[0]].rank : KF_MAX_RANK;
    sb_printf(b, " axes=[");
    for (int i = 0, k = 0; i < in_rank; i++)
      if (n->axes & (1u << i)) sb_printf(b, k++ ? ",%d" : "%d", i);
    sb_printf(b, "] keepdim=%s", n->keepdim ? "true" : "false");
  }
}

static void dump_node(sbuf *b, const kf_graph *g, kf_value v) {
  const ir_node *n = &g->nodes[v];
  char shape[8 * 21 + 3];
  sb_value(b, g, v);
  sb_printf(b, ": %s%s = ", kf_dtype_name(n->dtype),
            ir_shape_str(shape, sizeof shape, n->rank, n->shape));
  if ((unsigned)n->op >= IR_OP_COUNT) {
    sb_printf(b, "?\n");
    return;
  }
  sb_printf(b, "%s", ir_ops[n->op].name);
  if (n->op == IR_OP_CONST) {
    sb_printf(b, " ");
    sb_number(b, n->value);
  } else if (n->op != IR_OP_INPUT) {
    sb_printf(b, "(");
    for (int i = 0; i < n->nargs && i < 3; i++) {
      if (i) sb_printf(b, ", ");
      sb_value(b, g, n->args[i]);
    }
    sb_printf(b, ")");
    dump_attrs(b, g, n);
  }
  sb_printf(b, "\n");
}

char *kf_graph_dump(const kf_graph *g) {
  sbuf b = {0};
  if (!g) {
    sb_printf(&b, "(null graph)\n");
    return core_str_take(&b);
  }
  for (kf_value v = 0; v < g->n_nodes; v++) dump_node(&b, g, v);
  sb_printf(&b, "outputs:");
  for (int32_t i = 0; i < g->n_outputs; i++) {
    sb_printf(&b, i ? ", " : " ");
    sb_value(&b, g, g->outputs[i]);
  }
  sb_printf(&b, "\n");
  if (g->status != KF_OK) sb_printf(&b, "error: %s: %s\n", kf_status_name(g->status), g->errmsg);
  return core_str_take(&b);
}
