/* kfuse generated kernel kf_k0_row: 1 part, 8192 blocks x 128 threads.
 * part kf_part0_k0_row = kernel k0_row (row), 9 ops:
 *   %3 h=add(%0,%1) %4 hf=cast(%3) %5 sq=mul(%4,%4) %6 ms=mean(%5)
 *   %8 me=add(%6,%7) %9 iv=rsqrt(%8) %10 n=mul(%4,%9) %11 nb=cast(%10)
 *   %12 o=mul(%11,%2)
 *  decisions: row: 8192 rows x 8192 cols, block per row (128 threads per row, 1 rows per block), 8 lanes per access, row held in registers, 32-bit index, 8192 blocks x 128 threads
 * index: 32-bit (largest offset 67108863); widest access 16 bytes
 */
// [templates/common.cuh: the prelude, not repeated in golden files]

// row.cu - row kernel: 8192 rows of 8192 columns, each row reduced by
// a group of 128 threads (1 rows per block: a warp per row for short
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
KF_INLINE void kf_part0_k0_row_row(int r, int lane, const kf_bf16 *__restrict__ p0, const kf_bf16 *__restrict__ p1, const kf_bf16 *__restrict__ p2, kf_bf16 *__restrict__ p3, kf_bf16 *__restrict__ p4) {
  enum { G = 128, COLS = 8192, NV = (COLS + G * W - 1) / (G * W),
         FULL = COLS % (G * W) == 0, kf_cb = 0 /* first column: the block holds the row */ };
  __shared__ float kf_smf[64];
  (void)kf_smf;
  kf_pack<kf_bf16, W> x0[NV];
#pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
      typedef typename kf_pack<kf_bf16, W>::word word;
      const word *q = reinterpret_cast<const word *>(p0 + (r * 8192 + c0));
#pragma unroll
      for (int i = 0; i < kf_pack<kf_bf16, W>::N; i++) x0[kk].w[i] = __ldg(q + i);
    }
  }
  kf_pack<kf_bf16, W> x1[NV];
#pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
      typedef typename kf_pack<kf_bf16, W>::word word;
      const word *q = reinterpret_cast<const word *>(p1 + (r * 8192 + c0));
#pragma unroll
      for (int i = 0; i < kf_pack<kf_bf16, W>::N; i++) x1[kk].w[i] = __ldg(q + i);
    }
  }
  // phase: %6 mean
  float red0;
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
        const float t0 = kf_round_bf16(kf_add(kf_in_at(x0[kk], j), kf_in_at(x1[kk], j)));
        const float t1 = kf_cast<float>(t0);
        const float t2 = kf_mul(t1, t1);
        acc = kf_red_sum<float>::op(acc, t2);
    }
  }
  }
    red0 = kf_block_allreduce<kf_red_sum<float>, G, 128, true>(acc, kf_smf);
    red0 = kf_div(red0, 8192.0f);
  }
  // outputs
  #pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
    float o0[W];
  float r0[W];
    float o1[W];
    {
      const int c = c0;
      (void)c;
    kf_ldv<kf_bf16, W>(r0, p2 + ((c)));
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t3 = kf_round_bf16(kf_add(kf_in_at(x0[kk], j), kf_in_at(x1[kk], j)));
        o0[j] = t3;
        const float t4 = kf_cast<float>(t3);
        const float t5 = kf_add(red0, 9.99999997e-07f);
        const float t6 = kf_rsqrt(t5);
        const float t7 = kf_mul(t4, t6);
        const float t8 = kf_round_bf16(t7);
        const float t9 = r0[j];
        const float u10 = kf_mul(t8, t9);
        const float t10 = kf_round_bf16(u10);
        o1[j] = u10;
    }
    kf_stv<kf_bf16, W>(p3 + (r * 8192 + c0), o0);
    kf_stv<kf_bf16, W>(p4 + (r * 8192 + c0), o1);
  }
  }
  // input %0: the row kf_l2pf_rows ahead into L2 (emit_prefetch_next_rows)
  if (lane == 0 && kf_l2pf_rows > 0 && r + kf_l2pf_rows < 8192)
    kf_prefetch_l2_bulk(p0 + (long long)(r + kf_l2pf_rows) * 8192, 16384u);
  // input %1: the row kf_l2pf_rows ahead into L2 (emit_prefetch_next_rows)
  if (lane == 0 && kf_l2pf_rows > 0 && r + kf_l2pf_rows < 8192)
    kf_prefetch_l2_bulk(p1 + (long long)(r + kf_l2pf_rows) * 8192, 16384u);
}

// The fallback for unaligned pointers: W = 1, inputs re-read per phase,
// loops not unrolled (compiles fast; runs only on unaligned tensors).
KF_INLINE void kf_part0_k0_row_row1(int r, int lane, const kf_bf16 *__restrict__ p0, const kf_bf16 *__restrict__ p1, const kf_bf16 *__restrict__ p2, kf_bf16 *__restrict__ p3, kf_bf16 *__restrict__ p4) {
  enum { G = 128, COLS = 8192, W = 1, NV = (COLS + G - 1) / G, FULL = COLS % G == 0,
         kf_cb = 0 };
  __shared__ float kf_smf[64];
  (void)kf_smf;
  // phase: %6 mean
  float red0;
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
        const float t0 = kf_ld(p0 + (r * 8192 + c));
        const float t1 = kf_ld(p1 + (r * 8192 + c));
        const float t2 = kf_round_bf16(kf_add(t0, t1));
        const float t3 = kf_cast<float>(t2);
        const float t4 = kf_mul(t3, t3);
        acc = kf_red_sum<float>::op(acc, t4);
    }
  }
  }
    red0 = kf_block_allreduce<kf_red_sum<float>, G, 128, true>(acc, kf_smf);
    red0 = kf_div(red0, 8192.0f);
  }
  // outputs
  #pragma unroll 1
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = kf_cb + (kk * G + lane) * W;
    if (FULL || c0 < kf_cb + COLS) {
    float o0[W];
    float o1[W];
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t5 = kf_ld(p0 + (r * 8192 + c));
        const float t6 = kf_ld(p1 + (r * 8192 + c));
        const float t7 = kf_round_bf16(kf_add(t5, t6));
        o0[j] = t7;
        const float t8 = kf_cast<float>(t7);
        const float t9 = kf_add(red0, 9.99999997e-07f);
        const float t10 = kf_rsqrt(t9);
        const float t11 = kf_mul(t8, t10);
        const float t12 = kf_round_bf16(t11);
        const float t13 = kf_ld(p2 + ((c)));
        const float u14 = kf_mul(t12, t13);
        const float t14 = kf_round_bf16(u14);
        o1[j] = u14;
    }
    kf_stv<kf_bf16, W>(p3 + (r * 8192 + c0), o0);
    kf_stv<kf_bf16, W>(p4 + (r * 8192 + c0), o1);
  }
  }
}

KF_INLINE void kf_part0_k0_row(unsigned bid, const kf_bf16 *__restrict__ p0, const kf_bf16 *__restrict__ p1, const kf_bf16 *__restrict__ p2, kf_bf16 *__restrict__ p3, kf_bf16 *__restrict__ p4) {
  if (threadIdx.x >= 128) return;
  const int lane = threadIdx.x % 128;
  const int grp = threadIdx.x / 128;
  const bool vec = 8 > 1 && kf_aligned(p0, 16) && kf_aligned(p1, 16) && kf_aligned(p3, 16) && kf_aligned(p2, 16) && kf_aligned(p4, 16);
  for (int r = (int)bid * 1 + grp; r < 8192; r += (int)8192 * 1) {
    if (vec)
      kf_part0_k0_row_row<8>(r, lane, p0, p1, p2, p3, p4);
    else
      kf_part0_k0_row_row1(r, lane, p0, p1, p2, p3, p4);
  }
}

// horizontal.cu - the kernel entry: routes each block to its part. A plain
// launch has one part; a horizontal one gives each part a range of block
// indices (starts baked in below), found by an if-chain or, past a few
// parts, a binary search over the table. Identical parts may share one
// generic body; then the pointers come packed in one struct parameter (up
// to 32764 bytes on sm_70+) that the body indexes by part, and each group
// finds its part by a binary search over baked block starts.
// Every part runs with at most 128 threads; the threads a part
// does not use return at once.
// Every block starts with kf_grid_dep_sync (the dep hole; nothing with
// KFUSE_PDL=0): nothing is read or written before the kernel ahead in the
// stream is done (common.cuh).
// Holes: entry, cluster (__cluster_dims__ of a row split over a cluster, or
// nothing), THREADS, decls, params, dep, route.
extern "C" __global__ void __launch_bounds__(128) kf_k0_row(const kf_bf16 *__restrict__ p0, const kf_bf16 *__restrict__ p1, const kf_bf16 *__restrict__ p2, kf_bf16 *__restrict__ p3, kf_bf16 *__restrict__ p4) {
  kf_grid_dep_sync();
  kf_part0_k0_row(blockIdx.x, p0, p1, p2, p3, p4);
}
// parameters (graph values): p0 = %0, p1 = %1, p2 = %2, p3 = %3, p4 = %12
