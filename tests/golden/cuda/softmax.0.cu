/* kfuse generated kernel kf_k0_row: 1 part, 8192 blocks x 512 threads.
 * part kf_part0_k0_row = kernel k0_row (row), 5 ops:
 *   %1=max(%0) %2=sub(%0,%1) %3=exp(%2) %4=sum(%3) %5 y=div(%3,%4)
 *  decisions: row: 8192 rows x 8192 cols, block per row (512 threads per row, 1 rows per block), 4 lanes per access, row held in registers (reused reduction operands too), 32-bit index, 8192 blocks x 512 threads
 * index: 32-bit (largest offset 67108863); widest access 16 bytes
 */
// [templates/common.cuh: the prelude, not repeated in golden files]

// row.cu - row kernel: 8192 rows of 8192 columns, each row reduced by
// a group of 512 threads (1 rows per block: a warp per row for short
// rows, a block per row for long ones), grid-stride over rows. Each thread
// owns chunks of W consecutive columns: chunk kk covers columns
// (kk * G + lane) * W .. + W - 1. When the row fits in registers
// (held here), the full-row inputs are loaded once into x<v>[NV][W] and every
// phase reads registers; otherwise each phase re-reads them (L2 helps).
// Phases: one per reduction, in order (warp shuffles, then shared memory
// across warps), then the outputs (W per store; per-row outputs by lane 0).
// W > 1 only when every vector-accessed pointer is aligned (checked at run
// time, uniformly); otherwise the fallback <fn>_row1 runs the row one
// element per access, looped (compact: it runs rarely, must compile fast).
// Holes: fn, IDX, ROWS, COLS, G, RPB, THREADS, BLOCKS, LAUNCH, W, HOLD,
// params, args, body, aligned, fallback, fallback_call.
template <int W>
KF_INLINE void kf_part0_k0_row_row(int r, int lane, const float *__restrict__ p0, float *__restrict__ p1) {
  enum { G = 512, COLS = 8192, NV = (COLS + G * W - 1) / (G * W),
         FULL = COLS % (G * W) == 0, kf_cb = 0 /* first column: the block holds the row */ };
  __shared__ float kf_smf[64];
  (void)kf_smf;
  kf_pack<float, W> x0[NV];
#pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
      typedef typename kf_pack<float, W>::word word;
      const word *q = reinterpret_cast<const word *>(p0 + (r * 8192 + c0));
#pragma unroll
      for (int i = 0; i < kf_pack<float, W>::N; i++) x0[kk].w[i] = __ldg(q + i);
    }
  }
  // phase: %1 max
  float red0;
  {
    float acc = kf_red_max<float>::id();
  #pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        acc = kf_red_max<float>::op(acc, kf_in_at(x0[kk], j));
    }
  }
  }
    red0 = kf_block_allreduce<kf_red_max<float>, G, 512, false>(acc, kf_smf);
  }
  float h0[NV][W];
  // phase: %4 sum
  float red1;
  {
    float acc = kf_red_sum<float>::id();
  #pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t0 = kf_sub(kf_in_at(x0[kk], j), red0);
        const float t1 = kf_exp(t0);
        acc = kf_red_sum<float>::op(acc, t1);
        h0[kk][j] = t1;
    }
  }
  }
    red1 = kf_block_allreduce<kf_red_sum<float>, G, 512, false>(acc, kf_smf + 32);
  }
  // outputs
  bool kf_bad = false;
  #pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
    float o0[W];
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t2 = kf_div_rcpf(h0[kk][j], red1, kf_rcp_rn(red1), kf_bad);
        o0[j] = t2;
    }
    kf_stv<float, W>(p1 + (r * 8192 + c0), o0);
  }
  }
  if (kf_bad) { // a quotient was not finite: this thread's outputs again, with the fallback
  #pragma unroll 1
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
#pragma unroll 1
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t3 = kf_ld(p0 + (r * 8192 + c));
        const float t4 = kf_sub(t3, red0);
        const float t5 = kf_exp(t4);
        const float t6 = kf_div_rcp(kf_fresh(t5), red1, kf_rcp_rn(red1));
        kf_st(p1 + (r * 8192 + c), t6);
    }
    }
  }
  }
  // input %0: the row kf_l2pf_rows ahead into L2 (emit_prefetch_next_rows)
  if (lane == 0 && kf_l2pf_rows > 0 && r + kf_l2pf_rows < 8192)
    kf_prefetch_l2_bulk(p0 + (long long)(r + kf_l2pf_rows) * 8192, 32768u);
}

// The fallback for unaligned pointers: W = 1, inputs re-read per phase,
// loops not unrolled (compiles fast; runs only on unaligned tensors).
KF_INLINE void kf_part0_k0_row_row1(int r, int lane, const float *__restrict__ p0, float *__restrict__ p1) {
  enum { G = 512, COLS = 8192, W = 1, NV = (COLS + G - 1) / G, FULL = COLS % G == 0,
         kf_cb = 0 };
  __shared__ float kf_smf[64];
  (void)kf_smf;
  // phase: %1 max
  float red0;
  {
    float acc = kf_red_max<float>::id();
  #pragma unroll 1
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t0 = kf_ld(p0 + (r * 8192 + c));
        acc = kf_red_max<float>::op(acc, t0);
    }
  }
  }
    red0 = kf_block_allreduce<kf_red_max<float>, G, 512, false>(acc, kf_smf);
  }
  // phase: %4 sum
  float red1;
  {
    float acc = kf_red_sum<float>::id();
  #pragma unroll 1
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t1 = kf_ld(p0 + (r * 8192 + c));
        const float t2 = kf_sub(t1, red0);
        const float t3 = kf_exp(t2);
        acc = kf_red_sum<float>::op(acc, t3);
    }
  }
  }
    red1 = kf_block_allreduce<kf_red_sum<float>, G, 512, false>(acc, kf_smf + 32);
  }
  // outputs
  #pragma unroll 1
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
    float o0[W];
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t4 = kf_ld(p0 + (r * 8192 + c));
        const float t5 = kf_sub(t4, red0);
        const float t6 = kf_exp(t5);
        const float t7 = kf_div_rcp(t6, red1, kf_rcp_rn(red1));
        o0[j] = t7;
    }
    kf_stv<float, W>(p1 + (r * 8192 + c0), o0);
  }
  }
}

KF_INLINE void kf_part0_k0_row(unsigned bid, const float *__restrict__ p0, float *__restrict__ p1) {
  if (threadIdx.x >= 512) return;
  const int lane = threadIdx.x % 512;
  const int grp = threadIdx.x / 512;
  const bool vec = 4 > 1 && kf_aligned(p0, 16) && kf_aligned(p1, 16);
  for (int r = (int)bid * 1 + grp; r < 8192; r += (int)8192 * 1) {
    if (vec)
      kf_part0_k0_row_row<4>(r, lane, p0, p1);
    else
      kf_part0_k0_row_row1(r, lane, p0, p1);
  }
}

// horizontal.cu - the kernel entry: routes each block to its part. A plain
// launch has one part; a horizontal one gives each part a range of block
// indices (starts baked in below), found by an if-chain or, past a few
// parts, a binary search over the table. Identical parts may share one
// generic body; then the pointers come packed in one struct parameter (up
// to 32764 bytes on sm_70+) that the body indexes by part, and each group
// finds its part by a binary search over baked block starts.
// Every part runs with at most 512 threads; the threads a part
// does not use return at once.
// Every block starts with kf_grid_dep_sync (the dep hole; nothing with
// KFUSE_PDL=0): nothing is read or written before the kernel ahead in the
// stream is done (common.cuh).
// Holes: entry, cluster (__cluster_dims__ of a row split over a cluster, or
// nothing), THREADS, decls, params, dep, route.
extern "C" __global__ void __launch_bounds__(512) kf_k0_row(const float *__restrict__ p0, float *__restrict__ p1) {
  kf_grid_dep_sync();
  kf_part0_k0_row(blockIdx.x, p0, p1);
}
// parameters (graph values): p0 = %0, p1 = %5
