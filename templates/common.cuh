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

// The i-th 32-bit word of a pack (packs of 4 bytes or more).
template <typename S, int W> KF_INLINE unsigned kf_word32(const kf_pack<S, W> &k, int i) {
  return reinterpret_cast<const unsigned *>(k.w)[i];
}
// Lane j of a pack as its compute type. bf16 lanes come out of the 32-bit
// word that holds two: the high one is the word with its low half cleared
// (one LOP3), where going through the 16-bit lane took a PRMT and a shift.
template <typename S, int W> KF_INLINE auto kf_in_at(const kf_pack<S, W> &k, int j)
    -> decltype(kf_in(k.s[0])) {
  return kf_in(k.s[j]);
}
template <int W> KF_INLINE float kf_in_at(const kf_pack<kf_bf16, W> &k, int j) {
  if (W < 2) return kf_in(k.s[j]);
  const unsigned u = kf_word32(k, j >> 1);
  return __uint_as_float((j & 1) ? (u & 0xffff0000u) : (u << 16));
}

template <typename S, int W, typename C>
KF_INLINE void kf_ldv(C (&dst)[W], const S *__restrict__ p) {
  kf_pack<S, W> k;
  typedef typename kf_pack<S, W>::word word;
  const word *q = reinterpret_cast<const word *>(p);
#pragma unroll
  for (int i = 0; i < kf_pack<S, W>::N; i++) k.w[i] = __ldg(q + i);
#pragma unroll
  for (int i = 0; i < W; i++) dst[i] = kf_in_at(k, i);
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
// Loads with a cache hint, for words of 4 bytes or more (smaller ones go
// the plain way): PRE and POST wrap `ld.global.nc.QUAL ... [p]`. With an L1
// eviction hint, so that a row read once does not push out of L1 the
// weights every row reads again: kf_ldna does not allocate
// (.L1::no_allocate, KFUSE_ROW_STREAM=loads), kf_ldef allocates lines that
// go first (.L1::evict_first, KFUSE_ROW_STREAM=evict_first). With an L2
// eviction policy (createpolicy, sm_80+; plain before): kf_ldl2ef marks the
// lines first to leave L2, as Inductor marks the last read of a row
// (KFUSE_ROW_STREAM=l2_evict_first).
#define KF_LD_ASM(NAME, PRE, QUAL, POST)                                                 \
  template <typename T> KF_INLINE T NAME(const T *__restrict__ p) { return __ldg(p); }   \
  template <> KF_INLINE uint4 NAME(const uint4 *__restrict__ p) {                        \
    uint4 v;                                                                             \
    asm(PRE "ld.global.nc." QUAL ".v4.u32 {%0, %1, %2, %3}, [%4]" POST                   \
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));                          \
    return v;                                                                            \
  }                                                                                      \
  template <> KF_INLINE uint2 NAME(const uint2 *__restrict__ p) {                        \
    uint2 v;                                                                             \
    asm(PRE "ld.global.nc." QUAL ".v2.u32 {%0, %1}, [%2]" POST : "=r"(v.x), "=r"(v.y)    \
        : "l"(p));                                                                       \
    return v;                                                                            \
  }                                                                                      \
  template <> KF_INLINE unsigned NAME(const unsigned *__restrict__ p) {                  \
    unsigned v;                                                                          \
    asm(PRE "ld.global.nc." QUAL ".u32 %0, [%1]" POST : "=r"(v) : "l"(p));               \
    return v;                                                                            \
  }
KF_LD_ASM(kf_ldna, "", "L1::no_allocate", ";")
KF_LD_ASM(kf_ldef, "", "L1::evict_first", ";")
#if __CUDA_ARCH__ >= 800
KF_LD_ASM(kf_ldl2ef,
          "{\n .reg .b64 kf_pol;\n createpolicy.fractional.L2::evict_first.b64 kf_pol, 1.0;\n ",
          "L2::cache_hint", ", kf_pol;\n}")
#else
template <typename T> KF_INLINE T kf_ldl2ef(const T *__restrict__ p) { return __ldg(p); }
#endif
// Brings the line holding p into L1, with no register (KFUSE_ROW_PREFETCH).
KF_INLINE void kf_prefetch_l1(const void *p) {
  asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
}
// How many rows ahead a held row's block prefetches into L2 (set by the
// runtime at load time from the kernel's resident blocks; 0: none).
extern "C" {
__device__ int kf_l2pf_rows;
}
// Starts bringing `bytes` (a multiple of 16) from p (16-byte aligned) into
// L2, with no register and nothing to wait for: one instruction for a whole
// row on sm_90 (cp.async.bulk.prefetch.L2; KFUSE_ROW_L2PF); nothing before.
KF_INLINE void kf_prefetch_l2_bulk(const void *p, unsigned bytes) {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#else
  (void)p;
  (void)bytes;
#endif
}
// Programmatic dependent launch (sm_90; docs/runtime.md): the runtime may
// launch a kernel while the kernel ahead of it in the stream still drains.
// Every block first lets the kernel after it begin its launch (so that its
// blocks take the SM slots this grid's last wave leaves, instead of
// launching only once this grid is gone), then waits until the kernel
// ahead has finished and its writes are visible, before touching memory.
// Both are no-ops for a kernel launched without the attribute.
KF_INLINE void kf_grid_dep_sync() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;" ::: "memory");
#endif
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
// The math policy (docs/codegen.md, "Math policy", with each op's error):
// the code generator defines KF_MATH_STRICT or KF_MATH_FAST before this
// prelude, or neither for the default. An op's function may contract
// (explicit __fmaf_rn) and use hardware approximations inside itself; the
// compiler contracts nothing across ops (--fmad=false), so a fused kernel
// computes what the unfused kernels compute, bit for bit, in every policy.
// f16 and bf16 are computed with the float functions; double always uses
// the CUDA math library.
#if defined(KF_MATH_STRICT) + defined(KF_MATH_FAST) > 1
#error "at most one of KF_MATH_STRICT and KF_MATH_FAST"
#endif
// 1/x from the SFU (MUFU.RCP): at most 1 ulp, subnormal x and results
// flushed to zero (PTX rcp.approx.ftz.f32).
KF_INLINE float kf_rcp_approx(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// The same over the full range, subnormals included: at most 1 ulp (PTX
// rcp.approx.f32).
KF_INLINE float kf_rcp_approx_full(float x) {
  float r;
  asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
KF_INLINE float kf_tanh_approx(float x) {
  float r;
  asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// float
KF_INLINE float kf_neg(float x) { return -x; }
KF_INLINE float kf_abs(float x) { return fabsf(x); }
KF_INLINE float kf_exp(float x) {
#ifdef KF_MATH_FAST
  return __expf(x);
#else
  return expf(x);
#endif
}
KF_INLINE float kf_log(float x) {
#ifdef KF_MATH_FAST
  return __logf(x);
#else
  return logf(x);
#endif
}
KF_INLINE float kf_sqrt(float x) {
#ifdef KF_MATH_FAST
  float r;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return sqrtf(x);
#endif
}
KF_INLINE float kf_rsqrt(float x) { return rsqrtf(x); }
KF_INLINE float kf_reciprocal(float x) {
#if defined(KF_MATH_STRICT)
  return 1.0f / x;
#elif defined(KF_MATH_FAST)
  return kf_rcp_approx(x);
#else
  return kf_rcp_approx_full(x);
#endif
}
KF_INLINE float kf_sin(float x) {
#ifdef KF_MATH_FAST
  return __sinf(x);
#else
  return sinf(x);
#endif
}
KF_INLINE float kf_cos(float x) {
#ifdef KF_MATH_FAST
  return __cosf(x);
#else
  return cosf(x);
#endif
}
KF_INLINE float kf_tanh(float x) {
#ifdef KF_MATH_FAST
  return kf_tanh_approx(x);
#else
  return tanhf(x);
#endif
}
// 1 + e >= 1: the reciprocal needs no IEEE division's special cases (a
// result below 2^-126, x < -87.3, flushes to zero).
KF_INLINE float kf_sigmoid(float x) {
#ifdef KF_MATH_STRICT
  return 1.0f / (1.0f + expf(-x));
#else
  return kf_rcp_approx(1.0f + kf_exp(-x));
#endif
}
KF_INLINE float kf_relu(float x) { return x < 0.0f ? 0.0f : x; }
KF_INLINE float kf_gelu(float x) {
#ifdef KF_MATH_STRICT
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
#else
  const float h = 0.5f * x;
  return __fmaf_rn(h, erff(x * 0.70710678118654752440f), h);
#endif
}
KF_INLINE float kf_gelu_tanh(float x) {
#ifdef KF_MATH_STRICT
  return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
#else
  // sqrt(2/pi) * (x + 0.044715 x^3) = x * (sqrt(2/pi) + 0.0356774 x^2)
  const float u = x * __fmaf_rn(0.035677408136300125f, x * x, 0.79788456080286535588f);
  const float h = 0.5f * x;
  return __fmaf_rn(h, kf_tanh(u), h);
#endif
}
// As sigmoid; x / (1 + e) for x < -87.3 (|result| < 2^-119) flushes to zero.
KF_INLINE float kf_silu(float x) {
#ifdef KF_MATH_STRICT
  return x / (1.0f + expf(-x));
#else
  return x * kf_rcp_approx(1.0f + kf_exp(-x));
#endif
}
KF_INLINE float kf_erf(float x) { return erff(x); }
KF_INLINE float kf_floor(float x) { return floorf(x); }
KF_INLINE float kf_ceil(float x) { return ceilf(x); }
KF_INLINE float kf_sign(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }
KF_INLINE bool kf_logical_not(float x) { return x == 0.0f; }
KF_INLINE float kf_add(float a, float b) { return a + b; }
KF_INLINE float kf_sub(float a, float b) { return a - b; }
KF_INLINE float kf_mul(float a, float b) { return a * b; }
// fast: a times the SFU reciprocal of b, as __fdividef (2 ulp for 2^-126 <=
// |b| <= 2^126; 0 beyond). kf_rcp_rn and kf_div_rcp below compute the same
// for a divisor shared by a row, so row kernels divide as kf_div does.
KF_INLINE float kf_div(float a, float b) {
#ifdef KF_MATH_FAST
  return __fmul_rn(a, kf_rcp_approx(b));
#else
  return a / b;
#endif
}
KF_INLINE float kf_pow(float a, float b) {
#ifdef KF_MATH_FAST
  return __powf(a, b);
#else
  return powf(a, b);
#endif
}
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
// Under KF_MATH_FAST: kf_div's reciprocal and product, bit for bit (no
// correction, no fallback).
KF_INLINE float kf_rcp_rn(float d) {
#ifdef KF_MATH_FAST
  return kf_rcp_approx(d);
#else
  return __frcp_rn(d);
#endif
}
KF_INLINE float kf_div_rcp(float x, float d, float r) {
#ifdef KF_MATH_FAST
  (void)d;
  return __fmul_rn(x, r);
#else
  const float q0 = __fmul_rn(x, r);
  const float e = __fmaf_rn(q0, d, -x);
  const float q1 = __fmaf_rn(-e, r, q0);
  return q1 == q1 ? q1 : kf_div_slow(x, d);
#endif
}
// The same without the per-element fallback: a NaN q1 sets bad, and the
// caller computes the whole chunk again with kf_div_rcp (row outputs). A
// branch per element cost 4 instructions (BSSY, FSETP, BRA, BSYNC); the
// flag costs one FSETP.OR.
// x as an opaque copy: the chunk's second computation (kf_bad set) divides
// kf_fresh(x). Without it the compiler hoisted that computation's
// per-element NaN tests out of the flagged branch into the path without
// NaN (8 more FSETP per chunk in softmax_bf16's SASS); with it they stay
// in the branch.
KF_INLINE float kf_fresh(float x) {
  float y;
  asm volatile("mov.b32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
KF_INLINE float kf_div_rcpf(float x, float d, float r, bool &bad) {
#ifdef KF_MATH_FAST
  (void)d;
  (void)bad;
  return __fmul_rn(x, r);
#else
  const float q0 = __fmul_rn(x, r);
  const float e = __fmaf_rn(q0, d, -x);
  const float q1 = __fmaf_rn(-e, r, q0);
  bad |= q1 != q1;
  return q1;
#endif
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
  KF_INLINE T kf_neg(T x) { return (T)((U)0 - (U)x); }                           \
  KF_INLINE T kf_abs(T x) { return x < 0 ? (T)((U)0 - (U)x) : x; }               \
  KF_INLINE T kf_relu(T x) { return x < 0 ? (T)0 : x; }                          \
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
// Two bf16 lanes at once (sm_80+), NaN-propagating like kf_max_nan: a NaN
// lane gives the canonical bf16 NaN. kf_max_bf16x2 and kf_min_bf16x2.
#if __CUDA_ARCH__ >= 800
#define KF_BF16X2(OP)                                                      \
  KF_INLINE unsigned kf_##OP##_bf16x2(unsigned a, unsigned b) {            \
    unsigned r;                                                            \
    asm(#OP ".NaN.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));         \
    return r;                                                              \
  }
#else
#define KF_BF16X2(OP)                                                                         \
  KF_INLINE unsigned kf_##OP##_bf16x2(unsigned a, unsigned b) {                               \
    const float lo = kf_##OP##_nan(__uint_as_float(a << 16), __uint_as_float(b << 16));       \
    const float hi =                                                                          \
        kf_##OP##_nan(__uint_as_float(a & 0xffff0000u), __uint_as_float(b & 0xffff0000u));    \
    return (__float_as_uint(lo) >> 16) | (__float_as_uint(hi) & 0xffff0000u);                 \
  }
#endif
KF_BF16X2(max)
KF_BF16X2(min)
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

// ---- one-pass row statistics (the looped row variant) -------------------------
// A row too long for registers is read once per phase; these merge two phases
// into one pass. Online softmax: the running max m and the sum s of
// exp(y - m), rescaled by exp(m_old - m) when m grows (Milakov & Gimelshein).
// Welford: count, mean and the sum m2 of squared deviations, chunks merged
// with Chan's formula. Both combines are symmetric in their operands (a
// butterfly gives every lane the same bits).
template <typename T> struct kf_osm { T m, s; };
template <typename T> KF_INLINE T kf_osm_at(kf_osm<T> a, T m) {
  // a's sum rescaled to max m; nothing for an empty (-inf) part, and no
  // inf - inf when the maxima are equal
  return a.m == m ? a.s : a.m == -(T)KF_DINF ? (T)0 : a.s * kf_exp(kf_sub(a.m, m));
}
template <typename T> struct kf_red_osm {
  static KF_INLINE kf_osm<T> id() { return {-(T)KF_DINF, (T)0}; }
  static KF_INLINE kf_osm<T> op(kf_osm<T> a, kf_osm<T> b) {
    const T m = kf_red_max<T>::op(a.m, b.m);
    return {m, kf_osm_at(a, m) + kf_osm_at(b, m)};
  }
};
template <typename T, int W> KF_INLINE kf_osm<T> kf_osm_chunk(kf_osm<T> a, const T (&y)[W]) {
  T m = a.m;
#pragma unroll
  for (int j = 0; j < W; j++) m = kf_red_max<T>::op(m, y[j]);
  if (m == -(T)KF_DINF) return a; // every value so far -inf: nothing to add
  T s = kf_osm_at(a, m);
#pragma unroll
  for (int j = 0; j < W; j++) s += kf_exp(kf_sub(y[j], m));
  return {m, s};
}
// The row's sum: as the two-pass reference gives it, NaN when the max is not
// finite (exp(-inf - -inf), exp(inf - inf) or a NaN max).
template <typename T> KF_INLINE T kf_osm_sum(kf_osm<T> a) {
  return a.m - a.m == (T)0 ? a.s : a.m - a.m;
}
template <typename T> struct kf_wf { T n, mean, m2; };
template <typename T> struct kf_red_wf {
  static KF_INLINE kf_wf<T> id() { return {(T)0, (T)0, (T)0}; }
  static KF_INLINE kf_wf<T> op(kf_wf<T> a, kf_wf<T> b) {
    if (a.n == (T)0) return b;
    if (b.n == (T)0) return a;
    const T n = a.n + b.n, d = b.mean - a.mean;
    return {n, (a.n * a.mean + b.n * b.mean) / n, a.m2 + b.m2 + d * d * (a.n * b.n / n)};
  }
};
template <typename T, int W> KF_INLINE kf_wf<T> kf_wf_chunk(kf_wf<T> a, const T (&y)[W]) {
  T s = (T)0;
#pragma unroll
  for (int j = 0; j < W; j++) s += y[j];
  const T mean = s / (T)W;
  T m2 = (T)0;
#pragma unroll
  for (int j = 0; j < W; j++) m2 += (y[j] - mean) * (y[j] - mean);
  return kf_red_wf<T>::op(a, {(T)W, mean, m2});
}
// The sum of squared deviations, NaN when the mean is not finite (as the
// two-pass reference gives it: x - inf).
template <typename T> KF_INLINE T kf_wf_m2(kf_wf<T> a) {
  return a.mean - a.mean == (T)0 ? a.m2 : a.mean - a.mean;
}

// One butterfly step: scalars through one shuffle, the pairs above by field.
template <typename T> KF_INLINE T kf_shfl_xor(T v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
template <typename T> KF_INLINE kf_osm<T> kf_shfl_xor(kf_osm<T> v, int o) {
  return {kf_shfl_xor(v.m, o), kf_shfl_xor(v.s, o)};
}
template <typename T> KF_INLINE kf_wf<T> kf_shfl_xor(kf_wf<T> v, int o) {
  return {kf_shfl_xor(v.n, o), kf_shfl_xor(v.mean, o), kf_shfl_xor(v.m2, o)};
}
// Butterfly over the lanes of a warp: every lane gets the result.
template <typename R, typename T> KF_INLINE T kf_warp_allreduce(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = R::op(v, kf_shfl_xor(v, o));
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
// 32 values; the leading barrier (LEAD) makes back-to-back calls on the same
// sm safe. Row kernels alternate two sm halves instead and drop it: a
// thread writes a half again only after the barrier of the reduction in
// between, which every thread reaches after reading that half.
template <typename R, int N, int LAUNCH, bool LEAD = true, typename T>
KF_INLINE T kf_block_allreduce(T v, T *sm) {
  v = kf_warp_allreduce<R>(v);
  if (N <= 32) return v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (LEAD) kf_sync<N, LAUNCH>();
  if (lane == 0) sm[warp] = v;
  kf_sync<N, LAUNCH>();
  v = lane < N / 32 ? sm[lane] : R::id();
  return kf_warp_allreduce<R>(v);
}
// ---- rows split over a thread block cluster (sm_90) ----------------------
// A row held by a cluster of S blocks (row_split.cu): after its block
// reduction, block q's result goes to its slot in shared memory; a cluster
// barrier (release / acquire: the slots are then visible cluster-wide); then
// every thread reads the S slots, its own block's and the others' through
// mapa + ld.shared::cluster, and combines them in rank order, the same
// order in every block, so every block gets the same bits. A slot is
// written again only after a later cluster barrier (a row's reductions use
// distinct slots; a row of one reduction ends with a barrier), which every
// block reaches after reading it.
#if __CUDA_ARCH__ >= 900
// The shared-memory address of p (the cluster and staged-row code's
// operands).
KF_INLINE unsigned kf_smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
KF_INLINE unsigned kf_cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
KF_INLINE void kf_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// The value at p (a shared variable) in the shared memory of block `rank`
// of the cluster, read as 32-bit words.
template <typename T> KF_INLINE T kf_dsmem_ld(const T *p, unsigned rank) {
  unsigned a;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(a) : "r"(kf_smem_addr(p)), "r"(rank));
  union { T v; unsigned w[sizeof(T) / 4]; } u;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(T) / 4); i++)
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(u.w[i]) : "r"(a + 4 * i) : "memory");
  return u.v;
}
// v: this block's result (every thread has it); slot: this reduction's slot.
template <typename R, int S, typename T> KF_INLINE T kf_cluster_allreduce(T v, T *slot) {
  if (threadIdx.x == 0) *slot = v;
  kf_cluster_sync();
  T acc = kf_dsmem_ld(slot, 0);
#pragma unroll
  for (int q = 1; q < S; q++) acc = R::op(acc, kf_dsmem_ld(slot, (unsigned)q));
  return acc;
}
#endif
// ---- staged rows (sm_90) ----------------------------------------------------
// A row kernel with its rows staged (row_staged.cu): the bulk-copy engine
// copies a block's next row from global to shared memory (cp.async.bulk, one
// instruction per input row) while the block works on the current one; an
// mbarrier counts the bytes landed (expect_tx, then complete_tx by the copy)
// and the threads wait on its phase parity.
#if __CUDA_ARCH__ >= 900
// One arrival per phase (the thread that starts the copies); the fence makes
// the initialized barrier visible to the copy engine (async proxy).
KF_INLINE void kf_mbar_init(unsigned long long *bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(kf_smem_addr(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// The arrival of the phase, announcing the bytes its copies will bring.
KF_INLINE void kf_mbar_expect(unsigned long long *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               ::"r"(kf_smem_addr(bar)), "r"(bytes) : "memory");
}
// An arrival with no bytes (a stage whose row is past the end).
KF_INLINE void kf_mbar_arrive(unsigned long long *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(kf_smem_addr(bar)) : "memory");
}
// Waits until the phase of parity `parity` has completed (all its bytes in).
// try_wait may suspend the thread for a while; NS > 0 also sleeps NS ns
// between tries (KFUSE_ROW_STAGE_SLEEP, a knob for measurements). A phase
// that never completes (a bug) traps after 2 s of the global timer (a copy
// takes microseconds) instead of hanging the GPU: the launch fails. Counted
// in time, not tries: how long one try may suspend is up to the hardware.
template <int NS> KF_INLINE void kf_mbar_wait(unsigned long long *bar, unsigned parity) {
  unsigned long long start = 0;
  for (;;) {
    unsigned done;
    asm volatile("{\n .reg .pred kf_p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 kf_p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, kf_p;\n}"
                 : "=r"(done) : "r"(kf_smem_addr(bar)), "r"(parity) : "memory");
    if (done) return;
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (!start)
      start = now;
    else if (now - start > 2000000000ull)
      __trap();
    if (NS > 0) __nanosleep(NS);
  }
}
// Orders the block's earlier (generic) reads of shared memory before the
// copy engine's writes that follow: the buffers are handed to the next row.
KF_INLINE void kf_fence_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// bytes (a multiple of 16; both addresses 16-byte aligned) from global src
// to shared dst, completing on bar.
KF_INLINE void kf_bulk_g2s(void *dst, const void *src, unsigned bytes, unsigned long long *bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(kf_smem_addr(dst)), "l"(src), "r"(bytes), "r"(kf_smem_addr(bar)) : "memory");
}
// 16 bytes from global src to shared dst, asynchronously (bypassing L1),
// in the thread's current group; commit closes the group; wait<N> waits
// until at most N of the thread's groups are still in flight.
KF_INLINE void kf_cp_async16(void *dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(kf_smem_addr(dst)), "l"(src)
               : "memory");
}
KF_INLINE void kf_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> KF_INLINE void kf_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
#endif
