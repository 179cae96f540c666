/* row_plan.c - the shape of a row kernel: lanes, threads per row, rows held
 * in registers or looped, split over a cluster, and its decisions line. */
#include "codegen/row_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/expr.h"
#include "codegen/index_ctx.h"
#include "codegen/part.h"
#include "ir/ops.h"
#include "ir/shape.h"

int64_t cg_row_numel(const ir_node *n) {
  int64_t m = 1;
  for (int d = 0; d < n->rank; d++) m *= n->shape[d];
  return m;
}

/* A reduction over more than one element; one of extent 1 is a reshape
 * (ir_is_copy_reduce), computed per element like the layout ops. */
bool cg_row_is_reduce(const kf_graph *g, const ir_node *n) {
  return ir_is_reduction(g, n);
}

/* The context of a full-row value: dims split into row dims and column
 * dims where their trailing product is cols; a plain linear index else. */
void cg_row_ctx(const ir_node *n, int64_t cols, cg_ctx *c) {
  int64_t p = 1;
  int s = n->rank;
  while (s > 0 && p < cols) p *= n->shape[--s];
  if (p == cols) {
    int bounds[3] = {0, s, n->rank};
    const char *vars[2] = {"r", "c"};
    cg_ctx_groups(c, n->rank, n->shape, 2, bounds, vars, VC_CONTIG);
  } else {
    char lin[64];
    snprintf(lin, sizeof lin, "r * %lld + c", (long long)cols);
    cg_ctx_linear(c, n->rank, n->shape, lin, VC_CONTIG);
  }
}

size_t cg_row_compute_size(kf_dtype dt) {
  return dt == KF_F64 || dt == KF_I64 ? 8 : 4;
}

/* Checks the kernel's reductions: each over trailing axes of a full row. */
static kf_status check_row(cg_emit_args *a) {
  const fuse_kernel *k = a->k;
  if (k->rows < 1 || k->cols < 1 || k->cols > INT32_MAX / 2) {
    snprintf(a->err, a->errsize, "%s: bad row extents %lld x %lld", k->name, (long long)k->rows,
             (long long)k->cols);
    return KF_ERR_UNSUPPORTED;
  }
  for (int i = 0; i < k->n_nodes; i++) {
    const ir_node *n = &a->g->nodes[k->nodes[i]];
    if (!cg_row_is_reduce(a->g, n)) continue;
    const ir_node *x = &a->g->nodes[n->args[0]];
    int64_t red = 1;
    bool trailing = true, seen_kept = false;
    for (int d = x->rank - 1; d >= 0; d--) {
      bool r = (n->axes >> d) & 1u;
      if (r) red *= x->shape[d];
      if (r && seen_kept && x->shape[d] != 1) trailing = false;
      if (!r && x->shape[d] != 1) seen_kept = true;
    }
    if (red != k->cols || cg_row_numel(x) != k->rows * k->cols || !trailing) {
      snprintf(a->err, a->errsize, "%s: reduction %%%d is not over the last %lld columns", k->name,
               (int)k->nodes[i], (long long)k->cols);
      return KF_ERR_UNSUPPORTED;
    }
  }
  return KF_OK;
}

/* Whether the reduction red's operand v is worth keeping in registers for
 * the phases after red: a computed full value (not a cast or layout of an
 * input: those cost one instruction) that another node of the kernel reads
 * again, e.g. softmax's exp(x - max), read by the sum and by the division. */
bool cg_row_cache_worthy(const cg_emit_args *a, int32_t red, int32_t v) {
  const fuse_kernel *k = a->k;
  const ir_node *n = &a->g->nodes[v];
  if (!cg_in_kernel(k, v) || cg_is_input(k, v) || cg_row_numel(n) != k->rows * k->cols)
    return false;
  ir_kind kind = ir_ops[n->op].kind;
  if (kind != KIND_UNARY && kind != KIND_BINARY && kind != KIND_POINTWISE) return false;
  if (n->op == IR_OP_CAST || n->op == IR_OP_NEG || n->op == IR_OP_ABS) return false;
  for (int i = 0; i < k->n_nodes; i++) {
    const ir_node *u = &a->g->nodes[k->nodes[i]];
    if (k->nodes[i] == red) continue;
    for (int j = 0; j < u->nargs; j++)
      if (u->args[j] == v) return true;
  }
  for (int i = 0; i < k->n_outputs; i++)
    if (k->outputs[i] == v) return true;
  return false;
}

/* Bytes per column of the cached reduction operands (each counted once). */
static size_t cache_bytes(const cg_emit_args *a) {
  const fuse_kernel *k = a->k;
  size_t b = 0;
  for (int i = 0; i < k->n_nodes; i++) {
    const ir_node *n = &a->g->nodes[k->nodes[i]];
    if (!cg_row_is_reduce(a->g, n) || !cg_row_cache_worthy(a, k->nodes[i], n->args[0])) continue;
    bool dup = false;
    for (int j = 0; j < i; j++) {
      const ir_node *m = &a->g->nodes[k->nodes[j]];
      if (cg_row_is_reduce(a->g, m) && m->args[0] == n->args[0]) dup = true;
    }
    if (!dup) b += cg_row_compute_size(a->g->nodes[n->args[0]].dtype);
  }
  return b;
}

/* The kernel's reduction after node position i (k->nodes index), or -1. */
static int next_reduce(const cg_emit_args *a, int i) {
  for (int j = i + 1; j < a->k->n_nodes; j++)
    if (cg_row_is_reduce(a->g, &a->g->nodes[a->k->nodes[j]])) return j;
  return -1;
}

/* The phase of the reduction at node position i: paired (when `pair`) with
 * the next reduction in one pass, *last set to that reduction's position,
 * or a phase of its own (ROW_ONLINE_NONE, *last = i). Every walk over the
 * phases (planning, scratch, emission) goes through here, so they agree.
 * KFUSE_ROW_ONLINE=0 keeps one pass per reduction: for measuring the
 * pairing against the phases it replaces. */
row_online_kind cg_row_phase_at(const cg_emit_args *a, bool pair, int i, int *last) {
  *last = i;
  if (!pair || !a->t->knobs->row_online) return ROW_ONLINE_NONE;
  int j = next_reduce(a, i);
  row_online_kind kind =
      j < 0 ? ROW_ONLINE_NONE : cg_row_online(a->g, a->k, a->k->nodes[i], a->k->nodes[j]);
  if (kind) *last = j;
  return kind;
}

/* How many phases a looped row saves by online softmax / Welford. */
static int online_pairs(const cg_emit_args *a) {
  int n = 0;
  for (int i = 0; i < a->k->n_nodes; i++)
    if (cg_row_is_reduce(a->g, &a->g->nodes[a->k->nodes[i]]))
      n += cg_row_phase_at(a, true, i, &i) != ROW_ONLINE_NONE;
  return n;
}

/* KFUSE_ROW_THREADS=N (a power of two, 64..1024) sets the threads per row
 * of rows longer than 1024 columns: a tuning knob for measurements. */
static int threads_override(const core_knobs *k) {
  return (int)k->row_threads;
}

/* KFUSE_ROW_MIN_BLOCKS=N (1..32) asks ptxas for N resident blocks per SM
 * of held row kernels too (__launch_bounds__(threads, N)), and of looped
 * ones instead of full occupancy: a tuning knob for measurements; the
 * runtime's occupancy report shows any spill. */
static int min_blocks_override(const core_knobs *k) {
  return (int)k->row_min_blocks;
}

/* KFUSE_ROW_SMEM_PAD=BYTES (1..227 KB) gives each row block that much
 * dynamic shared memory it does not use: a tuning knob that caps the
 * resident blocks per SM from above (80000 leaves 2 blocks of 512 threads
 * per SM on sm_90, Inductor's layernorm occupancy), which
 * KFUSE_ROW_MIN_BLOCKS cannot. The decisions line names it. */
static uint32_t smem_pad(const cg_target *t) {
  long v = t->knobs->row_smem_pad; /* 0..227 KB (knobs.def); the target may allow less */
  return v >= 1 && v <= t->max_smem_per_block ? (uint32_t)v : 0;
}

/* Waves of resident blocks in a row grid (grid-stride over rows beyond
 * them): 32, or KFUSE_ROW_WAVES=N (1..1024, a tuning knob). With 8, f32
 * rows of 512 threads got 4224 blocks for 8192 rows: most ran two rows,
 * the last 256 one, a ragged tail; 32 gives a block per row (H200:
 * softmax_f32 0.1345 -> 0.1323 ms, layernorm_f32 0.1362 -> 0.1346 ms;
 * docs/performance.md, G1). Rows held by a cluster take 4 (counted in
 * blocks of 512 as if 4 were resident per SM: 264 clusters for 512 rows of
 * 131072 f32, about two rows each), measured faster than a cluster per row,
 * whose launches wait for 8 free slots in one GPC: softmax f32 0.1743 ->
 * 0.1676 ms, layernorm f32 0.1933 -> 0.1779 (1 and 2 waves: 0.1900 and
 * 0.1717; performance.md, "Rows held by a cluster"). */
static int64_t row_waves(const core_knobs *k, bool split) {
  return k->row_waves ? k->row_waves : split ? 4 : 32;
}

/* KFUSE_ROW_RECOMPUTE=1: the output phase of a held row computes its
 * values again from the held inputs instead of keeping the reduction
 * phases' values alive (each held f32-computed input read through
 * kf_fresh, which the compiler cannot merge with the earlier reads): fewer
 * registers live across the reductions, more instructions. A knob for
 * measuring registers against instructions (softmax_bf16: 58 registers
 * either way with the operand cache on or off, as ptxas merges the two
 * computations of exp(x - max)). */
bool cg_row_recompute(const core_knobs *k) {
  return k->row_recompute;
}

/* KFUSE_ROW_HOLD=0: rows are never held in registers; every row kernel
 * takes the looped form (inputs read again per phase, from L2 while the
 * row is still there; paired phases in one pass), as Inductor's two-pass
 * layernorm does. A knob for measuring the two forms on the same rows. */
static bool hold_allowed(const core_knobs *k) {
  return k->row_hold;
}

/* Registers per thread (32-bit words) that held rows may take: past about
 * 64 the kernel's occupancy drops below 3 blocks of 512 per SM. */
enum { ROW_HOLD_WORDS = 64 };

/* A row split over a cluster holds at most this many words per thread, so
 * that two blocks of 512 threads stay resident per SM (a cluster of 8
 * then spans four SMs, and 33 rows are in flight on an H200). */
enum { ROW_SPLIT_WORDS = 32 };

/* KFUSE_ROW_SPLIT=0: rows too long for one block's registers take the
 * looped form even on sm_90 (a knob for measuring the two forms). */
static bool split_allowed(const core_knobs *k) {
  return k->row_split;
}

/* Threads per row for `cols` columns of W lanes: about `accesses` accesses
 * of W per thread, a power of two from 32 to 512. */
static int64_t group_for(int64_t cols, int w, int64_t accesses) {
  int64_t gsz = 32;
  while (gsz < 512 && gsz * accesses * w < cols) gsz *= 2;
  return gsz;
}

/* 2-byte rows of at least 8192 columns take 8 accesses per thread, others
 * 4 (see choose). */
static int64_t accesses_for(int64_t cols, int w) {
  return w >= 8 && cols >= 128 * 8 * w ? 8 : 4;
}

/* Elements per thread of `cols` columns over gsz threads of W lanes. */
static int64_t per_thread(int64_t cols, int64_t gsz, int w) {
  return cg_ceil_div(cols, gsz * w) * w;
}

/* Doubles *gsz (up to max_g) while the held bytes per thread exceed
 * `words` 32-bit words; returns the elements per thread it ends with. */
static int64_t fit_group(int64_t cols, int w, size_t held, int words, int64_t max_g, int64_t *gsz) {
  int64_t ept = per_thread(cols, *gsz, w);
  while ((int64_t)held * ept > 4 * words && *gsz < max_g) {
    *gsz *= 2;
    ept = per_thread(cols, *gsz, w);
  }
  return ept;
}

/* KFUSE_ROW_SPLIT_THREADS=N (a power of two, 128..1024) sets the threads of
 * each block of a cluster-held row (a knob for measurements). */
static int64_t split_threads(const core_knobs *k) {
  return k->row_split_threads;
}

/* For a row that one block cannot hold: the smallest cluster (2, 4 or 8
 * blocks, the portable sizes) whose blocks each hold cols / S columns in at
 * most ROW_SPLIT_WORDS words per thread with at most 512 threads; 0 when
 * none does (then the looped form). sm_90 only, a kernel alone in its
 * launch (the cluster shape is the entry's), whole lanes per block, and
 * rows of 4-byte types only (minsz: the narrowest full-row type): measured
 * on the H200, f32 rows gain 10-15% over the looped form, while 262144
 * bf16 columns lose 27% (101 registers: one block of 512 per SM) and f64
 * rows took 74 registers, which the occupancy check splits
 * (performance.md, "Rows held by a cluster"). */
static int split_for(const cg_emit_args *a, size_t held, size_t minsz, int w, int64_t *group,
                     int64_t *ept) {
  const fuse_kernel *k = a->k;
  if (a->t->cc_major < 9 || !a->part->alone || !split_allowed(a->t->knobs) ||
      !hold_allowed(a->t->knobs) || minsz != 4)
    return 0;
  for (int S = 2; S <= 8; S *= 2) {
    if (k->cols % ((int64_t)S * w)) continue;
    int64_t slice = k->cols / S;
    if (slice <= 1024) continue;
    int64_t st = split_threads(a->t->knobs);
    int64_t gsz = st ? st : group_for(slice, w, accesses_for(slice, w));
    int64_t e =
        st ? per_thread(slice, gsz, w) : fit_group(slice, w, held, ROW_SPLIT_WORDS, 512, &gsz);
    if ((int64_t)held * e <= 4 * ROW_SPLIT_WORDS) {
      *group = gsz;
      *ept = e;
      return S;
    }
  }
  return 0;
}

/* Looped row kernels of at most this many nodes ask for full occupancy. */
enum { ROW_BOUND_NODES = 16 };

void cg_row_choose(cg_emit_args *a, row_info *ri) {
  const fuse_kernel *k = a->k;
  const kf_graph *g = a->g;
  size_t minsz = 8, held = 0;
  for (int i = 0; i < k->n_inputs; i++) {
    const ir_node *n = &g->nodes[k->inputs[i]];
    if (cg_row_numel(n) != k->rows * k->cols) continue;
    if (kf_dtype_size(n->dtype) < minsz) minsz = kf_dtype_size(n->dtype);
    held += kf_dtype_size(n->dtype); /* held in the storage type */
  }
  for (int i = 0; i < k->n_outputs; i++) {
    const ir_node *n = &g->nodes[k->outputs[i]];
    if (cg_row_numel(n) == k->rows * k->cols && kf_dtype_size(n->dtype) < minsz)
      minsz = kf_dtype_size(n->dtype);
  }
  int w = (int)(16 / minsz);
  if (w > 8) w = 8;
  while (w > 1 && k->cols % w) w /= 2;
  ri->lanes = w;
  /* about 4 accesses of W per thread for 4-byte and wider types (16 f32
   * elements: 512 threads for 8192 f32 columns), 8 for 2-byte types (64
   * bf16 elements: 128 threads for 8192 columns). The per-row reduction
   * overhead is shared by more elements, and 2-byte rows stay packed two
   * to a register, so 8 accesses hold 32 words. H200, 8192 columns, same
   * run: softmax_bf16 0.0716 ms at 256 threads, 0.0701 at 128 (96
   * registers, 5 resident rows per SM instead of 4), 0.0819 at 512;
   * layernorm_bf16 0.0721 -> 0.0710, add_rmsnorm_bf16 0.1350 -> 0.1341;
   * f32 rows flat from 128 to 1024 threads (docs/performance.md, R3).
   * Shorter 2-byte rows keep 4 accesses (at least 128 threads; not
   * measured otherwise). A warp per row up to 1024 columns. */
  int64_t gsz = group_for(k->cols, w, accesses_for(k->cols, w));
  if (k->cols <= 1024)
    gsz = 32;
  else if (threads_override(a->t->knobs))
    gsz = threads_override(a->t->knobs);
  /* registers for held inputs: at most ROW_HOLD_WORDS words per thread */
  int64_t ept = fit_group(k->cols, w, held, ROW_HOLD_WORDS, 1024, &gsz);
  ri->hold = (int64_t)held * ept <= 4 * ROW_HOLD_WORDS && hold_allowed(a->t->knobs);
  int S = ri->hold ? 0 : split_for(a, held, minsz, w, &gsz, &ept);
  ri->split = S > 1 ? S : 1;
  if (S > 1) ri->hold = true;
  if (!ri->hold) gsz = 512;
  ri->cache = ri->hold &&
              (int64_t)(held + cache_bytes(a)) * ept <=
                  4 * (ri->split > 1 ? ROW_SPLIT_WORDS : ROW_HOLD_WORDS) &&
              !cg_row_recompute(a->t->knobs);
  size_t words = 4 * (ri->split > 1 ? ROW_SPLIT_WORDS : ROW_HOLD_WORDS);
  ri->room = ri->cache ? words / (size_t)(ept > 0 ? ept : 1) - held - cache_bytes(a) : 0;
  ri->group = (int)gsz;
  ri->rpb = gsz == 32 ? 8 : 1;
  ri->fallback = false;
  ri->st = ri->split > 1 ? (row_stage){.stages = 1}
                         : cg_row_stage_plan(a, ri->hold, ri->group, ri->rpb, ri->lanes);
}

kf_status cg_plan_row(cg_emit_args *a) {
  kf_status st = check_row(a);
  if (st != KF_OK) return st;
  row_info ri;
  cg_row_choose(a, &ri);
  cg_part *p = a->part;
  const fuse_kernel *k = a->k;
  p->lanes = ri.lanes;
  p->threads = (uint32_t)(ri.group * ri.rpb);
  /* A looped row streams from memory and wants every resident block the SM
   * holds: without the bound, the online-softmax state took ptxas to 38
   * registers for 512 threads (3 blocks per SM instead of 4); with it, 32
   * and no spills (8 bytes for bf16 rows of W = 8). Only for kernels of a
   * few nodes (softmax, layernorm: 5-13): a long fused chain needs more
   * registers, and forcing 32 would spill it. The runtime's occupancy
   * report shows any spill. */
  int mb = min_blocks_override(a->t->knobs);
  if (!ri.hold && k->n_nodes <= ROW_BOUND_NODES && !mb)
    p->min_blocks = a->t->max_threads_per_sm / (int)p->threads;
  else if (mb)
    p->min_blocks = mb < a->t->max_threads_per_sm / (int)p->threads
                        ? mb
                        : a->t->max_threads_per_sm / (int)p->threads;
  p->smem = smem_pad(a->t);
  int64_t cap = (int64_t)a->t->sm_count * (a->t->max_threads_per_sm / p->threads) *
                row_waves(a->t->knobs, ri.split > 1);
  /* a split row: a cluster of ri.split blocks per row, whole clusters */
  int64_t per = ri.split;
  cap = cg_min64(cap, p->max_blocks ? p->max_blocks : CG_MAX_GRID) / per * per;
  cg_part_grid_stride(p, cg_min64(cg_ceil_div(k->rows, ri.rpb) * per, cap < per ? per : cap));
  p->cluster = ri.split;
  p->persistent = ri.st.persistent;
  p->max_offset = k->rows * k->cols - 1;
  int64_t reach = k->rows * k->cols + (int64_t)p->blocks / per * ri.rpb * k->cols;
  cg_index_type(reach, &p->index64);
  char split_text[128] = "";
  if (ri.split > 1)
    snprintf(split_text, sizeof split_text,
             " (%d blocks per row, %lld columns each, partials exchanged in shared memory)",
             ri.split, (long long)(k->cols / ri.split));
  snprintf(p->decisions, sizeof p->decisions,
           "row: %lld rows x %lld cols, %s (%d threads per row, %d rows per block), %d lanes "
           "per access, %s%s%s%s, %s index, %u blocks x %u threads%s%s",
           (long long)k->rows, (long long)k->cols,
           ri.group == 32 ? "warp per row" : "block per row", ri.group, ri.rpb, ri.lanes,
           ri.split > 1          ? "row held in the registers of a thread block cluster"
           : ri.hold             ? "row held in registers"
           : online_pairs(a) > 0 ? "looped: inputs re-read per phase, paired phases in one "
                                   "pass (online softmax / Welford)"
                                 : "looped: inputs re-read per phase",
           ri.cache && cache_bytes(a) ? " (reused reduction operands too)" : "", split_text,
           cg_row_stage_words(&ri.st), p->index64 ? "64-bit" : "32-bit", p->blocks, p->threads,
           ri.st.persistent ? " at most (persistent: as many as are resident)" : "",
           p->smem ? ", unused shared memory padding (KFUSE_ROW_SMEM_PAD)" : "");
  return KF_OK;
}
