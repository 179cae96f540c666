/* kernels.c - from groups of nodes to kernels codegen can use: the values
 * each kernel reads and writes, its kind and iteration space (from the
 * legality predicate), its roles, costs and an estimate of its blocks. */
#include "fuser/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "fuser/legal.h"
#include "fuser/node.h"
#include "ir/ops.h"

static int64_t ceil_div(int64_t a, int64_t b) {
  return b > 0 ? (a + b - 1) / b : 0;
}

static void reduce_space(fuse_kernel *k) {
  int first = -1, last = -1;
  for (int i = 0; i < k->rank; i++)
    if (k->red_axes & (1u << i)) {
      if (first < 0) first = i;
      last = i;
    }
  if (first < 0) { /* reduces only size-1 axes: nothing to reduce */
    k->outer = k->numel;
    k->red = k->inner = 1;
    return;
  }
  /* kept dims before the last reduced one are outer, those after it inner
   * (axes that do not merge interleave outer and reduced dims: codegen's
   * reduce.c indexes them per dim) */
  k->red = 1;
  k->outer = k->inner = 1;
  for (int i = 0; i < k->rank; i++) {
    if (k->red_axes & (1u << i))
      k->red *= k->shape[i];
    else if (i < last)
      k->outer *= k->shape[i];
    else
      k->inner *= k->shape[i];
  }
  k->red_strided = false;
  for (int i = first; i <= last; i++)
    if (!(k->red_axes & (1u << i))) k->red_strided = true;
  if (k->kind == FK_ROW) {
    k->cols = k->red;
    k->rows = k->outer;
  }
}

/* Kind and iteration space, from the predicate's findings. */
static void set_space(const kf_graph *g, fuse_kernel *k, const fuse_shape_info *info) {
  k->kind = info->kind;
  k->n_epilogue = info->n_epilogue;
  k->paired = info->kind == FK_MATMUL && info->pair[0] >= 0;
  const ir_node *a = info->anchor >= 0 ? &g->nodes[info->anchor] : NULL;
  const ir_node *src = a;
  if (k->kind == FK_POINTWISE) src = &g->nodes[k->outputs[0]];
  if (k->kind == FK_ROW || k->kind == FK_REDUCE) src = &g->nodes[a->args[0]];
  k->rank = src->rank;
  memcpy(k->shape, src->shape, sizeof k->shape);
  k->numel = fuse_numel(src);
  if (k->kind == FK_ROW || k->kind == FK_REDUCE) {
    /* Reducing a size-1 axis is a no-op: leave it out of the mask. */
    k->red_axes = a->axes;
    for (int i = 0; i < k->rank; i++)
      if (k->shape[i] == 1) k->red_axes &= (uint8_t) ~(1u << i);
    reduce_space(k);
  } else if (k->kind == FK_MATMUL) {
    k->m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
    k->n = a->shape[a->rank - 1];
    const ir_node *lhs = &g->nodes[a->args[0]];
    k->k = lhs->shape[lhs->rank - 1];
    k->batch = k->m * k->n > 0 ? k->numel / (k->m * k->n) : 0;
  } else if (k->kind == FK_ATTENTION) {
    k->batch = k->attn.batch;
    k->m = k->attn.sq;
    k->n = k->attn.dv;
    k->k = k->attn.sk;
  }
}

static void set_blocks(fuse_kernel *k) {
  switch (k->kind) {
    case FK_POINTWISE: /* 256 threads, 4 elements each */
      k->blocks = ceil_div(k->numel, 1024);
      break;
    case FK_ROW: { /* a block per row; short rows share a block */
      int64_t per = k->cols >= 1024 ? 1 : 1024 / (k->cols > 0 ? k->cols : 1);
      k->blocks = ceil_div(k->rows, per);
      break;
    }
    case FK_REDUCE:
      k->blocks =
          k->outer * k->inner > 1 ? ceil_div(k->outer * k->inner, 256) : ceil_div(k->red, 8192);
      break;
    case FK_MATMUL:
      k->blocks = k->batch * ceil_div(k->m, 128) * ceil_div(k->n, 128);
      break;
    case FK_ATTENTION: /* a block per 64 queries of one head */
      k->blocks = k->batch * ceil_div(k->m, 64);
      break;
  }
  if (k->blocks < 1) k->blocks = 1;
}

static void set_costs(const kf_graph *g, fuse_kernel *k) {
  k->bytes_read = k->bytes_written = k->flops = 0;
  for (int32_t i = 0; i < k->n_inputs; i++) k->bytes_read += fuse_bytes(&g->nodes[k->inputs[i]]);
  for (int32_t i = 0; i < k->n_outputs; i++)
    k->bytes_written += fuse_bytes(&g->nodes[k->outputs[i]]);
  for (int32_t i = 0; i < k->n_nodes; i++) {
    const ir_node *nd = &g->nodes[k->nodes[i]];
    ir_kind kind = ir_ops[nd->op].kind;
    if (kind == KIND_REDUCE)
      k->flops += fuse_numel(&g->nodes[nd->args[0]]);
    else if (kind == KIND_MATMUL)
      k->flops += 2 * k->batch * k->m * k->n * k->k;
    else if (kind != KIND_LAYOUT && kind != KIND_SOURCE)
      k->flops += fuse_numel(nd);
  }
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Inputs of every kernel; marks in needs_mem the values read from memory. */
static kf_status find_inputs(fuse_plan *plan, fuse_marks *mem, fuse_marks *in, uint8_t *needs_mem) {
  const kf_graph *g = plan->graph;
  for (int32_t kid = 0; kid < plan->n_kernels; kid++) {
    fuse_kernel *k = &plan->kernels[kid];
    fuse_marks_clear(mem);
    fuse_marks_clear(in);
    for (int32_t i = 0; i < k->n_nodes; i++) fuse_mark(mem, k->nodes[i], i);
    int32_t cap = 8, n = 0;
    k->inputs = core_malloc((size_t)cap * sizeof *k->inputs);
    if (!k->inputs) return KF_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < k->n_nodes; i++) {
      const ir_node *nd = &g->nodes[k->nodes[i]];
      for (int a = 0; a < nd->nargs; a++) {
        int32_t u = nd->args[a];
        if (fuse_marked(mem, u) || fuse_marked(in, u) || g->nodes[u].op == IR_OP_CONST) continue;
        fuse_mark(in, u, 0);
        if (n == cap) {
          int32_t *p = core_realloc(k->inputs, (size_t)(cap *= 2) * sizeof *p);
          if (!p) return KF_ERR_OUT_OF_MEMORY;
          k->inputs = p;
        }
        k->inputs[n++] = u;
        if (g->nodes[u].op != IR_OP_INPUT) needs_mem[u] = 1;
      }
    }
    k->n_inputs = n;
    qsort(k->inputs, (size_t)n, sizeof *k->inputs, cmp_i32);
  }
  return KF_OK;
}

static kf_status find_outputs(fuse_plan *plan, const uint8_t *needs_mem) {
  const kf_graph *g = plan->graph;
  for (int32_t kid = 0; kid < plan->n_kernels; kid++) {
    fuse_kernel *k = &plan->kernels[kid];
    k->outputs = core_malloc((size_t)k->n_nodes * sizeof *k->outputs);
    if (!k->outputs) return KF_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < k->n_nodes; i++) {
      int32_t v = k->nodes[i];
      if (!k->recomputed[i] && (needs_mem[v] || g->nodes[v].is_output))
        k->outputs[k->n_outputs++] = v;
    }
  }
  return KF_OK;
}

static int64_t unfused_bytes(const kf_graph *g, const int32_t *kernel_of) {
  int64_t total = 0;
  for (int32_t v = 0; v < g->n_nodes; v++) {
    if (kernel_of[v] < 0) continue;
    const ir_node *nd = &g->nodes[v];
    total += fuse_bytes(nd);
    for (int a = 0; a < nd->nargs; a++) {
      bool dup = g->nodes[nd->args[a]].op == IR_OP_CONST;
      for (int b = 0; b < a; b++) dup |= nd->args[b] == nd->args[a];
      if (!dup) total += fuse_bytes(&g->nodes[nd->args[a]]);
    }
  }
  return total;
}

static kf_status check_and_shape(fuse_plan *plan, fuse_legal_ctx *lc, char *err, size_t errsize) {
  const kf_graph *g = plan->graph;
  for (int32_t kid = 0; kid < plan->n_kernels; kid++) {
    fuse_kernel *k = &plan->kernels[kid];
    uint8_t *is_out = core_calloc((size_t)k->n_nodes, 1);
    if (!is_out) return KF_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0, j = 0; i < k->n_nodes; i++)
      if (j < k->n_outputs && k->outputs[j] == k->nodes[i]) is_out[i] = 1, j++;
    fuse_set set = {k->nodes, k->recomputed, is_out, k->n_nodes};
    fuse_shape_info info;
    bool ok = fuse_legal(lc, &set, &info, k->roles);
    /* Legality took only what the library computes; the match describes
     * the call (a kernel legality let through unmatched stays a template). */
    if (ok && info.kind == FK_MATMUL && plan->options.matmul_library)
      k->library = fuse_gemm_match(g, k->nodes, is_out, k->n_nodes, &k->gemm, NULL, 0);
    plan->n_library += k->library;
    if (ok && info.kind == FK_ATTENTION)
      ok = fuse_attn_match(g, k->nodes, k->n_nodes, &k->attn, info.why, sizeof info.why);
    free(is_out);
    if (!ok || k->n_outputs == 0) {
      snprintf(err, errsize, "internal error: a planned kernel is illegal: %s: %s",
               ok ? "no-outputs" : info.rule, ok ? "it writes nothing" : info.why);
      return KF_ERR_INTERNAL;
    }
    set_space(g, k, &info);
    set_blocks(k);
    set_costs(g, k);
    plan->bytes_fused += k->bytes_read + k->bytes_written;
  }
  plan->bytes_unfused = unfused_bytes(g, plan->kernel_of);
  return KF_OK;
}

kf_status fuse_finish_kernels(fuse_plan *plan, char *err, size_t errsize) {
  const kf_graph *g = plan->graph;
  fuse_marks mem = {0}, in = {0};
  fuse_legal_ctx lc;
  uint8_t *needs_mem = core_calloc(g->n_nodes > 0 ? (size_t)g->n_nodes : 1, 1);
  bool ok_mem = fuse_marks_init(&mem, g->n_nodes), ok_in = fuse_marks_init(&in, g->n_nodes);
  bool ok = needs_mem && ok_mem && ok_in; /* each is tried (and freed below) */
  ok = fuse_legal_init(&lc, g, &plan->options) && ok;
  kf_status st = ok ? KF_OK : KF_ERR_OUT_OF_MEMORY;
  if (st == KF_OK) st = find_inputs(plan, &mem, &in, needs_mem);
  if (st == KF_OK) st = find_outputs(plan, needs_mem);
  if (st == KF_OK) st = check_and_shape(plan, &lc, err, errsize);
  if (st == KF_ERR_OUT_OF_MEMORY) snprintf(err, errsize, "out of memory");
  fuse_legal_free(&lc);
  fuse_marks_free(&mem);
  fuse_marks_free(&in);
  free(needs_mem);
  return st;
}
