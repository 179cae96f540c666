/* test_gpu_grid.c - a launch that needs more blocks than gridDim.x allows
 * (2^31 - 1) covers all of them by its block-stride loop: a batched matmul
 * of batch 2^31 + 16 (once truncated to 16 blocks, silently) on the GPU,
 * every output checked against its own index. Skips without a GPU. */
#include <time.h>

#include "gpu_util.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* y[i] = a[i] @ b for a: f16[N,1,1], b: f16[1,1,1] = 1, a[i] = i % 2039
 * (exact in f16, as is the product). 4 GiB in, 4 GiB out. */
START_TEST(matmul_batch_past_grid_limit) {
  if (gpu_small()) {
    printf("grid limit: skipped with KFUSE_TEST_SMALL=1\n");
    return;
  }
  const int64_t n = (INT64_C(1) << 31) + 16;
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  kf_value a = kf_input(g, "a", KF_F16, 3, (int64_t[]){n, 1, 1});
  kf_value b = kf_input(g, "b", KF_F16, 3, (int64_t[]){1, 1, 1});
  kf_set_output(g, kf_matmul(g, a, b));
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  kf_plan *plan;
  ck_assert_msg(kf_compile(G_ctx, g, NULL, &plan) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
  size_t bytes = (size_t)n * 2;
  uint16_t *h = malloc(bytes), table[2039];
  ck_assert_ptr_nonnull(h);
  for (int i = 0; i < 2039; i++) table[i] = kf_float_to_f16((float)i);
  for (int64_t i = 0; i < n; i++) h[i] = table[i % 2039];
  uint16_t one = kf_float_to_f16(1.0f);
  kf_tensor ta = {(void *)(uintptr_t)dev_alloc(bytes), KF_F16, 3, {n, 1, 1}};
  kf_tensor tb = {(void *)(uintptr_t)dev_alloc(2), KF_F16, 3, {1, 1, 1}};
  kf_tensor ty = {(void *)(uintptr_t)dev_alloc(bytes), KF_F16, 3, {n, 1, 1}};
  G_drv->MemcpyHtoD((CUdeviceptr)(uintptr_t)ta.data, h, bytes);
  G_drv->MemcpyHtoD((CUdeviceptr)(uintptr_t)tb.data, &one, 2);
  G_drv->MemsetD8((CUdeviceptr)(uintptr_t)ty.data, 0xff, bytes); /* NaN where unwritten */
  kf_tensor in[2] = {ta, tb};
  double t0 = now_s();
  ck_assert_msg(kf_plan_run(plan, in, 2, &ty, 1, NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  dev_sync();
  double t1 = now_s();
  G_drv->MemcpyDtoH(h, (CUdeviceptr)(uintptr_t)ty.data, bytes);
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if (h[i] != table[i % 2039] && bad++ == 0) first = i;
  ck_assert_msg(bad == 0, "%lld of %lld outputs wrong, first at %lld: f16 bits %#x", (long long)bad,
                (long long)n, (long long)first, first >= 0 ? (unsigned)h[first] : 0u);
  printf("grid limit: batch %lld matmul correct (kernel %.2f s)\n", (long long)n, t1 - t0);
  free(h);
  dev_free((CUdeviceptr)(uintptr_t)ta.data);
  dev_free((CUdeviceptr)(uintptr_t)tb.data);
  dev_free((CUdeviceptr)(uintptr_t)ty.data);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_grid");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, matmul_batch_past_grid_limit);
  suite_add_tcase(s, tc);
  return s;
}
