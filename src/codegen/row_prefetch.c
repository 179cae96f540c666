/* row_prefetch.c - a held row kernel's prefetches: the per-column inputs
 * into L1 (a knob), and the row some rows ahead into L2. */
#include "codegen/row_prefetch.h"

#include <stdio.h>

#include "codegen/row_plan.h"

/* KFUSE_ROW_PREFETCH=1: held rows prefetch the per-column inputs that
 * every row reads again (layernorm's w and b) into L1 right after loading
 * the row, so that the output phase, which reads them only after the last
 * reduction, finds them there instead of waiting on L2 (a knob for
 * measurements; no registers: prefetch.global.L1). */
static bool prefetch_columns(const core_knobs *k) {
  return k->row_prefetch;
}

void cg_row_prefetch_columns(row_emit *re) {
  const fuse_kernel *k = re->a->k;
  if (!prefetch_columns(re->a->t->knobs) || re->ri.fallback) return;
  for (int i = 0; i < k->n_inputs; i++) {
    int32_t v = k->inputs[i];
    const ir_node *n = &re->a->g->nodes[v];
    if (cg_row_numel(n) != k->cols || k->rows == 1) continue;
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

void cg_row_prefetch_next_rows(row_emit *re) {
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
    if (cg_row_numel(n) != k->rows * k->cols || bytes % 16 || bytes > (1LL << 31)) continue;
    cg_printf(&re->body,
              "  // input %%%d: the row %s ahead into L2 (emit_prefetch_next_rows)\n"
              "  if (lane == 0%s && r + %s < %lld)\n"
              "    kf_prefetch_l2_bulk(p%d + (long long)(r + %s) * %lld, %lldu);\n",
              (int)v, d, on, d, (long long)k->rows, (int)v, d, (long long)re->cols,
              (long long)bytes);
    re->a->part->l2_prefetch |= !fixed;
  }
}
