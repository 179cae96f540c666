/* kfuse generated kernel kf_k0_row: 1 part, 8192 blocks x 512 threads.
 * part kf_part0_k0_row = kernel k0_row (row), 5 ops:
 *   %1=max(%0) %2=sub(%0,%1) %3=exp(%2) %4=sum(%3) %5 y=div(%3,%4)
 *  decisions: row: 8192 rows x 8192 cols, block per row (512 threads per row, 1 rows per block), 4 lanes per access, row held in registers (reused reduction operands too), staged: the next row bulk-copied into shared memory while this one is worked on, 32-bit index, 8192 blocks x 512 threads at most (persistent: as many as are resident)
 * index: 32-bit (largest offset 67108863); widest access 16 bytes
 */
// [templates/common.cuh: the prelude, not repeated in golden files]

// row_staged.cu - the row kernel of row.cu (a block per row, the row held in
// registers) with its rows staged through shared memory, on sm_90: the grid
// is persistent (the runtime launches as many blocks as are resident, each
// striding over rows by gridDim.x) and thread 0 starts the bulk copies of
// the block's next rows (one cp.async.bulk per held input, kf_part0_k0_row_stage,
// completing on the stage's mbarrier), so that they are in flight while the
// block reduces and stores the current row. With STAGES = 2 the copy of the
// row after next starts at the top of each row, into the other stage; with
// 1, the row function starts the next row's copy once every thread has the
// current row in registers (after a barrier). Without staging a block has
// no load in flight between its rows.
// Holes: as row.cu, plus STAGES and stage (the shared buffers, the
// mbarriers and kf_part0_k0_row_stage).
// The staged rows (1 x 32768 bytes) and the mbarriers counting their bytes in.
__shared__ __align__(128) float kf_part0_k0_row_s0[1][8192];
__shared__ unsigned long long kf_part0_k0_row_bar[1];
KF_INLINE void kf_part0_k0_row_stage(int r, int slot, const float *__restrict__ p0, float *__restrict__ p5) {
  if (r >= 8192) return;
  kf_mbar_expect(&kf_part0_k0_row_bar[slot], 32768u);
  kf_bulk_g2s(kf_part0_k0_row_s0[slot], p0 + r * 8192, 32768u, &kf_part0_k0_row_bar[slot]);
}

template <int W>
KF_INLINE void kf_part0_k0_row_row(int r, int lane, int slot, const float *__restrict__ p0, float *__restrict__ p5) {
  enum { G = 512, COLS = 8192, NV = (COLS + G * W - 1) / (G * W),
         FULL = COLS % (G * W) == 0 };
  __shared__ float kf_smf[64];
  (void)kf_smf;
  kf_pack<float, W> x0[NV];
#pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
      typedef typename kf_pack<float, W>::word word;
      const word *q = reinterpret_cast<const word *>(kf_part0_k0_row_s0[slot] + c0);
#pragma unroll
      for (int i = 0; i < kf_pack<float, W>::N; i++) x0[kk].w[i] = *(q + i);
    }
  }
  // the staged row is in registers: the buffers take the next row's copies
  __syncthreads();
  if (threadIdx.x == 0) kf_part0_k0_row_stage(r + (int)gridDim.x, 0, p0, p5);
  // phase: %1 max
  float red1;
  {
    float acc = kf_red_max<float>::id();
  #pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
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
    red1 = kf_block_allreduce<kf_red_max<float>, G, 512, false>(acc, kf_smf);
  }
  float h3[NV][W];
  // phase: %4 sum
  float red4;
  {
    float acc = kf_red_sum<float>::id();
  #pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t0 = kf_sub(kf_in_at(x0[kk], j), red1);
        const float t1 = kf_exp(t0);
        acc = kf_red_sum<float>::op(acc, t1);
        h3[kk][j] = t1;
    }
  }
  }
    red4 = kf_block_allreduce<kf_red_sum<float>, G, 512, false>(acc, kf_smf + 32);
  }
  // outputs
  #pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
    float o5[W];
    bool kf_bad = false;
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t2 = kf_div_rcpf(h3[kk][j], red4, kf_rcp_rn(red4), kf_bad);
        o5[j] = t2;
    }
    if (kf_bad) { // a quotient was not finite: again, with the fallback
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t3 = kf_div_rcp(kf_fresh(h3[kk][j]), red4, kf_rcp_rn(red4));
        o5[j] = t3;
    }
    }
    kf_stv<float, W>(p5 + (r * 8192 + c0), o5);
  }
  }
}

// The fallback for unaligned pointers: W = 1, inputs re-read per phase,
// loops not unrolled (compiles fast; runs only on unaligned tensors).
KF_INLINE void kf_part0_k0_row_row1(int r, int lane, const float *__restrict__ p0, float *__restrict__ p5) {
  enum { G = 512, COLS = 8192, W = 1, NV = (COLS + G - 1) / G, FULL = COLS % G == 0 };
  __shared__ float kf_smf[64];
  (void)kf_smf;
  // phase: %1 max
  float red1;
  {
    float acc = kf_red_max<float>::id();
  #pragma unroll 1
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
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
    red1 = kf_block_allreduce<kf_red_max<float>, G, 512, false>(acc, kf_smf);
  }
  // phase: %4 sum
  float red4;
  {
    float acc = kf_red_sum<float>::id();
  #pragma unroll 1
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t1 = kf_ld(p0 + (r * 8192 + c));
        const float t2 = kf_sub(t1, red1);
        const float t3 = kf_exp(t2);
        acc = kf_red_sum<float>::op(acc, t3);
    }
  }
  }
    red4 = kf_block_allreduce<kf_red_sum<float>, G, 512, false>(acc, kf_smf + 32);
  }
  // outputs
  #pragma unroll 1
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
    float o5[W];
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t4 = kf_ld(p0 + (r * 8192 + c));
        const float t5 = kf_sub(t4, red1);
        const float t6 = kf_exp(t5);
        const float t7 = kf_div_rcp(t6, red4, kf_rcp_rn(red4));
        o5[j] = t7;
    }
    kf_stv<float, W>(p5 + (r * 8192 + c0), o5);
  }
  }
}

KF_INLINE void kf_part0_k0_row(unsigned bid, const float *__restrict__ p0, float *__restrict__ p5) {
  const int lane = threadIdx.x;
  if (!(4 > 1 && kf_aligned(p0, 16) && kf_aligned(p5, 16))) { // unaligned: no staging, one element per access
    for (int r = bid; r < 8192; r += (int)gridDim.x) kf_part0_k0_row_row1(r, lane, p0, p5);
    return;
  }
  if (threadIdx.x == 0)
    for (int s = 0; s < 1; s++) kf_mbar_init(&kf_part0_k0_row_bar[s]);
  __syncthreads();
  if (threadIdx.x == 0) kf_part0_k0_row_stage(bid, 0, p0, p5);
  unsigned i = 0;
  for (int r = bid; r < 8192; r += (int)gridDim.x, i++) {
    const int slot = 1 == 2 ? (int)(i & 1) : 0;
    if (1 == 2 && threadIdx.x == 0) kf_part0_k0_row_stage(r + (int)gridDim.x, slot ^ 1, p0, p5);
    // the k-th use of a stage's barrier completes its phase of parity k & 1
    kf_mbar_wait(&kf_part0_k0_row_bar[slot], (1 == 2 ? i >> 1 : i) & 1);
    kf_part0_k0_row_row<4>(r, lane, slot, p0, p5);
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
// Holes: entry, THREADS, decls, params, route.
extern "C" __global__ void __launch_bounds__(512) kf_k0_row(const float *__restrict__ p0, float *__restrict__ p5) {
  kf_part0_k0_row(blockIdx.x, p0, p5);
}
