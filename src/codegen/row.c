/* row.c - the part function of a row kernel: reductions over the innermost
 * axis (rows x cols), pointwise work before, between and after them, the
 * row held in registers when it fits (templates/row.cu). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/row_online.h"
#include "codegen/row_stage.h"
#include "core/alloc.h"

typedef struct row_info {
  int lanes;       /* W */
  int group;       /* threads per row */
  int rpb;         /* rows per block */
  bool hold;       /* full-row inputs held in registers (storage type) */
  bool cache;      /* reduction operands reused later kept in registers */
  bool fallback;   /* the unaligned path: W = 1, looped, loops not unrolled */
  int split;       /* > 1: the row held by a cluster of this many blocks, each
                      holding cols / split columns (sm_90; row_split.cu) */
  row_stage st;    /* staged rows (row_stage.h): off by default */
  size_t room;     /* bytes per column left for values kept across phases */
} row_info;

static int64_t numel_of(const ir_node *n) {
  int64_t m = 1;
  for (int d = 0; d < n->rank; d++) m *= n->shape[d];
  return m;
}

/* A reduction over more than one element; one of extent 1 is a reshape
 * (ir_is_copy_reduce), computed per element like the layout ops. */
static bool is_reduce(const kf_graph *g, const ir_node *n) {
  return ir_is_reduction(g, n);
}

/* The context of a full-row value: dims split into row dims and column
 * dims where their trailing product is cols; a plain linear index else. */
static void row_ctx(const ir_node *n, int64_t cols, cg_ctx *c) {
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

static size_t compute_size(kf_dtype dt) { return dt == KF_F64 || dt == KF_I64 ? 8 : 4; }

/* Checks the kernel's reductions: each over trailing axes of a full row. */
static kf_status check_row(cg_emit_args *a) {
  const fuse_kernel *k = a->k;
  if (k->rows < 1 || k->cols < 1 || k->cols > INT32_MAX / 2) {
    snprintf(a->err, a->errsize, "%s: bad row extents %lld x %lld", k->name,
             (long long)k->rows, (long long)k->cols);
    return KF_ERR_UNSUPPORTED;
  }
  for (int i = 0; i < k->n_nodes; i++) {
    const ir_node *n = &a->g->nodes[k->nodes[i]];
    if (!is_reduce(a->g, n)) continue;
    const ir_node *x = &a->g->nodes[n->args[0]];
    int64_t red = 1;
    bool trailing = true, seen_kept = false;
    for (int d = x->rank - 1; d >= 0; d--) {
      bool r = (n->axes >> d) & 1u;
      if (r) red *= x->shape[d];
      if (r && seen_kept && x->shape[d] != 1) trailing = false;
      if (!r && x->shape[d] != 1) seen_kept = true;
    }
    if (red != k->cols || numel_of(x) != k->rows * k->cols || !trailing) {
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
static bool cache_worthy(const cg_emit_args *a, int32_t red, int32_t v) {
  const fuse_kernel *k = a->k;
  const ir_node *n = &a->g->nodes[v];
  if (!cg_in_kernel(k, v) || cg_is_input(k, v) || numel_of(n) != k->rows * k->cols) return false;
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
    if (!is_reduce(a->g, n) || !cache_worthy(a, k->nodes[i], n->args[0])) continue;
    bool dup = false;
    for (int j = 0; j < i; j++) {
      const ir_node *m = &a->g->nodes[k->nodes[j]];
      if (is_reduce(a->g, m) && m->args[0] == n->args[0]) dup = true;
    }
    if (!dup) b += compute_size(a->g->nodes[n->args[0]].dtype);
  }
  return b;
}

/* The kernel's reduction after node position i (k->nodes index), or -1. */
static int next_reduce(const cg_emit_args *a, int i) {
  for (int j = i + 1; j < a->k->n_nodes; j++)
    if (is_reduce(a->g, &a->g->nodes[a->k->nodes[j]])) return j;
  return -1;
}

/* The phase of the reduction at node position i: paired (when `pair`) with
 * the next reduction in one pass, *last set to that reduction's position,
 * or a phase of its own (ROW_ONLINE_NONE, *last = i). Every walk over the
 * phases (planning, scratch, emission) goes through here, so they agree.
 * KFUSE_ROW_ONLINE=0 keeps one pass per reduction: for measuring the
 * pairing against the phases it replaces. */
static row_online_kind phase_at(const cg_emit_args *a, bool pair, int i, int *last) {
  *last = i;
  if (!pair || !a->t->knobs->row_online) return ROW_ONLINE_NONE;
  int j = next_reduce(a, i);
  row_online_kind kind = j < 0 ? ROW_ONLINE_NONE
                               : cg_row_online(a->g, a->k, a->k->nodes[i], a->k->nodes[j]);
  if (kind) *last = j;
  return kind;
}

/* How many phases a looped row saves by online softmax / Welford. */
static int online_pairs(const cg_emit_args *a) {
  int n = 0;
  for (int i = 0; i < a->k->n_nodes; i++)
    if (is_reduce(a->g, &a->g->nodes[a->k->nodes[i]]))
      n += phase_at(a, true, i, &i) != ROW_ONLINE_NONE;
  return n;
}

/* KFUSE_ROW_THREADS=N (a power of two, 64..1024) sets the threads per row
 * of rows longer than 1024 columns: a tuning knob for measurements. */
static int threads_override(const core_knobs *k) { return (int)k->row_threads; }

/* KFUSE_ROW_MIN_BLOCKS=N (1..32) asks ptxas for N resident blocks per SM
 * of held row kernels too (__launch_bounds__(threads, N)), and of looped
 * ones instead of full occupancy: a tuning knob for measurements; the
 * runtime's occupancy report shows any spill. */
static int min_blocks_override(const core_knobs *k) { return (int)k->row_min_blocks; }

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
static bool recompute(const core_knobs *k) { return k->row_recompute; }

/* KFUSE_ROW_HOLD=0: rows are never held in registers; every row kernel
 * takes the looped form (inputs read again per phase, from L2 while the
 * row is still there; paired phases in one pass), as Inductor's two-pass
 * layernorm does. A knob for measuring the two forms on the same rows. */
static bool hold_allowed(const core_knobs *k) { return k->row_hold; }

/* Registers per thread (32-bit words) that held rows may take: past about
 * 64 the kernel's occupancy drops below 3 blocks of 512 per SM. */
enum { ROW_HOLD_WORDS = 64 };

/* A row split over a cluster holds at most this many words per thread, so
 * that two blocks of 512 threads stay resident per SM (a cluster of 8
 * then spans four SMs, and 33 rows are in flight on an H200). */
enum { ROW_SPLIT_WORDS = 32 };

/* KFUSE_ROW_SPLIT=0: rows too long for one block's registers take the
 * looped form even on sm_90 (a knob for measuring the two forms). */
static bool split_allowed(const core_knobs *k) { return k->row_split; }

/* Threads per row for `cols` columns of W lanes: about `accesses` accesses
 * of W per thread, a power of two from 32 to 512. */
static int64_t group_for(int64_t cols, int w, int64_t accesses) {
  int64_t gsz = 32;
  while (gsz < 512 && gsz * accesses * w < cols) gsz *= 2;
  return gsz;
}

/* 2-byte rows of at least 8192 columns take 8 accesses per thread, others
 * 4 (see choose). */
static int64_t accesses_for(int64_t cols, int w) { return w >= 8 && cols >= 128 * 8 * w ? 8 : 4; }

/* Elements per thread of `cols` columns over gsz threads of W lanes. */
static int64_t per_thread(int64_t cols, int64_t gsz, int w) { return cg_ceil_div(cols, gsz * w) * w; }

/* Doubles *gsz (up to max_g) while the held bytes per thread exceed
 * `words` 32-bit words; returns the elements per thread it ends with. */
static int64_t fit_group(int64_t cols, int w, size_t held, int words, int64_t max_g,
                         int64_t *gsz) {
  int64_t ept = per_thread(cols, *gsz, w);
  while ((int64_t)held * ept > 4 * words && *gsz < max_g) {
    *gsz *= 2;
    ept = per_thread(cols, *gsz, w);
  }
  return ept;
}

/* KFUSE_ROW_SPLIT_THREADS=N (a power of two, 128..1024) sets the threads of
 * each block of a cluster-held row (a knob for measurements). */
static int64_t split_threads(const core_knobs *k) { return k->row_split_threads; }

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
  if (a->t->cc_major < 9 || !a->part->alone || !split_allowed(a->t->knobs) || !hold_allowed(a->t->knobs) || minsz != 4)
    return 0;
  for (int S = 2; S <= 8; S *= 2) {
    if (k->cols % ((int64_t)S * w)) continue;
    int64_t slice = k->cols / S;
    if (slice <= 1024) continue;
    int64_t st = split_threads(a->t->knobs);
    int64_t gsz = st ? st : group_for(slice, w, accesses_for(slice, w));
    int64_t e = st ? per_thread(slice, gsz, w)
                                : fit_group(slice, w, held, ROW_SPLIT_WORDS, 512, &gsz);
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

static void choose(cg_emit_args *a, row_info *ri) {
  const fuse_kernel *k = a->k;
  const kf_graph *g = a->g;
  size_t minsz = 8, held = 0;
  for (int i = 0; i < k->n_inputs; i++) {
    const ir_node *n = &g->nodes[k->inputs[i]];
    if (numel_of(n) != k->rows * k->cols) continue;
    if (kf_dtype_size(n->dtype) < minsz) minsz = kf_dtype_size(n->dtype);
    held += kf_dtype_size(n->dtype); /* held in the storage type */
  }
  for (int i = 0; i < k->n_outputs; i++) {
    const ir_node *n = &g->nodes[k->outputs[i]];
    if (numel_of(n) == k->rows * k->cols && kf_dtype_size(n->dtype) < minsz)
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
  if (k->cols <= 1024) gsz = 32;
  else if (threads_override(a->t->knobs)) gsz = threads_override(a->t->knobs);
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
              !recompute(a->t->knobs);
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
  choose(a, &ri);
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
  int64_t cap =
      (int64_t)a->t->sm_count * (a->t->max_threads_per_sm / p->threads) * row_waves(a->t->knobs, ri.split > 1);
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
           (long long)k->rows, (long long)k->cols, ri.group == 32 ? "warp per row" : "block per row",
           ri.group, ri.rpb, ri.lanes,
           ri.split > 1          ? "row held in the registers of a thread block cluster"
           : ri.hold             ? "row held in registers"
           : online_pairs(a) > 0 ? "looped: inputs re-read per phase, paired phases in one "
                                   "pass (online softmax / Welford)"
                                 : "looped: inputs re-read per phase",
           ri.cache && cache_bytes(a) ? " (reused reduction operands too)" : "", split_text,
           cg_row_stage_words(&ri.st),
           p->index64 ? "64-bit" : "32-bit", p->blocks, p->threads,
           ri.st.persistent ? " at most (persistent: as many as are resident)" : "",
           p->smem ? ", unused shared memory padding (KFUSE_ROW_SMEM_PAD)" : "");
  return KF_OK;
}

typedef struct row_emit {
  cg_emit_args *a;
  row_info ri;
  cg_gen gen;
  cg_buf body, align;
  int64_t cols;
  /* block reductions of one row: how many, and the next one's index (they
   * alternate two halves of the shared scratch: see red_call) */
  int n_red, i_red;
} row_emit;

/* The buffers of one pass over the row (chunk_open/chunk_close). */
typedef struct row_pass {
  cg_buf decl, pre, elems, after;
  cg_buf *saved; /* gen's code buffer before the pass */
} row_pass;

static void chunk_open(row_emit *re, cg_buf *decl, cg_buf *pre);
static void chunk_close(row_emit *re, cg_buf *decl, cg_buf *pre, cg_buf *elems, cg_buf *after);

/* Opens a pass that reads value x over the row: element code then goes
 * into ps->elems, with x's context in c. */
static void pass_open(row_emit *re, row_pass *ps, const ir_node *x, cg_ctx *c) {
  memset(ps, 0, sizeof *ps);
  ps->saved = re->gen.code;
  cg_gen_reset_memo(&re->gen);
  re->gen.code = &re->body;
  chunk_open(re, &ps->decl, &ps->pre);
  re->gen.code = &ps->elems;
  row_ctx(x, re->cols, c);
}

static void pass_close(row_emit *re, row_pass *ps) {
  chunk_close(re, &ps->decl, &ps->pre, &ps->elems, &ps->after);
  re->gen.code = ps->saved;
}

/* The unroll pragma of a looped row's chunk loops: 2 (two chunks' loads
 * in flight per thread), or KFUSE_ROW_UNROLL=N (1, 2, 4 or 8; 0 = unrolled
 * completely), a knob for measuring the looped form with more loads in
 * flight. */
static const char *looped_unroll(const core_knobs *k) {
  switch (k->row_unroll) {
    case 0: return "#pragma unroll";
    case 1: return "#pragma unroll 1";
    case 4: return "#pragma unroll 4";
    case 8: return "#pragma unroll 8";
    default: return "#pragma unroll 2";
  }
}

/* Opens the chunk loop; element code then goes into gen at indent 4. */
static void chunk_open(row_emit *re, cg_buf *decl, cg_buf *pre) {
  cg_gen *gen = &re->gen;
  gen->indent = 1;
  cg_line(gen, "%s", re->ri.fallback ? "#pragma unroll 1"
                     : re->ri.hold  ? "#pragma unroll"
                                    : looped_unroll(re->a->t->knobs));
  cg_line(gen, "for (int kk = 0; kk < NV; kk++) {");
  cg_line(gen, "  const int c0 = kf_cb + (kk * G + lane) * W;");
  cg_line(gen, "  if (FULL || c0 < kf_cb + COLS) {");
  gen->pre = pre;
  gen->pre_decl = decl;
  gen->indent = 4;
}

/* Closes it: the element code gathered in `elems` is placed after the
 * vector preloads of the chunk. */
static void chunk_close(row_emit *re, cg_buf *decl, cg_buf *pre, cg_buf *elems, cg_buf *after) {
  cg_buf *b = &re->body;
  cg_printf(b, "%s", cg_use(b, decl));
  cg_printf(b, "    {\n      const int c = c0;\n      (void)c;\n%s    }\n", cg_use(b, pre));
  cg_printf(b, "#pragma unroll\n    for (int j = 0; j < W; j++) {\n      const int c = c0 + j;\n"
               "      (void)c;\n%s    }\n", cg_use(b, elems));
  cg_printf(b, "%s  }\n  }\n", cg_use(b, after));
  cg_buf_free(decl);
  cg_buf_free(pre);
  cg_buf_free(elems);
  cg_buf_free(after);
}

static const char *red_struct(const ir_node *n) {
  return n->op == IR_OP_MAX ? "kf_red_max" : n->op == IR_OP_MIN ? "kf_red_min" : "kf_red_sum";
}

static char sm_letter(kf_dtype dt) {
  return dt == KF_F64 ? 'd' : dt == KF_I32 ? 'i' : dt == KF_I64 ? 'l' : 'f';
}

/* KFUSE_ROW_BARRIERS=2 keeps the leading barrier of every block reduction
 * of a row (the old form, for measurements); by default a row's reductions
 * alternate two halves of their shared scratch and need one barrier each. */
static bool one_barrier(const core_knobs *k) { return k->row_barriers != 2; }

/* The call reducing `acc` over the row group, of reduction R<T>, through
 * shared scratch sm. Reduction i of the row uses half i % 2 of sm without
 * a leading barrier; with an odd count per row, the first one keeps its
 * barrier (the next row's first would follow the last on the same half). */
static void red_call(row_emit *re, cg_buf *b, const char *dst, const char *r, const char *t,
                     const char *acc, const char *sm) {
  int i = re->i_red++;
  bool halves = one_barrier(re->a->t->knobs) && re->ri.group > 32;
  bool lead = !halves || (i == 0 && re->n_red % 2);
  char blk[256];
  snprintf(blk, sizeof blk, "kf_block_allreduce<%s<%s>, G, %d, %s>(%s, %s%s)", r, t,
           re->a->part->launch_threads, lead ? "true" : "false", acc, sm,
           halves && i % 2 ? " + 32" : "");
  if (re->ri.split > 1) /* then across the cluster, through slot i ("kf_sc" + sm's type) */
    cg_printf(b, "    %s = kf_cluster_allreduce<%s<%s>, %d>(%s, kf_sc%s + %d);\n", dst, r, t,
              re->ri.split, blk, sm + 5, i);
  else
    cg_printf(b, "    %s = %s;\n", dst, blk);
}

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

/* How element j of chunk kk of held input v is read: from its registers,
 * through kf_fresh when the compiler must not merge it with earlier reads
 * (KFUSE_ROW_RECOMPUTE). */
static void held_read(int32_t v, bool fresh, char *out, size_t size) {
  snprintf(out, size, fresh ? "kf_fresh(kf_in_at(x%d[kk], j))" : "kf_in_at(x%d[kk], j)", (int)v);
}

/* Whether value v is bound (held or cached) at context key already. */
static bool bound(const cg_gen *gen, int32_t v, const char *key) {
  for (int i = 0; i < gen->n_binds; i++)
    if (gen->binds[i].value == v && (!gen->binds[i].key[0] || !strcmp(gen->binds[i].key, key)))
      return true;
  return false;
}

/* Whether the cache registers of v were declared by an earlier phase. */
static bool declared(const row_emit *re, int32_t v) {
  char decl[48];
  snprintf(decl, sizeof decl, " h%d[NV][W];\n", (int)v);
  return re->body.s && strstr(re->body.s, decl);
}

/* The held bf16 input whose max or min node v takes (directly or through a
 * cast to f32), when the phase can reduce its packed pairs: -1 otherwise. */
static int32_t packed_minmax_input(const row_emit *re, int32_t v) {
  const kf_graph *g = re->a->g;
  const fuse_kernel *k = re->a->k;
  const ir_node *n = &g->nodes[v];
  if (!re->ri.hold || re->ri.fallback || re->ri.lanes < 2 || re->ri.lanes % 2 ||
      (n->op != IR_OP_MAX && n->op != IR_OP_MIN) || (n->dtype != KF_F32 && n->dtype != KF_BF16))
    return -1;
  int32_t x = n->args[0];
  if (g->nodes[x].op == IR_OP_CAST && g->nodes[x].dtype == KF_F32) x = g->nodes[x].args[0];
  if (!cg_is_input(k, x) || g->nodes[x].dtype != KF_BF16 ||
      numel_of(&g->nodes[x]) != k->rows * k->cols)
    return -1;
  return x;
}

/* A max or min phase over a held bf16 input: its 32-bit words reduced as
 * bf16 pairs (max.NaN.bf16x2: half an instruction per element, where each
 * element took an unpack and an FMNMX), the two halves joined at the end.
 * bf16 to f32 is exact, so the result is the f32 reduction's. */
static void emit_packed_minmax(row_emit *re, int32_t v, int32_t x) {
  const ir_node *n = &re->a->g->nodes[v];
  bool mx = n->op == IR_OP_MAX;
  cg_printf(&re->body,
            "  // phase: %%%d %s (bf16 pairs)\n  float red%d;\n  {\n"
            "    unsigned acc = %s;\n"
            "#pragma unroll\n    for (int kk = 0; kk < NV; kk++) {\n"
            "      const int c0 = kf_cb + (kk * G + lane) * W;\n"
            "      if (FULL || c0 < kf_cb + COLS) {\n#pragma unroll\n"
            "        for (int i = 0; i < W / 2; i++) acc = kf_%s_bf16x2(acc, kf_word32(x%d[kk], i));\n"
            "      }\n    }\n",
            (int)v, ir_ops[n->op].name, (int)v, mx ? "0xff80ff80u" : "0x7f807f80u",
            mx ? "max" : "min", (int)x);
  char dst[32], acc[96];
  snprintf(dst, sizeof dst, "red%d", (int)v);
  snprintf(acc, sizeof acc, "kf_%s_nan(__uint_as_float(acc << 16), __uint_as_float(acc & 0xffff0000u))",
           mx ? "max" : "min");
  red_call(re, &re->body, dst, red_struct(n), "float", acc, "kf_smf");
  cg_puts(&re->body, "  }\n");
  char bound[32];
  snprintf(bound, sizeof bound, "red%d", (int)v);
  cg_gen_bind(&re->gen, v, NULL, bound);
}

/* A value a later pass needs is computed again there from what is bound
 * (held inputs, kept values, per-row results) when that takes at most this
 * many ops; otherwise the pass that computes it first keeps it in
 * registers (keep_across). Softmax's x - max, layernorm's x - mean, a cast
 * of a held input: recomputed, as before. A residual ladder's running sum
 * (r[i] = r[i-1] + e[i] / sum(e[i])): kept, so each phase computes O(1)
 * ops and not every earlier step again. */
enum { ROW_RECOMPUTE_OPS = 4 };

static bool computed_here(const cg_gen *gen, int32_t v) {
  for (int i = 0; i < gen->n_memo; i++)
    if (gen->memo[i].value == v) return true;
  return false;
}

/* Whether something after the pass of reduction red still reads v: a
 * kernel output, a later reduction, or a node this pass did not compute. */
static bool needed_later(const row_emit *re, int32_t v, int32_t red) {
  const fuse_kernel *k = re->a->k;
  for (int i = 0; i < k->n_outputs; i++)
    if (k->outputs[i] == v) return true;
  for (int i = 0; i < k->n_nodes; i++) {
    int32_t u = k->nodes[i];
    const ir_node *un = &re->a->g->nodes[u];
    bool reads = false;
    for (int j = 0; j < un->nargs; j++) reads |= un->args[j] == v;
    if (!reads || u == red) continue;
    if (is_reduce(re->a->g, un) ? !bound(&re->gen, u, "") : !computed_here(&re->gen, u)) return true;
  }
  return false;
}

/* Values kept across phases by one pass (keep_across), bound after it. */
typedef struct row_kept {
  cg_buf decls;
  int32_t *v;
  int n;
} row_kept;

/* In the pass of reduction red (skip: the operand the reduction-operand
 * cache keeps, or -1): stores h<v>[kk][j] for each full-row value computed
 * here that a later pass needs and would cost more than ROW_RECOMPUTE_OPS
 * to compute again, while the row's register room lasts. */
static void keep_across(row_emit *re, int32_t red, int32_t skip, row_kept *kp) {
  cg_gen *gen = &re->gen;
  const fuse_kernel *k = re->a->k;
  memset(kp, 0, sizeof *kp);
  if (!re->ri.cache || !gen->n_memo) return;
  kp->v = core_malloc((size_t)gen->n_memo * sizeof *kp->v);
  if (!kp->v) {
    cg_gen_oom(gen);
    return;
  }
  for (int i = 0; i < gen->n_memo; i++) {
    const struct cg_memo *m = &gen->memo[i];
    const ir_node *n = &re->a->g->nodes[m->value];
    if (m->cost <= ROW_RECOMPUTE_OPS || m->value == skip || cg_is_input(k, m->value) ||
        numel_of(n) != k->rows * k->cols || compute_size(n->dtype) > re->ri.room)
      continue;
    cg_ctx c;
    char key[512];
    row_ctx(n, re->cols, &c);
    cg_ctx_key(&c, key, sizeof key);
    if (strcmp(m->key, key) || !needed_later(re, m->value, red)) continue;
    re->ri.room -= compute_size(n->dtype);
    cg_line(gen, "h%d[kk][j] = t%d;", (int)m->value, m->tmp);
    cg_printf(&kp->decls, "  %s h%d[NV][W];\n", cg_compute_type(n->dtype), (int)m->value);
    kp->v[kp->n++] = m->value;
  }
}

/* After the pass: later passes read the kept values from registers. */
static void bind_kept(row_emit *re, row_kept *kp) {
  for (int i = 0; i < kp->n; i++) {
    cg_ctx c;
    char key[512], expr[64];
    row_ctx(&re->a->g->nodes[kp->v[i]], re->cols, &c);
    cg_ctx_key(&c, key, sizeof key);
    snprintf(expr, sizeof expr, "h%d[kk][j]", (int)kp->v[i]);
    cg_gen_bind(&re->gen, kp->v[i], key, expr);
  }
  free(kp->v);
  kp->v = NULL;
}

/* One phase: the reduction of node v over the row. */
static void emit_phase(row_emit *re, int32_t v) {
  const kf_graph *g = re->a->g;
  const ir_node *n = &g->nodes[v];
  const ir_node *x = &g->nodes[n->args[0]];
  const char *ct = cg_compute_type(n->dtype);
  int32_t packed = packed_minmax_input(re, v);
  if (packed >= 0 && !(re->ri.cache && cache_worthy(re->a, v, n->args[0]))) {
    emit_packed_minmax(re, v, packed);
    return;
  }
  if (re->ri.cache && cache_worthy(re->a, v, n->args[0]) && !declared(re, n->args[0]))
    cg_printf(&re->body, "  %s h%d[NV][W];\n", cg_compute_type(x->dtype), (int)n->args[0]);
  /* the phase goes to a buffer of its own: the registers of values it keeps
   * for later phases are declared before it */
  cg_buf outer = re->body;
  re->body = (cg_buf){0};
  cg_printf(&re->body, "  // phase: %%%d %s\n  %s red%d;\n  {\n    %s acc = %s<%s>::id();\n", (int)v,
            ir_ops[n->op].name, ct, (int)v, ct, red_struct(n), ct);
  row_pass ps;
  cg_ctx c;
  pass_open(re, &ps, x, &c);
  char name[160], key[512];
  cg_ctx_key(&c, key, sizeof key);
  bool cache = re->ri.cache && cache_worthy(re->a, v, n->args[0]) &&
               !bound(&re->gen, n->args[0], key);
  cg_gen_value(&re->gen, n->args[0], &c, name, sizeof name);
  cg_line(&re->gen, "acc = %s<%s>::op(acc, %s);", red_struct(n), ct, name);
  if (cache) cg_line(&re->gen, "h%d[kk][j] = %s;", (int)n->args[0], name);
  row_kept kept;
  keep_across(re, v, cache ? n->args[0] : -1, &kept);
  pass_close(re, &ps);
  bind_kept(re, &kept);
  if (cache) {
    /* computed once here, read from registers by the later phases */
    char expr[64];
    snprintf(expr, sizeof expr, "h%d[kk][j]", (int)n->args[0]);
    cg_gen_bind(&re->gen, n->args[0], key, expr);
  }
  char dst[32], sm[16];
  snprintf(dst, sizeof dst, "red%d", (int)v);
  snprintf(sm, sizeof sm, "kf_sm%c", sm_letter(n->dtype));
  red_call(re, &re->body, dst, red_struct(n), ct, "acc", sm);
  if (n->op == IR_OP_MEAN) {
    char cnt[64];
    cg_literal(n->dtype, (double)re->cols, cnt, sizeof cnt);
    cg_printf(&re->body, "    red%d = kf_div(red%d, %s);\n", (int)v, (int)v, cnt);
  }
  cg_puts(&re->body, "  }\n");
  cg_buf phase = re->body;
  re->body = outer;
  cg_puts(&re->body, cg_use(&re->body, &kept.decls));
  cg_puts(&re->body, cg_use(&re->body, &phase));
  if (phase.oom || kept.decls.oom) cg_gen_oom(&re->gen);
  cg_buf_free(&phase);
  cg_buf_free(&kept.decls);
  char bound[32];
  snprintf(bound, sizeof bound, "red%d", (int)v);
  cg_gen_bind(&re->gen, v, NULL, bound);
}

/* Two reductions in one pass over the row (a looped row reads the row from
 * memory once per phase): online softmax (first = max(x), second =
 * sum(exp(x - first))) or Welford (first = mean(x), second = mean or sum of
 * (x - first)^2). Per chunk the W values of x go into y[W]; the state is a
 * pair (kf_osm) or a triple (kf_wf) reduced like a scalar. */
static void emit_online(row_emit *re, int32_t first, int32_t second, row_online_kind kind) {
  const kf_graph *g = re->a->g;
  const ir_node *f = &g->nodes[first], *s = &g->nodes[second];
  const char *ct = cg_compute_type(f->dtype);
  bool sm = kind == ROW_ONLINE_SOFTMAX;
  const char *st = sm ? "kf_osm" : "kf_wf", *red = sm ? "kf_red_osm" : "kf_red_wf";
  cg_printf(&re->body,
            "  // phase: %%%d %s and %%%d %s in one pass (%s)\n  %s red%d, red%d;\n  {\n"
            "    %s<%s> acc = %s<%s>::id();\n",
            (int)first, ir_ops[f->op].name, (int)second, ir_ops[s->op].name,
            sm ? "online softmax" : "Welford", ct, (int)first, (int)second, st, ct, red, ct);
  row_pass ps;
  cg_ctx c;
  pass_open(re, &ps, &g->nodes[f->args[0]], &c);
  char name[160];
  cg_gen_value(&re->gen, f->args[0], &c, name, sizeof name);
  cg_line(&re->gen, "y[j] = %s;", name);
  cg_printf(&ps.decl, "    %s y[W];\n", ct);
  cg_printf(&ps.after, "    acc = %s_chunk<%s, W>(acc, y);\n", st, ct);
  pass_close(re, &ps);
  char smn[16];
  snprintf(smn, sizeof smn, "kf_sm%s%c", sm ? "o" : "w", sm_letter(f->dtype));
  red_call(re, &re->body, "acc", red, ct, "acc", smn);
  if (sm) {
    cg_printf(&re->body, "    red%d = acc.m;\n    red%d = kf_osm_sum(acc);\n", (int)first,
              (int)second);
  } else {
    char cnt[64];
    cg_literal(s->dtype, (double)re->cols, cnt, sizeof cnt);
    cg_printf(&re->body, "    red%d = acc.mean;\n", (int)first);
    if (s->op == IR_OP_MEAN)
      cg_printf(&re->body, "    red%d = kf_div(kf_wf_m2(acc), %s);\n", (int)second, cnt);
    else
      cg_printf(&re->body, "    red%d = kf_wf_m2(acc);\n", (int)second);
  }
  cg_puts(&re->body, "  }\n");
  char b[32];
  snprintf(b, sizeof b, "red%d", (int)first);
  cg_gen_bind(&re->gen, first, NULL, b);
  snprintf(b, sizeof b, "red%d", (int)second);
  cg_gen_bind(&re->gen, second, NULL, b);
}

/* The element code of the full-row outputs: o<v>[j] for each, or with
 * scalar, each element stored at once (kf_st). With declare, also the o
 * arrays (into decl), their stores (into stores) and the alignment
 * checks. */
static void output_elems(row_emit *re, cg_buf *decl, cg_buf *stores, bool declare, bool scalar) {
  const kf_graph *g = re->a->g;
  const fuse_kernel *k = re->a->k;
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &g->nodes[v];
    if (numel_of(n) != k->rows * k->cols) continue;
    cg_ctx c;
    row_ctx(n, re->cols, &c);
    char name[160];
    cg_gen_stored(&re->gen, v, &c, name, sizeof name);
    if (scalar)
      cg_line(&re->gen, "kf_st(p%d + (r * %lld + c), %s);", (int)v, (long long)re->cols, name);
    else
      cg_line(&re->gen, "o%d[j] = %s;", (int)v, name);
    if (!declare) continue;
    cg_printf(decl, "    %s o%d[W];\n", cg_compute_type(n->dtype), (int)v);
    cg_printf(stores, "    kf_stv<%s, W>(p%d + (r * %lld + c0), o%d);\n",
              cg_storage_type(n->dtype), (int)v, (long long)re->cols, (int)v);
    size_t wb = kf_dtype_size(n->dtype) * (size_t)re->ri.lanes;
    cg_printf(&re->align, " && kf_aligned(p%d, %d)", (int)v, (int)(wb > 16 ? 16 : wb));
  }
}

/* With KFUSE_ROW_RECOMPUTE=1, the output phase reads the held inputs
 * computed in float through kf_fresh. */
static void fresh_held_reads(row_emit *re) {
  if (!recompute(re->a->t->knobs) || !re->ri.hold || re->ri.fallback) return;
  for (int i = 0; i < re->gen.n_binds; i++) {
    cg_bind *b = &re->gen.binds[i];
    int32_t v = b->value;
    char held[48];
    held_read(v, false, held, sizeof held);
    if (strcmp(b->expr, held) || strcmp(cg_compute_type(re->a->g->nodes[v].dtype), "float"))
      continue;
    held_read(v, true, b->expr, sizeof b->expr);
  }
}

/* Sets aside the binds of held and cached registers (those bound for one
 * context), keeping the per-row values (bound for any context): code
 * generated then reads its inputs from memory. Returns every bind, for
 * restore_binds (NULL when out of memory: the generator has failed). */
static cg_bind *only_row_values(cg_gen *gen, int *n_all) {
  *n_all = gen->n_binds;
  cg_bind *all = core_malloc((size_t)(gen->n_binds + 1) * sizeof *all);
  if (!all) {
    cg_gen_oom(gen);
    return NULL;
  }
  memcpy(all, gen->binds, (size_t)gen->n_binds * sizeof *all);
  int n = 0;
  for (int i = 0; i < *n_all; i++)
    if (!all[i].key[0]) gen->binds[n++] = all[i];
  gen->n_binds = n;
  return all;
}

static void restore_binds(cg_gen *gen, cg_bind *all, int n_all) {
  if (!all) return;
  memcpy(gen->binds, all, (size_t)n_all * sizeof *all);
  gen->n_binds = n_all;
  free(all);
}

/* The flagged outputs' second computation (see emit_outputs): the element
 * code of every full-row output with the fallback division, inputs read
 * from memory (the held and cached registers set aside), each element
 * stored at once. */
static void redo_elems(row_emit *re, cg_buf *out) {
  cg_gen *gen = &re->gen;
  cg_buf *align = gen->align, *pre = gen->pre, *pre_decl = gen->pre_decl, *code = gen->code;
  cg_gen_reset_memo(gen);
  int n_all;
  cg_bind *all = only_row_values(gen, &n_all);
  gen->pre = NULL; /* every load scalar */
  gen->pre_decl = NULL;
  gen->code = out;
  gen->align = NULL; /* the checks are in already */
  gen->div_mode = CG_DIV_REDO;
  output_elems(re, NULL, NULL, false, true);
  restore_binds(gen, all, n_all);
  cg_gen_reset_memo(gen);
  gen->align = align;
  gen->pre = pre;
  gen->pre_decl = pre_decl;
  gen->code = code;
}

/* The final phase: full-row outputs, W per store. A division by a per-row
 * value skips its per-element fallback (kf_div_rcpf) and flags a NaN
 * quotient in the thread's kf_bad instead; a thread that flagged one
 * computes all its outputs again after its chunk loop, with the fallback
 * (the same bits wherever the quick quotient was finite), and stores them
 * over the first ones. That second computation is rare, so it is compact:
 * emitted once, in loops that are not unrolled, reading the inputs again
 * from memory (unchanged: no output overlaps an input). Unrolled per chunk
 * over the held registers, as it was, it doubled the output phase's code
 * (softmax_bf16: 245-253 ms in NVRTC then, 197-202 now; 96 registers then,
 * 80 now; docs/performance.md, C1). The unaligned fallback keeps the
 * per-element form (compact). */
static void emit_outputs(row_emit *re) {
  cg_buf decl = {0}, pre = {0}, elems = {0}, after = {0}, stores = {0}, redo = {0};
  cg_gen_reset_memo(&re->gen);
  fresh_held_reads(re);
  cg_puts(&re->body, "  // outputs\n");
  /* the chunk loop goes to a buffer of its own, so that kf_bad can be
   * declared before it once it is known to be needed */
  cg_buf outer = re->body;
  re->body = (cg_buf){0};
  re->gen.code = &re->body;
  chunk_open(re, &decl, &pre);
  re->gen.code = &elems;
  re->gen.div_mode = re->ri.fallback ? CG_DIV_PLAIN : CG_DIV_FLAG;
  output_elems(re, &decl, &stores, true, false);
  if (elems.s && strstr(elems.s, "kf_div_rcpf(")) redo_elems(re, &redo);
  cg_printf(&after, "%s", cg_use(&after, &stores));
  if (stores.oom) cg_gen_oom(&re->gen);
  cg_buf_free(&stores);
  re->gen.div_mode = CG_DIV_PLAIN;
  chunk_close(re, &decl, &pre, &elems, &after);
  cg_buf loop = re->body;
  re->body = outer;
  if (redo.s) cg_puts(&re->body, "  bool kf_bad = false;\n");
  cg_puts(&re->body, cg_use(&re->body, &loop));
  if (redo.s)
    cg_printf(&re->body,
              "  if (kf_bad) { // a quotient was not finite: this thread's outputs again, with "
              "the fallback\n"
              "  #pragma unroll 1\n  for (int kk = 0; kk < NV; kk++) {\n"
              "    const int c0 = kf_cb + (kk * G + lane) * W;\n"
              "    if (FULL || c0 < kf_cb + COLS) {\n"
              "#pragma unroll 1\n    for (int j = 0; j < W; j++) {\n      const int c = c0 + j;\n"
              "      (void)c;\n%s    }\n    }\n  }\n  }\n",
              redo.s);
  if (loop.oom || redo.oom) cg_gen_oom(&re->gen);
  cg_buf_free(&loop);
  cg_buf_free(&redo);
}

/* Per-row outputs (one value per row), stored by the group's first lane. */
static void emit_row_outputs(row_emit *re) {
  const kf_graph *g = re->a->g;
  const fuse_kernel *k = re->a->k;
  cg_gen_reset_memo(&re->gen);
  re->gen.code = &re->body;
  re->gen.pre = NULL;
  re->gen.vec = 1;
  re->gen.indent = 2;
  bool any = false;
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &g->nodes[v];
    if (numel_of(n) == k->rows * k->cols) continue;
    if (!any) cg_puts(&re->body, re->ri.split > 1 ? "  if (lane == 0 && kf_cb == 0) {\n"
                                                  : "  if (lane == 0) {\n");
    any = true;
    if (numel_of(n) != k->rows) {
      cg_gen_fail(&re->gen, "output %%%d has neither a row's nor a value per row's shape", (int)v);
      continue;
    }
    cg_ctx c;
    cg_ctx_linear(&c, n->rank, n->shape, "r", VC_GATHER);
    char name[160];
    cg_gen_stored(&re->gen, v, &c, name, sizeof name);
    cg_line(&re->gen, "kf_st(p%d + r, %s);", (int)v, name);
  }
  if (any) cg_puts(&re->body, "  }\n");
}

/* KFUSE_ROW_PREFETCH=1: held rows prefetch the per-column inputs that
 * every row reads again (layernorm's w and b) into L1 right after loading
 * the row, so that the output phase, which reads them only after the last
 * reduction, finds them there instead of waiting on L2 (a knob for
 * measurements; no registers: prefetch.global.L1). */
static bool prefetch_columns(const core_knobs *k) { return k->row_prefetch; }

static void emit_prefetch_columns(row_emit *re) {
  const fuse_kernel *k = re->a->k;
  if (!prefetch_columns(re->a->t->knobs) || re->ri.fallback) return;
  for (int i = 0; i < k->n_inputs; i++) {
    int32_t v = k->inputs[i];
    const ir_node *n = &re->a->g->nodes[v];
    if (numel_of(n) != k->cols || k->rows == 1) continue;
    cg_printf(&re->body,
              "  // input %%%d, read again by every row: into L1 while the row is reduced\n"
              "#pragma unroll\n  for (int kk = 0; kk < NV; kk++) {\n"
              "    const int c0 = kf_cb + (kk * G + lane) * W;\n"
              "    if (FULL || c0 < kf_cb + COLS) kf_prefetch_l1(p%d + c0);\n  }\n",
              (int)v, (int)v);
  }
}

/* A held row's block ends by starting the bulk prefetch into L2 of the row
 * D rows ahead (sm_90, cp.async.bulk.prefetch.L2: one instruction per
 * full-row input), which a block about one wave later takes: its loads then
 * hit L2, and memory stays busy while blocks reduce. D must be just above
 * the resident blocks R (H200, same run: D = 1.06 R made softmax_f32 2.1%
 * faster, layernorm_f32 2.1%, softmax_bf16 1.1%, layernorm_bf16 2.5%;
 * D = 1.8 R made f32 rows 15-20% slower, the prefetched rows leaving L2
 * before use; performance.md K5), and R is known only once the kernel is
 * loaded: D is the module global kf_l2pf_rows, which the runtime sets
 * (rt_plan.c). Issued when the block is done with its row: at the start,
 * the address took ptxas from 40 to 44 registers (2 blocks of 512 per SM
 * instead of 3). KFUSE_ROW_L2PF=0 turns it off, =D (1..65536) fixes D in
 * the code (a knob for measurements); any other value is the default. */
static int64_t l2_prefetch_fixed(const core_knobs *k, bool *off) {
  long v = k->row_l2pf; /* -1 unset, else 0..65536 (knobs.def) */
  *off = v == 0;
  return v >= 1 ? v : 0;
}

static void emit_prefetch_next_rows(row_emit *re) {
  const fuse_kernel *k = re->a->k;
  bool off;
  int64_t fixed = l2_prefetch_fixed(re->a->t->knobs, &off);
  /* held rows, a block per row, alone in the launch (the distance counts the
   * launch's resident blocks), not staged, not split */
  if (off || !re->ri.hold || re->ri.split > 1 || re->ri.st.bytes || re->ri.group <= 32 ||
      re->a->t->cc_major < 9 || !re->a->part->alone)
    return;
  char d[32] = "kf_l2pf_rows"; /* the distance: set by the runtime, or fixed */
  const char *on = fixed ? "" : " && kf_l2pf_rows > 0";
  if (fixed) snprintf(d, sizeof d, "%lld", (long long)fixed);
  for (int i = 0; i < k->n_inputs; i++) {
    int32_t v = k->inputs[i];
    const ir_node *n = &re->a->g->nodes[v];
    int64_t bytes = re->cols * (int64_t)kf_dtype_size(n->dtype);
    if (numel_of(n) != k->rows * k->cols || bytes % 16 || bytes > (1LL << 31)) continue;
    cg_printf(&re->body,
              "  // input %%%d: the row %s ahead into L2 (emit_prefetch_next_rows)\n"
              "  if (lane == 0%s && r + %s < %lld)\n"
              "    kf_prefetch_l2_bulk(p%d + (long long)(r + %s) * %lld, %lldu);\n",
              (int)v, d, on, d, (long long)k->rows, (int)v, d,
              (long long)re->cols, (long long)bytes);
    re->a->part->l2_prefetch |= !fixed;
  }
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
    if (numel_of(n) != k->rows * k->cols) continue;
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
    row_ctx(n, re->cols, &c);
    char key[512], expr[64];
    cg_ctx_key(&c, key, sizeof key);
    held_read(v, false, expr, sizeof expr);
    cg_gen_bind(&re->gen, v, key, expr);
    size_t wb = kf_dtype_size(n->dtype) * (size_t)re->ri.lanes;
    cg_printf(&re->align, " && kf_aligned(p%d, %d)", (int)v, (int)(wb > 16 ? 16 : wb));
  }
  emit_prefetch_columns(re);
  cg_row_stage_after_loads(re->a, &re->ri.st, re->gen.idx, &re->body);
}

/* Whether this body pairs reductions into one pass: only the looped hot
 * path. Held rows re-read registers, not memory; the unaligned fallback
 * stays compact: its pairing state pushed the 1024-thread cross_entropy
 * kernel (64 registers at most) into 48 bytes of spills, and its hot path
 * from 0.477 to 0.532 ms on the H200. */
static bool pairs(const row_emit *re) { return !re->ri.hold && !re->ri.fallback; }

/* The cross-warp scratch of the reductions: one array per compute type
 * used (32 values), or null pointers for a warp per row. */
static void emit_shared(row_emit *re) {
  static const char letters[] = "fdil";
  static const char *const types[] = {"float", "double", "int", "long long"};
  bool used[4] = {false, false, false, false};
  for (int i = 0; i < re->a->k->n_nodes; i++) {
    const ir_node *n = &re->a->g->nodes[re->a->k->nodes[i]];
    if (is_reduce(re->a->g, n)) used[strchr(letters, sm_letter(n->dtype)) - letters] = true;
  }
  for (int t = 0; t < 4; t++) {
    if (!used[t]) continue;
    if (re->ri.group > 32)
      cg_printf(&re->body, "  __shared__ %s kf_sm%c[%d];\n", types[t], letters[t], one_barrier(re->a->t->knobs) ? 64 : 32);
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
    if (!is_reduce(re->a->g, n)) continue;
    row_online_kind kind = phase_at(re->a, true, i, &i);
    if (kind) pair[kind == ROW_ONLINE_WELFORD][n->dtype == KF_F64] = true;
  }
  for (int w = 0; w < 2; w++)
    for (int d = 0; d < 2; d++) {
      if (!pair[w][d]) continue;
      const char *st = w ? "kf_wf" : "kf_osm", *t = d ? "double" : "float";
      char nm[16];
      snprintf(nm, sizeof nm, "kf_sm%c%c", w ? 'w' : 'o', d ? 'd' : 'f');
      if (re->ri.group > 32)
        cg_printf(&re->body, "  __shared__ %s<%s> %s[%d];\n", st, t, nm, one_barrier(re->a->t->knobs) ? 64 : 32);
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
    if (is_reduce(re->a->g, &re->a->g->nodes[k->nodes[i]])) {
      phase_at(re->a, pairs(re), i, &i);
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
    if (!is_reduce(re->a->g, &re->a->g->nodes[k->nodes[i]])) continue;
    int last;
    row_online_kind kind = phase_at(re->a, pairs(re), i, &last);
    if (kind)
      emit_online(re, k->nodes[i], k->nodes[last], kind);
    else
      emit_phase(re, k->nodes[i]);
    i = last;
  }
  emit_outputs(re);
  emit_row_outputs(re);
  emit_prefetch_next_rows(re); /* at the end: no register then */
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
    cg_printf(out,
              "// The fallback for unaligned pointers: W = 1, inputs re-read per phase,\n"
              "// loops not unrolled (compiles fast; runs only on unaligned tensors).\n"
              "KF_INLINE void %s_row1(%s r, int lane, %s) {\n"
              "  enum { G = %d, COLS = %lld, W = 1, NV = (COLS + G - 1) / G, FULL = COLS %% G == 0,\n"
              "         kf_cb = 0 };\n"
              "%s}\n",
              a->part->fn, idx, params, re.ri.group, (long long)re.cols,
              cg_use(out, &re.body));
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
  cg_hole holes[] = {{"fn", p->fn},   {"IDX", p->index64 ? "long long" : "int"},
                     {"ROWS", rows},  {"COLS", cols},
                     {"G", gs},       {"RPB", rpb},
                     {"THREADS", th}, {"BLOCKS", bl},
                     {"LAUNCH", la},  {"W", w},
                     {"HOLD", re->ri.hold ? "held here" : "not here: looped"},
                     {"params", cg_use(a->out, &params)}, {"args", cg_use(a->out, &args)},
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
  const char *tmpl = re->ri.split > 1                     ? "row_split.cu"
                     : cg_row_stage_template(&re->ri.st) ? "row_staged.cu"
                                                          : "row.cu";
  if (st == KF_OK && !cg_fill(a->out, tmpl, holes,
                              (int)(sizeof holes / sizeof holes[0]), a->err, a->errsize))
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
  choose(a, &re.ri);
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
