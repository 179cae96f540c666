// attention.cu - flash attention for sm_80 and later (mma.sync): out =
// softmax(mod(q k^T)) v for {{BATCH}} heads of {{SQ}} queries and {{SK}}
// keys, head dim {{D}}, {{T}} in, f32 accumulation. A block of 4 warps
// takes 64 queries (16 a warp); keys come {{BN}} at a time, the k and v
// tiles double-buffered in shared memory by cp.async, read into fragments
// by ldmatrix (rows swizzled by 16-byte chunk against bank conflicts).
// The softmax is online (a running max and sum per query row, the
// accumulator rescaled as the max grows): no score matrix in memory. The
// score modifier {{fn}}_mod is the graph's own pointwise chain, generated
// per element. Causal ({{CAUSAL}}): keys past query + {{COFF}} are masked
// by the chain anyway; their tiles are not visited at all.
// Holes: fn, BID, params, args, T, BF, D, BN, SQ, SK, BATCH, QT, CAUSAL,
// COFF, q, k, v, o, QR, KR, VR.


KF_INLINE void {{fn}}({{BID}} bid, {{params}}) {
  typedef {{T}} T;
  constexpr bool BF = {{BF}};
  constexpr int D = {{D}}, BM = 64, BN = {{BN}}, NB = BN / 8, DB = D / 8;
  constexpr long long SQ = {{SQ}}, SK = {{SK}};
  constexpr float LOG2E = 1.4426950408889634f;
  if (threadIdx.x >= 128) return;
  extern __shared__ __align__(128) unsigned char kf_fa_smem[];
  T *qs = (T *)kf_fa_smem;  // [BM][D]
  T *ks = qs + BM * D;      // [2][BN][D]
  T *vs = ks + 2 * BN * D;  // [2][BN][D]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t4 = lane & 3;
  const long long bt = (long long)bid % {{BATCH}};
  // the heaviest query tiles (most keys when causal) first
  const long long q0 = ({{QT}} - 1 - (long long)bid / {{BATCH}}) * BM;
  const bool al = kf_aligned({{q}}, 16) && kf_aligned({{k}}, 16) && kf_aligned({{v}}, 16);
  long long kend = SK;
  if ({{CAUSAL}}) kend = q0 + BM + ({{COFF}}) < SK ? q0 + BM + ({{COFF}}) : SK;
  const int nt = kend > 0 ? (int)((kend + BN - 1) / BN) : 0;
  kf_m80_rows<{{QR}}, T, BM, D, 128>(qs, {{q}}, bt, q0, SQ, al);
  if (nt > 0) {
    kf_m80_rows<{{KR}}, T, BN, D, 128>(ks, {{k}}, bt, 0, SK, al);
    kf_m80_rows<{{VR}}, T, BN, D, 128>(vs, {{v}}, bt, 0, SK, al);
  }
  kf_m80_commit();
  float o[DB][4];
#pragma unroll
  for (int i = 0; i < DB; i++) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
  float mrow[2] = {-KF_INF, -KF_INF}, lrow[2] = {0.0f, 0.0f};
  for (int j = 0; j < nt; j++) {
    const int cur = j & 1;
    if (j + 1 < nt) {
      const long long n0 = (long long)(j + 1) * BN;
      kf_m80_rows<{{KR}}, T, BN, D, 128>(ks + (cur ^ 1) * BN * D, {{k}}, bt, n0, SK, al);
      kf_m80_rows<{{VR}}, T, BN, D, 128>(vs + (cur ^ 1) * BN * D, {{v}}, bt, n0, SK, al);
    }
    kf_m80_commit();
    kf_m80_wait<1>();
    __syncthreads();
    const T *kb = ks + cur * BN * D, *vb = vs + cur * BN * D;
    float s[NB][4];
#pragma unroll
    for (int i = 0; i < NB; i++) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
      unsigned a[4];
      {
        const int row = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, ch = kk * 2 + (lane >> 4);
        kf_m80_ldm4(a, qs + row * D + ((ch ^ (row & 7)) * 8));
      }
#pragma unroll
      for (int nb = 0; nb < NB; nb += 2) {
        unsigned b[4];
        const int row = nb * 8 + (lane & 7) + (lane >> 4) * 8, ch = kk * 2 + ((lane >> 3) & 1);
        kf_m80_ldm4(b, kb + row * D + ((ch ^ (row & 7)) * 8));
        kf_m80_mma<BF>(s[nb], a, b[0], b[1]);
        kf_m80_mma<BF>(s[nb + 1], a, b[2], b[3]);
      }
    }
    // the modifier chain per score; keys and queries past the end are -inf
    const long long k0 = (long long)j * BN;
    float mx[2] = {mrow[0], mrow[1]};
#pragma unroll
    for (int nb = 0; nb < NB; nb++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const long long qi = q0 + warp * 16 + g + (e >> 1) * 8, ki = k0 + nb * 8 + t4 * 2 + (e & 1);
        const float x = qi < SQ && ki < SK ? {{fn}}_mod(s[nb][e], bt, qi, ki, {{args}}) : -KF_INF;
        s[nb][e] = x;
        mx[e >> 1] = fmaxf(mx[e >> 1], x);
      }
    float mu[2], scale[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; r++) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
      // a row with nothing visible yet: exponents against 0, not -inf - -inf
      mu[r] = mx[r] == -KF_INF ? 0.0f : mx[r] * LOG2E;
      scale[r] = exp2f(mrow[r] * LOG2E - mu[r]);
      mrow[r] = mx[r];
    }
#pragma unroll
    for (int nb = 0; nb < NB; nb++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const float p = exp2f(fmaf(s[nb][e], LOG2E, -mu[e >> 1]));
        s[nb][e] = p;
        sum[e >> 1] += p;
      }
#pragma unroll
    for (int r = 0; r < 2; r++) lrow[r] = lrow[r] * scale[r] + sum[r];
#pragma unroll
    for (int i = 0; i < DB; i++) {
      o[i][0] *= scale[0], o[i][1] *= scale[0];
      o[i][2] *= scale[1], o[i][3] *= scale[1];
    }
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++) {
      const unsigned a[4] = {kf_m80_pack<BF>(s[2 * kk][0], s[2 * kk][1]),
                             kf_m80_pack<BF>(s[2 * kk][2], s[2 * kk][3]),
                             kf_m80_pack<BF>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                             kf_m80_pack<BF>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dn = 0; dn < DB; dn += 2) {
        unsigned b[4];
        const int row = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, ch = dn + (lane >> 4);
        kf_m80_ldm4t(b, vb + row * D + ((ch ^ (row & 7)) * 8));
        kf_m80_mma<BF>(o[dn], a, b[0], b[1]);
        kf_m80_mma<BF>(o[dn + 1], a, b[2], b[3]);
      }
    }
    __syncthreads();  // the next iteration refills the buffer just read
  }
  kf_m80_wait<0>();
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    float l = lrow[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    inv[r] = 1.0f / l;{{lse}}  // 0 for a row with no visible key: NaN, as the graph's softmax
  }
#pragma unroll
  for (int i = 0; i < DB; i++)
#pragma unroll
    for (int e = 0; e < 4; e++) {
      const long long qi = q0 + warp * 16 + g + (e >> 1) * 8;
      if (qi < SQ)
        kf_st({{o}} + (bt * SQ + qi) * D + i * 8 + t4 * 2 + (e & 1), o[i][e] * inv[e >> 1]);
    }
}
