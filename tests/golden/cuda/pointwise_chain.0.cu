/* kfuse generated kernel kf_k0_pointwise: 1 part, 131072 blocks x 256 threads.
 * part kf_part0_k0_pointwise = kernel k0_pointwise (pointwise), 14 ops:
 *   %1 a=exp(%0) %2 b=log(%1) %3 c=sin(%2) %4 d=cos(%3) %5 e=tanh(%4)
 *   %6 f=sigmoid(%5) %7 g=sqrt(%6) %8 h=rsqrt(%7) %9 i=reciprocal(%8)
 *   %10 j=erf(%9) %11 k=silu(%10) %12 l=gelu_tanh(%11) %14 m=pow(%12,%13)
 *   %16 y=div(%14,%15)
 *  decisions: pointwise: 67108864 elements, 2 lanes per thread (8-byte accesses), int index, 131072 blocks x 256 threads, grid-stride
 * index: 32-bit (largest offset 67108863); widest access 8 bytes
 */
// [templates/common.cuh: the prelude, not repeated in golden files]

// pointwise.cu - one iteration space of 67108864 elements (every output has
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
KF_INLINE void kf_part0_k0_pointwise_elems(int i, const float *__restrict__ p0, float *__restrict__ p1) {
  float r0[W];
  float o0[W];
  {
    const int e = i;
    (void)e;
    kf_ldv<float, W>(r0, p0 + (e));
  }
#pragma unroll
  for (int j = 0; j < W; j++) {
    const int e = i + j;
    (void)e;
    const float t0 = r0[j];
    const float t1 = kf_exp(t0);
    const float t2 = kf_log(t1);
    const float t3 = kf_sin(t2);
    const float t4 = kf_cos(t3);
    const float t5 = kf_tanh(t4);
    const float t6 = kf_sigmoid(t5);
    const float t7 = kf_sqrt(t6);
    const float t8 = kf_rsqrt(t7);
    const float t9 = kf_reciprocal(t8);
    const float t10 = kf_erf(t9);
    const float t11 = kf_silu(t10);
    const float t12 = kf_gelu_tanh(t11);
    const float t13 = kf_pow(t12, 2.0f);
    const float t14 = kf_div(t13, 3.0f);
    o0[j] = t14;
  }
  kf_stv<float, W>(p1 + i, o0);
}

KF_INLINE void kf_part0_k0_pointwise(unsigned bid, const float *__restrict__ p0, float *__restrict__ p1) {
  if (threadIdx.x >= 256) return;
  const int stride = (int)131072 * 256;
  const int tid = (int)bid * 256 + threadIdx.x;
  int i0 = 0;
  if (2 > 1 && kf_aligned(p0, 8) && kf_aligned(p1, 8)) {
    const int nv = 67108864 / 2;
    for (int v = tid; v < nv; v += stride) kf_part0_k0_pointwise_elems<2>(v * 2, p0, p1);
    i0 = nv * 2;
  }
  for (int i = i0 + tid; i < 67108864; i += stride) kf_part0_k0_pointwise_elems<1>(i, p0, p1);
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
extern "C" __global__ void __launch_bounds__(256) kf_k0_pointwise(const float *__restrict__ p0, float *__restrict__ p1) {
  kf_grid_dep_sync();
  kf_part0_k0_pointwise(blockIdx.x, p0, p1);
}
// parameters (graph values): p0 = %0, p1 = %16
