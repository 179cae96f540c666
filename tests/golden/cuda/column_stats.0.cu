/* kfuse generated kernel kf_launch0_h3: 3 parts (horizontal), 4256 blocks x 256 threads.
 * part kf_part0_k0_reduce = kernel k0_reduce (reduce), 4 ops:
 *   %2 mu=mean(%0) %3 hi=max(%0) %4 lo=min(%0) %5 span=sub(%3,%4)
 *  decisions: reduce: 1 x 65536 x 512 strided, 32 x 4 outputs x 8 slices of the reduced axis per block, 4 lanes per access, split over 264 blocks per tile (partials combined by the last block, deterministic), 32-bit index
 * part kf_part1_k1_reduce = kernel k1_reduce (reduce), 1 ops:
 *   %6 mid=sum(%1)
 *  decisions: reduce: 64 x 2048 x 256 strided, 32 x 4 outputs x 8 slices of the reduced axis per block, 4 lanes per access, split over 9 blocks per tile (partials combined by the last block, deterministic), 32-bit index
 * part kf_part2_k2_reduce = kernel k2_reduce (reduce), 1 ops:
 *   %7 tot=sum(%1)
 *  decisions: reduce: 1 x 33554432 contiguous, a block of 256 per output, 8 elements per step, split over 2048 blocks of 16384 (partials combined by the last block, deterministic), 32-bit index
 * index: 32-bit (largest offset 33554431); widest access 16 bytes
 */
// [templates/common.cuh: the prelude, not repeated in golden files]

// reduce_cols.cu - reduction over a strided axis (inner == 512 > 1):
// 1 x 512 outputs, each over 65536 elements 512 apart.
// A block of TX x TY threads (256, or fewer: the threads past TX * TY are
// idle, live false) covers TX * LANES consecutive outputs (a tile):
// each thread owns LANES adjacent outputs, loaded W at a time (16-byte loads
// when W = LANES, coalesced along inner); its TY thread rows split the
// block's share of the reduced axis. Slices are combined through shared
// memory in a fixed order. When the tiles are too few to fill the GPU, the
// reduced axis is split over SPLIT blocks per tile: each stores its partials,
// and the last block of the tile (an atomic counter) combines them in a fixed
// order (deterministic), then resets the counter for the next launch. The
// epilogue runs in thread row 0 of the block that finishes a tile.
// W > 1 only when every vector-accessed pointer is aligned (checked at run
// time, uniformly); W = 1 reads the same LANES outputs one at a time. Only
// the accumulation loop is written in both widths (the W = 1 copy not
// unrolled); the combine, split and epilogue code is compiled once, so the
// unaligned path costs little compile time.
// The aligned loop is unrolled UNROLL times (8 for scalar lanes, so that
// more loads are in flight; fewer for heavy bodies); the order is the same.
// Holes: fn, IDX, OUTER, RED, INNER, LANES, TX, TY, NT, SPLIT, CHUNK, UNROLL,
// THREADS, LAUNCH, live, params, args, globals, decl, pre_decl, pre, accumulate,
// combine, partial_store, partial_load, epilogue, aligned.
__device__ float kf_part0_k0_reduce_part2[135168];
__device__ float kf_part0_k0_reduce_part3[135168];
__device__ float kf_part0_k0_reduce_part4[135168];
__device__ unsigned kf_part0_k0_reduce_count[4];

KF_INLINE void kf_part0_k0_reduce_cols(unsigned bid, bool vec, const float *__restrict__ p0, float *__restrict__ p1, float *__restrict__ p2) {
  enum { TX = 32, TY = 8, LANES = 4 };
  __shared__ bool kf_last;
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
  const int o = (int)bid / (4 * 264);
  const int t = (int)(bid / 264) % 4;
  const int s = (int)bid % 264;
  const int n0 = (t * TX + tx) * LANES;
  const bool live = n0 < 512;
  const int k0 = s * 249;
  const int k1 = k0 + 249 < 65536 ? k0 + 249 : 65536;
  (void)k0; (void)k1;
  float acc0[LANES];
#pragma unroll
  for (int l = 0; l < LANES; l++) acc0[l] = kf_red_sum<float>::id();
  __shared__ float kf_c0[TY][LANES][TX + 1];
  float acc1[LANES];
#pragma unroll
  for (int l = 0; l < LANES; l++) acc1[l] = kf_red_max<float>::id();
  __shared__ float kf_c1[TY][LANES][TX + 1];
  float acc2[LANES];
#pragma unroll
  for (int l = 0; l < LANES; l++) acc2[l] = kf_red_min<float>::id();
  __shared__ float kf_c2[TY][LANES][TX + 1];

  if (vec || LANES == 1) {
    enum { W = LANES };
    if (live) {
#pragma unroll 4
      for (int k = k0 + ty; k < k1; k += TY) {
#pragma unroll
        for (int g = 0; g < LANES / W; g++) {
  float r0[W];
          {
            const int n = n0 + g * W;
            (void)n;
    kf_ldv<float, W>(r0, p0 + (k * 512 + n));
          }
#pragma unroll
          for (int j = 0; j < W; j++) {
            const int l = g * W + j;
            const int n = n0 + l;
            (void)n;
          const float t0 = r0[j];
          acc0[l] = kf_red_sum<float>::op(acc0[l], t0);
          acc1[l] = kf_red_max<float>::op(acc1[l], t0);
          acc2[l] = kf_red_min<float>::op(acc2[l], t0);
          }
        }
      }
    }
  } else {
    enum { W = 1 };
    if (live) {
#pragma unroll 1
      for (int k = k0 + ty; k < k1; k += TY) {
#pragma unroll
        for (int g = 0; g < LANES; g++) {
  float r0[W];
          {
            const int n = n0 + g;
            (void)n;
    kf_ldv<float, W>(r0, p0 + (k * 512 + n));
          }
          {
            const int j = 0, l = g;
            const int n = n0 + l;
            (void)j;
            (void)n;
          const float t0 = r0[j];
          acc0[l] = kf_red_sum<float>::op(acc0[l], t0);
          acc1[l] = kf_red_max<float>::op(acc1[l], t0);
          acc2[l] = kf_red_min<float>::op(acc2[l], t0);
          }
        }
      }
    }
  }
  // Pass 0 combines this block's slices; with a split, the last block of
  // the tile then loads every block's partials and combines again (pass 1).
  // One copy of the combine code for both passes: less to compile.
#pragma unroll 1
  for (int pass = 0;; pass++) {
  kf_sync<256, 256>();
#pragma unroll
  for (int l = 0; l < LANES; l++) {
    kf_c0[ty][l][tx] = acc0[l];
    kf_c1[ty][l][tx] = acc1[l];
    kf_c2[ty][l][tx] = acc2[l];
  }
  kf_sync<256, 256>();
  if (ty == 0)
    for (int i = 1; i < TY; i++)
#pragma unroll
      for (int l = 0; l < LANES; l++) {
      acc0[l] = kf_red_sum<float>::op(acc0[l], kf_c0[i][l][tx]);
      acc1[l] = kf_red_max<float>::op(acc1[l], kf_c1[i][l][tx]);
      acc2[l] = kf_red_min<float>::op(acc2[l], kf_c2[i][l][tx]);
      }

    if (264 == 1 || pass == 1) break;
    if (ty == 0 && live) {
#pragma unroll
      for (int l = 0; l < LANES; l++) {
        kf_part0_k0_reduce_part2[(o * 264 + s) * 512 + n0 + l] = acc0[l];
        kf_part0_k0_reduce_part3[(o * 264 + s) * 512 + n0 + l] = acc1[l];
        kf_part0_k0_reduce_part4[(o * 264 + s) * 512 + n0 + l] = acc2[l];
      }
    }
    __threadfence();
    kf_sync<256, 256>();
    if (threadIdx.x == 0) kf_last = atomicAdd(&kf_part0_k0_reduce_count[o * 4 + t], 1u) == 264 - 1;
    kf_sync<256, 256>();
    if (!kf_last) return;
    __threadfence();
#pragma unroll
    for (int l = 0; l < LANES; l++) acc0[l] = kf_red_sum<float>::id();
    if (live)
#pragma unroll 8
      for (int ss = ty; ss < 264; ss += TY)
#pragma unroll
        for (int l = 0; l < LANES; l++)
          acc0[l] = kf_red_sum<float>::op(acc0[l], __ldcg(kf_part0_k0_reduce_part2 + (o * 264 + ss) * 512 + n0 + l));
#pragma unroll
    for (int l = 0; l < LANES; l++) acc1[l] = kf_red_max<float>::id();
    if (live)
#pragma unroll 8
      for (int ss = ty; ss < 264; ss += TY)
#pragma unroll
        for (int l = 0; l < LANES; l++)
          acc1[l] = kf_red_max<float>::op(acc1[l], __ldcg(kf_part0_k0_reduce_part3 + (o * 264 + ss) * 512 + n0 + l));
#pragma unroll
    for (int l = 0; l < LANES; l++) acc2[l] = kf_red_min<float>::id();
    if (live)
#pragma unroll 8
      for (int ss = ty; ss < 264; ss += TY)
#pragma unroll
        for (int l = 0; l < LANES; l++)
          acc2[l] = kf_red_min<float>::op(acc2[l], __ldcg(kf_part0_k0_reduce_part4 + (o * 264 + ss) * 512 + n0 + l));

  }
  if (264 > 1 && threadIdx.x == 0) kf_part0_k0_reduce_count[o * 4 + t] = 0u;
  if (ty == 0 && live) {
#pragma unroll
    for (int l = 0; l < LANES; l++) {
      const int n = n0 + l;
      (void)n;
      float red0 = acc0[l];
      red0 = kf_div(red0, 65536.0f);
      float red1 = acc1[l];
      float red2 = acc2[l];
      kf_st(p1 + (o * 512 + n), red0);
      const float t1 = kf_sub(red1, red2);
      kf_st(p2 + (o * 512 + n), t1);
    }
  }
}

KF_INLINE void kf_part0_k0_reduce(unsigned bid, const float *__restrict__ p0, float *__restrict__ p1, float *__restrict__ p2) {
  if (threadIdx.x >= 256) return;
  kf_part0_k0_reduce_cols(bid, 4 > 1 && kf_aligned(p0, 16), p0, p1, p2);
}

// reduce_cols.cu - reduction over a strided axis (inner == 256 > 1):
// 64 x 256 outputs, each over 2048 elements 256 apart.
// A block of TX x TY threads (256, or fewer: the threads past TX * TY are
// idle, live false) covers TX * LANES consecutive outputs (a tile):
// each thread owns LANES adjacent outputs, loaded W at a time (16-byte loads
// when W = LANES, coalesced along inner); its TY thread rows split the
// block's share of the reduced axis. Slices are combined through shared
// memory in a fixed order. When the tiles are too few to fill the GPU, the
// reduced axis is split over SPLIT blocks per tile: each stores its partials,
// and the last block of the tile (an atomic counter) combines them in a fixed
// order (deterministic), then resets the counter for the next launch. The
// epilogue runs in thread row 0 of the block that finishes a tile.
// W > 1 only when every vector-accessed pointer is aligned (checked at run
// time, uniformly); W = 1 reads the same LANES outputs one at a time. Only
// the accumulation loop is written in both widths (the W = 1 copy not
// unrolled); the combine, split and epilogue code is compiled once, so the
// unaligned path costs little compile time.
// The aligned loop is unrolled UNROLL times (8 for scalar lanes, so that
// more loads are in flight; fewer for heavy bodies); the order is the same.
// Holes: fn, IDX, OUTER, RED, INNER, LANES, TX, TY, NT, SPLIT, CHUNK, UNROLL,
// THREADS, LAUNCH, live, params, args, globals, decl, pre_decl, pre, accumulate,
// combine, partial_store, partial_load, epilogue, aligned.
__device__ float kf_part1_k1_reduce_part6[147456];
__device__ unsigned kf_part1_k1_reduce_count[128];

KF_INLINE void kf_part1_k1_reduce_cols(unsigned bid, bool vec, const float *__restrict__ p3, float *__restrict__ p4) {
  enum { TX = 32, TY = 8, LANES = 4 };
  __shared__ bool kf_last;
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
  const int o = (int)bid / (2 * 9);
  const int t = (int)(bid / 9) % 2;
  const int s = (int)bid % 9;
  const int n0 = (t * TX + tx) * LANES;
  const bool live = n0 < 256;
  const int k0 = s * 228;
  const int k1 = k0 + 228 < 2048 ? k0 + 228 : 2048;
  (void)k0; (void)k1;
  float acc3[LANES];
#pragma unroll
  for (int l = 0; l < LANES; l++) acc3[l] = kf_red_sum<float>::id();
  __shared__ float kf_c3[TY][LANES][TX + 1];

  if (vec || LANES == 1) {
    enum { W = LANES };
    if (live) {
#pragma unroll 4
      for (int k = k0 + ty; k < k1; k += TY) {
#pragma unroll
        for (int g = 0; g < LANES / W; g++) {
  float r0[W];
          {
            const int n = n0 + g * W;
            (void)n;
    kf_ldv<float, W>(r0, p3 + (o * 524288 + k * 256 + n));
          }
#pragma unroll
          for (int j = 0; j < W; j++) {
            const int l = g * W + j;
            const int n = n0 + l;
            (void)n;
          const float t0 = r0[j];
          acc3[l] = kf_red_sum<float>::op(acc3[l], t0);
          }
        }
      }
    }
  } else {
    enum { W = 1 };
    if (live) {
#pragma unroll 1
      for (int k = k0 + ty; k < k1; k += TY) {
#pragma unroll
        for (int g = 0; g < LANES; g++) {
  float r0[W];
          {
            const int n = n0 + g;
            (void)n;
    kf_ldv<float, W>(r0, p3 + (o * 524288 + k * 256 + n));
          }
          {
            const int j = 0, l = g;
            const int n = n0 + l;
            (void)j;
            (void)n;
          const float t0 = r0[j];
          acc3[l] = kf_red_sum<float>::op(acc3[l], t0);
          }
        }
      }
    }
  }
  // Pass 0 combines this block's slices; with a split, the last block of
  // the tile then loads every block's partials and combines again (pass 1).
  // One copy of the combine code for both passes: less to compile.
#pragma unroll 1
  for (int pass = 0;; pass++) {
  kf_sync<256, 256>();
#pragma unroll
  for (int l = 0; l < LANES; l++) {
    kf_c3[ty][l][tx] = acc3[l];
  }
  kf_sync<256, 256>();
  if (ty == 0)
    for (int i = 1; i < TY; i++)
#pragma unroll
      for (int l = 0; l < LANES; l++) {
      acc3[l] = kf_red_sum<float>::op(acc3[l], kf_c3[i][l][tx]);
      }

    if (9 == 1 || pass == 1) break;
    if (ty == 0 && live) {
#pragma unroll
      for (int l = 0; l < LANES; l++) {
        kf_part1_k1_reduce_part6[(o * 9 + s) * 256 + n0 + l] = acc3[l];
      }
    }
    __threadfence();
    kf_sync<256, 256>();
    if (threadIdx.x == 0) kf_last = atomicAdd(&kf_part1_k1_reduce_count[o * 2 + t], 1u) == 9 - 1;
    kf_sync<256, 256>();
    if (!kf_last) return;
    __threadfence();
#pragma unroll
    for (int l = 0; l < LANES; l++) acc3[l] = kf_red_sum<float>::id();
    if (live)
#pragma unroll 8
      for (int ss = ty; ss < 9; ss += TY)
#pragma unroll
        for (int l = 0; l < LANES; l++)
          acc3[l] = kf_red_sum<float>::op(acc3[l], __ldcg(kf_part1_k1_reduce_part6 + (o * 9 + ss) * 256 + n0 + l));

  }
  if (9 > 1 && threadIdx.x == 0) kf_part1_k1_reduce_count[o * 2 + t] = 0u;
  if (ty == 0 && live) {
#pragma unroll
    for (int l = 0; l < LANES; l++) {
      const int n = n0 + l;
      (void)n;
      float red3 = acc3[l];
      kf_st(p4 + (o * 256 + n), red3);
    }
  }
}

KF_INLINE void kf_part1_k1_reduce(unsigned bid, const float *__restrict__ p3, float *__restrict__ p4) {
  if (threadIdx.x >= 256) return;
  kf_part1_k1_reduce_cols(bid, 4 > 1 && kf_aligned(p3, 16), p3, p4);
}

// reduce_rows.cu - reduction over contiguous elements (inner == 1): 1
// outputs, each the reduction of 33554432 elements (after the fused
// prologue), consecutive in runs of a multiple of V = 8. A block of
// 256 threads reduces a share of one output's elements: thread t
// takes V consecutive elements at a time (k0 + t * V, then THREADS * V
// further), folding them into its accumulator in order; then warp shuffles
// and shared memory. The vector path loads the V elements at once (16-byte
// words); when a pointer is not aligned the same elements are read one at a
// time, in the same order, so both give the same bits. When the outputs are
// too few to fill the GPU, each is split over 2048 blocks of 16384
// elements (a multiple of V): every block stores its partial, and the last
// block to finish (an atomic counter) combines the partials in a fixed
// order, so the result is deterministic, then resets the counter for the
// next launch. The order depends on the shape only (V, THREADS, SPLIT), not
// on dtypes or the fused prologue. The epilogue runs once per output, in
// thread 0 of the block that finishes it.
// Holes: fn, IDX, OUTER, RED, V, UNROLL, SPLIT, CHUNK, THREADS, LAUNCH,
// params, args, globals, decl, pre_decl, pre, accumulate, combine,
// partial_store, partial_load, epilogue, aligned.
__device__ float kf_part2_k2_reduce_part7[2048];
__device__ unsigned kf_part2_k2_reduce_count[1];

KF_INLINE void kf_part2_k2_reduce_rows(unsigned bid, bool vec, const float *__restrict__ p3, float *__restrict__ p5) {
  enum { V = 8 };
  __shared__ float kf_smf[32];
  __shared__ double kf_smd[32];
  __shared__ int kf_smi[32];
  __shared__ long long kf_sml[32];
  __shared__ bool kf_last;
  (void)kf_smf; (void)kf_smd; (void)kf_smi; (void)kf_sml; (void)kf_last;
  const int o = (int)bid / 2048;
  const int s = (int)bid % 2048;
  const int k0 = s * 16384;
  const int k1 = k0 + 16384 < 33554432 ? k0 + 16384 : 33554432;
  const int n = 0;
  (void)n;
  float acc4 = kf_red_sum<float>::id();

  if (vec || V == 1) {
    enum { W = V };
#pragma unroll 4
    for (int kb = k0 + (int)threadIdx.x * V; kb < k1; kb += 256 * V) {
  float r0[W];
      {
        const int k = kb;
        (void)k;
    kf_ldv<float, W>(r0, p3 + (k));
      }
#pragma unroll
      for (int j = 0; j < V; j++) {
        const int k = kb + j;
        (void)k;
        const float t0 = r0[j];
        acc4 = kf_red_sum<float>::op(acc4, t0);
      }
    }
  } else {
    enum { W = 1 };
#pragma unroll 1
    for (int kb = k0 + (int)threadIdx.x * V; kb < k1; kb += 256 * V) {
#pragma unroll
      for (int g = 0; g < V; g++) {
  float r0[W];
        {
          const int k = kb + g;
          (void)k;
    kf_ldv<float, W>(r0, p3 + (k));
        }
        {
          const int j = 0;
          const int k = kb + g;
          (void)j;
          (void)k;
        const float t0 = r0[j];
        acc4 = kf_red_sum<float>::op(acc4, t0);
        }
      }
    }
  }
  acc4 = kf_block_allreduce<kf_red_sum<float>, 256, 256>(acc4, kf_smf);

  if (2048 > 1) {
    if (threadIdx.x == 0) {
      kf_part2_k2_reduce_part7[o * 2048 + s] = acc4;
      __threadfence();
      const unsigned done = atomicAdd(&kf_part2_k2_reduce_count[o], 1u);
      kf_last = done == 2048 - 1;
    }
    kf_sync<256, 256>();
    if (!kf_last) return;
    __threadfence();
    acc4 = kf_red_sum<float>::id();
#pragma unroll 4
    for (int i = threadIdx.x; i < 2048; i += 256)
      acc4 = kf_red_sum<float>::op(acc4, __ldcg(kf_part2_k2_reduce_part7 + o * 2048 + i));

  acc4 = kf_block_allreduce<kf_red_sum<float>, 256, 256>(acc4, kf_smf);

    if (threadIdx.x == 0) kf_part2_k2_reduce_count[o] = 0u;
  }
  if (threadIdx.x == 0) {
    float red4 = acc4;
    kf_st(p5 + (o), red4);
  }
}

KF_INLINE void kf_part2_k2_reduce(unsigned bid, const float *__restrict__ p3, float *__restrict__ p5) {
  if (threadIdx.x >= 256) return;
  kf_part2_k2_reduce_rows(bid, 8 > 1 && kf_aligned(p3, 16), p3, p5);
}

// horizontal.cu - the kernel entry: routes each block to its part. A plain
// launch has one part; a horizontal one gives each part a range of block
// indices (starts baked in below), found by an if-chain or, past a few
// parts, a binary search over the table. Identical parts may share one
// generic body; then the pointers come packed in one struct parameter (up
// to 32764 bytes on sm_70+) that the body indexes by part, and each group
// finds its part by a binary search over baked block starts.
// Every part runs with at most 256 threads; the threads a part
// does not use return at once.
// Every block starts with kf_grid_dep_sync (the dep hole; nothing with
// KFUSE_PDL=0): nothing is read or written before the kernel ahead in the
// stream is done (common.cuh).
// Holes: entry, cluster (__cluster_dims__ of a row split over a cluster, or
// nothing), THREADS, decls, params, dep, route.
extern "C" __global__ void __launch_bounds__(256) kf_launch0_h3(const float *__restrict__ p0, float *__restrict__ p1, float *__restrict__ p2, const float *__restrict__ p3, float *__restrict__ p4, float *__restrict__ p5) {
  kf_grid_dep_sync();
  if (blockIdx.x < 1056u) kf_part0_k0_reduce(blockIdx.x - 0u, p0, p1, p2);
  else if (blockIdx.x < 2208u) kf_part1_k1_reduce(blockIdx.x - 1056u, p3, p4);
  else if (blockIdx.x < 4256u) kf_part2_k2_reduce(blockIdx.x - 2208u, p3, p5);
}
// parameters (graph values): p0 = %0, p1 = %2, p2 = %5, p3 = %1, p4 = %6, p5 = %7
