// gemm_sm80.cu - the tensor-core product for sm_80 and later (mma.sync):
// D[bt][M, N] = A[bt][M, K] B[bt][K, N] for {{BATCH}} batch entries, 16-bit
// operands ({{BF}}: bf16, else f16), f32 accumulators, with the kernel's
// pointwise epilogue fused in registers before the store. docs/matmul.md
// describes the design.
//
// - Block tile 128 x 128 x 32, 8 warps of 64 x 32 (warps 2 along M, 4
//   along N), each 4 x 4 mma.sync m16n8k16 per k16 step.
// - A ring of {{STAGES}} shared-memory stages filled by cp.async (16-byte
//   chunks; a chunk past M, N or K is zero-filled: src-size 0), the copy of
//   k-block kb + {{STAGES}} - 1 issued before the product of k-block kb.
// - Each operand tile lies in shared memory as it lies in memory: A
//   [M, K] (K-contiguous, {{AT}} = 0) or its transpose [K, M] ({{AT}} = 1,
//   a transposed operand of the graph read as a layout), B [K, N] ({{BT}} =
//   0) or [N, K] ({{BT}} = 1); fragments come by ldmatrix, .trans where the
//   tile is M- or N-contiguous. Rows are swizzled by 16-byte chunk so that
//   the eight rows of one 8x8 matrix hit eight distinct bank groups.
// - An operand whose rows are not whole 16-byte chunks ({{AAL}}, {{BAL}} =
//   false: its contiguous extent is not a multiple of 8) is copied element
//   by element through registers, loaded before a k-block's product and
//   stored after it; one whose address is not 16-byte aligned (checked at
//   run time) element by element at once. Zeros past the ends: slower,
//   never wrong.
// - Batch entry bt reads A at {{AOFF}} and B at {{BOFF}} elements (0 for
//   an operand broadcast over the batch: a shared weight).
// Holes: fn, BID, params, IDX, M, N, K, BATCH, MT, NT, KBLOCKS, STAGES, BF,
// AT, BT, AAL, BAL, LDA, LDB, pa, pb, AOFF, BOFF, epilogue.
#ifndef KF_G80_COMMON
#define KF_G80_COMMON
// The chunk a row's 16-byte chunk ch is stored at: rows of 4 chunks (64 B)
// xor bits 1-2 of the row, rows of 8 or more xor bits 0-2.
template <int CPR>
KF_INLINE int kf_g80_sw(int r, int ch) {
  return CPR >= 8 ? ch ^ (r & 7) : ch ^ ((r >> 1) & 3);
}
// Rows [r0, r0 + R) and columns [c0, c0 + C) of a row-major matrix g (row
// stride ld, re rows, ce columns) into the swizzled R x C tile s; elements
// outside the matrix are zeros. AL && al: by cp.async; else one by one.
template <int R, int C, bool AL>
KF_INLINE void kf_g80_tile(unsigned short *s, const unsigned short *__restrict__ g, long long ld,
                           int re, int ce, int r0, int c0, bool al) {
  constexpr int CPR = C / 8;
#pragma unroll
  for (int j = 0; j < R * CPR / 256; j++) {
    const int i = threadIdx.x + 256 * j, r = i / CPR, ch = i % CPR, gr = r0 + r, gc = c0 + ch * 8;
    unsigned short *dst = s + r * C + kf_g80_sw<CPR>(r, ch) * 8;
    if (AL && al) {
      const bool in = gr < re && gc < ce;
      const unsigned short *src = in ? g + (long long)gr * ld + gc : g;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(kf_m80_saddr(dst)),
                   "l"(src), "r"(in ? 16 : 0)
                   : "memory");
    } else {
      unsigned w[4];
#pragma unroll
      for (int e = 0; e < 8; e += 2) {
        const unsigned lo = gr < re && gc + e < ce ? g[(long long)gr * ld + gc + e] : 0u;
        const unsigned hi = gr < re && gc + e + 1 < ce ? g[(long long)gr * ld + gc + e + 1] : 0u;
        w[e / 2] = lo | hi << 16;
      }
      *(uint4 *)dst = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}
// The element-by-element copy of a tile whose rows are not whole chunks,
// in two halves: kf_g80_fetch loads this thread's 2 chunks into registers,
// kf_g80_put stores them into the tile (zeros outside the matrix).
template <int R, int C>
KF_INLINE void kf_g80_fetch(unsigned (&w)[2][4], const unsigned short *__restrict__ g, long long ld,
                            int re, int ce, int r0, int c0) {
  constexpr int CPR = C / 8;
#pragma unroll
  for (int j = 0; j < 2; j++) {
    const int i = threadIdx.x + 256 * j, r = i / CPR, ch = i % CPR, gr = r0 + r, gc = c0 + ch * 8;
#pragma unroll
    for (int e = 0; e < 8; e += 2) {
      const unsigned lo = gr < re && gc + e < ce ? g[(long long)gr * ld + gc + e] : 0u;
      const unsigned hi = gr < re && gc + e + 1 < ce ? g[(long long)gr * ld + gc + e + 1] : 0u;
      w[j][e / 2] = lo | hi << 16;
    }
  }
}
template <int R, int C>
KF_INLINE void kf_g80_put(unsigned short *s, const unsigned (&w)[2][4]) {
  constexpr int CPR = C / 8;
#pragma unroll
  for (int j = 0; j < 2; j++) {
    const int i = threadIdx.x + 256 * j, r = i / CPR, ch = i % CPR;
    uint4 *dst = (uint4 *)(s + r * C + kf_g80_sw<CPR>(r, ch) * 8);
    *dst = make_uint4(w[j][0], w[j][1], w[j][2], w[j][3]);
  }
}
// One stage's copy: A's 128 x 32 tile (or 32 x 128 transposed), then B's
// 32 x 128 (or 128 x 32), for k-block columns [k0, k0 + 32). An operand
// with whole-chunk rows (AAL, BAL) goes by cp.async in issue (misaligned
// at run time: element by element at once); one without goes through
// registers, loaded in issue and stored by put after the k-block's
// product, so that the loads' latency hides behind it.
template <bool AT, bool BT, bool AAL, bool BAL>
struct kf_g80_copy {
  unsigned wa[2][4], wb[2][4];
  KF_INLINE void issue(unsigned short *s, const unsigned short *ga, const unsigned short *gb,
                       long long lda, long long ldb, int m, int n, int k, int m0, int n0, int k0,
                       bool ala, bool alb) {
    if constexpr (AAL) {
      if (AT)
        kf_g80_tile<32, 128, true>(s, ga, lda, k, m, k0, m0, ala);
      else
        kf_g80_tile<128, 32, true>(s, ga, lda, m, k, m0, k0, ala);
    } else {
      if (AT)
        kf_g80_fetch<32, 128>(wa, ga, lda, k, m, k0, m0);
      else
        kf_g80_fetch<128, 32>(wa, ga, lda, m, k, m0, k0);
    }
    if constexpr (BAL) {
      if (BT)
        kf_g80_tile<128, 32, true>(s + 4096, gb, ldb, n, k, n0, k0, alb);
      else
        kf_g80_tile<32, 128, true>(s + 4096, gb, ldb, k, n, k0, n0, alb);
    } else {
      if (BT)
        kf_g80_fetch<128, 32>(wb, gb, ldb, n, k, n0, k0);
      else
        kf_g80_fetch<32, 128>(wb, gb, ldb, k, n, k0, n0);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  KF_INLINE void put(unsigned short *s) {
    if constexpr (!AAL) {
      if (AT)
        kf_g80_put<32, 128>(s, wa);
      else
        kf_g80_put<128, 32>(s, wa);
    }
    if constexpr (!BAL) {
      if (BT)
        kf_g80_put<128, 32>(s + 4096, wb);
      else
        kf_g80_put<32, 128>(s + 4096, wb);
    }
  }
};
#endif

KF_INLINE void {{fn}}({{BID}} bid, {{params}}) {
  constexpr int ST = {{STAGES}}, KB = {{KBLOCKS}}, SE = 8192; /* stage: elements */
  constexpr bool BF = {{BF}}, AT = {{AT}}, BT = {{BT}};
  extern __shared__ __align__(128) unsigned char kf_g80_smem[];
  unsigned short *sm = (unsigned short *)kf_g80_smem;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wm = warp % 2, wn = warp / 2;
  const {{IDX}} bt = ({{IDX}})bid / ({{MT}} * {{NT}});
  const int tile = (int)(({{IDX}})bid % ({{MT}} * {{NT}}));
  const int m0 = tile % {{MT}} * 128, n0 = tile / {{MT}} * 128;
  const unsigned short *ga = (const unsigned short *){{pa}} + ({{AOFF}});
  const unsigned short *gb = (const unsigned short *){{pb}} + ({{BOFF}});
  const bool ala = kf_aligned({{pa}}, 16), alb = kf_aligned({{pb}}, 16);
  kf_g80_copy<AT, BT, {{AAL}}, {{BAL}}> cp;
#pragma unroll
  for (int s = 0; s < ST - 1; s++)
    if (s < KB) {
      cp.issue(sm + s * SE, ga, gb, {{LDA}}, {{LDB}}, {{M}}, {{N}}, {{K}}, m0, n0, s * 32, ala, alb);
      cp.put(sm + s * SE);
    } else {
      asm volatile("cp.async.commit_group;" ::: "memory");
    }
  float d[4][4][4];
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 4; j++) d[i][j][0] = d[i][j][1] = d[i][j][2] = d[i][j][3] = 0.0f;
  for (int kb = 0; kb < KB; kb++) {
    /* k-block kb has landed; every warp is done with kb - 1, whose stage
     * the next copy refills */
    asm volatile("cp.async.wait_group %0;" ::"n"(ST - 2) : "memory");
    __syncthreads();
    const bool more = kb + ST - 1 < KB;
    unsigned short *next = sm + (kb + ST - 1) % ST * SE;
    if (more)
      cp.issue(next, ga, gb, {{LDA}}, {{LDB}}, {{M}}, {{N}}, {{K}}, m0, n0, (kb + ST - 1) * 32, ala,
               alb);
    else
      asm volatile("cp.async.commit_group;" ::: "memory");
    const unsigned short *as = sm + kb % ST * SE, *bs = as + 4096;
#pragma unroll
    for (int kk = 0; kk < 2; kk++) {
      unsigned a[4][4], b[4][2];
#pragma unroll
      for (int mi = 0; mi < 4; mi++) {
        if (AT) { /* [32][128]: rows k, M-contiguous */
          const int r = kk * 16 + (lane & 7) + (lane >> 4) * 8;
          const int ch = (wm * 64 + mi * 16) / 8 + ((lane >> 3) & 1);
          kf_m80_ldm4t(a[mi], as + r * 128 + kf_g80_sw<16>(r, ch) * 8);
        } else { /* [128][32]: rows m, K-contiguous */
          const int r = wm * 64 + mi * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
          const int ch = kk * 2 + (lane >> 4);
          kf_m80_ldm4(a[mi], as + r * 32 + kf_g80_sw<4>(r, ch) * 8);
        }
      }
#pragma unroll
      for (int nj = 0; nj < 2; nj++) {
        unsigned t[4];
        const int nb = wn * 32 + nj * 16;
        if (BT) { /* [128][32]: rows n, K-contiguous */
          const int r = nb + (lane & 7) + (lane >> 4) * 8, ch = kk * 2 + ((lane >> 3) & 1);
          kf_m80_ldm4(t, bs + r * 32 + kf_g80_sw<4>(r, ch) * 8);
        } else { /* [32][128]: rows k, N-contiguous */
          const int r = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, ch = nb / 8 + (lane >> 4);
          kf_m80_ldm4t(t, bs + r * 128 + kf_g80_sw<16>(r, ch) * 8);
        }
        b[2 * nj][0] = t[0], b[2 * nj][1] = t[1], b[2 * nj + 1][0] = t[2], b[2 * nj + 1][1] = t[3];
      }
#pragma unroll
      for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++) kf_m80_mma<BF>(d[mi][ni], a[mi], b[ni][0], b[ni][1]);
    }
    /* the stage refilled is not read before kb + ST - 1, past barriers */
    if (more) cp.put(next);
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  /* The m16n8 fragment: lane l holds rows l/4 and l/4 + 8, columns
   * 2(l%4) and 2(l%4) + 1, in d[..][..][0..3]. */
  (void)bt;
#pragma unroll
  for (int mi = 0; mi < 4; mi++)
#pragma unroll
    for (int ni = 0; ni < 4; ni++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const {{IDX}} row = m0 + wm * 64 + mi * 16 + lane / 4 + (e >> 1) * 8;
        const {{IDX}} col = n0 + wn * 32 + ni * 8 + 2 * (lane % 4) + (e & 1);
        if (row < {{M}} && col < {{N}}) {
          const float acc = d[mi][ni][e];
{{epilogue}}        }
      }
}
