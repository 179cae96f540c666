/* gpu_util.h - what the GPU suites share: a main that skips (exit 77)
 * without a driver or GPU and runs Check without forking (CUDA does not
 * survive a fork), device buffers through the runtime's driver table,
 * seeded random inputs, poisoned outputs, and comparison with the CPU
 * reference within its per-element error bound (kf_graph_run_reference_bounded
 * and kf_compare, the checker `kfuse run --check` uses) or fixed per-dtype
 * tolerances. Any number of inputs and outputs. */
#ifndef KF_TEST_GPU_UTIL_H
#define KF_TEST_GPU_UTIL_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../knob_env.h"
#include "../test_random.h"
#include "pipeline/pipeline.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

/* Not every suite uses every helper. */
#pragma GCC diagnostic ignored "-Wunused-function"

static kf_ctx *G_ctx;
static const rt_driver *G_drv;

static Suite *make_suite(void);

/* KFUSE_TEST_SMALL=1 (the sanitizer runs) shrinks every test. */
static bool gpu_small(void) {
  const char *s = getenv("KFUSE_TEST_SMALL");
  return s && strcmp(s, "1") == 0;
}

int main(void) {
  int n = 0;
  if (kf_ctx_create(&G_ctx) != KF_OK) return 1;
  if (kf_device_count(G_ctx, &n) != KF_OK || n == 0) {
    printf("SKIP: no GPU: %s\n", kf_ctx_errmsg(G_ctx));
    kf_ctx_destroy(G_ctx);
    return 77;
  }
  rt_state *rt;
  if (rt_state_get(G_ctx, &rt) != KF_OK) {
    printf("SKIP: no usable GPU: %s\n", kf_ctx_errmsg(G_ctx));
    kf_ctx_destroy(G_ctx);
    return 77;
  }
  G_drv = rt->drv;
  G_drv->CtxPushCurrent(rt->cuctx); /* the tests' own allocations */
  printf("GPU: %s (sm_%d%d, %d SMs)%s\n", rt->info.name, rt->info.cc_major, rt->info.cc_minor,
         rt->info.sm_count, gpu_small() ? ", small sizes" : "");
  SRunner *runner = srunner_create(make_suite());
  srunner_set_fork_status(runner, CK_NOFORK);
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  G_drv->CtxPopCurrent(NULL);
  kf_ctx_destroy(G_ctx);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* Bytes by which io_setup offsets every device tensor from its allocation:
 * 0, or an element size to take the kernels off their 16-byte vector paths
 * (set around one io_setup .. io_free). */
static size_t G_offset;

static CUdeviceptr dev_alloc(size_t bytes) {
  CUdeviceptr p = 0;
  CUresult r = G_drv->MemAlloc(&p, bytes ? bytes : 16);
  ck_assert_msg(r == CUDA_SUCCESS, "cuMemAlloc(%zu) failed: %d", bytes, (int)r);
  return p;
}

static void dev_free(CUdeviceptr p) {
  if (p) G_drv->MemFree(p);
}

static void dev_sync(void) {
  CUresult r = G_drv->CtxSynchronize();
  ck_assert_msg(r == CUDA_SUCCESS, "cuCtxSynchronize failed: %d", (int)r);
}

/* ---- random data ------------------------------------------------------- */

/* rng_next, rng_unit, fill_random: tests/test_random.h */

static double load_elem(const void *buf, kf_dtype dt, int64_t i) {
  switch (dt) {
    case KF_F16:
      return kf_f16_to_float(((const uint16_t *)buf)[i]);
    case KF_BF16:
      return kf_bf16_to_float(((const uint16_t *)buf)[i]);
    case KF_F32:
      return ((const float *)buf)[i];
    case KF_F64:
      return ((const double *)buf)[i];
    case KF_I32:
      return ((const int32_t *)buf)[i];
    case KF_I64:
      return (double)((const int64_t *)buf)[i];
    default:
      return ((const uint8_t *)buf)[i];
  }
}

/* ---- comparison ------------------------------------------------------- */

typedef struct cmp_result {
  double max_abs, max_rel, max_use; /* max_use: worst |got - want| / allowed */
  int64_t bad, first_bad;
  double got, want, allowed; /* at first_bad */
} cmp_result;

/* The fixed per-dtype tolerance |got - want| <= atol + rtol * max|want|, for
 * checks without a computed error bound (examples, fused against unfused).
 * Integers and bools are exact. */
static void tolerance(kf_dtype dt, double *atol, double *rtol) {
  switch (dt) {
    case KF_F16:
      *atol = 1e-2, *rtol = 1e-2;
      break;
    case KF_BF16:
      *atol = 3e-2, *rtol = 3e-2;
      break;
    case KF_F32:
      *atol = 1e-4, *rtol = 1e-4;
      break;
    case KF_F64:
      *atol = 1e-9, *rtol = 1e-9;
      break;
    default:
      *atol = 0, *rtol = 0;
      break;
  }
}

/* NaN matches NaN and an infinity only itself: true when g or w is not
 * finite (the verdict in *ok), false when both are numbers to compare. */
static bool nonfinite_verdict(double g, double w, bool *ok) {
  if (isnan(w) || isnan(g)) {
    *ok = isnan(w) && isnan(g);
    return true;
  }
  if (isinf(w) || isinf(g)) {
    *ok = g == w;
    return true;
  }
  return false;
}

/* Within the reference's error bound (kf_compare): the verdict, and the
 * worst element in first_bad. */
static void compare_bounded(const void *got, const void *want, kf_dtype dt, int64_t n,
                            const double *bound, cmp_result *r) {
  kf_host_tensor g = {(void *)got, dt, 1, {n}}, w = {(void *)want, dt, 1, {n}};
  kf_compare_result c;
  ck_assert_int_eq(kf_compare(&g, &w, bound, 0, 0, &c), KF_OK);
  r->max_use = c.max_ratio;
  r->bad = c.mismatches;
  if (c.mismatches)
    r->first_bad = c.worst, r->got = c.worst_got, r->want = c.worst_want,
    r->allowed = c.worst_allowed;
  for (int64_t i = 0; i < n; i++) {
    double a = load_elem(got, dt, i), b = load_elem(want, dt, i), d = fabs(a - b);
    if (d == d && d < INFINITY && d > r->max_abs) r->max_abs = d;
    if (d == d && d < INFINITY && b != 0 && d / fabs(b) > r->max_rel) r->max_rel = d / fabs(b);
    if (dt == KF_BOOL && ((const uint8_t *)got)[i] > 1 && r->bad++ == 0) /* poison left */
      r->first_bad = i, r->got = a, r->want = b, r->allowed = 0;
  }
}

/* Elementwise: within the error bound when one is given (its worst element
 * reported), else the fixed tolerance (its first bad element); NaN matches
 * NaN and an infinity matches itself. */
static cmp_result compare(const void *got, const void *want, kf_dtype dt, int64_t n,
                          const double *bound) {
  cmp_result r = {0, 0, 0, 0, -1, 0, 0, 0};
  if (bound) {
    compare_bounded(got, want, dt, n, bound, &r);
    return r;
  }
  double atol, rtol;
  tolerance(dt, &atol, &rtol);
  bool flt = dt == KF_F16 || dt == KF_BF16 || dt == KF_F32 || dt == KF_F64;
  /* Without a computed bound, the relative part of the tolerance is taken
   * against the tensor's largest magnitude, not the element's: a reduction
   * whose terms cancel (a sum over 32000 products of random signs) has an
   * error relative to its terms, which the result alone does not show.
   * Indexing bugs still give errors of the order of the values. */
  double scale = 0;
  for (int64_t i = 0; !bound && flt && i < n; i++) {
    double w = fabs(load_elem(want, dt, i));
    if (w > scale && !isinf(w)) scale = w;
  }
  for (int64_t i = 0; i < n; i++) {
    double g = load_elem(got, dt, i), w = load_elem(want, dt, i), allowed = 0;
    bool ok;
    if (!nonfinite_verdict(g, w, &ok)) {
      double d = fabs(g - w);
      allowed = atol + rtol * fmax(fabs(w), scale);
      if (d > r.max_abs) r.max_abs = d;
      if (w != 0 && d / fabs(w) > r.max_rel) r.max_rel = d / fabs(w);
      if (d > 0 && (allowed == 0 || d / allowed > r.max_use))
        r.max_use = allowed > 0 ? d / allowed : INFINITY;
      ok = d <= allowed;
    }
    if (dt == KF_BOOL && ((const uint8_t *)got)[i] > 1) ok = false; /* poison left */
    if (!ok && r.bad++ == 0) r.first_bad = i, r.got = g, r.want = w, r.allowed = allowed;
  }
  return r;
}

/* ---- one checked run ------------------------------------------------------ */

/* Host and device tensors of a graph's inputs and outputs (any number);
 * bound: NULL, or per output the error bound of each element. */
typedef struct run_io {
  int n_in, n_out;
  kf_host_tensor *hin, *hout, *href;
  kf_tensor *din, *dout;
  double **bound;
} run_io;

static int64_t value_numel(const kf_graph *g, kf_value v) {
  return kf_value_numel(g, v);
}

static void io_setup(kf_graph *g, run_io *io, uint64_t seed) {
  memset(io, 0, sizeof *io);
  io->n_in = kf_graph_num_inputs(g);
  io->n_out = kf_graph_num_outputs(g);
  io->hin = calloc((size_t)io->n_in + 1, sizeof *io->hin);
  io->din = calloc((size_t)io->n_in + 1, sizeof *io->din);
  io->hout = calloc((size_t)io->n_out + 1, sizeof *io->hout);
  io->href = calloc((size_t)io->n_out + 1, sizeof *io->href);
  io->dout = calloc((size_t)io->n_out + 1, sizeof *io->dout);
  ck_assert(io->hin && io->din && io->hout && io->href && io->dout);
  uint64_t s = seed * 2654435761u + 88172645463325252ull;
  for (int k = 0; k < io->n_in + io->n_out; k++) {
    bool in = k < io->n_in;
    kf_value v = in ? kf_graph_input(g, k) : kf_graph_output(g, k - io->n_in);
    kf_dtype dt = kf_value_dtype(g, v);
    int rank = kf_value_rank(g, v);
    int64_t n = value_numel(g, v);
    size_t bytes = (size_t)n * kf_dtype_size(dt);
    kf_host_tensor h = {malloc(bytes ? bytes : 1), dt, rank, {0}};
    ck_assert(h.data != NULL);
    memcpy(h.shape, kf_value_shape(g, v), sizeof h.shape);
    kf_tensor d = {(void *)(uintptr_t)(dev_alloc(bytes + G_offset) + G_offset), dt, rank, {0}};
    memcpy(d.shape, h.shape, sizeof d.shape);
    if (in) {
      fill_random(h.data, dt, n, &s);
      G_drv->MemcpyHtoD((CUdeviceptr)(uintptr_t)d.data, h.data, bytes);
      io->hin[k] = h, io->din[k] = d;
    } else {
      int j = k - io->n_in;
      io->hout[j] = h, io->dout[j] = d;
      io->href[j] = h;
      io->href[j].data = malloc(bytes ? bytes : 1);
      ck_assert(io->href[j].data != NULL);
    }
  }
}

/* Fills every output with 0xff bytes (NaN for floats, -1, an invalid bool),
 * so an element the kernels never write cannot pass. */
/* Poisons every output and waits for it: cuMemsetD8 runs on the legacy
 * default stream, which a non-blocking stream does not wait for, so a
 * plan (or a captured graph) launched on one right after could write its
 * outputs before the poison lands and read as unwritten. */
static void io_poison(run_io *io) {
  for (int j = 0; j < io->n_out; j++) {
    int64_t n = 1;
    for (int k = 0; k < io->dout[j].rank; k++) n *= io->dout[j].shape[k];
    size_t bytes = (size_t)n * kf_dtype_size(io->dout[j].dtype);
    if (bytes) G_drv->MemsetD8((CUdeviceptr)(uintptr_t)io->dout[j].data, 0xff, bytes);
  }
  dev_sync();
}

static void io_fetch(run_io *io) {
  dev_sync();
  for (int j = 0; j < io->n_out; j++) {
    int64_t n = 1;
    for (int k = 0; k < io->hout[j].rank; k++) n *= io->hout[j].shape[k];
    size_t bytes = (size_t)n * kf_dtype_size(io->hout[j].dtype);
    if (bytes) G_drv->MemcpyDtoH(io->hout[j].data, (CUdeviceptr)(uintptr_t)io->dout[j].data, bytes);
  }
}

/* The last run's outputs become the expected values (href). */
static void io_keep_as_reference(run_io *io) {
  for (int j = 0; j < io->n_out; j++) {
    void *t = io->href[j].data;
    io->href[j].data = io->hout[j].data;
    io->hout[j].data = t;
  }
}

/* Runs the reference on the current inputs into href, with the error bound
 * of every output element (kf_graph_run_reference_bounded); false (with the
 * reason printed) when it fails. */
static bool io_bound(kf_graph *g, run_io *io) {
  io->bound = calloc((size_t)io->n_out + 1, sizeof *io->bound);
  bool ok = io->bound != NULL;
  for (int j = 0; ok && j < io->n_out; j++)
    ok = (io->bound[j] =
              malloc((size_t)value_numel(g, kf_graph_output(g, j)) * sizeof(double) + 1)) != NULL;
  kf_status st =
      ok ? kf_graph_run_reference_bounded(g, io->hin, io->n_in, io->href, io->bound, io->n_out)
         : KF_ERR_OUT_OF_MEMORY;
  if (st != KF_OK) printf("no error bound: %s\n", ok ? kf_graph_errmsg(g) : "out of memory");
  return st == KF_OK;
}

static void io_free(run_io *io) {
  for (int k = 0; k < io->n_in; k++)
    free(io->hin[k].data), dev_free((CUdeviceptr)(uintptr_t)io->din[k].data - G_offset);
  for (int j = 0; j < io->n_out; j++) {
    free(io->hout[j].data);
    free(io->href[j].data);
    dev_free((CUdeviceptr)(uintptr_t)io->dout[j].data - G_offset);
    if (io->bound) free(io->bound[j]);
  }
  free(io->hin), free(io->din), free(io->hout), free(io->href), free(io->dout), free(io->bound);
  memset(io, 0, sizeof *io);
}

/* The library's warnings on G_ctx that contain a text, counted while
 * watched (each printed, so a run's output shows them); unwatching gives
 * the stderr logger back. The fallback tests count "not 16-byte aligned"
 * (the sm_90 kernels' form without tensor maps) and "aligned to a "
 * (cuBLASLt's candidates for misaligned operands, or the template form
 * where it has none). */
static const char *G_watch_text;
static int G_watch_hits;

static inline void watch_log(void *user, kf_log_level level, const char *component,
                             const char *msg) {
  (void)user;
  if (level > KF_LOG_WARN) return;
  printf("log (%s): %s\n", component, msg);
  if (G_watch_text && strstr(msg, G_watch_text)) G_watch_hits++;
}

static inline void watch_warnings(const char *text) {
  G_watch_text = text;
  G_watch_hits = 0;
  kf_ctx_set_log(G_ctx, watch_log, NULL);
}

/* The count since watch_warnings. */
static inline int unwatch_warnings(void) {
  kf_ctx_set_log(G_ctx, NULL, NULL);
  G_watch_text = NULL;
  return G_watch_hits;
}

/* Compares every output with href (within the bound when io has one);
 * returns the number of bad outputs, printing each, and keeps the worst
 * errors per dtype. */
static double G_worst_abs[KF_DTYPE_COUNT], G_worst_rel[KF_DTYPE_COUNT], G_worst_use[KF_DTYPE_COUNT];

static int io_check(kf_graph *g, run_io *io, const char *what) {
  int bad = 0;
  for (int j = 0; j < io->n_out; j++) {
    int64_t n = 1;
    for (int k = 0; k < io->hout[j].rank; k++) n *= io->hout[j].shape[k];
    kf_dtype dt = io->hout[j].dtype;
    cmp_result r =
        compare(io->hout[j].data, io->href[j].data, dt, n, io->bound ? io->bound[j] : NULL);
    if (r.max_abs > G_worst_abs[dt]) G_worst_abs[dt] = r.max_abs;
    if (r.max_rel > G_worst_rel[dt] && r.max_abs > 1e-6) G_worst_rel[dt] = r.max_rel;
    if (r.max_use > G_worst_use[dt]) G_worst_use[dt] = r.max_use;
    if (r.bad) {
      const char *name = kf_value_name(g, kf_graph_output(g, j));
      printf(
          "MISMATCH %s output %d (%s, %s): %lld of %lld bad; %s at %lld: got %.9g want %.9g "
          "(allowed %.3g%s)\n",
          what, j, name ? name : "?", kf_dtype_name(dt), (long long)r.bad, (long long)n,
          io->bound ? "worst" : "first", (long long)r.first_bad, r.got, r.want, r.allowed,
          io->bound ? ", error bound" : ", fixed tolerance");
      bad++;
    }
  }
  return bad;
}

/* "use" is the worst error as a fraction of what was allowed (1 = at the
 * limit). */
static void print_worst(const char *suite) {
  for (int d = 0; d < KF_DTYPE_COUNT; d++)
    if (G_worst_abs[d] > 0 || G_worst_use[d] > 0)
      printf("%s worst error %s: abs %.3g rel %.3g use %.3g of the allowed\n", suite,
             kf_dtype_name((kf_dtype)d), G_worst_abs[d], G_worst_rel[d], G_worst_use[d]);
}

/* Compiles g with opt, runs it once on poisoned outputs, compares with href
 * (computed here by the reference unless ref_done). Returns the number of
 * bad outputs; compile and run errors fail the test. */
static int check_plan(kf_graph *g, const kf_options *opt, run_io *io, bool ref_done,
                      const char *what) {
  kf_plan *plan = NULL;
  kf_status st = kf_compile(G_ctx, g, opt, &plan);
  ck_assert_msg(st == KF_OK, "%s: compile failed: %s", what, kf_ctx_errmsg(G_ctx));
  if (!ref_done) {
    st = kf_graph_run_reference(g, io->hin, io->n_in, io->href, io->n_out);
    ck_assert_msg(st == KF_OK, "%s: reference failed: %s", what, kf_graph_errmsg(g));
  }
  io_poison(io);
  st = kf_plan_run(plan, io->din, io->n_in, io->dout, io->n_out, NULL);
  ck_assert_msg(st == KF_OK, "%s: run failed: %s", what, kf_plan_errmsg(plan));
  io_fetch(io);
  kf_plan_destroy(plan);
  return io_check(g, io, what);
}

#endif
