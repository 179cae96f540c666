/* test_nvrtc.c - NVRTC compiles (no GPU needed): arch names, options, CUBIN
 * output, error text with line numbers; and the compile thread pool. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "runtime/nvrtc.h"
#include "core/pool.h"

static const char *ok_src =
    "extern \"C\" __global__ void scale(const float* __restrict__ a, float* b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) b[i] = expf(a[i]) * 2.0f;\n"
    "}\n";

static const char *half_src =
    "#include <cuda_fp16.h>\n"
    "extern \"C\" __global__ void h2(const __half* a, __half* b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) b[i] = __float2half(__half2float(a[i]) * 2.0f);\n"
    "}\n";

static const char *bad_src =
    "extern \"C\" __global__ void broken(float* b) {\n"
    "  int i = threadIdx.x;\n"
    "  b[i] = undefined_thing + 1.0f;\n"
    "}\n";

START_TEST(version_is_known) {
  int ma = -1, mi = -1;
  ck_assert_int_eq(kf_nvrtc_version(&ma, &mi), KF_OK);
  ck_assert_int_ge(ma, 11);
  ck_assert_int_ge(mi, 0);
}
END_TEST

START_TEST(arch_names_normalize) {
  char out[16], err[256];
  const char *good[][2] = {{"sm_90", "sm_90"},      {"90", "sm_90"},      {"9.0", "sm_90"},
                           {"compute_90", "sm_90"}, {"sm_90a", "sm_90a"}, {"sm_80", "sm_80"}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    ck_assert_msg(rt_nvrtc_arch(good[i][0], out, sizeof out, err, sizeof err), "%s: %s", good[i][0],
                  err);
    ck_assert_str_eq(out, good[i][1]);
  }
  const char *bad[] = {"", "sm_", "sm_9x", "foo", "sm_90b", "9.", "compute_"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_msg(!rt_nvrtc_arch(bad[i], out, sizeof out, err, sizeof err), "%s accepted", bad[i]);
    ck_assert_msg(strstr(err, "arch") != NULL, "message: %s", err);
  }
  ck_assert(!rt_nvrtc_arch("sm_20", out, sizeof out, err, sizeof err));
  ck_assert_msg(strstr(err, "not supported") != NULL, "message: %s", err);
}
END_TEST

START_TEST(options_add_include_only_when_needed) {
  rt_nvrtc_opts o;
  rt_nvrtc_options("sm_90", ok_src, &o);
  ck_assert_int_eq(o.argc, 5);
  ck_assert_str_eq(o.argv[0], "--gpu-architecture=sm_90");
  ck_assert_str_eq(o.argv[1], "-default-device");
  ck_assert_str_eq(o.argv[2], "--std=c++17");
  ck_assert_str_eq(o.argv[3], "-minimal");
  ck_assert_str_eq(o.argv[4], "--fmad=false"); /* fused == unfused, bit for bit */
  rt_nvrtc_options("sm_90", half_src, &o);
  ck_assert_msg(*rt_cuda_include_dir(), "no CUDA include folder found");
  ck_assert_int_eq(o.argc, 6);
  ck_assert(strncmp(o.argv[5], "-I", 2) == 0);
}
END_TEST

static void compile_ok(const char *src) {
  rt_nvrtc_opts o;
  rt_nvrtc_options("sm_90", src, &o);
  void *img;
  size_t size;
  char *log;
  kf_status st = rt_nvrtc_compile(src, "t.cu", &o, &img, &size, &log);
  ck_assert_msg(st == KF_OK, "compile failed: %s", log ? log : "(no log)");
  ck_assert_uint_gt(size, 64);
  ck_assert_int_eq(memcmp(img,
                          "\x7f"
                          "ELF",
                          4),
                   0); /* a CUBIN is an ELF file */
  free(img);
  free(log);
}

START_TEST(compiles_cubin_for_sm90) {
  compile_ok(ok_src);
}
END_TEST

START_TEST(compiles_with_cuda_headers) {
  compile_ok(half_src);
}
END_TEST

START_TEST(error_has_log_and_line_numbers) {
  rt_nvrtc_opts o;
  rt_nvrtc_options("sm_90", bad_src, &o);
  void *img = (void *)1;
  size_t size = 7;
  char *log = NULL;
  ck_assert_int_eq(rt_nvrtc_compile(bad_src, "broken.cu", &o, &img, &size, &log), KF_ERR_COMPILE);
  ck_assert_ptr_null(img);
  ck_assert_uint_eq(size, 0);
  ck_assert_ptr_nonnull(log);
  ck_assert_msg(strstr(log, "undefined_thing") != NULL, "log: %s", log);
  char msg[4096];
  rt_nvrtc_format_error("kernel broken failed", log, bad_src, msg, sizeof msg);
  ck_assert_msg(strstr(msg, "kernel broken failed") != NULL, "%s", msg);
  ck_assert_msg(strstr(msg, ">    3 |   b[i] = undefined_thing") != NULL, "%s", msg);
  ck_assert_msg(strstr(msg, "     1 | extern") != NULL, "%s", msg);
  free(log);
}
END_TEST

START_TEST(error_text_is_truncated) {
  char log[10000], src[20000], msg[2048];
  memset(log, 'x', sizeof log - 1);
  log[sizeof log - 1] = 0;
  for (int i = 0; i < 2000; i++) memcpy(src + 10 * i, "int a;   \n", 10);
  src[sizeof src - 1] = 0;
  rt_nvrtc_format_error("what", log, src, msg, sizeof msg);
  ck_assert_uint_lt(strlen(msg), sizeof msg);
  ck_assert_msg(strstr(msg, "truncated") != NULL, "%s", msg);
}
END_TEST

static void add_index(void *arg, int i) {
  atomic_fetch_add((_Atomic long *)arg, i + 1);
}

START_TEST(pool_runs_every_index_once) {
  core_pool *pool = core_pool_create(4);
  ck_assert_ptr_nonnull(pool);
  ck_assert_int_eq(core_pool_size(pool), 4);
  for (int round = 0; round < 50; round++) {
    _Atomic long sum = 0;
    core_pool_for(pool, 1000, add_index, &sum);
    ck_assert_int_eq(sum, 1000L * 1001 / 2);
  }
  _Atomic long serial = 0;
  core_pool_for(NULL, 10, add_index, &serial);
  ck_assert_int_eq(serial, 55);
  core_pool_destroy(pool);
  core_pool_destroy(NULL);
}
END_TEST

static core_pool *shared_pool;

static void *caller(void *arg) {
  for (int round = 0; round < 100; round++) {
    _Atomic long sum = 0;
    core_pool_for(shared_pool, 37, add_index, &sum);
    if (sum != 37L * 38 / 2) *(int *)arg = 1;
  }
  return NULL;
}

START_TEST(pool_serves_concurrent_callers) {
  shared_pool = core_pool_create(2);
  pthread_t t[6];
  int bad[6] = {0};
  for (int i = 0; i < 6; i++) pthread_create(&t[i], NULL, caller, &bad[i]);
  for (int i = 0; i < 6; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(bad[i], 0);
  }
  core_pool_destroy(shared_pool);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("nvrtc");
  TCase *tc = tcase_create("nvrtc");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, version_is_known);
  tcase_add_test(tc, arch_names_normalize);
  tcase_add_test(tc, options_add_include_only_when_needed);
  tcase_add_test(tc, compiles_cubin_for_sm90);
  tcase_add_test(tc, compiles_with_cuda_headers);
  tcase_add_test(tc, error_has_log_and_line_numbers);
  tcase_add_test(tc, error_text_is_truncated);
  tcase_add_test(tc, pool_runs_every_index_once);
  tcase_add_test(tc, pool_serves_concurrent_callers);
  suite_add_tcase(s, tc);
  return s;
}
