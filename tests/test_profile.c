/* test_profile.c - profiling, benchmarking, tracing, dumps and device
 * memory helpers on CI, against the runtime's recording fake driver (plans
 * are really fused and compiled with NVRTC for sm_90; nothing runs). */
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "fake_driver.h"
#include "core/progress.h"
#include "kfuse.h"
#include "pipeline/plan_dump.h"
#include "runtime/driver.h"
#include "runtime/trace.h"

#define N 4096

static struct {
  kf_ctx *ctx;
  kf_graph *g;
  kf_plan *plan;
  kf_tensor in[2], out[2];
  char dir[128];
} F;

/* Two independent kernels (a pointwise and a reduction), so streams mode
 * has something to overlap when horizontal packing is off. */
static void build(kf_run_mode mode) {
  ck_assert_int_eq(kf_graph_create(F.ctx, &F.g), KF_OK);
  kf_graph_set_name(F.g, "two");
  int64_t shape[1] = {N};
  kf_value x = kf_input(F.g, "x", KF_F32, 1, shape);
  kf_value y = kf_input(F.g, "y", KF_F32, 1, shape);
  kf_value a = kf_add(F.g, kf_exp(F.g, x), x);
  kf_value s = kf_sum(F.g, kf_mul(F.g, y, y), 0, NULL, false);
  kf_set_name(F.g, a, "a");
  kf_set_name(F.g, s, "s");
  kf_set_output(F.g, a);
  kf_set_output(F.g, s);
  ck_assert_int_eq(kf_graph_status(F.g), KF_OK);
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  opt.horizontal = false;
  opt.mode = mode;
  ck_assert_msg(kf_compile(F.ctx, F.g, &opt, &F.plan) == KF_OK, "%s", kf_ctx_errmsg(F.ctx));
  for (int i = 0; i < 2; i++) {
    kf_value v = i ? s : a;
    F.in[i] = (kf_tensor){NULL, KF_F32, 1, {N}};
    F.out[i] = (kf_tensor){NULL, KF_F32, kf_value_rank(F.g, v), {N}};
    ck_assert_int_eq(kf_device_alloc(F.ctx, 4 * N, &F.in[i].data), KF_OK);
    ck_assert_int_eq(kf_device_alloc(F.ctx, 4 * N, &F.out[i].data), KF_OK);
  }
}

static void setup(void) {
  memset(&F, 0, sizeof F);
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  ck_assert_int_eq(kf_ctx_create(&F.ctx), KF_OK);
  snprintf(F.dir, sizeof F.dir, "/tmp/kfuse_test_profile.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(F.dir));
}

static void teardown(void) {
  for (int i = 0; i < 2; i++) {
    kf_device_free(F.ctx, F.in[i].data);
    kf_device_free(F.ctx, F.out[i].data);
  }
  kf_plan_destroy(F.plan);
  kf_graph_destroy(F.g);
  kf_ctx_destroy(F.ctx);
  ck_assert_msg(rt_fake_live_objects() == 0, "%d fake objects leaked", rt_fake_live_objects());
  ck_assert_uint_eq(rt_fake_bytes_allocated(), 0);
  rt_driver_override(NULL);
  rt_fake_reset();
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", F.dir);
  ck_assert_int_eq(system(cmd), 0);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = calloc((size_t)n + 1, 1);
  ck_assert_int_eq(fread(s, 1, (size_t)n, f), n);
  fclose(f);
  return s;
}

/* ---- device memory -------------------------------------------------------- */

START_TEST(device_memory_helpers) {
  void *p = NULL;
  float h[4] = {1, 2, 3, 4}, back[4];
  ck_assert_int_eq(kf_device_alloc(F.ctx, sizeof h, &p), KF_OK);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(kf_memcpy_to_device(F.ctx, p, h, sizeof h), KF_OK);
  ck_assert_int_eq(kf_memcpy_to_host(F.ctx, back, p, sizeof back), KF_OK);
  ck_assert_int_eq(kf_memset_device(F.ctx, p, 0xff, sizeof h), KF_OK);
  ck_assert_int_eq(kf_stream_synchronize(F.ctx, NULL), KF_OK);
  ck_assert_int_ge(rt_fake_find(0, "MemcpyHtoD", "bytes=16"), 0);
  ck_assert_int_ge(rt_fake_find(0, "MemsetD8", "value=255 n=16"), 0);
  ck_assert_int_eq(kf_memcpy_to_device(F.ctx, NULL, h, 4), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_device_alloc(F.ctx, 4, NULL), KF_ERR_INVALID_ARG);
  rt_fake_fail("MemAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY, false);
  void *q = (void *)1;
  ck_assert_int_eq(kf_device_alloc(F.ctx, 1 << 20, &q), KF_ERR_OUT_OF_MEMORY);
  ck_assert_ptr_null(q);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(F.ctx), "1048576 bytes"));
  kf_device_free(F.ctx, p);
  kf_device_free(F.ctx, NULL);
}
END_TEST

/* ---- kf_plan_profile ------------------------------------------------------ */

START_TEST(profile_plain) {
  build(KF_MODE_PLAIN);
  int nl = kf_plan_num_launches(F.plan);
  ck_assert_int_eq(nl, 2);
  kf_profile p;
  ck_assert_msg(kf_plan_profile(F.plan, F.in, 2, F.out, 2, NULL, &p) == KF_OK, "%s",
                kf_plan_errmsg(F.plan));
  ck_assert_int_eq(p.n_launches, nl);
  ck_assert_str_eq(p.device, "Fake H200 #0");
  ck_assert_int_eq(p.mode, KF_MODE_PLAIN);
  int64_t bytes = 0;
  for (int i = 0; i < nl; i++) {
    const kf_launch_profile *l = &p.launches[i];
    ck_assert_msg(strstr(l->name, "k") == l->name, "entry %s", l->name);
    ck_assert_int_eq(l->stream, 0);
    ck_assert_int_eq(l->kernels, 1);
    ck_assert_int_eq(l->registers, 32); /* the fake's default */
    ck_assert(l->occupancy > 0 && l->occupancy <= 1);
    ck_assert_uint_gt(l->grid, 0);
    ck_assert_int_gt(l->bytes, 0);
    bytes += l->bytes;
  }
  ck_assert_int_eq(bytes, p.bytes); /* the plan's minimum is the kernels' sum */
  /* One event before everything, one before and after each launch; one wait. */
  ck_assert_int_eq(rt_fake_count_prefix("EventRecord"), 1 + 2 * nl);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), nl);
  ck_assert_int_eq(rt_fake_count_prefix("StreamSynchronize"), 1);
  kf_profile_release(&p);
  ck_assert_ptr_null(p.launches);
  kf_profile_release(&p);
  kf_profile_release(NULL);
}
END_TEST

START_TEST(profile_streams) {
  build(KF_MODE_STREAMS);
  kf_profile p;
  ck_assert_msg(kf_plan_profile(F.plan, F.in, 2, F.out, 2, NULL, &p) == KF_OK, "%s",
                kf_plan_errmsg(F.plan));
  ck_assert_int_eq(p.mode, KF_MODE_STREAMS);
  ck_assert_int_eq(p.n_launches, 2);
  ck_assert_int_gt(p.launches[0].stream, 0);
  ck_assert_int_gt(p.launches[1].stream, 0);
  ck_assert_int_ne(p.launches[0].stream, p.launches[1].stream);
  ck_assert_int_ge(rt_fake_count_prefix("StreamWaitEvent"), 2);
  kf_profile_release(&p);
}
END_TEST

START_TEST(profile_errors) {
  build(KF_MODE_PLAIN);
  kf_profile p;
  kf_tensor bad = F.in[0];
  bad.dtype = KF_F16;
  kf_tensor in[2] = {bad, F.in[1]};
  ck_assert_int_eq(kf_plan_profile(F.plan, in, 2, F.out, 2, NULL, &p), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(F.plan), "inputs[0] (x): dtype f16"));
  ck_assert_int_eq(p.n_launches, 0);
  ck_assert_ptr_null(p.launches);
  ck_assert_int_eq(kf_plan_profile(F.plan, F.in, 2, F.out, 2, NULL, NULL), KF_ERR_INVALID_ARG);
  rt_fake_fail("LaunchKernel", 1, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, false);
  ck_assert_int_ne(kf_plan_profile(F.plan, F.in, 2, F.out, 2, NULL, &p), KF_OK);
  ck_assert_ptr_null(p.launches);
}
END_TEST

/* ---- kf_plan_benchmark ---------------------------------------------------- */

START_TEST(benchmark_fake) {
  build(KF_MODE_STREAMS);
  kf_bench_options o;
  kf_bench_options_init(&o);
  ck_assert_int_eq(o.warmup, 3);
  ck_assert_int_eq(o.iters, 20);
  o.iters = 5, o.warmup = 2, o.nvml = false;
  kf_bench_result r;
  ck_assert_msg(kf_plan_benchmark(F.plan, F.in, 2, F.out, 2, NULL, &o, &r) == KF_OK, "%s",
                kf_plan_errmsg(F.plan));
  ck_assert_int_eq(r.iters, 5);
  ck_assert(r.ms_median == 1.0 && r.ms_min == 1.0 && r.ms_max == 1.0); /* the fake's 1 ms */
  ck_assert_int_gt(r.bytes, 0);
  ck_assert(r.gbps > 0 && r.gbps == (double)r.bytes / 1e6);
  ck_assert(r.host_us_plain >= 0 && r.host_us_graph >= 0);
  ck_assert_int_eq(r.nvml_samples, 0);
  ck_assert(r.gpu_util == -1);
  ck_assert_int_ge(rt_fake_count_prefix("GraphLaunch"), 5); /* graph-mode host timing */
  /* The plan's mode is restored: the next run uses streams, not the graph. */
  int graphs = rt_fake_count_prefix("GraphLaunch");
  ck_assert_int_eq(kf_plan_run(F.plan, F.in, 2, F.out, 2, NULL), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphLaunch"), graphs);
}
END_TEST

START_TEST(copy_bandwidth_needs_real_driver) {
  double gbps = 5;
  ck_assert_int_eq(kf_device_copy_bandwidth(F.ctx, 1 << 20, 3, &gbps), KF_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(F.ctx), "cuMemcpyDtoDAsync"));
  ck_assert_int_eq(kf_device_copy_bandwidth(F.ctx, 0, 3, &gbps), KF_ERR_INVALID_ARG);
}
END_TEST

/* ---- trace ---------------------------------------------------------------- */

START_TEST(trace_host_and_kernels) {
  char path[200];
  snprintf(path, sizeof path, "%s/t.json", F.dir);
  ck_assert_int_eq(kf_trace_stop(F.ctx, path), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(F.ctx), "no trace is recording"));
  ck_assert_int_eq(kf_trace_start(), KF_OK);
  ck_assert(rt_trace_active());
  kf_trace_push("outer \"quoted\"");
  build(KF_MODE_PLAIN);
  kf_trace_pop();
  kf_profile p;
  ck_assert_int_eq(kf_plan_profile(F.plan, F.in, 2, F.out, 2, NULL, &p), KF_OK);
  ck_assert_int_eq(kf_trace_stop(F.ctx, path), KF_OK);
  ck_assert(!rt_trace_active());
  char *t = slurp(path);
  ck_assert_ptr_nonnull(strstr(t, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"));
  ck_assert_ptr_nonnull(strstr(t, "\"name\":\"outer \\\"quoted\\\"\""));
  ck_assert_ptr_nonnull(strstr(t, "\"ph\":\"E\""));
  ck_assert_ptr_nonnull(strstr(t, "\"name\":\"GPU Fake H200 #0\""));
  ck_assert_ptr_nonnull(strstr(t, "\"cat\":\"kernel\""));
  ck_assert_ptr_nonnull(strstr(t, "\"registers\":32"));
  char name[80];
  snprintf(name, sizeof name, "\"name\":\"launch %s\"", p.launches[0].name);
  ck_assert_msg(strstr(t, name) != NULL, "no %s in %s", name, t);
  ck_assert_str_eq(t + strlen(t) - 4, "\n]}\n");
  free(t);
  kf_profile_release(&p);
  /* Stopped: spans are no longer recorded, and a bad path is an I/O error. */
  rt_trace_host('B', "ignored");
  ck_assert_int_eq(kf_trace_start(), KF_OK);
  ck_assert_int_eq(kf_trace_stop(F.ctx, "/nonexistent/dir/t.json"), KF_ERR_IO);
}
END_TEST

/* ---- dumps and progress --------------------------------------------------- */

static int count_files(const char *dir, const char *pattern) {
  char pat[300];
  glob_t gl;
  snprintf(pat, sizeof pat, "%s/%s", dir, pattern);
  int n = glob(pat, 0, NULL, &gl) == 0 ? (int)gl.gl_pathc : 0;
  if (n) globfree(&gl);
  return n;
}

START_TEST(dump_plan_files) {
  build(KF_MODE_PLAIN);
  char dir[200];
  snprintf(dir, sizeof dir, "%s/a/b", F.dir);
  kt_unsetenv("KFUSE_DUMP_DIR");
  ck_assert_ptr_null(pl_dump_dir());
  ck_assert(!pl_dump_file(F.ctx, "x.txt", "x", 1));
  kt_setenv("KFUSE_DUMP_DIR", dir, 1);
  ck_assert(pl_dump_file(F.ctx, "x.txt", "hello", 5));
  ck_assert(!pl_dump_file(F.ctx, "../escape.txt", "x", 1));
  pl_dump_plan(F.plan);
  ck_assert_int_eq(count_files(dir, "two-*.plan.json"), 1);
  ck_assert_int_eq(count_files(dir, "two-*.plan.txt"), 1);
  ck_assert_int_eq(count_files(dir, "two-*.decisions.txt"), 1);
  ck_assert_int_eq(count_files(dir, "two-*.cu"), 2);
  ck_assert_int_eq(count_files(dir, "two-*.cubin"), 2);
  ck_assert_int_eq(count_files(dir, "*.tmp.*"), 0);
  char path[300];
  snprintf(path, sizeof path, "%s/x.txt", dir);
  char *s = slurp(path);
  ck_assert_str_eq(s, "hello");
  free(s);
  kt_unsetenv("KFUSE_DUMP_DIR");
}
END_TEST

START_TEST(progress_silent_off_terminal) {
  /* stderr is a file under CTest: nothing may be drawn. */
  core_progress p;
  core_progress_begin(&p, F.ctx, "compiling kernels", 100);
  for (int i = 0; i < 100; i++) core_progress_step(&p);
  ck_assert_int_eq(atomic_load(&p.done), 100);
  ck_assert(!atomic_load(&p.shown));
  core_progress_end(&p);
}
END_TEST

/* Without the fake and without libcuda, everything says there is no GPU. */
START_TEST(no_device_errors) {
  rt_driver_override(NULL);
  const rt_driver *d;
  char err[256];
  if (rt_driver_get(&d, err, sizeof err) == KF_OK) return; /* a machine with a driver */
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  void *p = NULL;
  double gbps;
  ck_assert_int_eq(kf_device_alloc(ctx, 16, &p), KF_ERR_NO_DEVICE);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(ctx), "libcuda.so.1"));
  ck_assert_int_eq(kf_device_copy_bandwidth(ctx, 1 << 20, 2, &gbps), KF_ERR_NO_DEVICE);
  ck_assert_int_eq(kf_stream_synchronize(ctx, NULL), KF_ERR_NO_DEVICE);
  kf_ctx_destroy(ctx);
  rt_driver_override(rt_fake_driver());
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("profile");
  TCase *t = tcase_create("profile");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 60);
  tcase_add_test(t, device_memory_helpers);
  tcase_add_test(t, profile_plain);
  tcase_add_test(t, profile_streams);
  tcase_add_test(t, profile_errors);
  tcase_add_test(t, benchmark_fake);
  tcase_add_test(t, copy_bandwidth_needs_real_driver);
  tcase_add_test(t, trace_host_and_kernels);
  tcase_add_test(t, dump_plan_files);
  tcase_add_test(t, progress_silent_off_terminal);
  tcase_add_test(t, no_device_errors);
  suite_add_tcase(s, t);
  return s;
}
