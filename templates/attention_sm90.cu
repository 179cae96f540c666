// attention_sm90.cu - flash attention for Hopper (sm_90a: wgmma, TMA,
// setmaxnreg): out = softmax(mod(q k^T)) v for {{BATCH}} heads of {{SQ}}
// queries and {{SK}} keys, head dim {{D}}, 16-bit in, f32 accumulation.
// docs/attention.md describes the design.
//
// - A block of 3 warpgroups takes 128 queries of one head (the heaviest
//   query tiles first). Warpgroup 0 produces: one thread issues the copies
//   (TMA through the 3-D tensor maps kf_tmq, kf_tmk, kf_tmv over
//   [heads, rows, D] as stored, 128-byte swizzle, rows past a head's end
//   arriving as zeros). Warpgroups 1 and 2 consume, 64 queries each.
// - Shared memory: the q tile once (D/64 boxes of [128][64]); a ring of
//   {{STAGES}} stages of a k tile and a v tile of {{BN}} keys (D/64 boxes of
//   [{{BN}}][64] each). Barriers: qfull; per stage kfull, vfull (the
//   producer's expect_tx plus the copies' bytes) and kempty, vempty (one
//   arrival per consumer warp, 8): k and v are released apart, k as soon
//   as its scores are computed, so the next k tiles load early.
// - Products: s = q k^T by wgmma m64n{{BN}}k16 (both from shared memory,
//   K-major); o += p v by wgmma m64n{{D}}k16 with p from registers (the
//   score accumulators rounded to 16 bits) and v from shared memory, N-major
//   (the transposed-B form, as v[keys, D] lies).
// - Per tile j > 0 a consumer issues s_j = q k_j^T, then o += p_{j-1}
//   v_{j-1}, waits for s_j only and runs the modifier and the online
//   softmax on it while the second product runs; then waits for that,
//   rescales o and rounds p_j. Causal ({{CAUSAL}}): key tiles wholly past
//   query + {{COFF}} are not visited.
// Holes: fn, BID, params, args, BF, D, BN, STAGES, SQ, SK, BATCH, QT,
// CAUSAL, COFF, o, QR, KR, VR, wgmma.
{{wgmma}}
#ifndef KF_FA90_HELPERS
#define KF_FA90_HELPERS
// Keeps the compiler from moving reads or writes of registers that an
// asynchronous wgmma owns across the points where it is issued or waited.
template <int N>
KF_INLINE void kf_fa90_pin(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; i++) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
KF_INLINE void kf_fa90_pin(unsigned (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; i++)
#pragma unroll
    for (int e = 0; e < 4; e++) asm volatile("" : "+r"(r[i][e])::"memory");
}
template <int N>
KF_INLINE void kf_fa90_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
KF_INLINE void kf_fa90_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
KF_INLINE void kf_fa90_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
// Two floats as a pair of 16-bit values, lo in the low half.
template <bool BF>
KF_INLINE unsigned kf_fa90_pack(float lo, float hi) {
  unsigned r;
  if (BF)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
#endif

KF_INLINE void {{fn}}({{BID}} bid, {{params}}, const kf_tmap &kf_tmq, const kf_tmap &kf_tmk,
                      const kf_tmap &kf_tmv) {
  constexpr bool BF = {{BF}};
  constexpr int D = {{D}}, BM = 128, BN = {{BN}}, ST = {{STAGES}}, DC = D / 64;
  constexpr unsigned Q_BYTES = BM * D * 2, KV_BYTES = BN * D * 2;
  constexpr long long SQ = {{SQ}}, SK = {{SK}};
  constexpr float LOG2E = 1.4426950408889634f;
  extern __shared__ unsigned char kf_dsmem[];
  /* 1024-byte alignment: the swizzle pattern repeats every 8 rows of 128 B */
  const unsigned base = (kf_smem_addr(kf_dsmem) + 1023u) & ~1023u;
  const unsigned qs = base, ring = base + Q_BYTES; /* stage st: k at ring + 2 st KV_BYTES, v next */
  const unsigned bars = ring + ST * 2 * KV_BYTES;  /* qfull, kfull, vfull, kempty, vempty */
#define KF_FA90_BAR(kind, st) (bars + 8u + 8u * ((kind) * ST + (st)))
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  const long long bt = (long long)bid % {{BATCH}};
  const long long q0 = ({{QT}} - 1 - (long long)bid / {{BATCH}}) * BM;
  long long kend = SK;
  if ({{CAUSAL}}) kend = q0 + BM + ({{COFF}}) < SK ? q0 + BM + ({{COFF}}) : SK;
  const int nt = kend > 0 ? (int)((kend + BN - 1) / BN) : 0;
  if (threadIdx.x == 0) {
    kf_bar_init(bars, 1);
    for (int s = 0; s < ST; s++) {
      kf_bar_init(KF_FA90_BAR(0, s), 1);
      kf_bar_init(KF_FA90_BAR(1, s), 1);
      kf_bar_init(KF_FA90_BAR(2, s), 8);
      kf_bar_init(KF_FA90_BAR(3, s), 8);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::
                     : "memory");
  }
  __syncthreads();
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (tid == 0) {
      asm volatile("prefetch.tensormap [%0];\n\tprefetch.tensormap [%1];\n\tprefetch.tensormap "
                   "[%2];" ::"l"((unsigned long long)&kf_tmq),
                   "l"((unsigned long long)&kf_tmk), "l"((unsigned long long)&kf_tmv)
                   : "memory");
      /* which head of each stored [heads, rows, D] tensor this one reads:
       * its rows are whole (docs/attention.md), so row 0 starts a head */
      const int hq = (int)({{QR}}::row(bt, 0) / (SQ * D));
      const int hk = (int)({{KR}}::row(bt, 0) / (SK * D));
      const int hv = (int)({{VR}}::row(bt, 0) / (SK * D));
      kf_bar_expect(bars, Q_BYTES);
#pragma unroll
      for (int c = 0; c < DC; c++) kf_tma_3d(qs + c * BM * 128, &kf_tmq, 64 * c, (int)q0, hq, bars);
      for (int j = 0; j < nt; j++) {
        const int st = j % ST;
        const unsigned ph = (unsigned)(j / ST) & 1u, k = ring + st * 2 * KV_BYTES;
        kf_bar_wait(KF_FA90_BAR(2, st), ph ^ 1u);
        kf_bar_expect(KF_FA90_BAR(0, st), KV_BYTES);
#pragma unroll
        for (int c = 0; c < DC; c++)
          kf_tma_3d(k + c * BN * 128, &kf_tmk, 64 * c, j * BN, hk, KF_FA90_BAR(0, st));
        kf_bar_wait(KF_FA90_BAR(3, st), ph ^ 1u);
        kf_bar_expect(KF_FA90_BAR(1, st), KV_BYTES);
#pragma unroll
        for (int c = 0; c < DC; c++)
          kf_tma_3d(k + KV_BYTES + c * BN * 128, &kf_tmv, 64 * c, j * BN, hv, KF_FA90_BAR(1, st));
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  const int cw = wg - 1, warp = tid / 32, lane = tid % 32, g = lane >> 2, t4 = lane & 3;
  /* The fragment layout of m64nNk16 accumulators: warp w holds rows 16w ..
   * 16w+15 of the warpgroup's 64; lane l rows l/4 and l/4 + 8, columns
   * 2(l%4) and +1 of every 8-column group c, in [4c .. 4c+3]. */
  /* rows and keys fit an int (cg_flash90_fits) */
  const int qrow = (int)q0 + 64 * cw + 16 * warp + g;
  float o[D / 2], s[BN / 2];
  unsigned pa[BN / 16][4];
#pragma unroll
  for (int i = 0; i < D / 2; i++) o[i] = 0.0f;
  float mrow[2] = {-KF_INF, -KF_INF}, lrow[2] = {0.0f, 0.0f}, scale[2];
  const unsigned qa = qs + cw * 64 * 128;{{qdesc}}
  /* s = q k^T of the k tile at k (A: q, B: k, both K-major; each k16 step
   * 32 B along a 128-byte row, then the next 64-column box) */
  auto issue_qk = [&](unsigned k) {
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++)
      kf_fa90_qk(s, {{desc_q}},
                 {{desc_k}}, kk > 0);
    kf_fa90_commit();
  };
  /* o += p v of the v tile at v (B N-major: 64-column boxes BN x 128 B
   * apart, each k16 step 16 keys = 2048 B further) */
  auto issue_pv = [&](unsigned v) {
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++)
      kf_fa90_pv(o, pa[kk], {{desc_v}});
    kf_fa90_commit();
  };
  /* The modifier per score (queries and keys past the ends are -inf), the
   * running max, p = exp(x - max) in s, the running sum; scale: how much
   * the accumulator shrinks. */
  auto softmax = [&](int j{{edge_param}}) {
    const int k0 = j * BN + 2 * t4;
    float mx[2] = {mrow[0], mrow[1]};
#pragma unroll
    for (int i = 0; i < BN / 2; i++) {
      const int qi = qrow + 8 * ((i >> 1) & 1), ki = k0 + 8 * (i >> 2) + (i & 1);
      const float x = {{score}};
      s[i] = x;
      mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], x);
    }
    float mu[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; r++) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));{{lazy}}
      /* a row with nothing visible yet: exponents against 0, not -inf - -inf */
      mu[r] = mx[r] == -KF_INF ? 0.0f : mx[r] * LOG2E;
      scale[r] = {{ex2}}(mrow[r] * LOG2E - mu[r]);
      mrow[r] = mx[r];
    }
#pragma unroll
    for (int i = 0; i < BN / 2; i++) {
      const float p = {{ex2}}(fmaf(s[i], LOG2E, -mu[(i >> 1) & 1]));
      s[i] = p;
      sum[(i >> 1) & 1] += p;
    }
#pragma unroll
    for (int r = 0; r < 2; r++) lrow[r] = lrow[r] * scale[r] + sum[r];
  };
  /* p in the A-fragment layout of the second product: k16 step kk takes
   * the 8-column groups 2kk and 2kk + 1 */
  auto round_p = [&]() {
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
      for (int e = 0; e < 4; e++) pa[kk][e] = kf_fa90_pack<BF>(s[8 * kk + 2 * e], s[8 * kk + 2 * e + 1]);
  };
  auto release = [&](int kind, int st) {
    if (lane == 0) kf_bar_arrive(KF_FA90_BAR(kind, st));
  };
  kf_bar_wait(bars, 0);{{pp_start}}
  if (nt > 0) {
    kf_bar_wait(KF_FA90_BAR(0, 0), 0);{{pp_wait}}
    kf_fa90_pin(s);
    kf_fa90_fence();
    issue_qk(ring);{{pp_pass}}
    kf_fa90_wait<0>();
    kf_fa90_pin(s);
    release(2, 0);
    {{softmax0}}
    round_p();
  }
  for (int j = 1; j < nt; j++) {
    const int st = j % ST, pst = (j - 1) % ST;
    const unsigned ph = (unsigned)(j / ST) & 1u, pph = (unsigned)((j - 1) / ST) & 1u;
    kf_bar_wait(KF_FA90_BAR(0, st), ph);{{pp_wait}}
    kf_fa90_pin(s);
    kf_fa90_pin(o);
    kf_fa90_pin(pa);
    kf_fa90_fence();
    issue_qk(ring + st * 2 * KV_BYTES);
    kf_bar_wait(KF_FA90_BAR(1, pst), pph);
    issue_pv(ring + pst * 2 * KV_BYTES + KV_BYTES);{{pp_pass}}
    kf_fa90_wait<1>(); /* s_j is done; o += p_{j-1} v_{j-1} may still run */
    kf_fa90_pin(s);
    release(2, st);
    {{softmaxj}}
    kf_fa90_wait<0>();
    kf_fa90_pin(o);
    kf_fa90_pin(pa);
    release(3, pst);{{rescale_if}}
#pragma unroll
    for (int i = 0; i < D / 2; i++) o[i] *= scale[(i >> 1) & 1];
    round_p();
  }
  if (nt > 0) {
    const int st = (nt - 1) % ST;
    kf_bar_wait(KF_FA90_BAR(1, st), (unsigned)((nt - 1) / ST) & 1u);{{pp_wait}}
    kf_fa90_pin(o);
    kf_fa90_pin(pa);
    kf_fa90_fence();
    issue_pv(ring + st * 2 * KV_BYTES + KV_BYTES);{{pp_last}}
    kf_fa90_wait<0>();
    kf_fa90_pin(o);
    release(3, st);
  }
#undef KF_FA90_BAR
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    float l = lrow[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    inv[r] = 1.0f / l;{{lse}} /* 0 for a row with no visible key: NaN, as the graph's softmax */
  }
#pragma unroll
  for (int i = 0; i < D / 2; i++) {
    const int qi = qrow + 8 * ((i >> 1) & 1);
    if (qi < SQ)
      kf_st({{o}} + (bt * SQ + qi) * D + 8 * (i >> 2) + 2 * t4 + (i & 1), o[i] * inv[(i >> 1) & 1]);
  }
}
