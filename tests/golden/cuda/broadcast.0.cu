/* kfuse generated kernel kf_k0_pointwise: 1 part, 16384 blocks x 256 threads.
 * part kf_part0_k0_pointwise = kernel k0_pointwise (pointwise), 3 ops:
 *   %6 outer=add(%0,%1) %10 bb=broadcast_to(%5) %11 sum2=add(%6,%10)
 *  decisions: pointwise: 16777216 elements, 4 lanes per thread (16-byte accesses), int index, 16384 blocks x 256 threads, grid-stride
 * index: 32-bit (largest offset 16777215); widest access 16 bytes
 */
// [templates/common.cuh: the prelude, not repeated in golden files]

// pointwise.cu - one iteration space of 16777216 elements (every output has
// that many), computed by a grid-stride loop over groups of W consecutive
// elements: operands proved contiguous are loaded W at a time (16 bytes
// where possible) before the lane loop, the others per lane by index
// arithmetic; outputs are stored W at a time. The vector path runs only when
// every vector-accessed pointer is aligned (a uniform run-time branch); one
// scalar loop (W = 1) takes the tail, or everything when unaligned, so the
// body is compiled W + 1 times, not W + 2. A generic part (one body shared
// by identical parts of a horizontal launch) gets NUMEL and BLOCKS as the
// run-time arguments (the sizes hole declares them).
// Holes: fn, IDX, NUMEL, W, THREADS, BLOCKS, sizes, params, args, decl, pre,
// body, store, aligned.
template <int W>
KF_INLINE void kf_part0_k0_pointwise_elems(int i, const float *__restrict__ p0, const float *__restrict__ p1, const float *__restrict__ p2, float *__restrict__ p3) {
  float r0;
  float r1[W];
  float r2[W];
  float o0[W];
  {
    const int e = i;
    (void)e;
    r0 = kf_ld(p0 + (((e) / 4096)));
    kf_ldv<float, W>(r1, p1 + (((e) % 4096)));
    kf_ldv<float, W>(r2, p2 + (((e) % 4096)));
  }
#pragma unroll
  for (int j = 0; j < W; j++) {
    const int e = i + j;
    (void)e;
    const float t0 = r0;
    const float t1 = r1[j];
    const float t2 = kf_add(t0, t1);
    const float t3 = r2[j];
    const float t4 = kf_add(t2, t3);
    o0[j] = t4;
  }
  kf_stv<float, W>(p3 + i, o0);
}

KF_INLINE void kf_part0_k0_pointwise(unsigned bid, const float *__restrict__ p0, const float *__restrict__ p1, const float *__restrict__ p2, float *__restrict__ p3) {
  if (threadIdx.x >= 256) return;
  const int stride = (int)16384 * 256;
  const int tid = (int)bid * 256 + threadIdx.x;
  int i0 = 0;
  if (4 > 1 && kf_aligned(p1, 16) && kf_aligned(p2, 16) && kf_aligned(p3, 16)) {
    const int nv = 16777216 / 4;
    for (int v = tid; v < nv; v += stride) kf_part0_k0_pointwise_elems<4>(v * 4, p0, p1, p2, p3);
    i0 = nv * 4;
  }
  for (int i = i0 + tid; i < 16777216; i += stride) kf_part0_k0_pointwise_elems<1>(i, p0, p1, p2, p3);
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
extern "C" __global__ void __launch_bounds__(256) kf_k0_pointwise(const float *__restrict__ p0, const float *__restrict__ p1, const float *__restrict__ p2, float *__restrict__ p3) {
  kf_grid_dep_sync();
  kf_part0_k0_pointwise(blockIdx.x, p0, p1, p2, p3);
}
// parameters (graph values): p0 = %0, p1 = %1, p2 = %5, p3 = %11
