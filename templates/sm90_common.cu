// sm90_common.cu - the Hopper helpers that the sm_90 matmul template
// (gemm_sm90.cu) and the sm_90 attention kernel (attention_sm90.cu) share:
// the tensor-map parameter type, mbarriers, TMA copies and wgmma
// descriptors. Needs sm_90a. No holes.
#ifndef KF_SM90_COMMON
#define KF_SM90_COMMON
// (kf_smem_addr, the shared-window address, is common.cuh's.)
struct __align__(64) kf_tmap {
  unsigned long long v[16];
};
KF_INLINE void kf_bar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}
KF_INLINE void kf_bar_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}
KF_INLINE void kf_bar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
/* An arrival on the barrier at the same offset in block `rank` of the
 * cluster (this block's own too). */
KF_INLINE void kf_bar_arrive_in(unsigned bar, unsigned rank) {
  asm volatile(
      "{\n .reg .b32 r;\n mapa.shared::cluster.u32 r, %0, %1;\n"
      " mbarrier.arrive.shared::cluster.b64 _, [r];\n}" ::"r"(bar),
      "r"(rank)
      : "memory");
}
/* Waits until the barrier's phase of parity `parity` has completed. A phase
 * that never completes (a bug) traps after 2 s of the global timer instead
 * of hanging the GPU: the launch fails. */
KF_INLINE void kf_bar_wait(unsigned bar, unsigned parity) {
  unsigned long long start = 0;
  for (;;) {
    unsigned done;
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    if (done) return;
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (!start)
      start = now;
    else if (now - start > 2000000000ull)
      __trap();
  }
}
/* The same box multicast into every block of the cluster in mask, at the
 * same offsets, each completing on its own barrier. */
KF_INLINE void kf_tma_2d_mc(unsigned dst, const kf_tmap *map, int c0, int c1, unsigned bar,
                            unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}
/* The 128 threads of consumer warpgroup cw (named barrier 1 + cw; 0 is
 * __syncthreads'). */
KF_INLINE void kf_wg_sync(int cw) {
  asm volatile("bar.sync %0, 128;" ::"r"(1 + cw) : "memory");
}
/* Every thread of the cluster (not warp-aligned: the producer warp's
 * threads arrive apart). */
KF_INLINE void kf_cluster_all() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}
/* One box of the tensor map at (c0 innermost, c1) into shared memory at
 * dst, completing on bar. */
KF_INLINE void kf_tma_2d(unsigned dst, const kf_tmap *map, int c0, int c1, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
/* A wgmma shared-memory descriptor with the 128-byte swizzle: start
 * address, leading and stride byte offsets, each in 16-byte units. */
KF_INLINE unsigned long long kf_gmma_desc(unsigned addr, unsigned lead, unsigned stride) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         ((unsigned long long)((lead >> 4) & 0x3FFF) << 16) |
         ((unsigned long long)((stride >> 4) & 0x3FFF) << 32) | (1ull << 62);
}
/* One box of a 3-D tensor map at (c0 innermost, c1, c2). */
KF_INLINE void kf_tma_3d(unsigned dst, const kf_tmap *map, int c0, int c1, int c2, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
      "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
#endif
