/* kfuse generated kernel kf_launch0_h3: 3 parts (horizontal), 2736 blocks x 256 threads.
 * part kf_part0_k0_reduce = kernel k0_reduce (reduce), 4 ops:
 *   %2 mu=mean(%0) %3 hi=max(%0) %4 lo=min(%0) %5 span=sub(%3,%4)
 *  decisions: reduce: 1 x 65536 x 512 strided, 32 x 4 outputs x 8 slices of the reduced axis per block, 4 lanes per access, split over 264 blocks per tile (partials combined by the last block, deterministic), 32-bit index
 * part kf_part1_k1_reduce = kernel k1_reduce (reduce), 1 ops:
 *   %6 mid=sum(%1)
 *  decisions: reduce: 64 x 2048 x 256 strided, 32 x 4 outputs x 8 slices of the reduced axis per block, 4 lanes per access, split over 9 blocks per tile (partials combined by the last block, deterministic), 32-bit index
 * part kf_part2_k2_reduce = kernel k2_reduce (reduce), 1 ops:
 *   %7 tot=sum(%1)
 *  decisions: reduce: 1 x 33554432 contiguous, a block of 256 per output, split over 528 blocks (partials combined by the last block, deterministic), 32-bit index, scalar loads
 * index: 32-bit (largest offset 33554431); widest access 16 bytes
 */
// common.cuh - the prelude of every generated kernel: storage types, f16/bf16
// conversions, vector loads and stores, one device function kf_<op> per
// pointwise op of src/ir/ops.def for every compute type, and the reductions.
// Written without any CUDA header so that NVRTC compiles it fast.
#define KF_INLINE __device__ __forceinline__
#define KF_INF __int_as_float(0x7f800000)
#define KF_DINF __longlong_as_double(0x7ff0000000000000LL)

// ---- storage types --------------------------------------------------------
// f16 and bf16 live in memory as 16-bit patterns and are computed in float.
struct kf_f16 { unsigned short x; };
struct kf_bf16 { unsigned short x; };

KF_INLINE float kf_in(kf_f16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.x));
  return f;
}
KF_INLINE float kf_in(kf_bf16 h) { return __uint_as_float((unsigned)h.x << 16); }
KF_INLINE float kf_in(float v) { return v; }
KF_INLINE double kf_in(double v) { return v; }
KF_INLINE int kf_in(int v) { return v; }
KF_INLINE long long kf_in(long long v) { return v; }
KF_INLINE bool kf_in(bool v) { return v; }

KF_INLINE kf_f16 kf_f16_rn(float v) {
  kf_f16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.x) : "f"(v));
  return h;
}
KF_INLINE kf_f16 kf_f16_rn(double v) {
  kf_f16 h;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h.x) : "d"(v));
  return h;
}
// Round to nearest even. sm_80+: one cvt (F2FP), a NaN becomes the
// canonical 0x7fff (sign and payload dropped, as cvt.rn.f16.f32 does for
// f16); older targets: in software, NaN kept quiet with its sign.
KF_INLINE kf_bf16 kf_bf16_rn(float v) {
  kf_bf16 b;
#if __CUDA_ARCH__ >= 800
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b.x) : "f"(v));
#else
  unsigned u = __float_as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    b.x = (unsigned short)((u >> 16) | 0x40u);
  else
    b.x = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
  return b;
}
KF_INLINE kf_bf16 kf_bf16_rn(double v) {
  // Round to odd into float first, so that rounding to bf16 is exact once.
  float f = (float)v;
  double back = (double)f;
  unsigned u = __float_as_uint(f);
  if (back != v && f == f && (u & 0x7fffffffu) < 0x7f800000u && (u & 1u) == 0u)
    u += ((back < v) == (f > 0.0f)) ? 1u : 0xffffffffu;
  return kf_bf16_rn(__uint_as_float(u));
}

// From a compute value to the storage type S.
template <typename S, typename C> KF_INLINE S kf_out(C v) { return (S)v; }
template <> KF_INLINE kf_f16 kf_out<kf_f16, float>(float v) { return kf_f16_rn(v); }
template <> KF_INLINE kf_bf16 kf_out<kf_bf16, float>(float v) { return kf_bf16_rn(v); }

// ---- vector access ----------------------------------------------------------
// W consecutive elements of S, loaded or stored with the widest accesses
// that fit in 16 bytes; the caller proved alignment (checked at run time).
template <int B> struct kf_word;
template <> struct kf_word<1> { typedef unsigned char t; };
template <> struct kf_word<2> { typedef unsigned short t; };
template <> struct kf_word<4> { typedef unsigned t; };
template <> struct kf_word<8> { typedef uint2 t; };
template <> struct kf_word<16> { typedef uint4 t; };

template <typename S, int W> struct kf_pack {
  enum { BYTES = (int)sizeof(S) * W, WB = BYTES > 16 ? 16 : BYTES, N = BYTES / WB };
  typedef typename kf_word<WB>::t word;
  union {
    word w[N];
    S s[W];
  };
};

template <typename S, int W, typename C>
KF_INLINE void kf_ldv(C (&dst)[W], const S *__restrict__ p) {
  kf_pack<S, W> k;
  typedef typename kf_pack<S, W>::word word;
  const word *q = reinterpret_cast<const word *>(p);
#pragma unroll
  for (int i = 0; i < kf_pack<S, W>::N; i++) k.w[i] = __ldg(q + i);
#pragma unroll
  for (int i = 0; i < W; i++) dst[i] = kf_in(k.s[i]);
}
// Two floats to a bf16x2 word (lo in the low half): one F2FP on sm_80+
// (kf_round_bf16 uses it).
KF_INLINE unsigned kf_bf16x2_rn(float lo, float hi) {
  unsigned u;
#if __CUDA_ARCH__ >= 800
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(u) : "f"(hi), "f"(lo));
#else
  u = (unsigned)kf_bf16_rn(lo).x | ((unsigned)kf_bf16_rn(hi).x << 16);
#endif
  return u;
}
template <typename S, int W, typename C>
KF_INLINE void kf_stv(S *__restrict__ p, const C (&src)[W]) {
  kf_pack<S, W> k;
  typedef typename kf_pack<S, W>::word word;
  // (ptxas merges the conversions of two bf16 or f16 lanes into one F2FP)
#pragma unroll
  for (int i = 0; i < W; i++) k.s[i] = kf_out<S>(src[i]);
  word *q = reinterpret_cast<word *>(p);
#pragma unroll
  for (int i = 0; i < kf_pack<S, W>::N; i++) q[i] = k.w[i];
}
template <typename S> KF_INLINE S kf_ld1(const S *__restrict__ p) { return __ldg(p); }
KF_INLINE kf_f16 kf_ld1(const kf_f16 *__restrict__ p) {
  kf_f16 h;
  h.x = __ldg(reinterpret_cast<const unsigned short *>(p));
  return h;
}
KF_INLINE kf_bf16 kf_ld1(const kf_bf16 *__restrict__ p) {
  kf_bf16 h;
  h.x = __ldg(reinterpret_cast<const unsigned short *>(p));
  return h;
}
KF_INLINE bool kf_ld1(const bool *__restrict__ p) {
  return __ldg(reinterpret_cast<const unsigned char *>(p)) != 0;
}
template <typename S> KF_INLINE auto kf_ld(const S *__restrict__ p) -> decltype(kf_in(*p)) {
  return kf_in(kf_ld1(p));
}
template <typename S, typename C> KF_INLINE void kf_st(S *__restrict__ p, C v) {
  *p = kf_out<S>(v);
}
// Whether every pointer is aligned to `bytes`.
KF_INLINE bool kf_aligned(const void *p, unsigned bytes) {
  return ((unsigned long long)p & (unsigned long long)(bytes - 1)) == 0ull;
}

// ---- pointwise ops, one function per op and compute type ----------------
// float
KF_INLINE float kf_neg(float x) { return -x; }
KF_INLINE float kf_abs(float x) { return fabsf(x); }
KF_INLINE float kf_exp(float x) { return expf(x); }
KF_INLINE float kf_log(float x) { return logf(x); }
KF_INLINE float kf_sqrt(float x) { return sqrtf(x); }
KF_INLINE float kf_rsqrt(float x) { return rsqrtf(x); }
KF_INLINE float kf_reciprocal(float x) { return 1.0f / x; }
KF_INLINE float kf_sin(float x) { return sinf(x); }
KF_INLINE float kf_cos(float x) { return cosf(x); }
KF_INLINE float kf_tanh(float x) { return tanhf(x); }
KF_INLINE float kf_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
KF_INLINE float kf_relu(float x) { return x < 0.0f ? 0.0f : x; }
KF_INLINE float kf_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f)); }
KF_INLINE float kf_gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}
KF_INLINE float kf_silu(float x) { return x / (1.0f + expf(-x)); }
KF_INLINE float kf_erf(float x) { return erff(x); }
KF_INLINE float kf_floor(float x) { return floorf(x); }
KF_INLINE float kf_ceil(float x) { return ceilf(x); }
KF_INLINE float kf_sign(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }
KF_INLINE bool kf_logical_not(float x) { return x == 0.0f; }
KF_INLINE float kf_add(float a, float b) { return a + b; }
KF_INLINE float kf_sub(float a, float b) { return a - b; }
KF_INLINE float kf_mul(float a, float b) { return a * b; }
KF_INLINE float kf_div(float a, float b) { return a / b; }
KF_INLINE float kf_pow(float a, float b) { return powf(a, b); }
// x / d for a d shared by many x (a per-row value): r = kf_rcp_rn(d) once,
// then per x a product and one Markstein correction (r correctly rounded
// and q0 faithful give the correctly rounded quotient). The residual is
// written q0*d - x so that a zero quotient keeps its sign for d > 0. When
// something is not finite (d zero, infinite, or so small that 1/d is;
// x infinite; overflow) the correction gives NaN and the IEEE division
// takes over. Correctly rounded when |x| >= 2^-102 and 2^-126 <= |d| <=
// 2^126; within 1 ulp otherwise; +0 / d < 0 gives +0 (not -0).
// See docs/performance.md, "Instruction count: attempts".
// The IEEE division is out of line: inlined, each of a row's 32 divisions
// carried its own never-taken copy (FCHK, reciprocal, its slow-path call),
// 12-19 ms of NVRTC per row kernel; the taken path is the same instructions.
template <class T> __device__ __noinline__ T kf_div_slow(T x, T d) { return x / d; }
KF_INLINE float kf_rcp_rn(float d) { return __frcp_rn(d); }
KF_INLINE float kf_div_rcp(float x, float d, float r) {
  const float q0 = __fmul_rn(x, r);
  const float e = __fmaf_rn(q0, d, -x);
  const float q1 = __fmaf_rn(-e, r, q0);
  return q1 == q1 ? q1 : kf_div_slow(x, d);
}
KF_INLINE float kf_maximum(float a, float b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }
KF_INLINE float kf_minimum(float a, float b) { return (a != a || b != b) ? a + b : (a < b ? a : b); }
// double
KF_INLINE double kf_neg(double x) { return -x; }
KF_INLINE double kf_abs(double x) { return fabs(x); }
KF_INLINE double kf_exp(double x) { return exp(x); }
KF_INLINE double kf_log(double x) { return log(x); }
KF_INLINE double kf_sqrt(double x) { return sqrt(x); }
KF_INLINE double kf_rsqrt(double x) { return 1.0 / sqrt(x); }
KF_INLINE double kf_reciprocal(double x) { return 1.0 / x; }
KF_INLINE double kf_sin(double x) { return sin(x); }
KF_INLINE double kf_cos(double x) { return cos(x); }
KF_INLINE double kf_tanh(double x) { return tanh(x); }
KF_INLINE double kf_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
KF_INLINE double kf_relu(double x) { return x < 0.0 ? 0.0 : x; }
KF_INLINE double kf_gelu(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)); }
KF_INLINE double kf_gelu_tanh(double x) {
  return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}
KF_INLINE double kf_silu(double x) { return x / (1.0 + exp(-x)); }
KF_INLINE double kf_erf(double x) { return erf(x); }
KF_INLINE double kf_floor(double x) { return floor(x); }
KF_INLINE double kf_ceil(double x) { return ceil(x); }
KF_INLINE double kf_sign(double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x; }
KF_INLINE bool kf_logical_not(double x) { return x == 0.0; }
KF_INLINE double kf_add(double a, double b) { return a + b; }
KF_INLINE double kf_sub(double a, double b) { return a - b; }
KF_INLINE double kf_mul(double a, double b) { return a * b; }
KF_INLINE double kf_div(double a, double b) { return a / b; }
KF_INLINE double kf_pow(double a, double b) { return pow(a, b); }
KF_INLINE double kf_maximum(double a, double b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }
KF_INLINE double kf_minimum(double a, double b) { return (a != a || b != b) ? a + b : (a < b ? a : b); }
// int and long long: arithmetic wraps (through unsigned), as in the reference
#define KF_INT_OPS(T, U)                                                         \
  KF_INLINE T kf_neg(T x) { return (T)((U)0 - (U)x); }                          \
  KF_INLINE T kf_abs(T x) { return x < 0 ? (T)((U)0 - (U)x) : x; }              \
  KF_INLINE T kf_relu(T x) { return x < 0 ? (T)0 : x; }                         \
  KF_INLINE T kf_sign(T x) { return (T)((x > 0) - (x < 0)); }                    \
  KF_INLINE bool kf_logical_not(T x) { return x == 0; }                          \
  KF_INLINE T kf_add(T a, T b) { return (T)((U)a + (U)b); }                      \
  KF_INLINE T kf_sub(T a, T b) { return (T)((U)a - (U)b); }                      \
  KF_INLINE T kf_mul(T a, T b) { return (T)((U)a * (U)b); }                      \
  KF_INLINE T kf_maximum(T a, T b) { return a > b ? a : b; }                     \
  KF_INLINE T kf_minimum(T a, T b) { return a < b ? a : b; }
KF_INT_OPS(int, unsigned)
KF_INT_OPS(long long, unsigned long long)
// bool: only the ops that accept any dtype
KF_INLINE bool kf_logical_not(bool x) { return !x; }
// Comparisons and logical ops, for every compute type.
template <typename T> KF_INLINE bool kf_eq(T a, T b) { return a == b; }
template <typename T> KF_INLINE bool kf_ne(T a, T b) { return a != b; }
template <typename T> KF_INLINE bool kf_lt(T a, T b) { return a < b; }
template <typename T> KF_INLINE bool kf_le(T a, T b) { return a <= b; }
template <typename T> KF_INLINE bool kf_gt(T a, T b) { return a > b; }
template <typename T> KF_INLINE bool kf_ge(T a, T b) { return a >= b; }
template <typename T> KF_INLINE bool kf_logical_and(T a, T b) { return a != (T)0 && b != (T)0; }
template <typename T> KF_INLINE bool kf_logical_or(T a, T b) { return a != (T)0 || b != (T)0; }
template <typename T> KF_INLINE T kf_where(bool c, T a, T b) { return c ? a : b; }
// clamp: a NaN x fails both tests and stays NaN; bounds are baked in.
template <typename T> KF_INLINE T kf_clamp(T x, T lo, T hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}
// Casts between compute types: float to integer truncates toward zero and
// saturates, NaN gives 0 (cvt.rzi semantics); to bool is "nonzero".
template <typename D, typename T> KF_INLINE D kf_cast(T x) { return (D)x; }
template <> KF_INLINE bool kf_cast<bool, float>(float x) { return x != 0.0f; }
template <> KF_INLINE bool kf_cast<bool, double>(double x) { return x != 0.0; }
template <> KF_INLINE bool kf_cast<bool, int>(int x) { return x != 0; }
template <> KF_INLINE bool kf_cast<bool, long long>(long long x) { return x != 0; }
// A cast to f16 or bf16 rounds there, as the graph asks, though the value
// stays a float in registers.
KF_INLINE float kf_round_f16(float x) { return kf_in(kf_f16_rn(x)); }
KF_INLINE float kf_round_f16(double x) { return kf_in(kf_f16_rn(x)); }
// sm_80+: the bf16 in the high half and zero in the low half of a bf16x2
// is the rounded float itself: one instruction.
KF_INLINE float kf_round_bf16(float x) {
#if __CUDA_ARCH__ >= 800
  return __uint_as_float(kf_bf16x2_rn(0.0f, x));
#else
  return kf_in(kf_bf16_rn(x));
#endif
}
KF_INLINE float kf_round_bf16(double x) { return kf_in(kf_bf16_rn(x)); }
KF_INLINE float kf_round_f16(int x) { return kf_round_f16((double)x); }
KF_INLINE float kf_round_f16(long long x) { return kf_round_f16((double)x); }
KF_INLINE float kf_round_f16(bool x) { return x ? 1.0f : 0.0f; }
KF_INLINE float kf_round_bf16(int x) { return kf_round_bf16((double)x); }
KF_INLINE float kf_round_bf16(long long x) { return kf_round_bf16((double)x); }
KF_INLINE float kf_round_bf16(bool x) { return x ? 1.0f : 0.0f; }

// ---- reductions ---------------------------------------------------------------
// Each has an identity and a combine; max and min keep a NaN once seen.
template <typename T> struct kf_red_sum {
  static KF_INLINE T id() { return (T)0; }
  static KF_INLINE T op(T a, T b) { return kf_add(a, b); }
};
template <typename T> struct kf_red_max;
template <typename T> struct kf_red_min;
// float: sm_80+ has max/min that return NaN when either operand is one
// (the canonical NaN; the sign of a zero result may differ from kf_maximum,
// which a reduction's order changes anyway).
KF_INLINE float kf_max_nan(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return kf_maximum(a, b);
#endif
}
KF_INLINE float kf_min_nan(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return kf_minimum(a, b);
#endif
}
template <> struct kf_red_max<float> {
  static KF_INLINE float id() { return -KF_INF; }
  static KF_INLINE float op(float a, float b) { return kf_max_nan(a, b); }
};
template <> struct kf_red_min<float> {
  static KF_INLINE float id() { return KF_INF; }
  static KF_INLINE float op(float a, float b) { return kf_min_nan(a, b); }
};
template <> struct kf_red_max<double> {
  static KF_INLINE double id() { return -KF_DINF; }
  static KF_INLINE double op(double a, double b) { return kf_maximum(a, b); }
};
template <> struct kf_red_min<double> {
  static KF_INLINE double id() { return KF_DINF; }
  static KF_INLINE double op(double a, double b) { return kf_minimum(a, b); }
};
template <> struct kf_red_max<int> {
  static KF_INLINE int id() { return (int)0x80000000; }
  static KF_INLINE int op(int a, int b) { return kf_maximum(a, b); }
};
template <> struct kf_red_min<int> {
  static KF_INLINE int id() { return 0x7fffffff; }
  static KF_INLINE int op(int a, int b) { return kf_minimum(a, b); }
};
template <> struct kf_red_max<long long> {
  static KF_INLINE long long id() { return (long long)0x8000000000000000ULL; }
  static KF_INLINE long long op(long long a, long long b) { return kf_maximum(a, b); }
};
template <> struct kf_red_min<long long> {
  static KF_INLINE long long id() { return 0x7fffffffffffffffLL; }
  static KF_INLINE long long op(long long a, long long b) { return kf_minimum(a, b); }
};

// Butterfly over the lanes of a warp: every lane gets the result.
template <typename R, typename T> KF_INLINE T kf_warp_allreduce(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = R::op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Barrier over the first N threads of the block: __syncthreads when they are
// the whole block, a named barrier otherwise (a part of a horizontal launch
// whose block is smaller than the launch's).
template <int N, int LAUNCH> KF_INLINE void kf_sync() {
  if (N == LAUNCH)
    __syncthreads();
  else
    asm volatile("bar.sync 1, %0;" ::"n"(N) : "memory");
}
// Every thread of the first N gets the reduction of their values. sm holds
// 32 values; the leading barrier makes back-to-back calls safe.
template <typename R, int N, int LAUNCH, typename T> KF_INLINE T kf_block_allreduce(T v, T *sm) {
  v = kf_warp_allreduce<R>(v);
  if (N <= 32) return v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  kf_sync<N, LAUNCH>();
  if (lane == 0) sm[warp] = v;
  kf_sync<N, LAUNCH>();
  v = lane < N / 32 ? sm[lane] : R::id();
  return kf_warp_allreduce<R>(v);
}

// reduce_cols.cu - reduction over a strided axis (inner == 512 > 1):
// 1 x 512 outputs, each over 65536 elements 512 apart.
// A block of TX x TY threads covers TX * LANES consecutive outputs (a tile):
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
// Holes: fn, IDX, OUTER, RED, INNER, LANES, TX, TY, NT, SPLIT, CHUNK,
// THREADS, LAUNCH, params, args, globals, decl, pre_decl, pre, accumulate,
// combine, partial_store, partial_load, epilogue, aligned.
__device__ float kf_part0_k0_reduce_part2[135168];
__device__ float kf_part0_k0_reduce_part3[135168];
__device__ float kf_part0_k0_reduce_part4[135168];
__device__ unsigned kf_part0_k0_reduce_count[4];

KF_INLINE void kf_part0_k0_reduce_cols(unsigned bid, bool vec, const float *__restrict__ p0, float *__restrict__ p2, float *__restrict__ p5) {
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
  float acc2[LANES];
#pragma unroll
  for (int l = 0; l < LANES; l++) acc2[l] = kf_red_sum<float>::id();
  __shared__ float kf_c2[TY][LANES][TX + 1];
  float acc3[LANES];
#pragma unroll
  for (int l = 0; l < LANES; l++) acc3[l] = kf_red_max<float>::id();
  __shared__ float kf_c3[TY][LANES][TX + 1];
  float acc4[LANES];
#pragma unroll
  for (int l = 0; l < LANES; l++) acc4[l] = kf_red_min<float>::id();
  __shared__ float kf_c4[TY][LANES][TX + 1];

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
          acc2[l] = kf_red_sum<float>::op(acc2[l], t0);
          acc3[l] = kf_red_max<float>::op(acc3[l], t0);
          acc4[l] = kf_red_min<float>::op(acc4[l], t0);
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
          acc2[l] = kf_red_sum<float>::op(acc2[l], t0);
          acc3[l] = kf_red_max<float>::op(acc3[l], t0);
          acc4[l] = kf_red_min<float>::op(acc4[l], t0);
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
    kf_c2[ty][l][tx] = acc2[l];
    kf_c3[ty][l][tx] = acc3[l];
    kf_c4[ty][l][tx] = acc4[l];
  }
  kf_sync<256, 256>();
  if (ty == 0)
    for (int i = 1; i < TY; i++)
#pragma unroll
      for (int l = 0; l < LANES; l++) {
      acc2[l] = kf_red_sum<float>::op(acc2[l], kf_c2[i][l][tx]);
      acc3[l] = kf_red_max<float>::op(acc3[l], kf_c3[i][l][tx]);
      acc4[l] = kf_red_min<float>::op(acc4[l], kf_c4[i][l][tx]);
      }

    if (264 == 1 || pass == 1) break;
    if (ty == 0 && live) {
#pragma unroll
      for (int l = 0; l < LANES; l++) {
        kf_part0_k0_reduce_part2[(o * 264 + s) * 512 + n0 + l] = acc2[l];
        kf_part0_k0_reduce_part3[(o * 264 + s) * 512 + n0 + l] = acc3[l];
        kf_part0_k0_reduce_part4[(o * 264 + s) * 512 + n0 + l] = acc4[l];
      }
    }
    __threadfence();
    kf_sync<256, 256>();
    if (threadIdx.x == 0) kf_last = atomicAdd(&kf_part0_k0_reduce_count[o * 4 + t], 1u) == 264 - 1;
    kf_sync<256, 256>();
    if (!kf_last) return;
    __threadfence();
#pragma unroll
    for (int l = 0; l < LANES; l++) acc2[l] = kf_red_sum<float>::id();
    if (live)
#pragma unroll 1
      for (int ss = ty; ss < 264; ss += TY)
#pragma unroll
        for (int l = 0; l < LANES; l++)
          acc2[l] = kf_red_sum<float>::op(acc2[l], ((volatile float *)kf_part0_k0_reduce_part2)[(o * 264 + ss) * 512 + n0 + l]);
#pragma unroll
    for (int l = 0; l < LANES; l++) acc3[l] = kf_red_max<float>::id();
    if (live)
#pragma unroll 1
      for (int ss = ty; ss < 264; ss += TY)
#pragma unroll
        for (int l = 0; l < LANES; l++)
          acc3[l] = kf_red_max<float>::op(acc3[l], ((volatile float *)kf_part0_k0_reduce_part3)[(o * 264 + ss) * 512 + n0 + l]);
#pragma unroll
    for (int l = 0; l < LANES; l++) acc4[l] = kf_red_min<float>::id();
    if (live)
#pragma unroll 1
      for (int ss = ty; ss < 264; ss += TY)
#pragma unroll
        for (int l = 0; l < LANES; l++)
          acc4[l] = kf_red_min<float>::op(acc4[l], ((volatile float *)kf_part0_k0_reduce_part4)[(o * 264 + ss) * 512 + n0 + l]);

  }
  if (264 > 1 && threadIdx.x == 0) kf_part0_k0_reduce_count[o * 4 + t] = 0u;
  if (ty == 0 && live) {
#pragma unroll
    for (int l = 0; l < LANES; l++) {
      const int n = n0 + l;
      (void)n;
      float red2 = acc2[l];
      red2 = kf_div(red2, 65536.0f);
      float red3 = acc3[l];
      float red4 = acc4[l];
      kf_st(p2 + (o * 512 + n), red2);
      const float t1 = kf_sub(red3, red4);
      kf_st(p5 + (o * 512 + n), t1);
    }
  }
}

KF_INLINE void kf_part0_k0_reduce(unsigned bid, const float *__restrict__ p0, float *__restrict__ p2, float *__restrict__ p5) {
  if (threadIdx.x >= 256) return;
  kf_part0_k0_reduce_cols(bid, 4 > 1 && kf_aligned(p0, 16), p0, p2, p5);
}

// reduce_cols.cu - reduction over a strided axis (inner == 256 > 1):
// 64 x 256 outputs, each over 2048 elements 256 apart.
// A block of TX x TY threads covers TX * LANES consecutive outputs (a tile):
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
// Holes: fn, IDX, OUTER, RED, INNER, LANES, TX, TY, NT, SPLIT, CHUNK,
// THREADS, LAUNCH, params, args, globals, decl, pre_decl, pre, accumulate,
// combine, partial_store, partial_load, epilogue, aligned.
__device__ float kf_part1_k1_reduce_part6[147456];
__device__ unsigned kf_part1_k1_reduce_count[128];

KF_INLINE void kf_part1_k1_reduce_cols(unsigned bid, bool vec, const float *__restrict__ p1, float *__restrict__ p6) {
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
  float acc6[LANES];
#pragma unroll
  for (int l = 0; l < LANES; l++) acc6[l] = kf_red_sum<float>::id();
  __shared__ float kf_c6[TY][LANES][TX + 1];

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
    kf_ldv<float, W>(r0, p1 + (o * 524288 + k * 256 + n));
          }
#pragma unroll
          for (int j = 0; j < W; j++) {
            const int l = g * W + j;
            const int n = n0 + l;
            (void)n;
          const float t0 = r0[j];
          acc6[l] = kf_red_sum<float>::op(acc6[l], t0);
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
    kf_ldv<float, W>(r0, p1 + (o * 524288 + k * 256 + n));
          }
          {
            const int j = 0, l = g;
            const int n = n0 + l;
            (void)j;
            (void)n;
          const float t0 = r0[j];
          acc6[l] = kf_red_sum<float>::op(acc6[l], t0);
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
    kf_c6[ty][l][tx] = acc6[l];
  }
  kf_sync<256, 256>();
  if (ty == 0)
    for (int i = 1; i < TY; i++)
#pragma unroll
      for (int l = 0; l < LANES; l++) {
      acc6[l] = kf_red_sum<float>::op(acc6[l], kf_c6[i][l][tx]);
      }

    if (9 == 1 || pass == 1) break;
    if (ty == 0 && live) {
#pragma unroll
      for (int l = 0; l < LANES; l++) {
        kf_part1_k1_reduce_part6[(o * 9 + s) * 256 + n0 + l] = acc6[l];
      }
    }
    __threadfence();
    kf_sync<256, 256>();
    if (threadIdx.x == 0) kf_last = atomicAdd(&kf_part1_k1_reduce_count[o * 2 + t], 1u) == 9 - 1;
    kf_sync<256, 256>();
    if (!kf_last) return;
    __threadfence();
#pragma unroll
    for (int l = 0; l < LANES; l++) acc6[l] = kf_red_sum<float>::id();
    if (live)
#pragma unroll 1
      for (int ss = ty; ss < 9; ss += TY)
#pragma unroll
        for (int l = 0; l < LANES; l++)
          acc6[l] = kf_red_sum<float>::op(acc6[l], ((volatile float *)kf_part1_k1_reduce_part6)[(o * 9 + ss) * 256 + n0 + l]);

  }
  if (9 > 1 && threadIdx.x == 0) kf_part1_k1_reduce_count[o * 2 + t] = 0u;
  if (ty == 0 && live) {
#pragma unroll
    for (int l = 0; l < LANES; l++) {
      const int n = n0 + l;
      (void)n;
      float red6 = acc6[l];
      kf_st(p6 + (o * 256 + n), red6);
    }
  }
}

KF_INLINE void kf_part1_k1_reduce(unsigned bid, const float *__restrict__ p1, float *__restrict__ p6) {
  if (threadIdx.x >= 256) return;
  kf_part1_k1_reduce_cols(bid, 4 > 1 && kf_aligned(p1, 16), p1, p6);
}

// reduce_rows.cu - reduction over contiguous elements (inner == 1): 1
// outputs, each the reduction of 33554432 consecutive elements (after the
// fused prologue). A block of 256 threads reduces a share of one
// output's elements (warp shuffles, then shared memory). When the outputs are
// too few to fill the GPU, each is split over 528 blocks: every block
// stores its partial, and the last block to finish (an atomic counter)
// combines the partials in a fixed order, so the result is deterministic,
// then resets the counter for the next launch. The epilogue runs once per
// output, in thread 0 of the block that finishes it.
// Holes: fn, IDX, OUTER, RED, SPLIT, CHUNK, THREADS, LAUNCH, params, globals,
// decl, accumulate, combine, partial_store, partial_load, epilogue.
__device__ float kf_part2_k2_reduce_part7[528];
__device__ unsigned kf_part2_k2_reduce_count[1];

KF_INLINE void kf_part2_k2_reduce(unsigned bid, const float *__restrict__ p1, float *__restrict__ p7) {
  if (threadIdx.x >= 256) return;
  __shared__ float kf_smf[32];
  __shared__ double kf_smd[32];
  __shared__ int kf_smi[32];
  __shared__ long long kf_sml[32];
  __shared__ bool kf_last;
  (void)kf_smf; (void)kf_smd; (void)kf_smi; (void)kf_sml; (void)kf_last;
  const int o = (int)bid / 528;
  const int s = (int)bid % 528;
  const int k0 = s * 63551;
  const int k1 = k0 + 63551 < 33554432 ? k0 + 63551 : 33554432;
  const int n = 0;
  (void)n;
  float acc7 = kf_red_sum<float>::id();

#pragma unroll 4
  for (int k = k0 + threadIdx.x; k < k1; k += 256) {
    const float t0 = kf_ld(p1 + (k));
    acc7 = kf_red_sum<float>::op(acc7, t0);
  }
  acc7 = kf_block_allreduce<kf_red_sum<float>, 256, 256>(acc7, kf_smf);

  if (528 > 1) {
    if (threadIdx.x == 0) {
      kf_part2_k2_reduce_part7[o * 528 + s] = acc7;
      __threadfence();
      const unsigned done = atomicAdd(&kf_part2_k2_reduce_count[o], 1u);
      kf_last = done == 528 - 1;
    }
    kf_sync<256, 256>();
    if (!kf_last) return;
    __threadfence();
    acc7 = kf_red_sum<float>::id();
    for (int i = threadIdx.x; i < 528; i += 256)
      acc7 = kf_red_sum<float>::op(acc7, ((volatile float *)kf_part2_k2_reduce_part7)[o * 528 + i]);

  acc7 = kf_block_allreduce<kf_red_sum<float>, 256, 256>(acc7, kf_smf);

    if (threadIdx.x == 0) kf_part2_k2_reduce_count[o] = 0u;
  }
  if (threadIdx.x == 0) {
    float red7 = acc7;
    kf_st(p7 + (o), red7);
  }
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
// Holes: entry, THREADS, decls, params, route.
extern "C" __global__ void __launch_bounds__(256) kf_launch0_h3(const float *__restrict__ p0, float *__restrict__ p2, float *__restrict__ p5, const float *__restrict__ p1, float *__restrict__ p6, float *__restrict__ p7) {
  if (blockIdx.x < 1056u) kf_part0_k0_reduce(blockIdx.x - 0u, p0, p2, p5);
  else if (blockIdx.x < 2208u) kf_part1_k1_reduce(blockIdx.x - 1056u, p1, p6);
  else if (blockIdx.x < 2736u) kf_part2_k2_reduce(blockIdx.x - 2208u, p1, p7);
}
