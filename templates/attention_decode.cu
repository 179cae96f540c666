// attention_decode.cu - split-key decode attention for sm_80 and later
// (mma.sync): out = softmax(mod(q k^T)) v for few queries ({{SQ}} a head)
// against {{SK}} keys, head dim {{D}}, {{T}} in, f32 accumulation. A block
// takes {{G}} query heads that read the same k and v rows ({{M}} score
// rows: GQA's group, so k and v come from memory once for all of them) and
// a share of the keys; the {{CL}} blocks of a thread block cluster split the
// keys of one group between them and combine through distributed shared
// memory (CL 1: one block takes all the keys). Inside a block, {{WM}}
// warps split the rows (16 each) and {{WK}} warps the keys of each step
// (16 each); k and v tiles come by cp.async (16-byte copies, zero-filled
// past the end; each row's offset computed once, by one lane) through a
// ring of {{STAGES}} stages. Each warp keeps an
// online softmax (running max, sum and un-normalized output in f32); at the
// end every (block, warp) share writes its partial max, sum and output to
// shared memory and the cluster merges them with the log-sum-exp
// rescaling: out = sum_s w_s o_s / sum_s w_s l_s, w_s = exp(m_s - max m).
// Keys at or past {{KEND}} are invisible (the end of the keys, or of a
// causal mask's visible keys) and are not read.
// Holes: fn, BID, params, args, T, BF, D, SQ, SK, KEND, G, M, WM, WK,
// STAGES, CL, q, k, v, o, QR, KR, VR.

#ifndef KF_FD_LOAD
#define KF_FD_LOAD
// One step's rows [r0, r0 + KS) of k and of v (row r of batch entry bt at
// KR::row(bt, r), VR::row(bt, r)) into [KS][D] tiles swizzled by 16-byte
// chunk; rows at or past n are zeros (v's zeros keep 0 * garbage out of the
// product). Each warp takes RPW of the 2 KS rows; each of its lanes
// computes one row's offset (the generated row function: 64-bit divisions
// of the layout chain) and the lanes copying that row's chunks take it by
// shuffle, so the address arithmetic is paid once per row, not per copy.
template <class KR, class VR, typename T, int KS, int D, int NW, bool AL>
KF_INLINE void kf_fd_load_kv1(T *ks, T *vs, const T *__restrict__ kg, const T *__restrict__ vg,
                              long long bt, long long r0, long long n) {
  constexpr int DC = D / 8, R2 = 2 * KS, RPW = (R2 + NW - 1) / NW, ROUNDS = (RPW * DC + 31) / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  long long off = 0;
  {
    const int row = warp * RPW + lane, rr = row % KS;
    if (lane < RPW && row < R2 && r0 + rr < n)
      off = row < KS ? KR::row(bt, r0 + rr) : VR::row(bt, r0 + rr);
  }
#pragma unroll
  for (int j = 0; j < ROUNDS; j++) {
    const int c = j * 32 + lane, lr = c / DC < RPW ? c / DC : RPW - 1, ch = c % DC;
    const long long o = __shfl_sync(0xffffffffu, off, lr);
    const int row = warp * RPW + lr;
    if (c >= RPW * DC || row >= R2) continue;
    const bool isv = row >= KS;
    const int rr = isv ? row - KS : row;
    T *dst = (isv ? vs : ks) + rr * D + ((ch ^ (rr & 7)) * 8);
    const T *g = isv ? vg : kg;
    const bool in = r0 + rr < n;
    if (AL) {
      const T *src = in ? g + o + ch * 8 : g;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(kf_m80_saddr(dst)),
                   "l"(src), "r"(in ? 16 : 0)
                   : "memory");
    } else {
      for (int e = 0; e < 8; e++) dst[e] = in ? g[o + ch * 8 + e] : T{0};
    }
  }
}
// The copies (al: every tensor 16-byte aligned), or element loads.
template <class KR, class VR, typename T, int KS, int D, int NW>
KF_INLINE void kf_fd_load_kv(T *ks, T *vs, const T *__restrict__ kg, const T *__restrict__ vg,
                             long long bt, long long r0, long long n, bool al) {
  if (al)
    kf_fd_load_kv1<KR, VR, T, KS, D, NW, true>(ks, vs, kg, vg, bt, r0, n);
  else
    kf_fd_load_kv1<KR, VR, T, KS, D, NW, false>(ks, vs, kg, vg, bt, r0, n);
}
#endif

KF_INLINE void {{fn}}({{BID}} bid, {{params}}) {
  typedef {{T}} T;
  constexpr bool BF = {{BF}};
  constexpr int D = {{D}}, DB = D / 8, WM = {{WM}}, WK = {{WK}}, NT = 32 * WM * WK;
  constexpr int MP = 16 * WM, KS = 16 * WK, STAGES = {{STAGES}}, CL = {{CL}}, SPL = CL * WK;
  constexpr long long SQ = {{SQ}}, KEND = {{KEND}}, G = {{G}}, M = {{M}};
  constexpr float LOG2E = 1.4426950408889634f;
  if (threadIdx.x >= NT) return;
  extern __shared__ __align__(128) unsigned char kf_fd_smem[];
  T *qs = (T *)kf_fd_smem;               // [MP][D]
  T *ks = qs + MP * D;                   // [STAGES][KS][D]
  T *vs = ks + STAGES * KS * D;          // [STAGES][KS][D]
  float *po = (float *)(qs + MP * D);    // after the loop: [WK][MP][D] partial outputs
  float *pm = po + WK * MP * D;          // [WK][MP] partial maxima
  float *pl = pm + WK * MP;              // [WK][MP] partial sums
  float *wt = pl + WK * MP;              // [MP][SPL] each share's weight in the output
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t4 = lane & 3;
  const int wm = warp % WM, wk = warp / WM;
  const long long pair = (long long)bid / CL, bt0 = pair * G;
  const int rank = (int)((long long)bid % CL);
  const bool al = kf_aligned({{q}}, 16) && kf_aligned({{k}}, 16) && kf_aligned({{v}}, 16);
  // this block's steps of KS keys: an even share of the group's
  constexpr long long NST = (KEND + KS - 1) / KS;
  const long long s0 = NST * rank / CL, s1 = NST * (rank + 1) / CL;
  // the query rows: row r is query r % SQ of head bt0 + r / SQ
  for (int i = threadIdx.x; i < MP * DB; i += NT) {
    const int row = i / DB, ch = i % DB;
    T *dst = qs + row * D + ((ch ^ (row & 7)) * 8);
    const long long bt = bt0 + row / SQ, qi = row % SQ;
    if (al) {
      const T *src = row < M ? {{q}} + {{QR}}::row(bt, qi) + ch * 8 : {{q}};
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(kf_m80_saddr(dst)),
                   "l"(src), "r"(row < M ? 16 : 0)
                   : "memory");
    } else {
      for (int e = 0; e < 8; e++) dst[e] = row < M ? {{q}}[{{QR}}::row(bt, qi) + ch * 8 + e] : T{0};
    }
  }
#pragma unroll
  for (int st = 0; st < STAGES - 1; st++) {
    if (s0 + st < s1) {
      kf_fd_load_kv<{{KR}}, {{VR}}, T, KS, D, NT / 32>(ks + st * KS * D, vs + st * KS * D, {{k}},
                                                     {{v}}, bt0, (s0 + st) * KS, KEND, al);
    }
    kf_m80_commit();
  }
  float o[DB][4];
#pragma unroll
  for (int i = 0; i < DB; i++) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
  float mrow[2] = {-KF_INF, -KF_INF}, lrow[2] = {0.0f, 0.0f};
  for (long long sj = s0; sj < s1; sj++) {
    kf_m80_wait<STAGES - 2>();
    __syncthreads();  // step sj landed for all; the buffer of step sj - 1 is free
    {
      const long long nx = sj + STAGES - 1;
      const int nb = (int)((nx - s0) % STAGES);
      if (nx < s1) {
        kf_fd_load_kv<{{KR}}, {{VR}}, T, KS, D, NT / 32>(ks + nb * KS * D, vs + nb * KS * D, {{k}},
                                                       {{v}}, bt0, nx * KS, KEND, al);
      }
      kf_m80_commit();
    }
    const int cur = (int)((sj - s0) % STAGES);
    const T *kb = ks + cur * KS * D + wk * 16 * D, *vb = vs + cur * KS * D + wk * 16 * D;
    float s[2][4];
#pragma unroll
    for (int i = 0; i < 2; i++) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
      unsigned a[4], b[4];
      {
        const int row = wm * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, ch = kk * 2 + (lane >> 4);
        kf_m80_ldm4(a, qs + row * D + ((ch ^ (row & 7)) * 8));
      }
      const int row = (lane & 7) + (lane >> 4) * 8, ch = kk * 2 + ((lane >> 3) & 1);
      kf_m80_ldm4(b, kb + row * D + ((ch ^ (row & 7)) * 8));
      kf_m80_mma<BF>(s[0], a, b[0], b[1]);
      kf_m80_mma<BF>(s[1], a, b[2], b[3]);
    }
    // the modifier chain per score; rows past M and keys past KEND are -inf
    const long long k0 = sj * KS + wk * 16;
    float mx[2] = {mrow[0], mrow[1]};
#pragma unroll
    for (int nb = 0; nb < 2; nb++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int r = wm * 16 + g + (e >> 1) * 8;
        const long long ki = k0 + nb * 8 + t4 * 2 + (e & 1);
        const float x = r < M && ki < KEND
                            ? {{fn}}_mod(s[nb][e], bt0 + r / SQ, r % SQ, ki, {{args}})
                            : -KF_INF;
        s[nb][e] = x;
        mx[e >> 1] = fmaxf(mx[e >> 1], x);
      }
    float mu[2], scale[2];
#pragma unroll
    for (int r = 0; r < 2; r++) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
      // a row with nothing visible yet: exponents against 0, not -inf - -inf
      mu[r] = mx[r] == -KF_INF ? 0.0f : mx[r] * LOG2E;
      scale[r] = exp2f(mrow[r] * LOG2E - mu[r]);
      mrow[r] = mx[r];
    }
    float sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int nb = 0; nb < 2; nb++)
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
    const unsigned a[4] = {kf_m80_pack<BF>(s[0][0], s[0][1]), kf_m80_pack<BF>(s[0][2], s[0][3]),
                           kf_m80_pack<BF>(s[1][0], s[1][1]), kf_m80_pack<BF>(s[1][2], s[1][3])};
#pragma unroll
    for (int dn = 0; dn < DB; dn += 2) {
      unsigned b[4];
      const int row = (lane & 7) + ((lane >> 3) & 1) * 8, ch = dn + (lane >> 4);
      kf_m80_ldm4t(b, vb + row * D + ((ch ^ (row & 7)) * 8));
      kf_m80_mma<BF>(o[dn], a, b[0], b[1]);
      kf_m80_mma<BF>(o[dn + 1], a, b[2], b[3]);
    }
  }
  kf_m80_wait<0>();
  __syncthreads();  // the ring is free: it holds the partials from here
  // this warp's share: rows wm * 16 + g (+ 8), its keys' max, sum, output
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int r = wm * 16 + g + h * 8;
    float l = lrow[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    if (t4 == 0) pm[wk * MP + r] = mrow[h], pl[wk * MP + r] = l;
  }
#pragma unroll
  for (int i = 0; i < DB; i++)
#pragma unroll
    for (int e = 0; e < 4; e++)
      po[(wk * MP + wm * 16 + g + (e >> 1) * 8) * D + i * 8 + t4 * 2 + (e & 1)] = o[i][e];
#if {{CL}} > 1
  kf_cluster_sync();  // every block's partials are visible cluster-wide
#define KF_FD_PART(p, c) kf_dsmem_ld((p), (unsigned)(c))
#else
  __syncthreads();
#define KF_FD_PART(p, c) (*(p))
#endif
  // per row, each share's weight: w_s / sum_s w_s l_s (0 / 0, NaN, for a
  // row with no visible key, as the graph's softmax gives)
  if (threadIdx.x < M) {
    const int r = threadIdx.x;
    float mall = -KF_INF;
    for (int sp = 0; sp < SPL; sp++)
      mall = fmaxf(mall, KF_FD_PART(pm + (sp % WK) * MP + r, sp / WK));
    float l = 0.0f;
    for (int sp = 0; sp < SPL; sp++) {
      const float m = KF_FD_PART(pm + (sp % WK) * MP + r, sp / WK);
      const float w = m == -KF_INF ? 0.0f : exp2f((m - mall) * LOG2E);
      wt[r * SPL + sp] = w;
      l += w * KF_FD_PART(pl + (sp % WK) * MP + r, sp / WK);
    }
    for (int sp = 0; sp < SPL; sp++) wt[r * SPL + sp] /= l;{{lse}}
  }
  __syncthreads();
  // this block's slice of the group's outputs, merged from every share
  for (long long e = (long long)rank * NT + threadIdx.x; e < M * D; e += (long long)CL * NT) {
    const int r = (int)(e / D), col = (int)(e % D);
    float acc = 0.0f;
    for (int sp = 0; sp < SPL; sp++)
      acc += wt[r * SPL + sp] * KF_FD_PART(po + ((sp % WK) * MP + r) * D + col, sp / WK);
    kf_st({{o}} + ((bt0 + r / SQ) * SQ + r % SQ) * D + col, acc);
  }
#undef KF_FD_PART
#if {{CL}} > 1
  kf_cluster_sync();  // no block leaves while another reads its partials
#endif
}
