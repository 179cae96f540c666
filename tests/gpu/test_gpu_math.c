/* test_gpu_math.c - each op's device function against the f64 function, per
 * math policy and dtype: the largest error in ulps over many inputs must be
 * within the bound docs/codegen.md ("Math policy") documents, the table
 * below; and under every policy a fused chain of every op equals its unfused
 * plan bit for bit. Prints each measured maximum (the figures of the table).
 *
 * Error metric: |got - ref| in ulps of max(|ref|, floor), with ref the f64
 * function of the (dtype-rounded) input, ulps of the output dtype at that
 * magnitude, and floor = abs_floor + x_floor * |x| (for ops whose result
 * cancels: sin, cos and log near their zeros, gelu's negative tail).
 * Results below 2^-126 (f32 subnormals, flushed by the SFU reciprocal) are
 * held to an absolute error of 2^-126 instead. The bounds are worst cases
 * derived from the documented errors of the functions used (a relative
 * error r is at most r * 2^24 ulps); the measured maxima are smaller. */
#include <math.h>

#include "gpu_util.h"

typedef struct math_case {
  const char *op;
  double lo, hi;   /* x's domain (y's: ylo..yhi for binary ops) */
  double ylo, yhi; /* 0, 0: unary */
  bool signed_mag; /* x = +-[lo, hi] (log-uniform magnitudes) */
  double abs_floor, x_floor;
  double f32[3];    /* f32 bound in ulps: strict, default, fast */
  double half_fast; /* f16 and bf16 bound under fast (1 otherwise) */
} math_case;

#define PI_F 3.14159265358979
static const math_case cases[] = {
    {"exp", -10, 10, 0, 0, false, 0, 0, {2, 2, 14}, 1},
    {"log", 0.125, 1e4, 0, 0, false, 1, 0, {1, 1, 4}, 1},
    {"sqrt", 0.0078125, 1e4, 0, 0, false, 0, 0, {0.5, 0.5, 4}, 1},
    {"rsqrt", 0.0078125, 1e4, 0, 0, false, 0, 0, {2, 2, 2}, 1},
    {"reciprocal", 0.0078125, 1e4, 0, 0, true, 0, 0, {0.5, 1, 1}, 1},
    {"sin", -PI_F, PI_F, 0, 0, false, 1, 0, {2, 2, 4}, 1},
    {"cos", -PI_F, PI_F, 0, 0, false, 1, 0, {2, 2, 4}, 1},
    {"tanh", -10, 10, 0, 0, false, 0, 0, {2, 2, 9000}, 2},
    {"sigmoid", -20, 20, 0, 0, false, 0, 0, {6, 7, 53}, 1},
    {"silu", -20, 20, 0, 0, false, 0, 0, {7, 8, 54}, 1},
    {"gelu", -5, 5, 0, 0, false, 0, 0.125, {32, 32, 32}, 1},
    {"gelu_tanh", -5, 5, 0, 0, false, 0, 0.125, {32, 32, 34000}, 5},
    {"erf", -4, 4, 0, 0, false, 0, 0, {2, 2, 2}, 1},
    {"div", -100, 100, 0.01, 100, false, 0, 0, {0.5, 0.5, 3}, 1},
    {"pow", 0.25, 4, -2, 2, false, 0, 0, {8, 8, 24}, 1},
};
static const kf_math policies[] = {KF_MATH_STRICT, KF_MATH_DEFAULT, KF_MATH_FAST};
static const char *const pnames[] = {"strict", "default", "fast"};

static double ref_of(const char *op, double x, double y) {
  if (!strcmp(op, "exp")) return exp(x);
  if (!strcmp(op, "log")) return log(x);
  if (!strcmp(op, "sqrt")) return sqrt(x);
  if (!strcmp(op, "rsqrt")) return 1.0 / sqrt(x);
  if (!strcmp(op, "reciprocal")) return 1.0 / x;
  if (!strcmp(op, "sin")) return sin(x);
  if (!strcmp(op, "cos")) return cos(x);
  if (!strcmp(op, "tanh")) return tanh(x);
  if (!strcmp(op, "sigmoid")) return 1.0 / (1.0 + exp(-x));
  if (!strcmp(op, "silu")) return x / (1.0 + exp(-x));
  if (!strcmp(op, "gelu")) return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
  if (!strcmp(op, "gelu_tanh"))
    return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
  if (!strcmp(op, "erf")) return erf(x);
  if (!strcmp(op, "div")) return x / y;
  return pow(x, y);
}

/* The ulp of the dtype at magnitude v (subnormal spacing below the normals). */
static double ulp_of(kf_dtype dt, double v) {
  int mant = dt == KF_F32 ? 23 : dt == KF_F16 ? 10 : 7;
  int emin = dt == KF_F16 ? -14 : -126;
  int e = v > 0 ? ilogb(v) : emin;
  if (e < emin) e = emin;
  return ldexp(1.0, e - mant);
}

static double sample(uint64_t *s, double lo, double hi, bool signed_mag) {
  if (signed_mag) {
    double m = exp(log(lo) + rng_unit(s) * (log(hi) - log(lo)));
    return (rng_next(s) & 1) ? -m : m;
  }
  if (rng_next(s) & 1) return lo + rng_unit(s) * (hi - lo);
  /* half of the inputs log-uniform in magnitude (down to 2^-20 of the range) */
  double span = fmax(fabs(lo), fabs(hi));
  double m = span * exp2(-20.0 * rng_unit(s));
  double x = (rng_next(s) & 1) && lo < 0 ? -m : m;
  return x < lo ? lo : x > hi ? hi : x;
}

static void store(void *buf, kf_dtype dt, int64_t i, double v) {
  if (dt == KF_F32)
    ((float *)buf)[i] = (float)v;
  else if (dt == KF_F16)
    ((uint16_t *)buf)[i] = kf_float_to_f16((float)v);
  else
    ((uint16_t *)buf)[i] = kf_float_to_bf16((float)v);
}

static const char *dt_name(kf_dtype dt) {
  return dt == KF_F32 ? "f32" : dt == KF_F16 ? "f16" : "bf16";
}

/* y = op(x[, z]) on n elements of dt under policy p: the largest error. */
static double measure(const math_case *c, kf_dtype dt, int p, int64_t n) {
  bool binary = c->ylo != 0 || c->yhi != 0;
  char zline[96] = "", yaml[512];
  if (binary)
    snprintf(zline, sizeof zline, "  z: {dtype: %s, shape: [%lld]}\n", dt_name(dt), (long long)n);
  snprintf(yaml, sizeof yaml,
           "kfuse: 1\ninputs:\n  x: {dtype: %s, shape: [%lld]}\n%s"
           "nodes: [{name: y, op: %s, args: [x%s]}]\noutputs: [y]\n",
           dt_name(dt), (long long)n, zline, c->op, binary ? ", z" : "");
  kf_graph *g = NULL;
  ck_assert_msg(kf_graph_load_yaml_string(G_ctx, yaml, strlen(yaml), NULL, &g) == KF_OK, "%s",
                kf_ctx_errmsg(G_ctx));
  kf_options o;
  kf_options_init(&o);
  o.math = policies[p];
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &o, &plan) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
  size_t es = kf_dtype_size(dt), bytes = (size_t)n * es;
  void *hx = malloc(bytes), *hz = malloc(bytes), *hy = malloc(bytes);
  ck_assert(hx && hz && hy);
  uint64_t s = 0x9e3779b97f4a7c15ull ^ (uint64_t)(c - cases) * 7919u;
  for (int64_t i = 0; i < n; i++) {
    store(hx, dt, i, sample(&s, c->lo, c->hi, c->signed_mag));
    if (binary) store(hz, dt, i, sample(&s, c->ylo, c->yhi, false));
  }
  CUdeviceptr dx = dev_alloc(bytes), dz = dev_alloc(bytes), dy = dev_alloc(bytes);
  G_drv->MemcpyHtoD(dx, hx, bytes);
  G_drv->MemcpyHtoD(dz, hz, bytes);
  G_drv->MemsetD8(dy, 0xff, bytes); /* NaN: an element never written fails */
  kf_tensor in[2] = {{(void *)(uintptr_t)dx, dt, 1, {n}}, {(void *)(uintptr_t)dz, dt, 1, {n}}};
  kf_tensor out[1] = {{(void *)(uintptr_t)dy, dt, 1, {n}}};
  ck_assert_msg(kf_plan_run(plan, in, binary ? 2 : 1, out, 1, NULL) == KF_OK, "%s",
                kf_plan_errmsg(plan));
  dev_sync();
  G_drv->MemcpyDtoH(hy, dy, bytes);
  double worst = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < n; i++) {
    double x = load_elem(hx, dt, i), z = binary ? load_elem(hz, dt, i) : 0;
    double ref = ref_of(c->op, x, z), got = load_elem(hy, dt, i);
    ck_assert_msg(got == got, "%s %s %s: NaN at %lld (x=%a)", c->op, dt_name(dt), pnames[p],
                  (long long)i, x);
    double err = fabs(got - ref);
    double e;
    if (dt == KF_F32 && fabs(ref) < 0x1p-126 && c->abs_floor == 0 && c->x_floor == 0)
      e = err <= 0x1p-126 ? 0 : INFINITY; /* subnormal results: absolute */
    else
      e = err / ulp_of(dt, fmax(fabs(ref), c->abs_floor + c->x_floor * fabs(x)));
    if (e > worst) worst = e, at = i;
  }
  if (at >= 0 && worst > 0)
    printf("  %-10s %-4s %-7s max %.3g ulp at x=%a\n", c->op, dt_name(dt), pnames[p], worst,
           load_elem(hx, dt, at));
  dev_free(dx);
  dev_free(dz);
  dev_free(dy);
  free(hx);
  free(hz);
  free(hy);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  return worst;
}

START_TEST(ulp_bounds) {
  static const kf_dtype dts[] = {KF_F32, KF_F16, KF_BF16};
  int64_t n = gpu_small() ? 1 << 14 : 1 << 20;
  int over = 0;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    for (int d = 0; d < 3; d++)
      for (int p = 0; p < 3; p++) {
        double bound = dts[d] == KF_F32 ? cases[k].f32[p] : p == 2 ? cases[k].half_fast : 1.0;
        double got = measure(&cases[k], dts[d], p, n);
        if (got > bound) {
          printf("OVER: %s %s %s: %.3g ulp > documented %.3g\n", cases[k].op, dt_name(dts[d]),
                 pnames[p], got, bound);
          over++;
        }
      }
  ck_assert_msg(over == 0, "%d op/dtype/policy errors over their documented bound", over);
}
END_TEST

/* Every op in one fused kernel against the same graph unfused, bit for bit,
 * under each policy (f32 and bf16). */
START_TEST(fused_equals_unfused) {
  static const char *const body =
      "nodes:\n"
      "  - {name: a, op: mul, args: [x, z]}\n  - {name: b, op: add, args: [a, x]}\n"
      "  - {name: c, op: gelu, args: [b]}\n  - {name: d, op: tanh, args: [c]}\n"
      "  - {name: e, op: sigmoid, args: [d]}\n  - {name: f, op: silu, args: [e]}\n"
      "  - {name: g, op: gelu_tanh, args: [f]}\n  - {name: h, op: exp, args: [g]}\n"
      "  - {name: i, op: log, args: [h]}\n  - {name: j, op: sin, args: [i]}\n"
      "  - {name: k, op: cos, args: [j]}\n  - {name: l, op: erf, args: [k]}\n"
      "  - {name: m, op: abs, args: [z]}\n  - {name: m2, op: add, args: [m, 0.5]}\n"
      "  - {name: n, op: div, args: [l, m2]}\n  - {name: o, op: pow, args: [m2, n]}\n"
      "  - {name: q, op: sqrt, args: [o]}\n  - {name: r, op: rsqrt, args: [q]}\n"
      "  - {name: s, op: reciprocal, args: [r]}\n  - {name: t, op: add, args: [s, n]}\n"
      "outputs: [t, n]\n";
  static const char *const dts[] = {"f32", "bf16"};
  int64_t n = gpu_small() ? 1 << 14 : 1 << 22;
  for (int d = 0; d < 2; d++)
    for (int p = 0; p < 3; p++) {
      char yaml[2048];
      snprintf(yaml, sizeof yaml,
               "kfuse: 1\ninputs:\n  x: {dtype: %s, shape: [%lld]}\n"
               "  z: {dtype: %s, shape: [%lld]}\n%s",
               dts[d], (long long)n, dts[d], (long long)n, body);
      kf_graph *g = NULL;
      ck_assert_msg(kf_graph_load_yaml_string(G_ctx, yaml, strlen(yaml), NULL, &g) == KF_OK, "%s",
                    kf_ctx_errmsg(G_ctx));
      run_io io;
      io_setup(g, &io, 5 + (uint64_t)p);
      void *fused[2];
      kf_options o;
      kf_options_init(&o);
      o.math = policies[p];
      for (int pass = 0; pass < 2; pass++) {
        o.fusion = pass == 0;
        kf_plan *plan = NULL;
        ck_assert_msg(kf_compile(G_ctx, g, &o, &plan) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
        if (pass == 0) ck_assert_int_eq(kf_plan_num_launches(plan), 1);
        io_poison(&io);
        ck_assert_msg(kf_plan_run(plan, io.din, io.n_in, io.dout, io.n_out, NULL) == KF_OK, "%s",
                      kf_plan_errmsg(plan));
        io_fetch(&io);
        kf_plan_destroy(plan);
        for (int j = 0; j < 2; j++) {
          size_t bytes = (size_t)n * kf_dtype_size(io.hout[j].dtype);
          if (pass == 0) {
            fused[j] = malloc(bytes);
            ck_assert(fused[j] != NULL);
            memcpy(fused[j], io.hout[j].data, bytes);
          } else {
            ck_assert_msg(memcmp(fused[j], io.hout[j].data, bytes) == 0,
                          "%s %s: output %d fused differs from unfused", dts[d], pnames[p], j);
            free(fused[j]);
          }
        }
      }
      io_free(&io);
      kf_graph_destroy(g);
    }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_math");
  TCase *tc = tcase_create("policy");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, ulp_bounds);
  tcase_add_test(tc, fused_equals_unfused);
  suite_add_tcase(s, tc);
  return s;
}
