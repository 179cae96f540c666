/* kfuse generated kernel kf_k0_row: 1 part, 8192 blocks x 256 threads.
 * part kf_part0_k0_row = kernel k0_row (row), 9 ops:
 *   %3 h=add(%0,%1) %4 hf=cast(%3) %5 sq=mul(%4,%4) %6 ms=mean(%5)
 *   %8 me=add(%6,%7) %9 iv=rsqrt(%8) %10 n=mul(%4,%9) %11 nb=cast(%10)
 *   %12 o=mul(%11,%2)
 *  decisions: row: 8192 rows x 8192 cols, block per row (256 threads per row, 1 rows per block), 8 lanes per access, row held in registers, 32-bit index, 8192 blocks x 256 threads
 * index: 32-bit (largest offset 67108863); widest access 16 bytes
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

// row.cu - row kernel: 8192 rows of 8192 columns, each row reduced by
// a group of 256 threads (1 rows per block: a warp per row for short
// rows, a block per row for long ones), grid-stride over rows. Each thread
// owns chunks of W consecutive columns: chunk kk covers columns
// (kk * G + lane) * W .. + W - 1. When the row fits in registers
// (held here), the full-row inputs are loaded once into x<v>[NV][W] and every
// phase reads registers; otherwise each phase re-reads them (L2 helps).
// Phases: one per reduction, in order (warp shuffles, then shared memory
// across warps), then the outputs (W per store; per-row outputs by lane 0).
// W > 1 only when every vector-accessed pointer is aligned (checked at run
// time, uniformly); otherwise the fallback <fn>_row1 runs the row one
// element per access, looped (compact: it runs rarely, must compile fast).
// Holes: fn, IDX, ROWS, COLS, G, RPB, THREADS, BLOCKS, LAUNCH, W, HOLD,
// params, args, body, aligned, fallback, fallback_call.
template <int W>
KF_INLINE void kf_part0_k0_row_row(int r, int lane, const kf_bf16 *__restrict__ p0, const kf_bf16 *__restrict__ p1, const kf_bf16 *__restrict__ p2, kf_bf16 *__restrict__ p3, kf_bf16 *__restrict__ p12) {
  enum { G = 256, COLS = 8192, NV = (COLS + G * W - 1) / (G * W),
         FULL = COLS % (G * W) == 0 };
  __shared__ float kf_smf[32];
  (void)kf_smf;
  kf_pack<kf_bf16, W> x0[NV];
#pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
      typedef typename kf_pack<kf_bf16, W>::word word;
      const word *q = reinterpret_cast<const word *>(p0 + (r * 8192 + c0));
#pragma unroll
      for (int i = 0; i < kf_pack<kf_bf16, W>::N; i++) x0[kk].w[i] = __ldg(q + i);
    }
  }
  kf_pack<kf_bf16, W> x1[NV];
#pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
      typedef typename kf_pack<kf_bf16, W>::word word;
      const word *q = reinterpret_cast<const word *>(p1 + (r * 8192 + c0));
#pragma unroll
      for (int i = 0; i < kf_pack<kf_bf16, W>::N; i++) x1[kk].w[i] = __ldg(q + i);
    }
  }
  // phase: %6 mean
  float red6;
  {
    float acc = kf_red_sum<float>::id();
  #pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t0 = kf_round_bf16(kf_add(kf_in(x0[kk].s[j]), kf_in(x1[kk].s[j])));
        const float t1 = kf_cast<float>(t0);
        const float t2 = kf_mul(t1, t1);
        acc = kf_red_sum<float>::op(acc, t2);
    }
  }
  }
    red6 = kf_block_allreduce<kf_red_sum<float>, G, 256>(acc, kf_smf);
    red6 = kf_div(red6, 8192.0f);
  }
  // outputs
  #pragma unroll
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
    float o3[W];
  float r9[W];
    float o12[W];
    {
      const int c = c0;
      (void)c;
    kf_ldv<kf_bf16, W>(r9, p2 + ((c)));
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t3 = kf_round_bf16(kf_add(kf_in(x0[kk].s[j]), kf_in(x1[kk].s[j])));
        o3[j] = t3;
        const float t4 = kf_cast<float>(t3);
        const float t5 = kf_add(red6, 9.99999997e-07f);
        const float t6 = kf_rsqrt(t5);
        const float t7 = kf_mul(t4, t6);
        const float t8 = kf_round_bf16(t7);
        const float t9 = r9[j];
        const float t10 = kf_round_bf16(kf_mul(t8, t9));
        o12[j] = t10;
    }
    kf_stv<kf_bf16, W>(p3 + (r * 8192 + c0), o3);
    kf_stv<kf_bf16, W>(p12 + (r * 8192 + c0), o12);
  }
  }
}

// The fallback for unaligned pointers: W = 1, inputs re-read per phase,
// loops not unrolled (compiles fast; runs only on unaligned tensors).
KF_INLINE void kf_part0_k0_row_row1(int r, int lane, const kf_bf16 *__restrict__ p0, const kf_bf16 *__restrict__ p1, const kf_bf16 *__restrict__ p2, kf_bf16 *__restrict__ p3, kf_bf16 *__restrict__ p12) {
  enum { G = 256, COLS = 8192, W = 1, NV = (COLS + G - 1) / G, FULL = COLS % G == 0 };
  __shared__ float kf_smf[32];
  (void)kf_smf;
  // phase: %6 mean
  float red6;
  {
    float acc = kf_red_sum<float>::id();
  #pragma unroll 1
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t0 = kf_ld(p0 + (r * 8192 + c));
        const float t1 = kf_ld(p1 + (r * 8192 + c));
        const float t2 = kf_round_bf16(kf_add(t0, t1));
        const float t3 = kf_cast<float>(t2);
        const float t4 = kf_mul(t3, t3);
        acc = kf_red_sum<float>::op(acc, t4);
    }
  }
  }
    red6 = kf_block_allreduce<kf_red_sum<float>, G, 256>(acc, kf_smf);
    red6 = kf_div(red6, 8192.0f);
  }
  // outputs
  #pragma unroll 1
  for (int kk = 0; kk < NV; kk++) {
    const int c0 = (kk * G + lane) * W;
    if (FULL || c0 < COLS) {
    float o3[W];
    float o12[W];
    {
      const int c = c0;
      (void)c;
    }
#pragma unroll
    for (int j = 0; j < W; j++) {
      const int c = c0 + j;
      (void)c;
        const float t5 = kf_ld(p0 + (r * 8192 + c));
        const float t6 = kf_ld(p1 + (r * 8192 + c));
        const float t7 = kf_round_bf16(kf_add(t5, t6));
        o3[j] = t7;
        const float t8 = kf_cast<float>(t7);
        const float t9 = kf_add(red6, 9.99999997e-07f);
        const float t10 = kf_rsqrt(t9);
        const float t11 = kf_mul(t8, t10);
        const float t12 = kf_round_bf16(t11);
        const float t13 = kf_ld(p2 + ((c)));
        const float t14 = kf_round_bf16(kf_mul(t12, t13));
        o12[j] = t14;
    }
    kf_stv<kf_bf16, W>(p3 + (r * 8192 + c0), o3);
    kf_stv<kf_bf16, W>(p12 + (r * 8192 + c0), o12);
  }
  }
}

KF_INLINE void kf_part0_k0_row(unsigned bid, const kf_bf16 *__restrict__ p0, const kf_bf16 *__restrict__ p1, const kf_bf16 *__restrict__ p2, kf_bf16 *__restrict__ p3, kf_bf16 *__restrict__ p12) {
  if (threadIdx.x >= 256) return;
  const int lane = threadIdx.x % 256;
  const int grp = threadIdx.x / 256;
  const bool vec = 8 > 1 && kf_aligned(p0, 16) && kf_aligned(p1, 16) && kf_aligned(p3, 16) && kf_aligned(p2, 16) && kf_aligned(p12, 16);
  for (int r = (int)bid * 1 + grp; r < 8192; r += (int)8192 * 1) {
    if (vec)
      kf_part0_k0_row_row<8>(r, lane, p0, p1, p2, p3, p12);
    else
      kf_part0_k0_row_row1(r, lane, p0, p1, p2, p3, p12);
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
extern "C" __global__ void __launch_bounds__(256) kf_k0_row(const kf_bf16 *__restrict__ p0, const kf_bf16 *__restrict__ p1, const kf_bf16 *__restrict__ p2, kf_bf16 *__restrict__ p3, kf_bf16 *__restrict__ p12) {
  kf_part0_k0_row(blockIdx.x, p0, p1, p2, p3, p12);
}
