// gemm_sm90.cu - the Hopper product D[M, N] = A[M, K] B[K, N] (16-bit
// operands, row-major as the graph stores them, f32 accumulators), with
// the kernel's pointwise epilogue fused in registers before the store.
// Needs sm_90a (wgmma, setmaxnreg); docs/matmul.md describes the design.
//
// - Block tile {{BM}} x {{BN}} x {{BK}}; a ring of {{STAGES}} shared-memory
//   stages, each A's {{BM}} x {{BK}} box and B's {{BK}} x {{BN}} as
//   {{BN}}/64 boxes of {{BK}} x 64, written by the copy engine (TMA) through
//   the tensor maps kf_tma and kf_tmb (encoded by the runtime at bind time)
//   with the 128-byte swizzle; elements past M, N or K arrive as zeros.
// - Warp specialization: warpgroup 0 produces (one thread issues the
//   copies), warpgroups 1 and 2 consume, each 64 rows of the tile with
//   wgmma.mma_async m64n{{BN}}k16 (A K-major, B N-major: the transposed-B
//   form, which is how a row-major B[K, N] lies).
// - Stage handshakes on mbarriers: full[s] (the producer's expect_tx plus
//   the copies' bytes) and empty[s] (one arrive per consumer warp).
// - Clusters of {{CL}} blocks (1 or 2) along M: the blocks of a cluster take
//   tiles side by side in M with the same columns, so they need the same B:
//   block r copies B's boxes j with j % {{CL}} == r and multicasts them to
//   every block of the cluster; empty[s] then counts the consumer warps of
//   the whole cluster, since a copy writes the stage in every block.
// - Persistent: cluster c takes tile groups c, + gridDim.x / {{CL}}, ...;
//   the producer runs ahead into the next tile while the consumers store.
// - Consumers keep one k-block of wgmma in flight: the stage of k-block kb
//   is released once kb + 1 is issued and kb has completed.
// Holes: fn, BID, params, IDX, M, N, K, BM, BN, BK, STAGES, CL, GROUPS_M,
// GROUPS, KBLOCKS, STAGE_BYTES, B_BYTES, NACC, wgmma, epilogue.

{{wgmma}}
/* A consumer warp's release of a stage: one arrival on empty[s] of every
 * block of the cluster, whose copies write the stage here. */
KF_INLINE void kf_release(unsigned empty) {
  if ({{CL}} == 1) {
    kf_bar_arrive(empty);
  } else {
#pragma unroll
    for (unsigned r = 0; r < {{CL}}; r++) kf_bar_arrive_in(empty, r);
  }
}
KF_INLINE void {{fn}}({{BID}} bid, {{params}}, const kf_tmap &kf_tma, const kf_tmap &kf_tmb) {
  (void)bid;
  extern __shared__ unsigned char kf_dsmem[];
  /* 1024-byte alignment: the swizzle pattern repeats every 8 rows of 128 B */
  const unsigned base = (kf_smem_addr(kf_dsmem) + 1023u) & ~1023u;
  const unsigned bars = base + {{STAGES}} * {{STAGE_BYTES}}; /* full[s], then empty[s] */
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  const unsigned rank = {{CL}} > 1 ? kf_cluster_rank() : 0u;
  const int c0_ = blockIdx.x / {{CL}}, ncl = gridDim.x / {{CL}};
  if (threadIdx.x == 0) {
    for (int s = 0; s < {{STAGES}}; s++) {
      kf_bar_init(bars + 8 * s, 1);
      kf_bar_init(bars + 8 * ({{STAGES}} + s), 8 * {{CL}});
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::
                     : "memory");
  }
  /* the peers' copies and arrivals reach these barriers only after this */
  if ({{CL}} > 1)
    kf_cluster_all();
  else
    __syncthreads();
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (tid == 0) {
      asm volatile("prefetch.tensormap [%0];\n\tprefetch.tensormap [%1];" ::"l"(
                       (unsigned long long)&kf_tma),
                   "l"((unsigned long long)&kf_tmb)
                   : "memory");
      int s = 0;
      unsigned ph = 0;
      for (int t = c0_; t < {{GROUPS}}; t += ncl) {
        const int m0 = (t % {{GROUPS_M}} * {{CL}} + (int)rank) * {{BM}};
        const int n0 = t / {{GROUPS_M}} * {{BN}};
        for (int kb = 0; kb < {{KBLOCKS}}; kb++) {
          kf_bar_wait(bars + 8 * ({{STAGES}} + s), ph ^ 1u);
          const unsigned full = bars + 8 * s, a = base + s * {{STAGE_BYTES}};
          kf_bar_expect(full, {{STAGE_BYTES}});
          kf_tma_2d(a, &kf_tma, kb * {{BK}}, m0, full);
#pragma unroll
          for (int j = 0; j < {{BN}} / 64; j++) {
            const unsigned b = a + {{STAGE_BYTES}} - {{B_BYTES}} + j * {{BK}} * 128;
            if ({{CL}} == 1)
              kf_tma_2d(b, &kf_tmb, n0 + 64 * j, kb * {{BK}}, full);
            else if (j % {{CL}} == (int)rank)
              kf_tma_2d_mc(b, &kf_tmb, n0 + 64 * j, kb * {{BK}}, full,
                           (unsigned short)((1u << {{CL}}) - 1));
          }
          if (++s == {{STAGES}}) s = 0, ph ^= 1u;
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const int cw = wg - 1, warp = tid / 32, lane = tid % 32;
    int s = 0, prev = 0;
    unsigned ph = 0;
    for (int t = c0_; t < {{GROUPS}}; t += ncl) {
      const int m0 = (t % {{GROUPS_M}} * {{CL}} + (int)rank) * {{BM}};
      const int n0 = t / {{GROUPS_M}} * {{BN}};
      float d[{{NACC}}];
#pragma unroll
      for (int i = 0; i < {{NACC}}; i++) d[i] = 0.0f;
      for (int kb = 0; kb < {{KBLOCKS}}; kb++) {
        kf_bar_wait(bars + 8 * s, ph);
        const unsigned a = base + s * {{STAGE_BYTES}} + cw * 64 * 128;
        const unsigned b = base + s * {{STAGE_BYTES}} + {{STAGE_BYTES}} - {{B_BYTES}};
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < {{BK}} / 16; kk++)
          /* A: K-major rows of 128 B, 8-row groups 1024 B apart, k16 = 32 B
           * further along; B: N-major, 64-wide chunks {{BK}} x 128 B apart,
           * 8-row groups 1024 B apart, k16 = 16 rows = 2048 B further. */
          kf_wgmma(d, kf_gmma_desc(a + kk * 32, 16, 1024),
                   kf_gmma_desc(b + kk * 2048, {{BK}} * 128, 1024));
        asm volatile("wgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 1;" ::
                         : "memory");
        /* k-block kb - 1 has completed: its stage goes back to the producers */
        if (kb > 0 && lane == 0) kf_release(bars + 8 * ({{STAGES}} + prev));
        prev = s;
        if (++s == {{STAGES}}) s = 0, ph ^= 1u;
      }
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      if ({{KBLOCKS}} > 0 && lane == 0) kf_release(bars + 8 * ({{STAGES}} + prev));
      /* The fragment layout of m64nNk16: warp w of the warpgroup holds rows
       * 16w .. 16w+15; lane l rows l/4 and l/4 + 8, columns 2(l%4) and
       * 2(l%4) + 1 of every 8-column group j, in d[4j .. 4j+3]. */
      const {{IDX}} bt = 0;
      (void)bt;
      const {{IDX}} r0 = m0 + cw * 64 + warp * 16 + lane / 4, c0 = n0 + 2 * (lane % 4);
#pragma unroll
      for (int i = 0; i < {{NACC}}; i++) {
        const {{IDX}} row = r0 + 8 * ((i / 2) % 2), col = c0 + 8 * (i / 4) + i % 2;
        if (row < {{M}} && col < {{N}}) {
          const float acc = d[i];
{{epilogue}}        }
      }
    }
  }
  /* no block may leave while a peer can still arrive on its barriers */
  if ({{CL}} > 1) kf_cluster_all();
}
