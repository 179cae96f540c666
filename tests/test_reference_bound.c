/* test_reference_bound.c - the reference's error bounds and kf_compare:
 * kernels emulated on the CPU the way the GPU computes (f32 arithmetic, f32
 * sums in the kernels' orders, f16/bf16 rounding per node) stay within the
 * bound, including the two cases a fixed tolerance failed on the H200
 * (x / sum(x, axis 0) of 1024 x 4096 f32; a bf16 matmul's rounding flip
 * used further in f32); planted wrong answers (one element, a missing term,
 * an off-by-one row, a swapped axis) are caught. */
#include "ir/dtype.h"
#include "ref_util.h"

/* ---- helpers ------------------------------------------------------------------------ */

static double *BOUNDS[REF_MAX_IO];

static void bound_teardown(void) {
  for (int j = 0; j < REF_MAX_IO; j++) free(BOUNDS[j]), BOUNDS[j] = NULL;
  ref_teardown();
}

static TCase *bound_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, ref_setup, bound_teardown);
  tcase_set_timeout(tc, 120);
  return tc;
}

/* Runs the bounded reference on INS (already bound): OUTS and BOUNDS. */
static void run_bounded(void) {
  int n_out = kf_graph_num_outputs(G);
  for (int j = 0; j < n_out; j++) {
    free(OUTS[j].data);
    OUTS[j] = ref_host_like(kf_graph_output(G, j));
    free(BOUNDS[j]);
    BOUNDS[j] = calloc((size_t)ref_numel(&OUTS[j]) + 1, sizeof(double));
  }
  kf_status st =
      kf_graph_run_reference_bounded(G, INS, kf_graph_num_inputs(G), OUTS, BOUNDS, n_out);
  ck_assert_msg(st == KF_OK, "bounded run: %s", kf_graph_errmsg(G));
}

/* splitmix64 uniform in [lo, hi). */
static uint64_t SEED = 1;
static double uniform(double lo, double hi) {
  uint64_t z = (SEED += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) * 0x1.0p-53;
}

/* Input i: uniform values in [lo, hi), rounded to its dtype. */
static void bind_random(int i, double lo, double hi) {
  free(INS[i].data);
  INS[i] = ref_host_like(kf_graph_input(G, i));
  for (int64_t k = 0; k < ref_numel(&INS[i]); k++) ref_set(&INS[i], k, uniform(lo, hi));
}

/* A tensor like output j, from doubles (rounded to its dtype). */
static kf_host_tensor like_out(int j, const double *v) {
  kf_host_tensor t = ref_host_like(kf_graph_output(G, j));
  for (int64_t k = 0; k < ref_numel(&t); k++) ref_set(&t, k, v[k]);
  return t;
}

static kf_compare_result compare_out(int j, const double *got_vals) {
  kf_host_tensor got = like_out(j, got_vals);
  kf_compare_result r;
  ck_assert_int_eq(kf_compare(&got, &OUTS[j], BOUNDS[j], 0, 0, &r), KF_OK);
  free(got.data);
  return r;
}

/* The fixed f32 tolerance that reported these kernels as wrong (tools/
 * cli_util.c before the bound): |got - want| <= 1e-5 + 1e-4 |want|. */
static int64_t fixed_f32_failures(const double *got, int j) {
  int64_t bad = 0;
  for (int64_t k = 0; k < ref_numel(&OUTS[j]); k++) {
    double w = ref_get(&OUTS[j], k), g = (double)(float)got[k];
    bad += fabs(g - w) > 1e-5 + 1e-4 * fabs(w);
  }
  return bad;
}

#define ASSERT_PASSES(r)                                                                        \
  ck_assert_msg((r).ok, "%lld mismatches; worst %lld: got %.9g want %.9g bound %.3g",           \
                (long long)(r).mismatches, (long long)(r).worst, (r).worst_got, (r).worst_want, \
                (r).worst_bound)

/* An f32 sum of n values at stride s the way a reduction kernel does it:
 * ty thread rows each add every ty-th term serially (f32), then the slices
 * are folded in order (reduce_cols.cu's combine). */
static float kernel_sum(const float *x, int64_t n, int64_t s, int ty) {
  float slice[64] = {0}, acc = 0;
  for (int64_t k = 0; k < n; k++) slice[k % ty] += x[k * s];
  for (int t = 0; t < ty; t++) acc += slice[t];
  return acc;
}

static const float *f32_data(int i) {
  return (const float *)INS[i].data;
}

/* ---- unit cases ---------------------------------------------------------------------- */

/* Exact ops on exact inputs cannot differ: bound 0, and any difference is
 * a mismatch. */
START_TEST(exact_ops_have_zero_bound) {
  kf_value x = IN("x", KF_F32, 64), y = IN("y", KF_F32, 64);
  ref_out(kf_add(G, x, y));
  ref_out(kf_neg(G, kf_cast(G, x, KF_BF16)));
  kf_value i = IN("i", KF_I32, 64);
  ref_out(kf_add(G, i, i));
  bind_random(0, -1, 1), bind_random(1, -1, 1), bind_random(2, -50, 50);
  run_bounded();
  for (int64_t k = 0; k < 64; k++) ck_assert(BOUNDS[0][k] == 0 && BOUNDS[2][k] == 0);
  /* a cast of an f32 to bf16 rounds the same exact value on both sides */
  for (int64_t k = 0; k < 64; k++) ck_assert(BOUNDS[1][k] == 0);
  double got[64];
  for (int64_t k = 0; k < 64; k++) got[k] = ref_get(&OUTS[2], k);
  got[5] += 1;
  kf_compare_result r = compare_out(2, got);
  ck_assert(!r.ok && r.mismatches == 1 && r.worst == 5);
  for (int64_t k = 0; k < 64; k++) got[k] = ref_get(&OUTS[0], k);
  got[7] = nextafterf((float)got[7], INFINITY);
  r = compare_out(0, got);
  ck_assert(!r.ok && r.worst == 7);
  /* the relative error is reported too (one f32 step: about 2^-23) */
  double want7 = ref_get(&OUTS[0], 7);
  ck_assert(want7 == 0 || (r.max_rel_err > 0 && r.max_rel_err < 1e-6));
}
END_TEST

/* A sum whose terms cancel: the f32 kernel's error is relative to sum |x|,
 * far above 1e-4 |sum|, and within the bound in every order. */
START_TEST(cancelling_sum_within_bound) {
  enum { R = 64, N = 4096 };
  kf_value x = IN("x", KF_F32, R, N);
  ref_out(kf_sum(G, x, 1, (int[]){1}, false));
  bind_random(0, -1000, 1000);
  float *xv = INS[0].data;
  for (int r = 0; r < R; r++) { /* make each row cancel to about 1e-3 of its terms */
    double s = 0;
    for (int k = 0; k < N - 1; k++) s += xv[r * N + k];
    xv[r * N + N - 1] = (float)(-s + 0.5);
  }
  run_bounded();
  double got[R];
  int64_t orders_beyond_fixed = 0;
  for (int ty = 1; ty <= 32; ty *= 2) {
    for (int r = 0; r < R; r++) got[r] = kernel_sum(xv + r * N, N, 1, ty);
    kf_compare_result res = compare_out(0, got);
    ASSERT_PASSES(res);
    orders_beyond_fixed += fixed_f32_failures(got, 0) > 0;
  }
  ck_assert_msg(orders_beyond_fixed > 0, "the case does not exercise cancellation");
  /* a term missing from one row is caught */
  for (int r = 0; r < R; r++) got[r] = kernel_sum(xv + r * N, N, 1, 8);
  int big = 0; /* the largest term of row 3 */
  for (int k = 0; k < N; k++)
    if (fabsf(xv[3 * N + k]) > fabsf(xv[3 * N + big])) big = k;
  got[3] -= xv[3 * N + big];
  kf_compare_result res = compare_out(0, got);
  ck_assert(!res.ok && res.worst == 3);
}
END_TEST

/* f32 transcendentals emulated with the host's f32 libm (within an ulp, the
 * device's are within 2): exp(x) * x - log(x + 2) and friends. */
START_TEST(f32_chain_within_bound) {
  enum { N = 4096 };
  kf_value x = IN("x", KF_F32, N);
  kf_value two = kf_scalar(G, 2.0, KF_F32);
  kf_value y = kf_sub(G, kf_mul(G, kf_exp(G, x), x), kf_log(G, kf_add(G, x, two)));
  ref_out(kf_tanh(G, kf_div(G, y, kf_sqrt(G, kf_add(G, kf_mul(G, x, x), two)))));
  bind_random(0, -1, 1);
  run_bounded();
  double got[N];
  const float *xv = f32_data(0);
  for (int k = 0; k < N; k++) {
    float a = xv[k], t = expf(a) * a - logf(a + 2.0f);
    got[k] = tanhf(t / sqrtf(a * a + 2.0f));
  }
  kf_compare_result r = compare_out(0, got);
  ASSERT_PASSES(r);
  got[100] *= 1 + 1e-5; /* 170 ulps off: a wrong answer */
  r = compare_out(0, got);
  ck_assert(!r.ok && r.worst == 100);
}
END_TEST

/* bf16 nodes: the kernel computes in f32 and rounds each node to bf16 (a
 * double rounding, f32 then bf16, where the reference rounds once). */
START_TEST(bf16_chain_within_bound) {
  enum { N = 8192 };
  kf_value x = IN("x", KF_BF16, N), y = IN("y", KF_BF16, N);
  ref_out(kf_mul(G, kf_add(G, kf_exp(G, x), y), kf_sigmoid(G, y)));
  bind_random(0, -3, 3), bind_random(1, -3, 3);
  run_bounded();
  double got[N];
  for (int k = 0; k < N; k++) {
    float a = (float)ref_get(&INS[0], k), b = (float)ref_get(&INS[1], k);
    float e = kf_bf16_to_float(kf_float_to_bf16(expf(a)));
    float s = kf_bf16_to_float(kf_float_to_bf16(e + b));
    float g = kf_bf16_to_float(kf_float_to_bf16(1.0f / (1.0f + expf(-b))));
    got[k] = kf_bf16_to_float(kf_float_to_bf16(s * g));
  }
  kf_compare_result r = compare_out(0, got);
  ASSERT_PASSES(r);
  /* two bf16 ulps off one element is caught where the bound is an ulp */
  int64_t k = 0;
  while (k < N && !(BOUNDS[0][k] > 0 && BOUNDS[0][k] <= 0x1p-7 * fabs(got[k]))) k++;
  ck_assert(k < N);
  got[k] += 4 * BOUNDS[0][k];
  r = compare_out(0, got);
  ck_assert(!r.ok && r.worst == k);
}
END_TEST

/* A comparison near a tie may flip, and where() then picks the other
 * operand: the bound covers it; away from ties booleans are exact. */
START_TEST(flipped_condition) {
  kf_value x = IN("x", KF_F32, 3);
  kf_value c = kf_gt(G, kf_exp(G, x), kf_scalar(G, 1.0, KF_F32));
  ref_out(c);
  ref_out(kf_where(G, c, kf_scalar(G, 10.0, KF_F32), kf_scalar(G, -10.0, KF_F32)));
  RUN(NULL, (double[]){0x1p-26, 1.0, -1.0}); /* exp(2^-26) rounds to 1 in f32 */
  for (int j = 0; j < 2; j++) free(BOUNDS[j]);
  run_bounded();
  ck_assert(BOUNDS[0][0] == 1 && BOUNDS[0][1] == 0 && BOUNDS[0][2] == 0);
  ck_assert(BOUNDS[1][0] >= 20 && BOUNDS[1][1] == 0);
  kf_compare_result r = compare_out(0, (double[]){1, 1, 0});
  ck_assert(r.ok);
  r = compare_out(0, (double[]){0, 0, 0}); /* element 1 is certain */
  ck_assert(!r.ok && r.mismatches == 1 && r.worst == 1);
}
END_TEST

/* Special values: NaN where the reference has NaN, infinities equal; a
 * division by a value that may be zero is unbounded. */
START_TEST(special_values_and_unbounded) {
  kf_value x = IN("x", KF_F32, 3), y = IN("y", KF_F32, 3);
  kf_value s = kf_sub(G, kf_exp(G, y), kf_scalar(G, 1.0, KF_F32)); /* exp(0) - 1: 0 +- ulps */
  ref_out(kf_log(G, x));
  ref_out(kf_div(G, x, s));
  RUN(NULL, (double[]){-1, 0, 2}, (double[]){1e-12, 1, 1});
  for (int j = 0; j < 2; j++) free(BOUNDS[j]);
  run_bounded();
  ck_assert(isnan(ref_get(&OUTS[0], 0)) && BOUNDS[0][0] == 0);
  ck_assert(isinf(ref_get(&OUTS[0], 1)) && BOUNDS[0][1] == 0);
  kf_compare_result r = compare_out(0, (double[]){NAN, -INFINITY, log(2.0)});
  ck_assert(r.ok);
  r = compare_out(0, (double[]){0, -INFINITY, log(2.0)});
  ck_assert(!r.ok && r.special_mismatches == 1 && r.worst == 0);
  r = compare_out(0, (double[]){NAN, -1e30, log(2.0)});
  ck_assert(!r.ok && r.special_mismatches == 1 && r.worst == 1);
  ck_assert(isinf(BOUNDS[1][0]) && isfinite(BOUNDS[1][1]));
  r = compare_out(1, (double[]){12345, ref_get(&OUTS[1], 1), ref_get(&OUTS[1], 2)});
  ck_assert(r.ok && r.unbounded == 1);
}
END_TEST

START_TEST(argument_errors) {
  kf_value x = IN("x", KF_F32, 4);
  ref_out(kf_exp(G, x));
  bind_random(0, -1, 1);
  OUTS[0] = ref_host_like(kf_graph_output(G, 0));
  ck_assert_int_eq(kf_graph_run_reference_bounded(G, INS, 1, OUTS, NULL, 1), KF_ERR_INVALID_ARG);
  ck_assert(strstr(kf_graph_errmsg(G), "bounds is NULL"));
  double *none[1] = {NULL};
  ck_assert_int_eq(kf_graph_run_reference_bounded(G, INS, 1, OUTS, none, 1), KF_ERR_INVALID_ARG);
  ck_assert(strstr(kf_graph_errmsg(G), "bounds[0] is NULL"));
  run_bounded(); /* not sticky */
  kf_compare_result r;
  ck_assert_int_eq(kf_compare(&OUTS[0], &INS[0], NULL, 0, 0, NULL), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_compare(&OUTS[0], &OUTS[0], NULL, -1, 0, &r), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_compare(&OUTS[0], &OUTS[0], NULL, 0, NAN, &r), KF_ERR_INVALID_ARG);
  kf_host_tensor other = OUTS[0];
  other.shape[0] = 3;
  ck_assert_int_eq(kf_compare(&OUTS[0], &other, NULL, 0, 0, &r), KF_ERR_INVALID_ARG);
  other = OUTS[0], other.dtype = KF_F64;
  ck_assert_int_eq(kf_compare(&OUTS[0], &other, NULL, 0, 0, &r), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_compare(&OUTS[0], &OUTS[0], BOUNDS[0], 0, 0, &r), KF_OK);
  ck_assert(r.ok && r.elements == 4 && r.max_abs_err == 0);
}
END_TEST

/* Every float op, emulated as the kernels compute it (templates/common.cuh:
 * f32 arithmetic and the f32 libm, within the device's documented ulps;
 * f16/bf16 operands widened, results rounded per node), in each float
 * dtype, alone and after exp: within the bound. */
typedef kf_value unary_builder(kf_graph *, kf_value);
typedef kf_value binary_builder(kf_graph *, kf_value, kf_value);

static float dev_unary(int op, float x) {
  switch (op) {
    case 0:
      return -x;
    case 1:
      return fabsf(x);
    case 2:
      return expf(x);
    case 3:
      return logf(x);
    case 4:
      return sqrtf(x);
    case 5:
      return 1.0f / sqrtf(x);
    case 6:
      return 1.0f / x;
    case 7:
      return sinf(x);
    case 8:
      return cosf(x);
    case 9:
      return tanhf(x);
    case 10:
      return 1.0f / (1.0f + expf(-x));
    case 11:
      return x < 0.0f ? 0.0f : x;
    case 12:
      return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
    case 13:
      return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
    case 14:
      return x / (1.0f + expf(-x));
    case 15:
      return erff(x);
    case 16:
      return floorf(x);
    case 17:
      return ceilf(x);
    default:
      return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x;
  }
}

static unary_builder *const UNARY_OPS[] = {
    kf_neg,  kf_abs, kf_exp,   kf_log,     kf_sqrt, kf_rsqrt, kf_reciprocal,
    kf_sin,  kf_cos, kf_tanh,  kf_sigmoid, kf_relu, kf_gelu,  kf_gelu_tanh,
    kf_silu, kf_erf, kf_floor, kf_ceil,    kf_sign};
enum { N_UNARY = sizeof UNARY_OPS / sizeof UNARY_OPS[0] };

static float dev_binary(int op, float a, float b) {
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    case 3:
      return a / b;
    case 4:
      return powf(a, b);
    case 5:
      return a > b ? a : b;
    default:
      return a < b ? a : b;
  }
}

static binary_builder *const BINARY_OPS[] = {kf_add, kf_sub,     kf_mul,    kf_div,
                                             kf_pow, kf_maximum, kf_minimum};
enum { N_BINARY = sizeof BINARY_OPS / sizeof BINARY_OPS[0] };

static float round_to(float v, kf_dtype dt) {
  return dt == KF_F32 ? v : (float)ir_round_to_dtype(v, dt);
}

START_TEST(every_op_emulated) {
  static const kf_dtype dts[] = {KF_F32, KF_BF16, KF_F16};
  enum { N = 2048 };
  for (int d = 0; d < 3; d++) {
    kf_dtype dt = dts[d];
    for (int op = 0; op < N_UNARY + N_BINARY; op++) {
      ref_teardown(), ref_setup();
      bool un = op < N_UNARY;
      kf_value x = IN("x", dt, N), y = IN("y", dt, N);
      kf_value ex = kf_exp(G, x); /* positive, so that log/sqrt/pow are defined */
      kf_value r0 = un ? UNARY_OPS[op](G, x) : BINARY_OPS[op - N_UNARY](G, x, y);
      kf_value r1 = un ? UNARY_OPS[op](G, ex) : BINARY_OPS[op - N_UNARY](G, ex, y);
      bool pos = un && (op == 3 || op == 4 || op == 5); /* defined for x > 0 only */
      if (pos) r0 = UNARY_OPS[op](G, kf_add(G, kf_abs(G, x), kf_scalar(G, 0.25, dt)));
      ref_out(r0);
      ref_out(r1);
      bind_random(0, -3, 3), bind_random(1, -3, 3);
      run_bounded();
      double *g0 = malloc(N * sizeof *g0), *g1 = malloc(N * sizeof *g1);
      for (int k = 0; k < N; k++) {
        float a = (float)ref_get(&INS[0], k), b = (float)ref_get(&INS[1], k);
        float e = round_to(expf(a), dt);
        float v0 = un ? dev_unary(op, a) : dev_binary(op - N_UNARY, a, b);
        float v1 = un ? dev_unary(op, e) : dev_binary(op - N_UNARY, e, b);
        if (pos) v0 = dev_unary(op, round_to(fabsf(a) + 0.25f, dt));
        g0[k] = round_to(v0, dt), g1[k] = round_to(v1, dt);
      }
      for (int j = 0; j < 2; j++) {
        kf_compare_result r = compare_out(j, j ? g1 : g0);
        ck_assert_msg(r.ok,
                      "%s op %d output %d: %lld bad; worst %lld: got %.9g want %.9g bound %.3g",
                      kf_dtype_name(dt), op, j, (long long)r.mismatches, (long long)r.worst,
                      r.worst_got, r.worst_want, r.worst_bound);
      }
      free(g0), free(g1);
      for (int j = 0; j < 2; j++) free(BOUNDS[j]), BOUNDS[j] = NULL;
    }
  }
}
END_TEST

/* mean, max and min in f32 and bf16, emulated (f32 accumulation, one
 * rounding of the result). */
START_TEST(reductions_emulated) {
  enum { R = 48, C = 3000 };
  static const kf_dtype dts[] = {KF_F32, KF_BF16};
  for (int d = 0; d < 2; d++) {
    ref_teardown(), ref_setup();
    kf_dtype dt = dts[d];
    kf_value x = IN("x", dt, R, C);
    ref_out(kf_mean(G, x, 1, (int[]){1}, false));
    ref_out(kf_max(G, x, 1, (int[]){1}, false));
    ref_out(kf_min(G, kf_mul(G, x, x), 1, (int[]){0}, false));
    bind_random(0, -2, 2);
    run_bounded();
    double mean[R], mx[R], mn[C];
    for (int r = 0; r < R; r++) {
      float acc = 0, m = -INFINITY;
      for (int c = 0; c < C; c++) {
        float v = (float)ref_get(&INS[0], r * C + c);
        acc += v, m = v > m ? v : m;
      }
      mean[r] = round_to(acc / (float)C, dt), mx[r] = m;
    }
    for (int c = 0; c < C; c++) {
      float m = INFINITY;
      for (int r = 0; r < R; r++) {
        float v = (float)ref_get(&INS[0], r * C + c), sq = round_to(v * v, dt);
        m = sq < m ? sq : m;
      }
      mn[c] = m;
    }
    kf_compare_result r0 = compare_out(0, mean), r1 = compare_out(1, mx), r2 = compare_out(2, mn);
    ASSERT_PASSES(r0);
    ASSERT_PASSES(r1);
    ASSERT_PASSES(r2);
    ck_assert(BOUNDS[1][0] == 0 && BOUNDS[2][0] == 0); /* exact inputs: max and min exact */
    mx[5] -= fabs(mx[5]) * 0.02 + 0.01;                /* a wrong maximum */
    r1 = compare_out(1, mx);
    ck_assert(!r1.ok && r1.worst == 5);
    for (int j = 0; j < 3; j++) free(BOUNDS[j]), BOUNDS[j] = NULL;
  }
}
END_TEST

/* ---- the two H200 findings -------------------------------------------------------------- */

enum { ROWS = 1024, COLS = 4096 };

/* x / sum(x, axis 0) of 1024 x 4096 f32, the kernel emulated: column sums in
 * f32 over 8 thread rows folded in order, then one f32 division each. The
 * fixed tolerance failed it; the bound passes it and catches wrong ones. */
static void column_ratio(float *s, const float *x, int ty, int skip_row) {
  for (int c = 0; c < COLS; c++) {
    s[c] = kernel_sum(x + c, ROWS, COLS, ty);
    if (skip_row >= 0) s[c] -= x[(int64_t)skip_row * COLS + c];
  }
}

START_TEST(x_over_column_sum) {
  kf_value x = IN("x", KF_F32, ROWS, COLS);
  ref_out(kf_div(G, x, kf_sum(G, x, 1, (int[]){0}, true)));
  bind_random(0, -1, 1);
  run_bounded();
  const float *xv = f32_data(0);
  float *s = malloc(COLS * sizeof *s);
  double *got = malloc((size_t)ROWS * COLS * sizeof *got);
  column_ratio(s, xv, 8, -1);
  for (int64_t k = 0; k < (int64_t)ROWS * COLS; k++) got[k] = xv[k] / s[k % COLS];
  kf_compare_result r = compare_out(0, got);
  ASSERT_PASSES(r);
  ck_assert_msg(fixed_f32_failures(got, 0) > 0, "the fixed tolerance would pass this case");
  ck_assert(r.unbounded < (int64_t)ROWS * COLS / 100); /* columns whose sum may be 0 */
  /* a missing term (the kernel's loop starting at row 1): caught */
  column_ratio(s, xv, 8, 0);
  for (int64_t k = 0; k < (int64_t)ROWS * COLS; k++) got[k] = xv[k] / s[k % COLS];
  r = compare_out(0, got);
  ck_assert(!r.ok && r.mismatches > ROWS * COLS / 2);
  /* an off-by-one row (row i reads row i + 1) */
  column_ratio(s, xv, 8, -1);
  for (int64_t k = 0; k < (int64_t)ROWS * COLS; k++)
    got[k] = xv[(k + COLS) % ((int64_t)ROWS * COLS)] / s[k % COLS];
  r = compare_out(0, got);
  ck_assert(!r.ok && r.mismatches > ROWS * COLS / 2);
  free(s);
  free(got);
}
END_TEST

/* A swapped axis: row sums where column sums were asked (square). */
START_TEST(swapped_axis) {
  enum { N = 256 };
  kf_value x = IN("x", KF_F32, N, N);
  ref_out(kf_sum(G, x, 1, (int[]){0}, false));
  bind_random(0, 0, 1);
  run_bounded();
  double got[N];
  for (int c = 0; c < N; c++) got[c] = kernel_sum(f32_data(0) + c, N, N, 4);
  kf_compare_result r = compare_out(0, got);
  ASSERT_PASSES(r);
  for (int c = 0; c < N; c++) got[c] = kernel_sum(f32_data(0) + (int64_t)c * N, N, 1, 4);
  r = compare_out(0, got);
  ck_assert(!r.ok && r.mismatches > N / 2);
}
END_TEST

/* A bf16 matmul (f32 accumulation, rounded to bf16) cast to f32 and used
 * further: where the f32 sum lands across a bf16 rounding boundary from the
 * f64 one, the result is one bf16 ulp off (0.03 at magnitude 8), far outside
 * an f32 tolerance and within the bound; a wrong product is still caught. */
START_TEST(bf16_matmul_flip) {
  enum { M = 128, K = 512, N = 128 };
  kf_value a = IN("a", KF_BF16, M, K), b = IN("b", KF_BF16, K, N);
  kf_value c = kf_cast(G, kf_matmul(G, a, b), KF_F32);
  ref_out(kf_add(G, kf_mul(G, c, kf_scalar(G, 3.0, KF_F32)), kf_scalar(G, 1.0, KF_F32)));
  bind_random(0, -1, 1), bind_random(1, -1, 1);
  run_bounded();
  double *got = malloc(M * N * sizeof *got);
  int flips = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float acc = 0;
      double exact = 0;
      for (int k = 0; k < K; k++) {
        float x = (float)ref_get(&INS[0], i * K + k), y = (float)ref_get(&INS[1], k * N + j);
        acc += x * y; /* exact product of two bf16 in f32 */
        exact += (double)x * y;
      }
      float r16 = kf_bf16_to_float(kf_float_to_bf16(acc));
      flips += r16 != (float)ir_round_to_dtype(exact, KF_BF16);
      got[i * N + j] = r16 * 3.0f + 1.0f;
    }
  ck_assert_msg(flips > 0, "no bf16 rounding flip: the case does not test it");
  kf_compare_result r = compare_out(0, got);
  ASSERT_PASSES(r);
  ck_assert(fixed_f32_failures(got, 0) >= flips / 2);
  got[77] += 3 * 0.25; /* a product term off by 1/4, times 3 */
  r = compare_out(0, got);
  ck_assert(!r.ok && r.worst == 77);
  free(got);
}
END_TEST

/* Bounds are computed in parts on several threads like the values: the same
 * bits on one thread and on several. */
START_TEST(bounds_independent_of_threads) {
  kf_value x = IN("x", KF_F32, 300, 500);
  ref_out(kf_div(G, kf_exp(G, x), kf_sum(G, kf_exp(G, x), 1, (int[]){1}, true)));
  ref_out(kf_mean(G, x, 1, (int[]){0}, false));
  bind_random(0, -2, 2);
  setenv("KFUSE_REF_GRAIN", "1000", 1);
  setenv("KFUSE_REF_THREADS", "1", 1);
  run_bounded();
  double *one[2] = {BOUNDS[0], BOUNDS[1]};
  BOUNDS[0] = BOUNDS[1] = NULL;
  setenv("KFUSE_REF_THREADS", "5", 1);
  run_bounded();
  unsetenv("KFUSE_REF_THREADS");
  unsetenv("KFUSE_REF_GRAIN");
  ck_assert(memcmp(one[0], BOUNDS[0], 300 * 500 * sizeof(double)) == 0);
  ck_assert(memcmp(one[1], BOUNDS[1], 500 * sizeof(double)) == 0);
  free(one[0]);
  free(one[1]);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("reference_bound");
  TCase *tc = bound_tcase("unit");
  tcase_add_test(tc, exact_ops_have_zero_bound);
  tcase_add_test(tc, cancelling_sum_within_bound);
  tcase_add_test(tc, f32_chain_within_bound);
  tcase_add_test(tc, bf16_chain_within_bound);
  tcase_add_test(tc, flipped_condition);
  tcase_add_test(tc, special_values_and_unbounded);
  tcase_add_test(tc, argument_errors);
  tcase_add_test(tc, bounds_independent_of_threads);
  tcase_add_test(tc, every_op_emulated);
  tcase_add_test(tc, reductions_emulated);
  suite_add_tcase(s, tc);
  tc = bound_tcase("findings");
  tcase_add_test(tc, x_over_column_sum);
  tcase_add_test(tc, swapped_axis);
  tcase_add_test(tc, bf16_matmul_flip);
  suite_add_tcase(s, tc);
  return s;
}
