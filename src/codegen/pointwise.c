/* pointwise.c - the part function of a pointwise kernel: a grid-stride loop
 * over W-element groups of one iteration space (templates/pointwise.cu). */
#include <stdio.h>
#include <string.h>

#include "codegen/cg_internal.h"

/* The largest element count among the tensors the kernel touches. */
static int64_t largest_numel(const kf_graph *g, const fuse_kernel *k) {
  int64_t m = k->numel;
  for (int i = 0; i < k->n_inputs; i++) {
    int64_t n = kf_value_numel(g, k->inputs[i]);
    if (n > m) m = n;
  }
  return m;
}

/* 16 bytes of the smallest full-size tensor per thread and group, at most 8
 * lanes (so a bool output is stored 8 bytes at a time). */
static int vector_width(const kf_graph *g, const fuse_kernel *k) {
  size_t minsz = 8;
  for (int i = 0; i < k->n_outputs; i++) {
    size_t s = kf_dtype_size(g->nodes[k->outputs[i]].dtype);
    if (s < minsz) minsz = s;
  }
  for (int i = 0; i < k->n_inputs; i++) {
    if (kf_value_numel(g, k->inputs[i]) != k->numel) continue;
    size_t s = kf_dtype_size(g->nodes[k->inputs[i]].dtype);
    if (s < minsz) minsz = s;
  }
  int w = (int)(16 / minsz);
  return w > 8 ? 8 : w < 1 ? 1 : w;
}

kf_status cg_plan_pointwise(cg_emit_args *a) {
  const fuse_kernel *k = a->k;
  cg_part *p = a->part;
  int64_t numel = k->numel > 0 ? k->numel : 1;
  int w = vector_width(a->g, k);
  int64_t items = cg_ceil_div(numel, w);
  int64_t threads = items >= 256 ? 256 : cg_ceil_div(items, 32) * 32;
  /* four waves of resident blocks: the measured sweet spot on the H200 */
  int64_t cap = (int64_t)a->t->sm_count * a->t->max_threads_per_sm * 4 / threads;
  p->threads = (uint32_t)threads;
  p->blocks = (uint32_t)cg_min64(cg_ceil_div(items, threads), cap < 1 ? 1 : cap);
  p->lanes = w;
  p->max_offset = largest_numel(a->g, k) - 1;
  /* the loop counter may run one grid stride past the end */
  int64_t reach = numel + (int64_t)p->blocks * p->threads * w;
  cg_index_type(reach > p->max_offset ? reach : p->max_offset, &p->index64);
  return KF_OK;
}

kf_status cg_emit_pointwise(cg_emit_args *a) {
  const fuse_kernel *k = a->k;
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  int w = p->lanes;
  const char *idx = p->index64 ? "long long" : "int";
  cg_buf decl = {0}, pre = {0}, body = {0}, store = {0}, align = {0}, params = {0}, args = {0};
  cg_gen gen;
  cg_gen_init(&gen, g, k, &body, idx);
  gen.vec = w;
  gen.pre = &pre;
  gen.pre_decl = &decl;
  gen.align = &align;
  gen.indent = 2;
  size_t widest = 0;
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &g->nodes[v];
    cg_ctx c;
    cg_ctx_linear(&c, n->rank, n->shape, "e", VC_CONTIG);
    char name[160];
    cg_gen_value(&gen, v, &c, name, sizeof name);
    cg_printf(&decl, "  %s o%d[W];\n", cg_compute_type(n->dtype), (int)v);
    cg_line(&gen, "o%d[j] = %s;", (int)v, name);
    cg_printf(&store, "  kf_stv<%s, W>(p%d + i, o%d);\n", cg_storage_type(n->dtype), (int)v,
              (int)v);
    size_t wb = kf_dtype_size(n->dtype) * (size_t)w;
    cg_printf(&align, " && kf_aligned(p%d, %d)", (int)v, (int)(wb > 16 ? 16 : wb));
    if (kf_dtype_size(n->dtype) * (size_t)w > widest) widest = kf_dtype_size(n->dtype) * (size_t)w;
  }
  cg_param_decls(g, p, &params);
  cg_param_args(p, &args);
  char numel[32], sw[16], th[16], bl[16];
  snprintf(numel, sizeof numel, p->index64 ? "%lldLL" : "%lld", (long long)k->numel);
  snprintf(sw, sizeof sw, "%d", w);
  snprintf(th, sizeof th, "%u", p->threads);
  snprintf(bl, sizeof bl, "%u", p->blocks);
  const char *aligned = align.s ? align.s + 4 : "true";
  cg_hole holes[] = {{"fn", p->fn},         {"IDX", idx},          {"NUMEL", numel},
                     {"W", sw},             {"THREADS", th},       {"BLOCKS", bl},
                     {"params", params.s},  {"args", args.s},      {"decl", decl.s ? decl.s : ""},
                     {"pre", pre.s ? pre.s : ""}, {"body", body.s ? body.s : ""},
                     {"store", store.s ? store.s : ""}, {"aligned", aligned}};
  kf_status st = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", k->name, gen.err);
    st = KF_ERR_UNSUPPORTED;
  } else if (!cg_fill(a->out, "pointwise.cu", holes, (int)(sizeof holes / sizeof holes[0]), a->err,
                      a->errsize)) {
    st = KF_ERR_INTERNAL;
  }
  snprintf(p->decisions, sizeof p->decisions,
           "pointwise: %lld elements, %d lanes per thread (%zu-byte accesses), %s index, "
           "%u blocks x %u threads, grid-stride",
           (long long)k->numel, w, widest > 16 ? (size_t)16 : widest, idx, p->blocks, p->threads);
  p->vec_bytes = (int)(widest > 16 ? 16 : widest);
  bool oom = decl.oom || pre.oom || body.oom || store.oom || align.oom || params.oom || args.oom;
  cg_gen_free(&gen);
  cg_buf_free(&decl); cg_buf_free(&pre); cg_buf_free(&body); cg_buf_free(&store);
  cg_buf_free(&align); cg_buf_free(&params); cg_buf_free(&args);
  if (st == KF_OK && oom) st = KF_ERR_OUT_OF_MEMORY;
  return st;
}
