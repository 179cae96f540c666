/* emit.c - cg_emit_launch: one launch of a plan as one CUDA translation
 * unit: a header comment (ops fused, decisions), templates/common.cuh, one
 * part function per kernel, and the entry that routes blocks to parts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/canon.h"
#include "codegen/cg_internal.h"
#include "codegen/emit.h"
#include "codegen/expr.h"
#include "codegen/flash.h"
#include "codegen/hpack.h"
#include "codegen/matmul.h"
#include "codegen/part.h"
#include "codegen/pointwise.h"
#include "codegen/reduce.h"
#include "codegen/reduce_plan.h"
#include "codegen/row.h"
#include "codegen/row_plan.h"
#include "codegen/template.h"
#include "codegen/transpose.h"
#include "core/alloc.h"
#include "ir/ops.h"

static const fuse_kernel *kernel_by_id(const fuse_plan *plan, int id) {
  for (int i = 0; i < plan->n_kernels; i++)
    if (plan->kernels[i].id == id) return &plan->kernels[i];
  return id >= 0 && id < plan->n_kernels ? &plan->kernels[id] : NULL;
}

static kf_status plan_part(cg_emit_args *a) {
  switch (a->k->kind) {
    case FK_POINTWISE:
      return cg_transpose_tiled(a->g, a->k) ? cg_plan_transpose(a) : cg_plan_pointwise(a);
    case FK_ROW: return cg_plan_row(a);
    case FK_REDUCE: return cg_plan_reduce(a);
    case FK_MATMUL: return cg_plan_matmul(a);
    case FK_ATTENTION: return cg_plan_flash(a);
  }
  snprintf(a->err, a->errsize, "%s: unknown kernel kind %d", a->k->name, (int)a->k->kind);
  return KF_ERR_UNSUPPORTED;
}

kf_status cg_emit_part(cg_emit_args *a) {
  switch (a->k->kind) {
    case FK_POINTWISE: return a->part->tiled ? cg_emit_transpose(a) : cg_emit_pointwise(a);
    case FK_ROW: return cg_emit_row(a);
    case FK_REDUCE: return cg_emit_reduce(a);
    case FK_MATMUL: return cg_emit_matmul(a);
    case FK_ATTENTION: return cg_emit_flash(a);
  }
  return KF_ERR_UNSUPPORTED;
}

static const char *kind_word(fuse_kind kind) {
  static const char *const w[] = {"pointwise", "row", "reduce", "matmul", "attention"};
  return (unsigned)kind < sizeof w / sizeof w[0] ? w[kind] : "?";
}

/* " * k2_row (row): %3 xf = cast(x); %4 m = max(%3) ..." */
static void comment_kernel(const kf_graph *g, const cg_part *p, cg_buf *out) {
  const fuse_kernel *k = p->k;
  cg_printf(out, " * part %s = kernel %s (%s), %d ops:\n *  ", p->fn, k->name,
            kind_word(k->kind), (int)k->n_nodes);
  int col = 3;
  for (int i = 0; i < k->n_nodes; i++) {
    const ir_node *n = &g->nodes[k->nodes[i]];
    char item[320];
    int len = snprintf(item, sizeof item, " %%%d%s%s=%s(", (int)k->nodes[i], n->name ? " " : "",
                       n->name ? n->name : "", ir_ops[n->op].name);
    for (int j = 0; j < n->nargs && len < (int)sizeof item; j++)
      len += snprintf(item + len, sizeof item - (size_t)len, "%s%%%d", j ? "," : "",
                      (int)n->args[j]);
    if (len < (int)sizeof item) snprintf(item + len, sizeof item - (size_t)len, ")");
    if (col + (int)strlen(item) > 78) {
      cg_puts(out, "\n *  ");
      col = 3;
    }
    cg_puts(out, item);
    col += (int)strlen(item);
  }
  cg_printf(out, "\n *  decisions: %s\n", p->decisions);
}

/* Adds the part's parameters to the launch's (deduplicated, in order). */
static bool merge_params(cg_launch_src *out, const cg_part *p) {
  for (int i = 0; i < p->n_params; i++) {
    int j = 0;
    while (j < out->n_params && out->params[j].value != p->params[i].value) j++;
    if (j < out->n_params) {
      out->params[j].written |= p->params[i].written;
      continue;
    }
    cg_param *np = core_realloc(out->params, (size_t)(out->n_params + 1) * sizeof *np);
    if (!np) return false;
    out->params = np;
    out->params[out->n_params++] = (cg_param){p->params[i].value, p->params[i].written};
  }
  return true;
}

/* The entry's body: one call per part, routed by block index ranges. */
static void emit_route(const cg_part *parts, int n, cg_buf *out) {
  uint32_t start = 0;
  if (n > 8) {
    cg_puts(out, "  __shared__ int kf_which;\n  if (threadIdx.x == 0) {\n");
    cg_printf(out, "    const unsigned kf_starts[%d] = {", n);
    for (int i = 0; i < n; i++) {
      cg_printf(out, "%s%u", i ? ", " : "", start);
      start += parts[i].blocks;
    }
    cg_printf(out, "};\n    int lo = 0, hi = %d;\n", n - 1);
    cg_puts(out, "    while (lo < hi) {\n      const int mid = (lo + hi + 1) / 2;\n"
                 "      if (kf_starts[mid] <= blockIdx.x) lo = mid; else hi = mid - 1;\n"
                 "    }\n    kf_which = lo;\n  }\n  __syncthreads();\n"
                 "  switch (kf_which) {\n");
    start = 0;
  }
  for (int i = 0; i < n; i++) {
    cg_buf args = {0};
    cg_param_args(&parts[i], &args);
    uint32_t end = start + parts[i].blocks;
    char bid[32];
    snprintf(bid, sizeof bid, n == 1 ? "blockIdx.x" : "blockIdx.x - %uu", start);
    for (int m = 0; m < parts[i].n_tmaps; m++) cg_printf(&args, ", kf_tm%d", m);
    const char *a = cg_use(out, &args);
    if (n == 1) {
      cg_puts(out, "  ");
      cg_part_call(out, &parts[i], bid, a, "  ");
      cg_puts(out, "\n");
    } else if (n > 8) {
      cg_printf(out, "    case %d: ", i);
      cg_part_call(out, &parts[i], bid, a, "    ");
      cg_puts(out, " break;\n");
    } else {
      cg_printf(out, "  %sif (blockIdx.x < %uu) ", i ? "else " : "", end);
      cg_part_call(out, &parts[i], bid, a, "  ");
      cg_puts(out, "\n");
    }
    start = end;
    cg_buf_free(&args);
  }
  if (n > 8) cg_puts(out, "  }\n");
}

static void launch_decls(const kf_graph *g, const cg_launch_src *out, cg_buf *b) {
  for (int i = 0; i < out->n_params; i++)
    cg_printf(b, "%s%s%s *__restrict__ p%d", i ? ", " : "", out->params[i].written ? "" : "const ",
              cg_storage_type(g->nodes[out->params[i].value].dtype), (int)out->params[i].value);
  for (int i = 0; i < out->n_tmaps; i++)
    cg_printf(b, ", const __grid_constant__ kf_tmap kf_tm%d", i);
}

/* The launch's numbered names made local (canon.h: alike kernels of other
 * layers or partitions then share one compile), with the parameters' graph
 * values in a closing comment. */
static void local_names(cg_buf *src, size_t own) {
  cg_buf legend = {0};
  if (cg_canon_names(src, own, &legend) && (legend.len || legend.oom))
    cg_printf(src, "// parameters (graph values): %s\n", cg_use(src, &legend));
  cg_buf_free(&legend);
}

static kf_status assemble(const kf_graph *g, cg_part *parts, int n, const cg_buf *body,
                          const cg_buf *decls, const cg_buf *params, const cg_buf *route,
                          cg_launch_src *out, char *err, size_t errsize) {
  cg_buf src = {0};
  cg_printf(&src, "/* kfuse generated kernel %s: %d part%s, %u blocks x %u threads.\n", out->entry,
            n, n > 1 ? "s (horizontal)" : "", out->grid, out->block);
  for (int i = 0; i < n; i++) comment_kernel(g, &parts[i], &src);
  cg_printf(&src, " * index: %s (largest offset %lld); widest access %d bytes%s\n */\n",
            out->index64 ? "64-bit" : "32-bit", (long long)out->max_offset, out->vec_bytes,
            out->packed_params ? "; pointers packed in one parameter" : "");
  kf_status st = KF_OK;
  /* The policy selects each op's device function in common.cuh. It is in
   * the source, so the kernel cache key (a hash of the source) tells
   * policies apart; the default writes nothing (its sources are as before). */
  if (out->math == KF_MATH_STRICT) cg_puts(&src, "#define KF_MATH_STRICT 1\n");
  if (out->math == KF_MATH_FAST) cg_puts(&src, "#define KF_MATH_FAST 1\n");
  /* Appended in place (a hole-less fill): a copy could fail, and its NULL
   * would read as a missing template. */
  size_t own = 0; /* where the launch's own code begins, after the prelude */
  if (!cg_fill(&src, "common.cuh", NULL, 0, err, errsize)) {
    st = KF_ERR_INTERNAL;
  } else {
    own = src.len;
    cg_puts(&src, "\n");
    cg_puts(&src, cg_use(&src, body));
    char th[32];
    if (n == 1 && parts[0].min_blocks > 0)
      snprintf(th, sizeof th, "%u, %d", out->block, parts[0].min_blocks);
    else
      snprintf(th, sizeof th, "%u", out->block);
    char cl[40] = "";
    if (n == 1 && parts[0].cluster > 1)
      snprintf(cl, sizeof cl, "__cluster_dims__(%d, 1, 1) ", parts[0].cluster);
    cg_hole holes[] = {{"entry", out->entry},
                       {"cluster", cl},
                       {"THREADS", th},
                       {"decls", cg_use(&src, decls)},
                       {"params", cg_use(&src, params)},
                       {"dep", out->grid_dep ? "  kf_grid_dep_sync();\n" : ""},
                       {"route", cg_use(&src, route)}};
    if (!cg_fill(&src, "horizontal.cu", holes, 7, err, errsize)) st = KF_ERR_INTERNAL;
  }
  if (st == KF_OK) local_names(&src, own);
  bool oom = route->oom || params->oom || decls->oom || body->oom;
  out->source = cg_buf_take(&src);
  if (st == KF_OK && (oom || !out->source)) {
    snprintf(err, errsize, "out of memory");
    st = KF_ERR_OUT_OF_MEMORY;
  }
  return st;
}

/* Finds each part's kernel, names it and plans its grid and parameters. */
static kf_status plan_parts(const kf_graph *g, const fuse_plan *plan, const fuse_launch *L,
                            const cg_target *t, cg_part *parts, char *err, size_t errsize) {
  for (int i = 0; i < L->n_kernels; i++) {
    parts[i].k = kernel_by_id(plan, L->kernels[i]);
    if (!parts[i].k) {
      snprintf(err, errsize, "launch refers to a missing kernel %d", (int)L->kernels[i]);
      return KF_ERR_INTERNAL;
    }
    snprintf(parts[i].fn, sizeof parts[i].fn, "kf_part%d_%s", i, parts[i].k->name);
    parts[i].alone = L->n_kernels == 1;
    /* each part's share of the grid, so that the launch's sum fits */
    parts[i].max_blocks = (t->max_grid ? t->max_grid : CG_MAX_GRID) / (uint32_t)L->n_kernels;
    cg_emit_args a = {g, parts[i].k, t, &parts[i], NULL, err, errsize};
    kf_status st = plan_part(&a);
    if (st != KF_OK) return st;
    if (!cg_part_params(&parts[i])) return KF_ERR_OUT_OF_MEMORY;
  }
  return KF_OK;
}

/* One body per part, each called with its own pointer parameters. */
static kf_status emit_parts(const kf_graph *g, const cg_target *t, cg_part *parts, int n,
                            cg_buf *body, cg_launch_src *out, char *err, size_t errsize) {
  for (int i = 0; i < n; i++) {
    out->grid += parts[i].blocks;
    if (parts[i].threads > out->block) out->block = parts[i].threads;
    if (parts[i].max_offset > out->max_offset) out->max_offset = parts[i].max_offset;
    out->index64 |= parts[i].index64;
  }
  out->persistent = n == 1 && parts[0].persistent;
  if (n == 1) out->smem_bytes = parts[0].smem;
  if (n == 1 && (parts[0].gemm90 || parts[0].flash90)) {
    memcpy(out->tmaps, parts[0].tmaps, sizeof out->tmaps);
    out->n_tmaps = parts[0].n_tmaps;
    out->arch_specific = true;
  }
  if (n == 1) out->cluster = parts[0].cluster;
  if (n == 1) out->min_blocks = parts[0].min_blocks;
  for (int i = 0; i < n; i++) {
    parts[i].launch_threads = (int)out->block;
    cg_emit_args a = {g, parts[i].k, t, &parts[i], body, err, errsize};
    kf_status st = cg_emit_part(&a);
    if (st != KF_OK) return st;
    cg_puts(body, "\n");
    if (parts[i].vec_bytes > out->vec_bytes) out->vec_bytes = parts[i].vec_bytes;
    out->l2_prefetch |= parts[i].l2_prefetch;
    if (!merge_params(out, &parts[i])) return KF_ERR_OUT_OF_MEMORY;
  }
  return body->oom ? KF_ERR_OUT_OF_MEMORY : KF_OK;
}

/* Plans, then emits the launch packed (shared bodies) or one body per part. */
static kf_status emit_launch(const kf_graph *g, const fuse_plan *plan, const fuse_launch *L,
                             const cg_target *t, cg_part *parts, cg_launch_src *out, char *err,
                             size_t errsize) {
  int n = L->n_kernels;
  cg_buf body = {0}, decls = {0}, params = {0}, route = {0};
  bool packed = false;
  kf_status st = plan_parts(g, plan, L, t, parts, err, errsize);
  if (st == KF_OK && n > 1)
    st = cg_emit_packed(g, t, parts, n, &body, &decls, &params, &route, out, &packed, err,
                        errsize);
  if (st == KF_OK && !packed) {
    st = emit_parts(g, t, parts, n, &body, out, err, errsize);
    emit_route(parts, n, &route);
    launch_decls(g, out, &params);
  }
  out->grid_dep = t->grid_dep;
  out->math = t->math;
  if (st == KF_OK) st = assemble(g, parts, n, &body, &decls, &params, &route, out, err, errsize);
  cg_buf_free(&body);
  cg_buf_free(&decls);
  cg_buf_free(&params);
  cg_buf_free(&route);
  return st;
}

/* A library call's launch: its operands as parameters and a comment for
 * a source (what kf_plan_source and the dumps show). */
static kf_status emit_library(const fuse_kernel *k, cg_launch_src *out, char *err, size_t errsize) {
  const fuse_gemm *gm = &k->gemm;
  int32_t vals[5] = {gm->a, gm->b, gm->bias, gm->c, gm->out};
  out->params = core_calloc(5, sizeof *out->params);
  char text[256];
  snprintf(text, sizeof text,
           "// %s: a cuBLASLt call, batch %lld x m %lld x n %lld x k %lld (no generated code)\n",
           k->name, (long long)gm->batch, (long long)gm->m, (long long)gm->n, (long long)gm->k);
  out->source = core_strdup(text);
  if (!out->params || !out->source) {
    cg_launch_src_free(out);
    snprintf(err, errsize, "out of memory describing the library call %s", k->name);
    return KF_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < 5; i++)
    if (vals[i] >= 0) out->params[out->n_params++] = (cg_param){vals[i], i == 4};
  snprintf(out->entry, sizeof out->entry, "kf_%s", k->name);
  out->library = true;
  out->grid = 1;
  return KF_OK;
}

kf_status cg_emit_launch(const kf_graph *g, const fuse_plan *plan, int launch,
                         const cg_target *target, cg_launch_src *out, char *err,
                         size_t errsize) {
  if (!out) return KF_ERR_INVALID_ARG;
  memset(out, 0, sizeof *out);
  if (!g || !plan || !target || launch < 0 || launch >= plan->n_launches) {
    snprintf(err, errsize, "cg_emit_launch: bad arguments (launch %d)", launch);
    return KF_ERR_INVALID_ARG;
  }
  const fuse_launch *L = &plan->launches[launch];
  if (L->n_kernels < 1) {
    snprintf(err, errsize, "launch %d has no kernels", launch);
    return KF_ERR_INVALID_ARG;
  }
  const fuse_kernel *lib = kernel_by_id(plan, L->kernels[0]);
  if (L->n_kernels == 1 && lib && lib->library) return emit_library(lib, out, err, errsize);
  cg_part *parts = core_calloc((size_t)L->n_kernels, sizeof *parts);
  if (!parts) {
    snprintf(err, errsize, "out of memory generating the CUDA C of launch %d", launch);
    return KF_ERR_OUT_OF_MEMORY;
  }
  const fuse_kernel *k0 = kernel_by_id(plan, L->kernels[0]);
  if (L->n_kernels == 1 && k0)
    snprintf(out->entry, sizeof out->entry, "kf_%s", k0->name);
  else
    snprintf(out->entry, sizeof out->entry, "kf_launch%d_h%d", launch, (int)L->n_kernels);
  kf_status st = emit_launch(g, plan, L, target, parts, out, err, errsize);
  if (st == KF_OK && out->index64) out->max_offset = out->max_offset > 0 ? out->max_offset : 0;
  /* One message for an allocation failure anywhere below (a sub-emitter's
   * latched buffer often has none of its own). */
  if (st == KF_ERR_OUT_OF_MEMORY)
    snprintf(err, errsize, "out of memory generating the CUDA C of launch %d", launch);
  for (int i = 0; i < L->n_kernels; i++) free(parts[i].params);
  free(parts);
  if (st != KF_OK) cg_launch_src_free(out);
  return st;
}

void cg_launch_src_free(cg_launch_src *src) {
  if (!src) return;
  free(src->source);
  free(src->params);
  src->source = NULL;
  src->params = NULL;
  src->n_params = 0;
}
