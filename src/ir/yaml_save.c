/* yaml_save.c - kf_graph_to_yaml / kf_graph_save_yaml: writes a graph as a
 * version-1 graph file that loads back to the same structural hash. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/strbuf.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ir.h"
#include "ir/names.h"
#include "ir/ops.h"
#include "ir/yaml_scalar.h"
#include "ir/yaml_tree.h"

typedef core_str sbuf;
#define put core_str_printf

/* The state of one save: the names every value is written under, and which
 * constants are written inline as number literals. */
typedef struct saver {
  const kf_graph *g;
  char **gen;   /* generated names of unnamed values (NULL where named) */
  bool *inl;    /* constant written as a literal in its one consumer */
  sbuf out;
} saver;

static const char *vname(const saver *s, int32_t v) {
  return s->g->nodes[v].name ? s->g->nodes[v].name : s->gen[v];
}

/* The shortest text that reads back (and, for a dtype, rounds back) to v. */
static void fmt_number(char *buf, size_t size, double v, kf_dtype dt, bool rounds) {
  if (isnan(v)) {
    snprintf(buf, size, ".nan");
    return;
  }
  if (isinf(v)) {
    snprintf(buf, size, v < 0 ? "-.inf" : ".inf");
    return;
  }
  /* Such a constant loads only from plain digits, and -2^63's shortest text
   * (-9.2234e+18, which rounds to it) would be out of the i64 range. */
  if (ir_yl_digits_only(v, dt) && fabs(v) <= 9223372036854775808.0 && v == floor(v)) {
    snprintf(buf, size, "%.0f", v);
    return;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, size, "%.*g", p, v);
    double r = strtod(buf, NULL);
    if (rounds) r = ir_round_to_dtype(r, dt);
    if (r == v && signbit(r) == signbit(v)) return;
  }
  snprintf(buf, size, "%.17g", v);
}

/* A name read back as a literal unless quoted: plain true/false in args. */
static bool needs_quotes(const char *name) {
  static const char *const words[] = {"true", "True", "TRUE", "false", "False", "FALSE"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (!strcmp(name, words[i])) return true;
  return false;
}

/* ---- which constants go inline -------------------------------------------- */

static bool inline_candidate(const kf_graph *g, int32_t c, kf_dtype want) {
  const ir_node *n = &g->nodes[c];
  return n->op == IR_OP_CONST && n->uses == 1 && !n->name && !n->is_output && n->rank == 0 &&
         n->dtype == want;
}

/* The loader makes a node's literals as scalars, in argument order, right
 * before the node; only constants that sit exactly there go inline, so that
 * the reloaded graph has the same nodes in the same order. */
static void plan_inline(saver *s, int32_t k) {
  const kf_graph *g = s->g;
  const ir_node *n = &g->nodes[k];
  int first = n->op == IR_OP_WHERE ? 1 : 0;
  kf_dtype peer = KF_DTYPE_COUNT;
  bool cand[3] = {false, false, false};
  for (int i = first; i < n->nargs && peer == KF_DTYPE_COUNT; i++)
    if (g->nodes[n->args[i]].op != IR_OP_CONST) peer = g->nodes[n->args[i]].dtype;
  if (peer == KF_DTYPE_COUNT) return; /* all constants: the loader wants a tensor */
  int m = 0;
  for (int i = 0; i < n->nargs; i++) {
    cand[i] = inline_candidate(g, n->args[i], i < first ? KF_BOOL : peer);
    m += cand[i];
  }
  int32_t at = k - m;
  for (int i = 0; i < n->nargs; i++)
    if (cand[i] && n->args[i] != at++) return;
  for (int i = 0; i < n->nargs; i++)
    if (cand[i]) s->inl[n->args[i]] = true;
}

static bool make_names(saver *s) {
  const kf_graph *g = s->g;
  for (int32_t v = 0; v < g->n_nodes; v++) {
    if (g->nodes[v].name || s->inl[v]) continue;
    char buf[48];
    snprintf(buf, sizeof buf, "t%d", v);
    for (int k = 1; ir_names_find(g, buf) >= 0; k++) snprintf(buf, sizeof buf, "t%d_%d", v, k);
    s->gen[v] = core_strdup(buf);
    if (!s->gen[v]) return false;
  }
  return true;
}

/* ---- writing ----------------------------------------------------------------- */

static void put_ints(sbuf *b, int count, const int64_t *v) {
  put(b, "[");
  for (int i = 0; i < count; i++) put(b, "%s%lld", i ? ", " : "", (long long)v[i]);
  put(b, "]");
}

/* Decodes one UTF-8 character at p; its length, or 0 when invalid. */
static int utf8_char(const unsigned char *p, uint32_t *cp) {
  int len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC0 ? 2 : 0;
  if (p[0] >= 0xF8 || len == 0) return 0;
  uint32_t c = p[0] & (0x7Fu >> len);
  for (int i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (p[i] & 0x3Fu);
  }
  static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < min[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return len;
}

/* A graph name: plain when it is a simple word, else double-quoted; text
 * YAML may not hold raw is escaped, invalid UTF-8 becomes U+FFFD. */
static void put_graph_name(sbuf *b, const char *name) {
  if (ir_name_valid(name) && !needs_quotes(name)) {
    put(b, "name: %s\n", name);
    return;
  }
  put(b, "name: \"");
  for (const unsigned char *p = (const unsigned char *)name; *p;) {
    uint32_t c;
    int len;
    if (*p == '"' || *p == '\\') {
      put(b, "\\%c", *p++);
    } else if (*p < 0x20 || *p == 0x7f) {
      put(b, "\\x%02X", *p++);
    } else if (*p < 0x80) {
      put(b, "%c", *p++);
    } else if ((len = utf8_char(p, &c)) == 0) {
      put(b, "\\uFFFD");
      p++;
    } else if (c < 0xA0 || c == 0xFEFF || c > 0xFFFD) {
      put(b, c > 0xFFFF ? "\\U%08X" : "\\u%04X", (unsigned)c);
      p += len;
    } else {
      put(b, "%.*s", len, (const char *)p);
      p += len;
    }
  }
  put(b, "\"\n");
}

static void put_arg(saver *s, int32_t a) {
  const ir_node *n = &s->g->nodes[a];
  if (s->inl[a]) {
    char num[40];
    if (n->dtype == KF_BOOL)
      snprintf(num, sizeof num, "%s", n->value != 0 ? "true" : "false");
    else
      fmt_number(num, sizeof num, n->value, n->dtype, true);
    put(&s->out, "%s", num);
  } else if (needs_quotes(vname(s, a))) {
    put(&s->out, "\"%s\"", vname(s, a));
  } else {
    put(&s->out, "%s", vname(s, a));
  }
}

static void put_attrs(saver *s, const ir_node *n) {
  sbuf *b = &s->out;
  uint32_t attrs = ir_ops[n->op].attrs;
  char num[40];
  if (attrs & ATTR_DTYPE) put(b, ", dtype: %s", kf_dtype_name(n->dtype));
  if ((attrs & ATTR_MIN) && !(isinf(n->lo) && n->lo < 0)) {
    fmt_number(num, sizeof num, n->lo, KF_F64, false);
    put(b, ", min: %s", num);
  }
  if ((attrs & ATTR_MAX) && !(isinf(n->hi) && n->hi > 0)) {
    fmt_number(num, sizeof num, n->hi, KF_F64, false);
    put(b, ", max: %s", num);
  }
  if (attrs & ATTR_AXES) {
    int in_rank = s->g->nodes[n->args[0]].rank, count = 0;
    int64_t axes[KF_MAX_RANK];
    for (int i = 0; i < in_rank; i++)
      if (n->axes & (1u << i)) axes[count++] = i;
    if (count < in_rank) { /* all axes is the default */
      put(b, ", axes: ");
      put_ints(b, count, axes);
    }
  }
  if ((attrs & ATTR_KEEPDIM) && n->keepdim) put(b, ", keepdim: true");
  if (attrs & ATTR_SHAPE) {
    put(b, ", shape: ");
    put_ints(b, n->rank, n->shape);
  }
  if (attrs & ATTR_PERM) {
    int64_t perm[KF_MAX_RANK];
    for (int i = 0; i < n->rank; i++) perm[i] = n->perm[i];
    put(b, ", perm: ");
    put_ints(b, n->rank, perm);
  }
  if (attrs & ATTR_AXIS) put(b, ", axis: %d", n->axis);
  if (attrs & ATTR_RANGE) /* the stop that gives the node's length */
    put(b, ", start: %lld, stop: %lld, step: %lld", (long long)n->start,
        (long long)(n->start + (n->shape[n->axis] - 1) * n->step + 1), (long long)n->step);
}

static void put_node(saver *s, int32_t v, int wname, int wop) {
  const ir_node *n = &s->g->nodes[v];
  const char *name = vname(s, v), *op = ir_ops[n->op].name;
  int pn = wname - (int)strlen(name), po = wop - (int)strlen(op);
  put(&s->out, "  - {name: %s,%*s op: %s,%*s", name, pn > 0 ? pn : 0, "", op, po > 0 ? po : 0, "");
  if (n->op == IR_OP_CONST) {
    char num[40];
    if (n->dtype == KF_BOOL)
      snprintf(num, sizeof num, "%s", n->value != 0 ? "true" : "false");
    else
      fmt_number(num, sizeof num, n->value, n->dtype, true);
    put(&s->out, " dtype: %s, value: %s}\n", kf_dtype_name(n->dtype), num);
    return;
  }
  if (ir_ops[n->op].max_args > 0) {
    put(&s->out, " args: [");
    for (int i = 0; i < n->nargs; i++) {
      if (i) put(&s->out, ", ");
      put_arg(s, n->args[i]);
    }
    put(&s->out, "]");
    put_attrs(s, n);
  } else { /* iota: its attributes alone, the first without a comma */
    put(&s->out, " dtype: %s, shape: ", kf_dtype_name(n->dtype));
    put_ints(&s->out, n->rank, n->shape);
    put(&s->out, ", axis: %d", n->axis);
  }
  put(&s->out, "}\n");
}

static bool written_node(const saver *s, int32_t v) {
  return s->g->nodes[v].op != IR_OP_INPUT && !s->inl[v];
}

static void put_nodes(saver *s) {
  const kf_graph *g = s->g;
  int wname = 1, wop = 1, count = 0;
  for (int32_t v = 0; v < g->n_nodes; v++) {
    if (!written_node(s, v)) continue;
    int ln = (int)strlen(vname(s, v)), lo = (int)strlen(ir_ops[g->nodes[v].op].name);
    if (ln > wname && ln <= 16) wname = ln;
    if (lo > wop) wop = lo;
    count++;
  }
  if (count == 0) {
    put(&s->out, "nodes: []\n");
    return;
  }
  put(&s->out, "nodes:\n");
  for (int32_t v = 0; v < g->n_nodes; v++)
    if (written_node(s, v)) put_node(s, v, wname, wop);
}

static void put_graph(saver *s) {
  const kf_graph *g = s->g;
  sbuf *b = &s->out;
  put(b, "kfuse: 1\n");
  if (g->name) put_graph_name(b, g->name);
  put(b, g->n_inputs ? "inputs:\n" : "inputs: {}\n");
  for (int32_t i = 0; i < g->n_inputs; i++) {
    const ir_node *n = &g->nodes[g->inputs[i]];
    put(b, "  %s: {dtype: %s, shape: ", n->name, kf_dtype_name(n->dtype));
    put_ints(b, n->rank, n->shape);
    put(b, "}\n");
  }
  put_nodes(s);
  put(b, "outputs: [");
  for (int32_t i = 0; i < g->n_outputs; i++) put(b, "%s%s", i ? ", " : "", vname(s, g->outputs[i]));
  put(b, "]\n");
}

static kf_status check_savable(const kf_graph *g) {
  kf_graph *mg = (kf_graph *)g; /* only its message changes */
  if (g->status != KF_OK) return g->status;
  if (g->n_outputs == 0)
    return ir_error(mg, KF_ERR_INVALID_ARG, "cannot save a graph without outputs as YAML");
  if (g->name && strlen(g->name) > IR_YAML_NAME_MAX)
    return ir_error(mg, KF_ERR_INVALID_ARG,
                    "cannot save as YAML: the graph name is longer than %d bytes",
                    IR_YAML_NAME_MAX);
  for (int32_t v = 0; v < g->n_nodes; v++) {
    const ir_node *n = &g->nodes[v];
    if (n->op == IR_OP_CONST && n->rank != 0)
      return ir_error(mg, KF_ERR_UNSUPPORTED,
                      "cannot save as YAML: constant %%%d has rank %d (only scalars)", v,
                      n->rank);
    if ((unsigned)n->op >= IR_OP_COUNT || ir_ops[n->op].kind == KIND_COMPOSITE)
      return ir_error(mg, KF_ERR_INTERNAL, "cannot save as YAML: node %%%d has op %d", v,
                      (int)n->op);
  }
  return KF_OK;
}

char *kf_graph_to_yaml(const kf_graph *g) {
  if (!g || check_savable(g) != KF_OK) return NULL;
  saver s = {.g = g};
  s.gen = core_calloc((size_t)g->n_nodes + 1, sizeof *s.gen);
  s.inl = core_calloc((size_t)g->n_nodes + 1, sizeof *s.inl);
  bool ok = s.gen && s.inl;
  for (int32_t v = 0; ok && v < g->n_nodes; v++)
    if (g->nodes[v].op != IR_OP_INPUT && g->nodes[v].op != IR_OP_CONST) plan_inline(&s, v);
  ok = ok && make_names(&s);
  if (ok) put_graph(&s);
  ok = ok && !s.out.oom;
  for (int32_t v = 0; s.gen && v < g->n_nodes; v++) free(s.gen[v]);
  free(s.gen);
  free(s.inl);
  if (!ok) {
    free(s.out.s);
    ir_error((kf_graph *)g, KF_ERR_OUT_OF_MEMORY, "kf_graph_to_yaml: out of memory");
    return NULL;
  }
  return s.out.s;
}

/* Written to a temporary file beside the target and renamed over it, so a
 * reader never sees half a file. */
kf_status kf_graph_save_yaml(const kf_graph *g, const char *path) {
  if (!g) return KF_ERR_INVALID_ARG;
  kf_graph *mg = (kf_graph *)g; /* only its message changes */
  if (!path) return ir_error(mg, KF_ERR_INVALID_ARG, "kf_graph_save_yaml: path is NULL");
  /* Its status, not a guess from the NULL below (a graph without outputs
   * was once reported as out of memory). */
  kf_status st = check_savable(g);
  if (st != KF_OK) return st;
  char *text = kf_graph_to_yaml(g);
  if (!text) return KF_ERR_OUT_OF_MEMORY; /* what is left to fail */
  size_t plen = strlen(path);
  char *tmp = core_malloc(plen + 32);
  if (!tmp) {
    free(text);
    return ir_error(mg, KF_ERR_OUT_OF_MEMORY, "kf_graph_save_yaml: out of memory");
  }
  snprintf(tmp, plen + 32, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(text, 1, strlen(text), f) == strlen(text);
  int err = errno;
  if (f && fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && rename(tmp, path) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok && f) remove(tmp);
  free(tmp);
  free(text);
  if (!ok)
    return ir_error(mg, KF_ERR_IO, "kf_graph_save_yaml: cannot write %s: %s", path,
                    strerror(err));
  return KF_OK;
}
