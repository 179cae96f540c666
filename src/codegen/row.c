/* row.c - the part function of a row kernel: reductions over the innermost
 * axis (rows x cols), pointwise work before, between and after them, the
 * row held in registers when it fits (templates/row.cu). */
#include "codegen/row.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/index_ctx.h"
#include "codegen/part.h"
#include "codegen/row_emit.h"
#include "codegen/row_emit_out.h"
#include "codegen/row_emit_phase.h"
#include "codegen/row_plan.h"
#include "codegen/row_prefetch.h"
#include "codegen/template.h"

/* The load of a held row's words: __ldg; knobs for measurements, so that
 * rows read once do not evict the weights every row reads again:
 * KFUSE_ROW_STREAM=loads kf_ldna (not allocating in L1: 1.5-5% slower,
 * performance.md L1), KFUSE_ROW_STREAM=evict_first kf_ldef (allocating, but
 * first to go: 2-5% slower, K1), KFUSE_ROW_STREAM=l2_evict_first kf_ldl2ef
 * (first to leave L2, as Inductor's last read of a row: 4% slower, K3).
 * Streaming (.cs) loads and stores were measured slower and are gone
 * (performance.md, S1). */
static const char *held_load(const core_knobs *k) {
  /* in the order of knobs.def's values: ldg|loads|evict_first|l2_evict_first */
  static const char *const loads[] = {"__ldg", "kf_ldna", "kf_ldef", "kf_ldl2ef"};
  return loads[k->row_stream >= 0 && k->row_stream < 4 ? k->row_stream : 0];
}

/* Registers for the full-row inputs, loaded once per row and kept in their
 * storage type (16-bit words stay packed: half the registers of floats, so
 * more rows per SM and more bytes in flight); converted where used. Staged
 * rows are loaded from their shared copy, after which the buffers go to the
 * next row's copies. */
static void emit_hold(row_emit *re) {
  const kf_graph *g = re->a->g;
  const fuse_kernel *k = re->a->k;
  for (int i = 0; i < k->n_inputs; i++) {
    int32_t v = k->inputs[i];
    const ir_node *n = &g->nodes[v];
    if (cg_row_numel(n) != k->rows * k->cols) continue;
    const char *st = cg_storage_type(n->dtype);
    char src[160], load[32];
    if (re->ri.st.bytes) {
      cg_row_stage_chunk(re->a, v, src, sizeof src);
      snprintf(load, sizeof load, "*");
    } else {
      snprintf(src, sizeof src, "p%d + (r * %lld + c0)", (int)v, (long long)re->cols);
      snprintf(load, sizeof load, "%s", held_load(re->a->t->knobs));
    }
    cg_printf(&re->body,
              "  kf_pack<%s, W> x%d[NV];\n#pragma unroll\n  for (int kk = 0; kk < NV; kk++) {\n"
              "    const int c0 = kf_cb + (kk * G + lane) * W;\n"
              "    if (FULL || c0 < kf_cb + COLS) {\n"
              "      typedef typename kf_pack<%s, W>::word word;\n"
              "      const word *q = reinterpret_cast<const word *>(%s);\n"
              "#pragma unroll\n"
              "      for (int i = 0; i < kf_pack<%s, W>::N; i++) x%d[kk].w[i] = %s(q + i);\n"
              "    }\n  }\n",
              st, (int)v, st, src, st, (int)v, load);
    cg_ctx c;
    cg_row_ctx(n, re->cols, &c);
    char key[512], expr[64];
    cg_ctx_key(&c, key, sizeof key);
    cg_row_held_read(v, false, expr, sizeof expr);
    cg_gen_bind(&re->gen, v, key, expr);
    size_t wb = kf_dtype_size(n->dtype) * (size_t)re->ri.lanes;
    cg_printf(&re->align, " && kf_aligned(p%d, %d)", (int)v, (int)(wb > 16 ? 16 : wb));
  }
  cg_row_prefetch_columns(re);
  cg_row_stage_after_loads(re->a, &re->ri.st, re->gen.idx, &re->body);
}

/* Whether this body pairs reductions into one pass: only the looped hot
 * path. Held rows re-read registers, not memory; the unaligned fallback
 * stays compact: its pairing state pushed the 1024-thread cross_entropy
 * kernel (64 registers at most) into 48 bytes of spills, and its hot path
 * from 0.477 to 0.532 ms on the H200. */
static bool pairs(const row_emit *re) {
  return !re->ri.hold && !re->ri.fallback;
}

/* The cross-warp scratch of the reductions: one array per compute type
 * used (32 values), or null pointers for a warp per row. */
static void emit_shared(row_emit *re) {
  static const char letters[] = "fdil";
  static const char *const types[] = {"float", "double", "int", "long long"};
  bool used[4] = {false, false, false, false};
  for (int i = 0; i < re->a->k->n_nodes; i++) {
    const ir_node *n = &re->a->g->nodes[re->a->k->nodes[i]];
    if (cg_row_is_reduce(re->a->g, n))
      used[strchr(letters, cg_row_sm_letter(n->dtype)) - letters] = true;
  }
  for (int t = 0; t < 4; t++) {
    if (!used[t]) continue;
    if (re->ri.group > 32)
      cg_printf(&re->body, "  __shared__ %s kf_sm%c[%d];\n", types[t], letters[t],
                cg_row_one_barrier(re->a->t->knobs) ? 64 : 32);
    else
      cg_printf(&re->body, "  %s *kf_sm%c = 0;\n", types[t], letters[t]);
    cg_printf(&re->body, "  (void)kf_sm%c;\n", letters[t]);
    if (re->ri.split > 1) /* a slot per reduction of the row, read cluster-wide */
      cg_printf(&re->body, "  __shared__ %s kf_sc%c[%d];\n", types[t], letters[t], re->n_red);
  }
  if (!pairs(re)) return;
  /* the one-pass pairs' states: kf_smo<f|d> (softmax), kf_smw<f|d> (Welford) */
  bool pair[2][2] = {{false, false}, {false, false}};
  for (int i = 0; i < re->a->k->n_nodes; i++) {
    const ir_node *n = &re->a->g->nodes[re->a->k->nodes[i]];
    if (!cg_row_is_reduce(re->a->g, n)) continue;
    row_online_kind kind = cg_row_phase_at(re->a, true, i, &i);
    if (kind) pair[kind == ROW_ONLINE_WELFORD][n->dtype == KF_F64] = true;
  }
  for (int w = 0; w < 2; w++)
    for (int d = 0; d < 2; d++) {
      if (!pair[w][d]) continue;
      const char *st = w ? "kf_wf" : "kf_osm", *t = d ? "double" : "float";
      char nm[16];
      snprintf(nm, sizeof nm, "kf_sm%c%c", w ? 'w' : 'o', d ? 'd' : 'f');
      if (re->ri.group > 32)
        cg_printf(&re->body, "  __shared__ %s<%s> %s[%d];\n", st, t, nm,
                  cg_row_one_barrier(re->a->t->knobs) ? 64 : 32);
      else
        cg_printf(&re->body, "  %s<%s> *%s = 0;\n", st, t, nm);
      cg_printf(&re->body, "  (void)%s;\n", nm);
    }
}

/* The whole body of one row: scratch, held inputs, the phases, outputs. */
/* The block reductions of one row: one per phase (a paired phase is one). */
static int row_reductions(const row_emit *re) {
  const fuse_kernel *k = re->a->k;
  int n = 0;
  for (int i = 0; i < k->n_nodes; i++)
    if (cg_row_is_reduce(re->a->g, &re->a->g->nodes[k->nodes[i]])) {
      cg_row_phase_at(re->a, pairs(re), i, &i);
      n++;
    }
  return n;
}

static void emit_body(row_emit *re) {
  const fuse_kernel *k = re->a->k;
  re->n_red = row_reductions(re);
  re->i_red = 0;
  emit_shared(re);
  if (re->ri.hold) emit_hold(re);
  for (int i = 0; i < k->n_nodes; i++) {
    if (!cg_row_is_reduce(re->a->g, &re->a->g->nodes[k->nodes[i]])) continue;
    int last;
    row_online_kind kind = cg_row_phase_at(re->a, pairs(re), i, &last);
    if (kind)
      cg_row_emit_online(re, k->nodes[i], k->nodes[last], kind);
    else
      cg_row_emit_phase(re, k->nodes[i]);
    i = last;
  }
  cg_row_emit_outputs(re);
  cg_row_emit_row_outputs(re);
  cg_row_prefetch_next_rows(re); /* at the end: no register then */
  /* a row of one reduction would write its slot for the next row before
   * the other blocks of the cluster have read it */
  if (re->ri.split > 1 && re->n_red == 1) cg_puts(&re->body, "  kf_cluster_sync();\n");
}

static kf_status body_status(row_emit *re) {
  if (re->gen.failed) {
    snprintf(re->a->err, re->a->errsize, "%s: %s", re->a->k->name, re->gen.err);
    return re->gen.status;
  }
  return re->body.oom || re->align.oom ? KF_ERR_OUT_OF_MEMORY : KF_OK;
}

/* The path for unaligned pointers (rare: sliced or offset tensors): one
 * element per access, inputs re-read in every phase and the chunk loops
 * not unrolled. A second fully unrolled register-held copy of the row (32
 * chunks for 8192 bf16 columns) cost as much NVRTC time as the hot path
 * itself; this one costs a few percent of it. Written as its own function
 * <fn>_row1 into out; nothing when W is 1 (then the hot path has no
 * alignment to check and serves every row). */
static kf_status emit_fallback(const row_emit *hot, const char *params, cg_buf *out) {
  if (hot->ri.lanes == 1) return KF_OK;
  cg_emit_args *a = hot->a;
  row_emit re;
  memset(&re, 0, sizeof re);
  re.a = a;
  re.ri = hot->ri;
  re.ri.lanes = 1;
  re.ri.hold = re.ri.cache = false;
  re.ri.fallback = true;
  re.ri.split = 1; /* whole rows, in the cluster's rank 0 block */
  re.ri.st = (row_stage){.stages = 1};
  re.cols = hot->cols;
  const char *idx = a->part->index64 ? "long long" : "int";
  cg_gen_init(&re.gen, a->g, a->k, &re.body, idx);
  re.gen.vec = 1;
  re.gen.align = &re.align; /* scalar accesses: nothing to check */
  emit_body(&re);
  kf_status st = body_status(&re);
  if (st == KF_OK)
    cg_printf(
        out,
        "// The fallback for unaligned pointers: W = 1, inputs re-read per phase,\n"
        "// loops not unrolled (compiles fast; runs only on unaligned tensors).\n"
        "KF_INLINE void %s_row1(%s r, int lane, %s) {\n"
        "  enum { G = %d, COLS = %lld, W = 1, NV = (COLS + G - 1) / G, FULL = COLS %% G == 0,\n"
        "         kf_cb = 0 };\n"
        "%s}\n",
        a->part->fn, idx, params, re.ri.group, (long long)re.cols, cg_use(out, &re.body));
  if (out->oom && st == KF_OK) st = KF_ERR_OUT_OF_MEMORY;
  cg_gen_free(&re.gen);
  cg_buf_free(&re.body);
  cg_buf_free(&re.align);
  return st;
}

static kf_status fill(row_emit *re) {
  cg_emit_args *a = re->a;
  cg_part *p = a->part;
  const fuse_kernel *k = a->k;
  cg_buf params = {0}, args = {0}, fb = {0}, call = {0};
  cg_param_decls(a->g, p, &params);
  cg_param_args(p, &args);
  kf_status st = emit_fallback(re, cg_use(a->out, &params), &fb);
  if (re->ri.lanes > 1)
    cg_printf(&call, "%s_row1(r, lane, %s)", p->fn, cg_use(a->out, &args));
  else
    cg_printf(&call, "%s_row<1>(r, lane, %s)", p->fn, cg_use(a->out, &args));
  char rows[32], cols[32], gs[16], rpb[16], th[16], bl[16], la[16], w[16];
  snprintf(rows, sizeof rows, "%lld%s", (long long)k->rows, p->index64 ? "LL" : "");
  snprintf(cols, sizeof cols, "%lld", (long long)(k->cols / re->ri.split));
  snprintf(gs, sizeof gs, "%d", re->ri.group);
  snprintf(rpb, sizeof rpb, "%d", re->ri.rpb);
  snprintf(th, sizeof th, "%u", p->threads);
  if (p->persistent)
    snprintf(bl, sizeof bl, "gridDim.x"); /* the runtime sizes the grid */
  else
    snprintf(bl, sizeof bl, "%u", p->blocks);
  snprintf(la, sizeof la, "%d", p->launch_threads);
  snprintf(w, sizeof w, "%d", re->ri.lanes);
  char stages[8], split[8];
  snprintf(split, sizeof split, "%d", re->ri.split);
  snprintf(stages, sizeof stages, "%d", re->ri.st.stages);
  row_stage_holes sh;
  memset(&sh, 0, sizeof sh);
  cg_row_stage_holes(a, &re->ri.st, re->ri.group, re->ri.lanes, re->gen.idx,
                     cg_use(a->out, &params), cg_use(a->out, &args), &sh);
  cg_hole holes[] = {{"fn", p->fn},
                     {"IDX", p->index64 ? "long long" : "int"},
                     {"ROWS", rows},
                     {"COLS", cols},
                     {"G", gs},
                     {"RPB", rpb},
                     {"THREADS", th},
                     {"BLOCKS", bl},
                     {"LAUNCH", la},
                     {"W", w},
                     {"HOLD", re->ri.hold ? "held here" : "not here: looped"},
                     {"params", cg_use(a->out, &params)},
                     {"args", cg_use(a->out, &args)},
                     {"body", cg_use(a->out, &re->body)},
                     {"fallback", cg_use(a->out, &fb)},
                     {"fallback_call", cg_use(a->out, &call)},
                     {"aligned", cg_use_aligned(a->out, &re->align)},
                     {"stage", cg_use(a->out, &sh.stage)},
                     {"STAGES", stages},
                     {"SPLIT", split},
                     {"init", cg_use(a->out, &sh.init)},
                     {"top", cg_use(a->out, &sh.top)},
                     {"advance", cg_use(a->out, &sh.advance)},
                     {"finish", cg_use(a->out, &sh.finish)}};
  const char *tmpl = re->ri.split > 1                    ? "row_split.cu"
                     : cg_row_stage_template(&re->ri.st) ? "row_staged.cu"
                                                         : "row.cu";
  if (st == KF_OK &&
      !cg_fill(a->out, tmpl, holes, (int)(sizeof holes / sizeof holes[0]), a->err, a->errsize))
    st = KF_ERR_INTERNAL;
  if (st == KF_OK && (params.oom || args.oom || call.oom || sh.stage.oom || sh.init.oom ||
                      sh.top.oom || sh.advance.oom || sh.finish.oom))
    st = KF_ERR_OUT_OF_MEMORY;
  cg_row_stage_holes_free(&sh);
  cg_buf_free(&params);
  cg_buf_free(&args);
  cg_buf_free(&fb);
  cg_buf_free(&call);
  return st;
}

kf_status cg_emit_row(cg_emit_args *a) {
  row_emit re;
  memset(&re, 0, sizeof re);
  re.a = a;
  cg_row_choose(a, &re.ri);
  re.cols = a->k->cols;
  cg_gen_init(&re.gen, a->g, a->k, &re.body, a->part->index64 ? "long long" : "int");
  re.gen.vec = re.ri.lanes;
  re.gen.align = &re.align;
  emit_body(&re);
  kf_status st = body_status(&re);
  if (st == KF_OK) st = fill(&re);
  size_t wb = 0;
  for (int i = 0; i < a->k->n_outputs; i++) {
    size_t s = kf_dtype_size(a->g->nodes[a->k->outputs[i]].dtype) * (size_t)re.ri.lanes;
    if (s > wb) wb = s;
  }
  a->part->vec_bytes = (int)(wb > 16 ? 16 : wb);
  cg_gen_free(&re.gen);
  cg_buf_free(&re.body);
  cg_buf_free(&re.align);
  return st;
}
