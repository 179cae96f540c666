/* test_gpu_math.c - each op's device function against the f64 function, per
 * math policy and dtype: the largest error in ulps over many inputs must be
 * within the bound docs/codegen.md ("Math policy") documents, the table
 * below; and under every policy a fused chain of every op equals its unfused
 * plan bit for bit. Prints each measured maximum (the figures of the table).
 *
 * Cost: one graph per dtype and policy holds every op (nine compiles, not
 * one per op); f32 and the binary ops take 2^18 stratified samples per op,
 * unary f16 and bf16 ops every value of their domain (exhaustive).
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

/* Stratified sampling: sample i of n falls in the i-th of n equal strata
 * of its range (a random point inside), so n samples cover the range
 * evenly, where as many independent draws leave gaps and clusters. Even i:
 * x uniform over [lo, hi] (or log-uniform over +-[lo, hi] for signed_mag);
 * odd i: log-uniform magnitudes down to 2^-20 of the range, clamped into
 * it, the sign alternating by stratum where the domain has negatives. */
static double sample(uint64_t *s, int64_t i, int64_t n, double lo, double hi, bool signed_mag) {
  int64_t half = (n + 1) / 2, k = i / 2;
  double u = ((double)k + rng_unit(s)) / (double)half;
  if (signed_mag) {
    double m = exp(log(lo) + u * (log(hi) - log(lo)));
    return (i & 1) ? -m : m;
  }
  if (!(i & 1)) return lo + u * (hi - lo);
  double span = fmax(fabs(lo), fabs(hi));
  double m = span * exp2(-20.0 * u);
  double x = (k & 1) && lo < 0 ? -m : m;
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

static bool is_binary(const math_case *c) {
  return c->ylo != 0 || c->yhi != 0;
}

static bool in_domain(const math_case *c, double x) {
  double m = c->signed_mag ? fabs(x) : x;
  return m >= c->lo && m <= c->hi;
}

/* One case's inputs. A unary op of f16 or bf16 gets every value of the
 * dtype in its domain (at most 65536: exhaustive, so no input is missed);
 * others get n stratified samples (x and z). Returns the element count. */
static int64_t case_inputs(const math_case *c, kf_dtype dt, int64_t n, void **hx, void **hz) {
  size_t es = kf_dtype_size(dt);
  if (dt != KF_F32 && !is_binary(c)) {
    *hx = malloc(65536 * es);
    *hz = malloc(es);
    ck_assert(*hx && *hz);
    int64_t m = 0;
    for (uint32_t b = 0; b < 65536; b++) {
      uint16_t bits = (uint16_t)b;
      double x = dt == KF_F16 ? kf_f16_to_float(bits) : kf_bf16_to_float(bits);
      if (isfinite(x) && in_domain(c, x)) ((uint16_t *)*hx)[m++] = bits;
    }
    return m;
  }
  *hx = malloc((size_t)n * es);
  *hz = malloc((size_t)n * es);
  ck_assert(*hx && *hz);
  uint64_t s = 0x9e3779b97f4a7c15ull ^ (uint64_t)(c - cases) * 7919u;
  for (int64_t i = 0; i < n; i++) {
    store(*hx, dt, i, sample(&s, i, n, c->lo, c->hi, c->signed_mag));
    if (is_binary(c)) store(*hz, dt, i, sample(&s, (i * 7 + 3) % n, n, c->ylo, c->yhi, false));
  }
  return n;
}

/* The largest error of one case's outputs (see the metric above). */
static double case_error(const math_case *c, kf_dtype dt, int p, const void *hx, const void *hz,
                         const void *hy, int64_t n) {
  double worst = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < n; i++) {
    double x = load_elem(hx, dt, i), z = is_binary(c) ? load_elem(hz, dt, i) : 0;
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
    printf("  %-10s %-4s %-7s max %.3g ulp at x=%a (%lld inputs)\n", c->op, dt_name(dt), pnames[p],
           worst, load_elem(hx, dt, at), (long long)n);
  return worst;
}

#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* Every case of dtype dt under policy p in one graph (y<k> = op_k(x<k>[,
 * z<k>]), independent outputs: one compile of horizontally packed parts
 * instead of one per op, the same device functions), run once into
 * NaN-poisoned outputs; worst[k] gets case k's largest error. */
static void measure_all(kf_dtype dt, int p, int64_t n, double *worst) {
  void *hx[N_CASES], *hz[N_CASES], *hy[N_CASES];
  int64_t cnt[N_CASES];
  char yaml[8192];
  size_t len = (size_t)snprintf(yaml, sizeof yaml, "kfuse: 1\ninputs:\n");
  for (int k = 0; k < N_CASES; k++) {
    cnt[k] = case_inputs(&cases[k], dt, n, &hx[k], &hz[k]);
    len += (size_t)snprintf(yaml + len, sizeof yaml - len, "  x%d: {dtype: %s, shape: [%lld]}\n", k,
                            dt_name(dt), (long long)cnt[k]);
    if (is_binary(&cases[k]))
      len += (size_t)snprintf(yaml + len, sizeof yaml - len, "  z%d: {dtype: %s, shape: [%lld]}\n",
                              k, dt_name(dt), (long long)cnt[k]);
  }
  len += (size_t)snprintf(yaml + len, sizeof yaml - len, "nodes:\n");
  for (int k = 0; k < N_CASES; k++) {
    char z[16] = "";
    if (is_binary(&cases[k])) snprintf(z, sizeof z, ", z%d", k);
    len += (size_t)snprintf(yaml + len, sizeof yaml - len,
                            "  - {name: y%d, op: %s, args: [x%d%s]}\n", k, cases[k].op, k, z);
  }
  len += (size_t)snprintf(yaml + len, sizeof yaml - len, "outputs: [");
  for (int k = 0; k < N_CASES; k++)
    len += (size_t)snprintf(yaml + len, sizeof yaml - len, "%sy%d", k ? ", " : "", k);
  snprintf(yaml + len, sizeof yaml - len, "]\n");
  ck_assert(len < sizeof yaml - 8);
  kf_graph *g = NULL;
  ck_assert_msg(kf_graph_load_yaml_string(G_ctx, yaml, strlen(yaml), NULL, &g) == KF_OK, "%s",
                kf_ctx_errmsg(G_ctx));
  kf_options o;
  kf_options_init(&o);
  o.math = policies[p];
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &o, &plan) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
  kf_tensor in[2 * N_CASES], out[N_CASES];
  int nin = 0;
  size_t es = kf_dtype_size(dt);
  for (int k = 0; k < N_CASES; k++) {
    size_t bytes = (size_t)cnt[k] * es;
    CUdeviceptr dx = dev_alloc(bytes), dy = dev_alloc(bytes);
    G_drv->MemcpyHtoD(dx, hx[k], bytes);
    in[nin++] = (kf_tensor){(void *)(uintptr_t)dx, dt, 1, {cnt[k]}};
    if (is_binary(&cases[k])) {
      CUdeviceptr dz = dev_alloc(bytes);
      G_drv->MemcpyHtoD(dz, hz[k], bytes);
      in[nin++] = (kf_tensor){(void *)(uintptr_t)dz, dt, 1, {cnt[k]}};
    }
    G_drv->MemsetD8(dy, 0xff, bytes); /* NaN: an element never written fails */
    out[k] = (kf_tensor){(void *)(uintptr_t)dy, dt, 1, {cnt[k]}};
  }
  ck_assert_msg(kf_plan_run(plan, in, nin, out, N_CASES, NULL) == KF_OK, "%s",
                kf_plan_errmsg(plan));
  dev_sync();
  for (int k = 0; k < N_CASES; k++) {
    hy[k] = malloc((size_t)cnt[k] * es);
    ck_assert(hy[k] != NULL);
    G_drv->MemcpyDtoH(hy[k], (CUdeviceptr)(uintptr_t)out[k].data, (size_t)cnt[k] * es);
    worst[k] = case_error(&cases[k], dt, p, hx[k], hz[k], hy[k], cnt[k]);
    dev_free((CUdeviceptr)(uintptr_t)out[k].data);
    free(hx[k]), free(hz[k]), free(hy[k]);
  }
  for (int i = 0; i < nin; i++) dev_free((CUdeviceptr)(uintptr_t)in[i].data);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}

START_TEST(ulp_bounds) {
  static const kf_dtype dts[] = {KF_F32, KF_F16, KF_BF16};
  /* f32 (and the binary ops): 2^18 stratified samples per op; unary f16 and
   * bf16: every value of the domain */
  int64_t n = gpu_small() ? 1 << 14 : 1 << 18;
  int over = 0;
  for (int d = 0; d < 3; d++)
    for (int p = 0; p < 3; p++) {
      double worst[N_CASES];
      measure_all(dts[d], p, n, worst);
      for (int k = 0; k < N_CASES; k++) {
        double bound = dts[d] == KF_F32 ? cases[k].f32[p] : p == 2 ? cases[k].half_fast : 1.0;
        if (worst[k] > bound) {
          printf("OVER: %s %s %s: %.3g ulp > documented %.3g\n", cases[k].op, dt_name(dts[d]),
                 pnames[p], worst[k], bound);
          over++;
        }
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
  int64_t n = gpu_small() ? 1 << 14 : 1 << 20;
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

/* ---- the 16-bit functions (kf_<op>_h16: log, gelu_tanh, erf, sin, cos, tanh,
 * sqrt, pow) -------------------------------------------------------------------------
 * Under the default policy, over every input: each result must be the
 * correctly rounded one or its neighbour (16-bit patterns one apart in
 * value order; +-0 equal), NaN where the reference is NaN, and an infinity
 * or a zero where the rounded reference is one (its neighbour included). */
static double h16_ref(const char *op, double x, double y) {
  if (!strcmp(op, "gelu_tanh")) /* 0.5 (1 + tanh u) = 1 / (1 + e^-2u): no cancellation */
    return x / (1.0 + exp(-2.0 * 0.79788456080286535588 * (x + 0.044715 * x * x * x)));
  return ref_of(op, x, y);
}

/* A 16-bit pattern's place in value order (-0 and +0 both 0). */
static int h16_order(uint16_t b) {
  return (b & 0x8000) ? -(int)(b & 0x7fff) : (int)b;
}

/* Runs y = op(x[, z]) on n values of dt (bit patterns); returns the count of
 * results that break the rule above, printing the first few. */
static int h16_check(const char *op, kf_dtype dt, const uint16_t *hx, const uint16_t *hz,
                     int64_t n) {
  char yaml[512], zin[96] = "";
  if (hz) snprintf(zin, sizeof zin, "  z: {dtype: %s, shape: [%lld]}\n", dt_name(dt), (long long)n);
  snprintf(yaml, sizeof yaml,
           "kfuse: 1\ninputs:\n  x: {dtype: %s, shape: [%lld]}\n%s"
           "nodes:\n  - {name: y, op: %s, args: [x%s]}\noutputs: [y]\n",
           dt_name(dt), (long long)n, zin, op, hz ? ", z" : "");
  kf_graph *g = NULL;
  ck_assert_msg(kf_graph_load_yaml_string(G_ctx, yaml, strlen(yaml), NULL, &g) == KF_OK, "%s",
                kf_ctx_errmsg(G_ctx));
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, NULL, &plan) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
  size_t bytes = (size_t)n * 2;
  CUdeviceptr dx = dev_alloc(bytes), dz = hz ? dev_alloc(bytes) : 0, dy = dev_alloc(bytes);
  G_drv->MemcpyHtoD(dx, hx, bytes);
  if (hz) G_drv->MemcpyHtoD(dz, hz, bytes);
  G_drv->MemsetD8(dy, 0x55, bytes);
  kf_tensor in[2] = {{(void *)(uintptr_t)dx, dt, 1, {n}}, {(void *)(uintptr_t)dz, dt, 1, {n}}};
  kf_tensor out = {(void *)(uintptr_t)dy, dt, 1, {n}};
  ck_assert_msg(kf_plan_run(plan, in, hz ? 2 : 1, &out, 1, NULL) == KF_OK, "%s",
                kf_plan_errmsg(plan));
  dev_sync();
  uint16_t *hy = malloc(bytes);
  ck_assert(hy != NULL);
  G_drv->MemcpyDtoH(hy, dy, bytes);
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = load_elem(hx, dt, i), z = hz ? load_elem(hz, dt, i) : 0;
    double ref = h16_ref(op, x, z);
    uint16_t want = dt == KF_F16 ? kf_float_to_f16((float)ref) : kf_float_to_bf16((float)ref);
    double got = load_elem(hy, dt, i);
    bool ok = isnan(ref) ? isnan(got) : !isnan(got) && abs(h16_order(hy[i]) - h16_order(want)) <= 1;
    if (!ok && bad++ < 8)
      printf("  h16 %s %s: x=%a z=%a got %a want %a (ref %a)\n", op, dt_name(dt), x, z, got,
             load_elem(&want, dt, 0), ref);
  }
  free(hy);
  dev_free(dx), dev_free(dy);
  if (hz) dev_free(dz);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  return bad;
}

START_TEST(h16_every_input) {
  static const kf_dtype dts[] = {KF_F16, KF_BF16};
  uint16_t *hx = malloc(65536 * 2), *hz = malloc(65536 * 2);
  ck_assert(hx && hz);
  int bad = 0;
  for (int d = 0; d < 2; d++) {
    /* unary: all 65536 patterns (infinities, NaN, -0, subnormals included) */
    for (uint32_t b = 0; b < 65536; b++) hx[b] = (uint16_t)b;
    bad += h16_check("log", dts[d], hx, NULL, 65536);
    bad += h16_check("gelu_tanh", dts[d], hx, NULL, 65536);
    /* tests/test_math16.c's functions, on the device (the SFU's own sine) */
    bad += h16_check("erf", dts[d], hx, NULL, 65536);
    bad += h16_check("sin", dts[d], hx, NULL, 65536);
    bad += h16_check("cos", dts[d], hx, NULL, 65536);
    bad += h16_check("tanh", dts[d], hx, NULL, 65536);
    bad += h16_check("sqrt", dts[d], hx, NULL, 65536);
    /* pow: 256 bases by 256 exponents: every 256th pattern, and the values
     * next to 1 and -1 (where b log2 |a| is most sensitive), and small
     * integers (odd and even exponents of negative bases) */
    for (int i = 0; i < 256; i++) {
      uint16_t one = dts[d] == KF_F16 ? 0x3c00 : 0x3f80;
      uint16_t v = (uint16_t)(i * 256 + 37);
      if (i % 4 == 1) v = (uint16_t)(one + (i / 4) % 32 - 16);
      if (i % 4 == 2) v = (uint16_t)((one + (i / 4) % 16 - 8) | 0x8000);
      if (i % 8 == 3)
        v = dts[d] == KF_F16 ? kf_float_to_f16((float)(i / 8 - 16))
                             : kf_float_to_bf16((float)(i / 8 - 16));
      for (int j = 0; j < 256; j++) hx[i * 256 + j] = v;
      for (int j = 0; j < 256; j++) {
        uint16_t w = (uint16_t)(j * 256 + 101);
        if (j % 4 == 1)
          w = dts[d] == KF_F16 ? kf_float_to_f16((float)(j / 4 - 32))
                               : kf_float_to_bf16((float)(j / 4 - 32));
        hz[i * 256 + j] = w;
      }
    }
    bad += h16_check("pow", dts[d], hx, hz, 65536);
  }
  free(hx), free(hz);
  ck_assert_msg(bad == 0, "%d 16-bit results more than one ulp from the correctly rounded", bad);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_math");
  TCase *tc = tcase_create("policy");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, ulp_bounds);
  tcase_add_test(tc, fused_equals_unfused);
  tcase_add_test(tc, h16_every_input);
  suite_add_tcase(s, tc);
  return s;
}
