/* transpose.c - the part function of a pointwise kernel whose transposes
 * move the innermost axis (fuser/tile.h decides which): shared-memory tiles
 * of the iteration's axes b and a, each side's accesses coalesced and
 * vectorized (templates/transpose.cu). */
#include "codegen/transpose.h"

#include <stdio.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/index_ctx.h"
#include "codegen/part.h"
#include "codegen/pointwise.h"
#include "codegen/template.h"
#include "fuser/tile.h"

/* The kernel's tiling: which transposes, the tile and lanes of each side. */
typedef struct tiling {
  fuse_tile t;
  int a, b;       /* iteration axes: a the innermost, b the transposed one */
  int64_t ea, eb; /* their extents */
  int64_t c;      /* values per tile element: the kept run (1: none) */
  int64_t nta, ntb, batch, tiles;
  int v1, v2; /* lanes: phase 1 along b, phase 2 along a */
  int size;   /* T: 32, or 64 when a side moves 8 lanes */
} tiling;

/* The widest of w, w/2, ... 1 that divides extent: a chunk of lanes then
 * never straddles a row, and its first lane's linear index is a multiple
 * of the lanes (whole 16-byte words). */
static int fit(int w, int64_t extent) {
  while (w > 1 && extent % w != 0) w /= 2;
  return w;
}

static bool find_tiling(const kf_graph *g, const fuse_kernel *k, tiling *tl) {
  memset(tl, 0, sizeof *tl);
  if (!fuse_tile_find(g, k, &tl->t)) return false;
  tl->a = k->rank - 1 - tl->t.kept;
  tl->b = tl->t.axis;
  tl->c = tl->t.run;
  tl->ea = k->shape[tl->a];
  tl->eb = k->shape[tl->b];
  int w = cg_pointwise_lanes(g, k);
  /* lanes run over a row's values: along b and the run (phase 1), a and
   * the run (phase 2) */
  tl->v1 = fit(w, tl->eb * tl->c);
  tl->v2 = fit(w, tl->ea * tl->c);
  /* 64 x 64 when a side moves 8 lanes (each thread 16 bytes), or when both
   * extents fill such tiles: each thread then moves 4 rows of a side
   * (f32: 4 float4 loads in flight per thread, not 1); 32 x 32 otherwise,
   * so that small extents do not leave most threads idle */
  bool big = tl->ea >= 64 && tl->eb >= 64;
  tl->size = (tl->v1 == 8 || tl->v2 == 8 || big) ? fuse_tile_edge_max(&tl->t) : 32;
  tl->nta = cg_ceil_div(tl->ea, tl->size);
  tl->ntb = cg_ceil_div(tl->eb, tl->size);
  tl->batch = k->numel / (tl->ea * tl->eb * tl->c);
  tl->tiles = tl->batch * tl->nta * tl->ntb;
  return true;
}

bool cg_transpose_tiled(const kf_graph *g, const fuse_kernel *k) {
  tiling tl;
  return find_tiling(g, k, &tl);
}

kf_status cg_plan_transpose(cg_emit_args *a) {
  const fuse_kernel *k = a->k;
  cg_part *p = a->part;
  tiling tl;
  if (!find_tiling(a->g, k, &tl)) return cg_plan_pointwise(a);
  p->tiled = true;
  p->threads = 256;
  p->lanes = tl.v2;
  cg_part_grid_stride(p, tl.tiles);
  int64_t most = k->numel;
  for (int i = 0; i < k->n_inputs; i++) {
    int64_t n = kf_value_numel(a->g, k->inputs[i]);
    if (n > most) most = n;
  }
  p->max_offset = most - 1;
  /* the tile counter may run one grid stride past the tiles */
  int64_t reach = tl.tiles + (int64_t)p->blocks;
  cg_index_type(reach > p->max_offset ? reach : p->max_offset, &p->index64);
  return KF_OK;
}

/* The iteration context of a phase: batch axes from kf_bt, axis b from
 * kf_ib, axis a from kf_ia, the kept run (the axes after a) from kf_ic. */
static void phase_ctx(const fuse_kernel *k, const tiling *tl, int vclass, cg_ctx *c) {
  static const char *const vars[4] = {"kf_bt", "kf_ib", "kf_ia", "kf_ic"};
  int group[KF_MAX_RANK];
  for (int d = 0; d < k->rank; d++) group[d] = d > tl->a ? 3 : d == tl->a ? 2 : d == tl->b ? 1 : 0;
  cg_ctx_assign(c, k->rank, k->shape, group, vars, vclass);
}

/* Phase 1: each tiled transpose's operand at the tile element, in the
 * operand's order, into its tile: kf_s<i>[kf_ra][kf_cb + j]. */
static void gen_phase1(cg_gen *gen, const fuse_kernel *k, const tiling *tl) {
  cg_ctx c;
  phase_ctx(k, tl, VC_GATHER, &c);
  for (int i = 0; i < tl->t.n; i++) {
    const ir_node *n = &gen->g->nodes[tl->t.nodes[i]];
    const ir_node *x = &gen->g->nodes[n->args[0]];
    cg_ctx xc;
    cg_ctx_transpose(gen, &c, x->rank, x->shape, n->perm, &xc);
    /* the operand's innermost coordinate is kf_ib, its stride 1, and the
     * chunk starts at a multiple of v1, which divides that extent */
    xc.vclass = tl->v1 > 1 ? VC_CONTIG : VC_GATHER;
    char name[160];
    cg_gen_value(gen, n->args[0], &xc, name, sizeof name);
    cg_line(gen, "kf_s%d[kf_ra][kf_cb + j] = %s;", i, name);
  }
}

/* Phase 2: the outputs in the iteration's order, the tiled transposes
 * bound to their tiles. */
static void gen_phase2(cg_gen *gen, const fuse_kernel *k, const tiling *tl, cg_buf *decl,
                       cg_buf *store) {
  cg_ctx c;
  phase_ctx(k, tl, tl->v2 > 1 ? VC_CONTIG : VC_GATHER, &c);
  char key[512];
  cg_ctx_key(&c, key, sizeof key);
  for (int i = 0; i < tl->t.n; i++) {
    char expr[96];
    if (tl->c == 1)
      snprintf(expr, sizeof expr, "kf_s%d[kf_ca + j][kf_rb]", i);
    else /* value kf_ca + j of the row: element (kf_ca + j) / C, value % C */
      snprintf(expr, sizeof expr, "kf_s%d[(kf_ca + j) / %lld][kf_rb * %lld + (kf_ca + j) %% %lld]",
               i, (long long)tl->c, (long long)tl->c, (long long)tl->c);
    cg_gen_bind(gen, tl->t.nodes[i], key, expr);
  }
  char lin[512];
  cg_ctx_lin(&c, lin, sizeof lin);
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &gen->g->nodes[v];
    char name[160];
    cg_gen_stored(gen, v, &c, name, sizeof name);
    cg_printf(decl, "  %s o%d[W];\n", cg_compute_type(n->dtype), (int)v);
    cg_line(gen, "o%d[j] = %s;", (int)v, name);
    cg_printf(store, "      kf_stv<%s, W>(p%d + (%s), o%d);\n", cg_storage_type(n->dtype), (int)v,
              lin, (int)v);
    int wb = (int)kf_dtype_size(n->dtype) * tl->v2;
    cg_printf(gen->align, " && kf_aligned(p%d, %d)", (int)v, wb > 16 ? 16 : wb);
  }
}

/* The shared tiles, their parameters and arguments. */
static void tiles_text(const kf_graph *g, const tiling *tl, cg_buf *smem, cg_buf *sparams,
                       cg_buf *sargs) {
  for (int i = 0; i < tl->t.n; i++) {
    const char *ct = cg_compute_type(g->nodes[tl->t.nodes[i]].dtype);
    int row = tl->size * (int)tl->c + 1;
    cg_printf(smem, "  __shared__ %s kf_s%d[%d][%d];\n", ct, i, tl->size, row);
    cg_printf(sparams, "%s%s (*__restrict__ kf_s%d)[%d]", i ? ", " : "", ct, i, row);
    cg_printf(sargs, "%skf_s%d", i ? ", " : "", i);
  }
}

static void decide(const kf_graph *g, const fuse_kernel *k, const tiling *tl, cg_part *p) {
  size_t in_w = 0, out_w = 0;
  for (int i = 0; i < tl->t.n; i++) {
    size_t s = kf_dtype_size(g->nodes[g->nodes[tl->t.nodes[i]].args[0]].dtype) * (size_t)tl->v1;
    if (s > in_w) in_w = s;
  }
  for (int i = 0; i < k->n_outputs; i++) {
    size_t s = kf_dtype_size(g->nodes[k->outputs[i]].dtype) * (size_t)tl->v2;
    if (s > out_w) out_w = s;
  }
  char elem[48] = "";
  if (tl->c > 1) snprintf(elem, sizeof elem, " of %lld-value elements", (long long)tl->c);
  in_w = in_w > 16 ? 16 : in_w;
  out_w = out_w > 16 ? 16 : out_w;
  snprintf(p->decisions, sizeof p->decisions,
           "tiled transpose: %d transpose%s through %dx%d shared tiles%s (row stride %d words) of "
           "axes %d x %d, %lld tiles (%lld x %lld, batch %lld); %d lanes in (%zu-byte loads), "
           "%d lanes out (%zu-byte stores); %s index, %u blocks x %u threads, grid-stride",
           tl->t.n, tl->t.n > 1 ? "s" : "", tl->size, tl->size, elem, tl->size * (int)tl->c + 1,
           tl->b, tl->a, (long long)tl->tiles, (long long)tl->ntb, (long long)tl->nta,
           (long long)tl->batch, tl->v1, in_w, tl->v2, out_w, p->index64 ? "long long" : "int",
           p->blocks, p->threads);
  p->vec_bytes = (int)(in_w > out_w ? in_w : out_w);
}

typedef struct texts {
  cg_buf decl1, pre1, body1, align1, decl2, pre2, body2, align2, store2;
  cg_buf params, args, smem, sparams, sargs;
} texts;

static bool texts_oom(const texts *x) {
  const cg_buf *b = &x->decl1;
  for (size_t i = 0; i < sizeof *x / sizeof *b; i++)
    if (b[i].oom) return true;
  return false;
}

static void texts_free(texts *x) {
  cg_buf *b = &x->decl1;
  for (size_t i = 0; i < sizeof *x / sizeof *b; i++) cg_buf_free(&b[i]);
}

/* Runs one phase's generator over its buffers; false with the error in a
 * when it failed. */
static bool run_gen(cg_emit_args *a, cg_gen *gen, kf_status *st) {
  if (!gen->failed) return true;
  snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen->err);
  *st = gen->status;
  return false;
}

static kf_status fill(cg_emit_args *a, const tiling *tl, texts *x) {
  cg_part *p = a->part;
  cg_buf *out = a->out;
  char n[18][32];
  int tc = tl->size * (int)tl->c; /* values of a tile row */
  const char *idx = p->index64 ? "long long" : "int";
  const char *ll = p->index64 ? "LL" : "";
  snprintf(n[0], 32, "%d", tl->size);
  snprintf(n[1], 32, "%d", tc);
  snprintf(n[2], 32, "%d", tl->v1);
  snprintf(n[3], 32, "%d", tl->v2);
  snprintf(n[4], 32, "%d", 256 * tl->v1 / tc);
  snprintf(n[5], 32, "%d", 256 * tl->v2 / tc);
  snprintf(n[6], 32, "%lld%s", (long long)tl->ea, ll);
  snprintf(n[7], 32, "%lld%s", (long long)tl->eb, ll);
  snprintf(n[8], 32, "%lld%s", (long long)tl->nta, ll);
  snprintf(n[9], 32, "%lld%s", (long long)tl->ntb, ll);
  snprintf(n[10], 32, "%lld%s", (long long)tl->tiles, ll);
  snprintf(n[11], 32, "%u", p->threads);
  snprintf(n[12], 32, "%u", p->blocks);
  snprintf(n[13], 32, "%d", p->launch_threads);
  snprintf(n[14], 32, "%lld", (long long)tl->c);
  snprintf(n[15], 32, "%lld%s", (long long)(tl->ea * tl->c), ll);
  snprintf(n[16], 32, "%lld%s", (long long)(tl->eb * tl->c), ll);
  cg_hole holes[] = {{"fn", p->fn},
                     {"BID", cg_part_bid_type(p)},
                     {"IDX", idx},
                     {"T", n[0]},
                     {"TC", n[1]},
                     {"C", n[14]},
                     {"EAC", n[15]},
                     {"EBC", n[16]},
                     {"V1", n[2]},
                     {"V2", n[3]},
                     {"S1", n[4]},
                     {"S2", n[5]},
                     {"EA", n[6]},
                     {"EB", n[7]},
                     {"NTA", n[8]},
                     {"NTB", n[9]},
                     {"NTILES", n[10]},
                     {"THREADS", n[11]},
                     {"BLOCKS", n[12]},
                     {"LAUNCH", n[13]},
                     {"params", cg_use(out, &x->params)},
                     {"args", cg_use(out, &x->args)},
                     {"smem", cg_use(out, &x->smem)},
                     {"sparams", cg_use(out, &x->sparams)},
                     {"sargs", cg_use(out, &x->sargs)},
                     {"decl1", cg_use(out, &x->decl1)},
                     {"pre1", cg_use(out, &x->pre1)},
                     {"body1", cg_use(out, &x->body1)},
                     {"decl2", cg_use(out, &x->decl2)},
                     {"pre2", cg_use(out, &x->pre2)},
                     {"body2", cg_use(out, &x->body2)},
                     {"store2", cg_use(out, &x->store2)},
                     {"aligned1", cg_use_aligned(out, &x->align1)},
                     {"aligned2", cg_use_aligned(out, &x->align2)}};
  if (!cg_fill(out, "transpose.cu", holes, (int)(sizeof holes / sizeof holes[0]), a->err,
               a->errsize))
    return KF_ERR_INTERNAL;
  return KF_OK;
}

static void gen_setup(cg_gen *gen, cg_emit_args *a, cg_buf *body, cg_buf *pre, cg_buf *decl,
                      cg_buf *align, int vec) {
  cg_gen_init(gen, a->g, a->k, body, a->part->index64 ? "long long" : "int");
  gen->vec = vec;
  gen->pre = pre;
  gen->pre_decl = decl;
  gen->align = align;
  gen->indent = 2;
}

kf_status cg_emit_transpose(cg_emit_args *a) {
  tiling tl;
  if (!find_tiling(a->g, a->k, &tl)) {
    snprintf(a->err, a->errsize, "%s: not a tiled transpose", a->k->name);
    return KF_ERR_INTERNAL;
  }
  texts x = {0};
  kf_status st = KF_OK;
  cg_gen g1, g2;
  gen_setup(&g1, a, &x.body1, &x.pre1, &x.decl1, &x.align1, tl.v1);
  gen_setup(&g2, a, &x.body2, &x.pre2, &x.decl2, &x.align2, tl.v2);
  g2.indent = 3; /* inside the phase-2 struct's run */
  gen_phase1(&g1, a->k, &tl);
  gen_phase2(&g2, a->k, &tl, &x.decl2, &x.store2);
  tiles_text(a->g, &tl, &x.smem, &x.sparams, &x.sargs);
  cg_param_decls(a->g, a->part, &x.params);
  cg_param_args(a->part, &x.args);
  if (run_gen(a, &g1, &st) && run_gen(a, &g2, &st)) st = fill(a, &tl, &x);
  decide(a->g, a->k, &tl, a->part);
  if (st == KF_OK && texts_oom(&x)) st = KF_ERR_OUT_OF_MEMORY;
  cg_gen_free(&g1);
  cg_gen_free(&g2);
  texts_free(&x);
  return st;
}
