/* row_stage.c - staged rows: whether a held row kernel is staged, and the
 * text of its staging (row_stage.h, templates/row_staged.cu). */
#include "codegen/expr.h"
#include "codegen/part.h"
#include "codegen/row_stage.h"
#include "ir/shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shared memory that staged rows may take per block (every stage of every
 * held input): within the 48 KB of static shared memory, beside the
 * reduction scratch. */
enum { ROW_STAGE_MAX = 40 * 1024 };

/* KFUSE_ROW_STAGE: 1 stages one row by bulk copies; 2 two where they fit
 * in ROW_STAGE_MAX (else one); thread two, each thread copying its own
 * chunks (not at all where two do not fit); unset or anything else, no
 * staging (the default: measured 12-16% slower, performance.md T1). */
static const char *stage_knob(const core_knobs *k) {
  /* in the order of knobs.def's values: 0|1|2|thread */
  static const char *const modes[] = {NULL, "1", "2", "thread"};
  return k->row_stage > 0 && k->row_stage < 4 ? modes[k->row_stage] : NULL;
}

/* KFUSE_ROW_PERSIST=1 or dynamic: the persistent grid without staging
 * (the threads load their rows as usual), for telling the grid's effect
 * from the staging's. */
static bool persist_only(const core_knobs *k) { return k->row_persist != 0; /* 0|1|dynamic */ }

/* KFUSE_ROW_PERSIST=dynamic: each block of a persistent grid takes its
 * next row from a launch-wide counter instead of striding by gridDim.x, so
 * that faster SMs take more rows (as a grid of one block per row gets from
 * the block scheduler); with or without two bulk stages. */
static bool persist_dynamic(const core_knobs *k) { return k->row_persist == 2; }

/* KFUSE_ROW_STAGE_SLEEP=N (1..10000): bulk-staged rows sleep N ns between
 * their tries of a row's mbarrier (0, the default: try_wait's own
 * suspension only). */
static int stage_sleep(const core_knobs *k) { return (int)k->row_stage_sleep; }

/* KFUSE_ROW_STAGE_FENCE=1: a fence.proxy.async before each row's bulk
 * copies (see bulk_decls). */
static bool stage_fence(const core_knobs *k) { return k->row_stage_fence; }

static bool full_row(const cg_emit_args *a, const ir_node *n) {
  int64_t m = 1;
  for (int d = 0; d < n->rank; d++) m *= n->shape[d];
  return m == a->k->rows * a->k->cols;
}

static bool has_reduce(const cg_emit_args *a) {
  for (int i = 0; i < a->k->n_nodes; i++)
    if (ir_is_reduction(a->g, &a->g->nodes[a->k->nodes[i]])) return true;
  return false;
}

/* The bytes of one staged row (a row of each held input), or 0 when the
 * kernel cannot be staged. Staging needs sm_90 (bulk copies), a block per
 * row, a launch of its own (the grid becomes persistent) and rows the
 * copies can move whole: every held input accessed 16 bytes at a time (so
 * the run-time alignment check covers the copies' alignment) and rows a
 * multiple of 16 bytes long. */
static int64_t row_bytes(const cg_emit_args *a, bool hold, int group, int rpb, int lanes) {
  const fuse_kernel *k = a->k;
  if (!hold || group <= 32 || rpb != 1 || !a->part->alone || a->t->cc_major < 9 || k->rows < 2)
    return 0;
  int64_t b = 0;
  for (int i = 0; i < k->n_inputs; i++) {
    const ir_node *n = &a->g->nodes[k->inputs[i]];
    if (!full_row(a, n)) continue;
    int64_t row = k->cols * (int64_t)kf_dtype_size(n->dtype);
    if (kf_dtype_size(n->dtype) * (size_t)lanes != 16 || row % 16) return 0;
    b += row;
  }
  return b;
}

row_stage cg_row_stage_plan(const cg_emit_args *a, bool hold, int group, int rpb, int lanes) {
  row_stage s = {.stages = 1};
  const char *knob = stage_knob(a->t->knobs);
  int64_t b = knob ? row_bytes(a, hold, group, rpb, lanes) : 0;
  /* two stages: a block barrier in every row after its loads (a block
   * reduction has one) protects the stage written at the top of a row */
  bool two = b > 0 && strcmp(knob, "1") != 0 && 2 * b <= ROW_STAGE_MAX && has_reduce(a);
  if (b > 0 && b <= ROW_STAGE_MAX && (strcmp(knob, "thread") != 0 || two)) {
    s.bytes = b;
    s.stages = two ? 2 : 1;
    s.by_thread = !strcmp(knob, "thread");
  }
  bool persist = persist_only(a->t->knobs) && hold && rpb == 1 && group > 32 && a->part->alone;
  s.persistent = s.bytes > 0 || persist;
  /* dynamic rows: on the plain persistent grid, or with two bulk stages
   * (thread 0 takes the row after next as it starts its copies) */
  s.dynamic = persist_dynamic(a->t->knobs) && (s.bytes ? s.stages == 2 && !s.by_thread : persist);
  return s;
}

bool cg_row_stage_template(const row_stage *s) { return s->bytes > 0 || s->dynamic; }

const char *cg_row_stage_words(const row_stage *s) {
  if (!s->bytes) return s->dynamic ? ", rows taken from a launch-wide counter" : "";
  if (s->by_thread)
    return ", staged in 2 buffers: each thread copies its chunks of the next row into shared "
           "memory (cp.async) while this one lands and is worked on";
  if (s->stages == 2 && s->dynamic)
    return ", staged in 2 buffers: the next row (taken from a launch-wide counter) bulk-copied "
           "into shared memory while this one lands and is worked on";
  if (s->stages == 2)
    return ", staged in 2 buffers: the next row bulk-copied into shared memory while this one "
           "lands and is worked on";
  return ", staged: the next row bulk-copied into shared memory while this one is worked on";
}

void cg_row_stage_chunk(const cg_emit_args *a, int32_t v, char *out, size_t size) {
  snprintf(out, size, "%s_s%d[slot] + c0", a->part->fn, (int)v);
}

void cg_row_stage_after_loads(const cg_emit_args *a, const row_stage *s, const char *idx,
                              cg_buf *body) {
  if (!s->bytes || s->by_thread || s->stages != 1) return;
  cg_buf args = {0};
  cg_param_args(a->part, &args);
  cg_printf(body,
            "  // the staged row is in registers: the buffers take the next row's copies\n"
            "  __syncthreads();\n"
            "  if (threadIdx.x == 0) %s_stage(r + (%s)gridDim.x, 0, %s);\n",
            a->part->fn, idx, args.s ? args.s : "");
  if (args.oom) body->oom = true;
  cg_buf_free(&args);
}

/* Bulk copies: the shared buffers (STAGES rows of each held input), one
 * mbarrier per stage, and <fn>_stage, which starts the copies of row r into
 * stage `slot`. Thread 0 calls it once every thread has read that stage's
 * previous row: with one stage, right after the barrier that follows the
 * row's loads; with two, at the top of a row for the row after it (the
 * slot then last held the row before, whose loads every thread made before
 * that row's block-reduction barriers). The barrier orders the reads
 * before the copy engine's writes, the pattern of CUTLASS's TMA pipelines
 * (a barrier, no proxy fence): fence.proxy.async compiles to MEMBAR.ALL.CTA,
 * which makes thread 0 wait for its previous row's stores first
 * (KFUSE_ROW_STAGE_FENCE=1 puts it back, for measuring). */
static void bulk_decls(const cg_emit_args *a, const row_stage *s, const char *idx,
                       const char *params, cg_buf *out) {
  const fuse_kernel *k = a->k;
  const char *fn = a->part->fn;
  cg_printf(out,
            "// The staged rows (%d x %lld bytes) and the mbarriers counting their bytes in.\n",
            s->stages, (long long)s->bytes);
  cg_buf copies = {0};
  for (int i = 0; i < k->n_inputs; i++) {
    int32_t v = k->inputs[i];
    const ir_node *n = &a->g->nodes[v];
    if (!full_row(a, n)) continue;
    cg_printf(out, "__shared__ __align__(128) %s %s_s%d[%d][%lld];\n", cg_storage_type(n->dtype),
              fn, (int)v, s->stages, (long long)k->cols);
    cg_printf(&copies, "  kf_bulk_g2s(%s_s%d[slot], p%d + r * %lld, %lldu, &%s_bar[slot]);\n", fn,
              (int)v, (int)v, (long long)k->cols,
              (long long)k->cols * (long long)kf_dtype_size(n->dtype), fn);
  }
  /* dynamic rows: the stage's row number goes with it (written before the
   * arrival, which releases it to the waiting threads), and a row past the
   * end still arrives, with no bytes, so that the waiters learn to stop */
  if (s->dynamic)
    cg_printf(out,
              "__shared__ %s %s_row_of[2];\n", idx, fn);
  cg_printf(out,
            "__shared__ unsigned long long %s_bar[%d];\n"
            "KF_INLINE void %s_stage(%s r, int slot, %s) {\n",
            fn, s->stages, fn, idx, params);
  if (s->dynamic)
    cg_printf(out,
              "  %s_row_of[slot] = r;\n"
              "  if (r >= %lld%s) {\n    kf_mbar_arrive(&%s_bar[slot]);\n    return;\n  }\n",
              fn, (long long)k->rows, a->part->index64 ? "LL" : "", fn);
  else
    cg_printf(out, "  if (r >= %lld%s) return;\n", (long long)k->rows,
              a->part->index64 ? "LL" : "");
  cg_printf(out, "%s  kf_mbar_expect(&%s_bar[slot], %lldu);\n%s}\n",
            stage_fence(a->t->knobs) ? "  kf_fence_async_smem();\n" : "", fn, (long long)s->bytes,
            copies.s ? copies.s : "");
  if (copies.oom) out->oom = true;
  cg_buf_free(&copies);
}

/* Copies by thread: two stages of each held input and <fn>_stage(r, slot,
 * lane), which starts this thread's 16-byte copies of its chunks of row r
 * into stage `slot` (cp.async.cg, bypassing L1) and commits them as one
 * group, empty past the last row so that the groups stay one per row. A
 * thread reads back only its own chunks, after cp.async.wait_group 1 (all
 * but the latest group landed), so no barrier is needed; it copies into a
 * stage at the top of a row, for the row after, once its registers of that
 * stage's previous row (two rows back) have been used. */
static void thread_decls(const cg_emit_args *a, const row_stage *s, int group, int lanes,
                         const char *idx, const char *params, cg_buf *out) {
  const fuse_kernel *k = a->k;
  const char *fn = a->part->fn;
  cg_printf(out, "// The staged rows (2 x %lld bytes), each thread copying its own chunks.\n",
            (long long)s->bytes);
  cg_buf copies = {0};
  for (int i = 0; i < k->n_inputs; i++) {
    int32_t v = k->inputs[i];
    const ir_node *n = &a->g->nodes[v];
    if (!full_row(a, n)) continue;
    cg_printf(out, "__shared__ __align__(128) %s %s_s%d[2][%lld];\n", cg_storage_type(n->dtype), fn,
              (int)v, (long long)k->cols);
    cg_printf(&copies, "        kf_cp_async16(%s_s%d[slot] + c0, p%d + (r * %lld + c0));\n", fn,
              (int)v, (int)v, (long long)k->cols);
  }
  cg_printf(out,
            "KF_INLINE void %s_stage(%s r, int slot, int lane, %s) {\n"
            "  enum { G = %d, COLS = %lld, W = %d, NV = (COLS + G * W - 1) / (G * W),\n"
            "         FULL = COLS %% (G * W) == 0 };\n"
            "  if (r < %lld%s) {\n#pragma unroll\n"
            "    for (int kk = 0; kk < NV; kk++) {\n"
            "      const int c0 = (kk * G + lane) * W;\n"
            "      if (FULL || c0 < COLS) {\n%s      }\n    }\n  }\n"
            "  kf_cp_async_commit();\n}\n",
            fn, idx, params, group, (long long)k->cols, lanes, (long long)k->rows,
            a->part->index64 ? "LL" : "", copies.s ? copies.s : "");
  if (copies.oom) out->oom = true;
  cg_buf_free(&copies);
}

/* Dynamic rows: a launch-wide counter of rows handed out past the first
 * gridDim.x (each block starts with row blockIdx.x) and one of blocks done;
 * <fn>_take(i), by which thread 0 takes the block's next row and the block
 * reads it through shared memory (two slots, alternating, so that one
 * barrier per row suffices: a slot is written again only after the next
 * row's block-reduction barriers, which every thread passes after reading
 * it). The last block out resets both counters for the next launch (after
 * a fence: every block's last take comes before its count of blocks
 * done). __device__ variables start at zero when the module loads. */
static void dynamic_counters(const cg_emit_args *a, row_stage_holes *h) {
  const char *fn = a->part->fn;
  cg_printf(&h->stage,
            "// Dynamic rows: the rows handed out past the first gridDim.x, the blocks done.\n"
            "__device__ unsigned %s_taken;\n__device__ unsigned %s_done;\n",
            fn, fn);
  cg_printf(&h->finish,
            "  if (threadIdx.x == 0) {\n    __threadfence();\n"
            "    if (atomicAdd(&%s_done, 1u) == gridDim.x - 1) { // the last block out\n"
            "      %s_taken = 0;\n      %s_done = 0;\n    }\n  }\n",
            fn, fn, fn);
}

static void dynamic_decls(const cg_emit_args *a, const char *idx, row_stage_holes *h) {
  const char *fn = a->part->fn;
  dynamic_counters(a, h);
  cg_printf(&h->stage,
            "KF_INLINE %s %s_take(unsigned i) {\n"
            "  __shared__ %s next[2];\n"
            "  if (threadIdx.x == 0) next[i & 1] = (%s)gridDim.x + (%s)atomicAdd(&%s_taken, 1u);\n"
            "  __syncthreads();\n  return next[i & 1];\n}\n",
            idx, fn, idx, idx, idx, fn);
  cg_printf(&h->advance, "r = %s_take(i)", fn);
}

void cg_row_stage_holes_free(row_stage_holes *h) {
  cg_buf_free(&h->stage);
  cg_buf_free(&h->init);
  cg_buf_free(&h->top);
  cg_buf_free(&h->advance);
  cg_buf_free(&h->finish);
}

void cg_row_stage_holes(const cg_emit_args *a, const row_stage *s, int group, int lanes,
                        const char *idx, const char *params, const char *args,
                        row_stage_holes *h) {
  const char *fn = a->part->fn;
  cg_buf *stage = &h->stage, *init = &h->init, *top = &h->top;
  if (s->dynamic && !s->bytes) {
    dynamic_decls(a, idx, h);
    return;
  }
  cg_printf(&h->advance, "r += (%s)gridDim.x", idx);
  if (!s->bytes) return;
  if (s->by_thread) {
    thread_decls(a, s, group, lanes, idx, params, stage);
    cg_printf(init, "  %s_stage(bid, 0, lane, %s);\n", fn, args);
    cg_printf(top,
              "    %s_stage(r + (%s)gridDim.x, slot ^ 1, lane, %s);\n"
              "    kf_cp_async_wait<1>(); // this thread's copies of row r have landed\n",
              fn, idx, args);
    return;
  }
  if (s->dynamic) dynamic_counters(a, h);
  bulk_decls(a, s, idx, params, stage);
  cg_printf(init,
            "  if (threadIdx.x == 0)\n    for (int s = 0; s < %d; s++) kf_mbar_init(&%s_bar[s]);\n"
            "  __syncthreads();\n  if (threadIdx.x == 0) %s_stage(bid, 0, %s);\n",
            s->stages, fn, fn, args);
  if (s->dynamic) {
    /* thread 0 takes the row after next at the top of each row; the row's
     * number comes with its stage (<fn>_row_of), past the end to stop */
    cg_buf_free(&h->advance);
    cg_printf(&h->advance, "(void)0");
    cg_printf(top,
              "    if (threadIdx.x == 0)\n"
              "      %s_stage((%s)gridDim.x + (%s)atomicAdd(&%s_taken, 1u), slot ^ 1, %s);\n"
              "    kf_mbar_wait<%d>(&%s_bar[slot], (i >> 1) & 1);\n"
              "    r = %s_row_of[slot];\n"
              "    if (r >= %lld%s) break;\n",
              fn, idx, idx, fn, args, stage_sleep(a->t->knobs), fn, fn, (long long)a->k->rows,
              a->part->index64 ? "LL" : "");
    return;
  }
  if (s->stages == 2)
    cg_printf(top, "    if (threadIdx.x == 0) %s_stage(r + (%s)gridDim.x, slot ^ 1, %s);\n", fn,
              idx, args);
  cg_printf(top,
            "    // the k-th use of a stage's barrier completes its phase of parity k & 1\n"
            "    kf_mbar_wait<%d>(&%s_bar[slot], (%s) & 1);\n",
            stage_sleep(a->t->knobs), fn, s->stages == 2 ? "i >> 1" : "i");
}
