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
//   Tile groups go in bands of {{BAND}} rows of groups, each band column by
//   column, rows fastest: the blocks at work at once read a few of A's rows
//   and B's columns, which stay in L2 (kf_tile_of).
// - Stores: with {{STAGED}} = 1 each consumer warpgroup computes the
//   epilogue {{W}} columns at a time into its own staging rows in shared
//   memory (a row of {{W}} elements plus 16 bytes, so the fragment's 8 rows
//   fall in different banks), then writes them out as whole rows of 16-byte
//   (or 8-byte) stores; with 0, {{W}} = {{BN}} and each element is stored
//   from its register.
// - Consumers keep {{INFLIGHT}} k-block of wgmma in flight behind the one
//   issued: with 1 the stage of k-block kb is released once kb + 1 is issued
//   and kb has completed; with 0 as soon as kb has completed (the other
//   consumer warpgroup's products fill the tensor cores meanwhile).
// - Paired (PAIR 1): two products of one A (SwiGLU's gate and up). The
//   first half of B's boxes comes from kf_tmb, the other half from kf_tmb2,
//   at the same columns of the two B; the mainloop is unchanged, and the
//   epilogue pairs accumulator column c with c + BN/2 (d[i] with
//   d[i + NACC/2]: acc and acc2) into a tile of OW = BN/2 output columns.
//   Unpaired, the output tile is the block tile (OW = BN) and kf_tmb2 is
//   kf_tmb.
// Holes: fn, BID, params, IDX, M, N, K, BM, BN, BK, STAGES, CL, GROUPS_M,
// GROUPS, TILES_N, BAND, INFLIGHT, KBLOCKS, STAGE_BYTES, B_BYTES, NACC, STAGED, W,
// PAIR, OW, TMB2, tmb2_param, acc2, wgmma, stage_decl, epilogue, copy_out.

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
/* Tile group t's row of groups mg and column nt: bands of {{BAND}} rows,
 * each band's groups column by column, rows fastest. */
KF_INLINE void kf_tile_of(int t, int &mg, int &nt) {
  const int per = {{BAND}} * {{TILES_N}}, band = t / per, first = band * {{BAND}};
  const int rows = {{GROUPS_M}} - first < {{BAND}} ? {{GROUPS_M}} - first : {{BAND}};
  const int r = t - band * per;
  mg = first + r % rows;
  nt = r / rows;
}
KF_INLINE void {{fn}}({{BID}} bid, {{params}}, const kf_tmap &kf_tma, const kf_tmap &kf_tmb{{tmb2_param}}) {
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
      asm volatile("prefetch.tensormap [%0];\n\tprefetch.tensormap [%1];\n\tprefetch.tensormap [%2];" ::"l"(
                       (unsigned long long)&kf_tma),
                   "l"((unsigned long long)&kf_tmb), "l"((unsigned long long)&{{TMB2}})
                   : "memory");
      int s = 0;
      unsigned ph = 0;
      for (int t = c0_; t < {{GROUPS}}; t += ncl) {
        int mg, nt;
        kf_tile_of(t, mg, nt);
        const int m0 = (mg * {{CL}} + (int)rank) * {{BM}}, n0 = nt * {{OW}};
        for (int kb = 0; kb < {{KBLOCKS}}; kb++) {
          kf_bar_wait(bars + 8 * ({{STAGES}} + s), ph ^ 1u);
          const unsigned full = bars + 8 * s, a = base + s * {{STAGE_BYTES}};
          kf_bar_expect(full, {{STAGE_BYTES}});
          kf_tma_2d(a, &kf_tma, kb * {{BK}}, m0, full);
#pragma unroll
          for (int j = 0; j < {{BN}} / 64; j++) {
            const unsigned b = a + {{STAGE_BYTES}} - {{B_BYTES}} + j * {{BK}} * 128;
            /* paired: the second half of the boxes from the second B */
            const bool second = {{PAIR}} && j >= {{BN}} / 128;
            const kf_tmap *tb = second ? &{{TMB2}} : &kf_tmb;
            const int nb = n0 + 64 * (second ? j - {{BN}} / 128 : j);
            if ({{CL}} == 1)
              kf_tma_2d(b, tb, nb, kb * {{BK}}, full);
            else if (j % {{CL}} == (int)rank)
              kf_tma_2d_mc(b, tb, nb, kb * {{BK}}, full, (unsigned short)((1u << {{CL}}) - 1));
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
{{stage_decl}}    for (int t = c0_; t < {{GROUPS}}; t += ncl) {
      int mg, nt;
      kf_tile_of(t, mg, nt);
      const int m0 = (mg * {{CL}} + (int)rank) * {{BM}}, n0 = nt * {{OW}};
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
        asm volatile("wgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned {{INFLIGHT}};" ::
                         : "memory");
        /* k-block kb - {{INFLIGHT}} has completed: its stage goes back to the
         * producers */
        if ({{INFLIGHT}} == 0 && lane == 0) kf_release(bars + 8 * ({{STAGES}} + s));
        if ({{INFLIGHT}} == 1 && kb > 0 && lane == 0) kf_release(bars + 8 * ({{STAGES}} + prev));
        prev = s;
        if (++s == {{STAGES}}) s = 0, ph ^= 1u;
      }
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      if ({{INFLIGHT}} == 1 && {{KBLOCKS}} > 0 && lane == 0)
        kf_release(bars + 8 * ({{STAGES}} + prev));
      /* The fragment layout of m64nNk16: warp w of the warpgroup holds rows
       * 16w .. 16w+15; lane l rows l/4 and l/4 + 8, columns 2(l%4) and
       * 2(l%4) + 1 of every 8-column group j, in d[4j .. 4j+3]. */
      const {{IDX}} bt = 0;
      (void)bt;
      const {{IDX}} r0 = m0 + cw * 64 + warp * 16 + lane / 4, c0 = n0 + 2 * (lane % 4);
#pragma unroll
      for (int c = 0; c < {{OW}} / {{W}}; c++) {
        /* the warpgroup's reads of the staging rows (last chunk) are done */
        if ({{STAGED}}) kf_wg_sync(cw);
#pragma unroll
        for (int ii = 0; ii < {{W}} / 2; ii++) {
          const int i = c * ({{W}} / 2) + ii;
          /* (lr, lc): the element's place in the warpgroup's staging rows */
          const int lr = warp * 16 + lane / 4 + 8 * ((i / 2) % 2);
          const int lc = 8 * (ii / 4) + 2 * (lane % 4) + i % 2;
          const {{IDX}} row = r0 + 8 * ((i / 2) % 2), col = c0 + 8 * (i / 4) + i % 2;
          (void)lr, (void)lc;
          if (row < {{M}} && col < {{N}}) {
            const float acc = d[i];
{{acc2}}{{epilogue}}          }
        }
        if ({{STAGED}}) {
          kf_wg_sync(cw); /* the chunk is in the staging rows */
          const {{IDX}} rs = m0 + cw * 64, cs = n0 + c * {{W}};
          (void)rs, (void)cs;
{{copy_out}}        }
      }
    }
  }
  /* no block may leave while a peer can still arrive on its barriers */
  if ({{CL}} > 1) kf_cluster_all();
}
