/* test_gpu_profile.c - profiling, benchmarking, the copy ceiling, traces
 * and the device memory helpers on a real GPU: times are positive and
 * consistent, bandwidths plausible, kernels land on their streams. Skips
 * (exit 77) without a GPU. */
#include <unistd.h>

#include "gpu_util.h"

static struct {
  kf_graph *g;
  kf_plan *plan;
  kf_tensor in[2], out[2];
  int64_t rows;
} P;

/* A row kernel (softmax) and an independent reduction, so streams mode
 * has two lanes; horizontal packing off keeps them apart. */
static void build(kf_run_mode mode) {
  P.rows = gpu_small() ? 256 : 4096;
  ck_assert_int_eq(kf_graph_create(G_ctx, &P.g), KF_OK);
  int64_t shape[2] = {P.rows, 4096};
  kf_value x = kf_input(P.g, "x", KF_F32, 2, shape);
  kf_value y = kf_input(P.g, "y", KF_F32, 2, shape);
  kf_value a = kf_softmax(P.g, x, -1);
  int axis0 = 0;
  kf_value s = kf_sum(P.g, kf_mul(P.g, y, y), 1, &axis0, false);
  kf_set_output(P.g, a);
  kf_set_output(P.g, s);
  ck_assert_int_eq(kf_graph_status(P.g), KF_OK);
  kf_options opt;
  kf_options_init(&opt);
  opt.horizontal = false;
  opt.mode = mode;
  ck_assert_msg(kf_compile(G_ctx, P.g, &opt, &P.plan) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
  size_t n = (size_t)P.rows * 4096;
  float *h = malloc(n * sizeof *h);
  uint64_t seed = 5;
  fill_random(h, KF_F32, (int64_t)n, &seed);
  for (int i = 0; i < 2; i++) {
    kf_value v = kf_graph_output(P.g, i);
    P.in[i] = (kf_tensor){NULL, KF_F32, 2, {P.rows, 4096}};
    P.out[i] = (kf_tensor){NULL, KF_F32, kf_value_rank(P.g, v), {0}};
    memcpy(P.out[i].shape, kf_value_shape(P.g, v), sizeof P.out[i].shape);
    ck_assert_int_eq(kf_device_alloc(G_ctx, n * 4, &P.in[i].data), KF_OK);
    ck_assert_int_eq(kf_device_alloc(G_ctx, (size_t)kf_value_numel(P.g, v) * 4, &P.out[i].data),
                     KF_OK);
    ck_assert_int_eq(kf_memcpy_to_device(G_ctx, P.in[i].data, h, n * 4), KF_OK);
  }
  free(h);
}

static void release(void) {
  for (int i = 0; i < 2; i++) {
    kf_device_free(G_ctx, P.in[i].data);
    kf_device_free(G_ctx, P.out[i].data);
  }
  kf_plan_destroy(P.plan);
  kf_graph_destroy(P.g);
  memset(&P, 0, sizeof P);
}

START_TEST(memory_round_trip) {
  enum { NB = 1 << 20 };
  unsigned char *h = malloc(NB), *back = malloc(NB);
  for (int i = 0; i < NB; i++) h[i] = (unsigned char)(i * 7);
  void *d;
  ck_assert_int_eq(kf_device_alloc(G_ctx, NB, &d), KF_OK);
  ck_assert_int_eq(kf_memcpy_to_device(G_ctx, d, h, NB), KF_OK);
  ck_assert_int_eq(kf_memcpy_to_host(G_ctx, back, d, NB), KF_OK);
  ck_assert_int_eq(memcmp(h, back, NB), 0);
  ck_assert_int_eq(kf_memset_device(G_ctx, d, 0xab, NB), KF_OK);
  ck_assert_int_eq(kf_memcpy_to_host(G_ctx, back, d, NB), KF_OK);
  ck_assert_int_eq(back[0], 0xab);
  ck_assert_int_eq(back[NB - 1], 0xab);
  ck_assert_int_eq(kf_stream_synchronize(G_ctx, NULL), KF_OK);
  kf_device_free(G_ctx, d);
  free(h);
  free(back);
}
END_TEST

START_TEST(profile_times_and_occupancy) {
  build(KF_MODE_PLAIN);
  kf_profile p;
  ck_assert_msg(kf_plan_profile(P.plan, P.in, 2, P.out, 2, NULL, &p) == KF_OK, "%s",
                kf_plan_errmsg(P.plan));
  ck_assert_int_eq(p.n_launches, kf_plan_num_launches(P.plan));
  double prev_end = 0;
  for (int i = 0; i < p.n_launches; i++) {
    const kf_launch_profile *l = &p.launches[i];
    printf("  %-16s %8.4f ms %7.1f GB/s  %d regs  occupancy %.0f%%  %u x %u\n", l->name, l->ms,
           l->gbps, l->registers, 100 * l->occupancy, l->grid, l->block);
    ck_assert(l->ms > 0);
    ck_assert(l->start_ms >= prev_end - 1e-3); /* one stream: in order */
    prev_end = l->start_ms + l->ms;
    /* Under a sanitizer (small mode) kernels run orders of magnitude slower. */
    ck_assert(gpu_small() ? l->gbps > 0 : l->gbps > 10);
    ck_assert_int_gt(l->registers, 0);
    ck_assert(l->occupancy > 0 && l->occupancy <= 1);
  }
  ck_assert(p.ms >= prev_end - 1e-3);
  ck_assert(gpu_small() ? p.gbps > 0 : p.gbps > 10);
  kf_profile_release(&p);
  release();
}
END_TEST

START_TEST(profile_streams_lanes) {
  build(KF_MODE_STREAMS);
  kf_profile p;
  ck_assert_int_eq(kf_plan_profile(P.plan, P.in, 2, P.out, 2, NULL, &p), KF_OK);
  ck_assert_int_eq(p.n_launches, 2);
  ck_assert_int_eq(p.mode, KF_MODE_STREAMS);
  ck_assert_int_ne(p.launches[0].stream, p.launches[1].stream);
  kf_profile_release(&p);
  release();
}
END_TEST

START_TEST(benchmark_and_copy) {
  build(KF_MODE_PLAIN);
  kf_bench_options o;
  kf_bench_options_init(&o);
  o.iters = 10;
  kf_bench_result r;
  ck_assert_msg(kf_plan_benchmark(P.plan, P.in, 2, P.out, 2, NULL, &o, &r) == KF_OK, "%s",
                kf_plan_errmsg(P.plan));
  printf(
      "  median %.4f ms (%.4f..%.4f), %.1f GB/s, host %.2f us plain, %.2f us graph, "
      "NVML %d samples\n",
      r.ms_median, r.ms_min, r.ms_max, r.gbps, r.host_us_plain, r.host_us_graph, r.nvml_samples);
  ck_assert(r.ms_min > 0 && r.ms_min <= r.ms_median && r.ms_median <= r.ms_max);
  ck_assert(gpu_small() ? r.gbps > 0 : r.gbps > 10);
  ck_assert(r.host_us_plain > 0 && r.host_us_graph > 0);
  double gbps = 0;
  ck_assert_msg(kf_device_copy_bandwidth(G_ctx, (size_t)256 << 20, 10, &gbps) == KF_OK, "%s",
                kf_ctx_errmsg(G_ctx));
  printf("  copy %.1f GB/s\n", gbps);
  ck_assert(gbps > 100);
  ck_assert(r.gbps < 1.5 * gbps); /* nothing beats the copy by much */
  release();
}
END_TEST

START_TEST(trace_has_kernels) {
  char path[] = "/tmp/kfuse_gpu_trace_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(kf_trace_start(), KF_OK);
  build(KF_MODE_STREAMS);
  kf_profile p;
  ck_assert_int_eq(kf_plan_profile(P.plan, P.in, 2, P.out, 2, NULL, &p), KF_OK);
  ck_assert_int_eq(kf_trace_stop(G_ctx, path), KF_OK);
  FILE *f = fopen(path, "r");
  char *buf = calloc(1 << 20, 1);
  size_t n = fread(buf, 1, (1 << 20) - 1, f);
  fclose(f);
  ck_assert_uint_gt(n, 0);
  ck_assert_ptr_nonnull(strstr(buf, "\"cat\":\"kernel\""));
  ck_assert_ptr_nonnull(strstr(buf, "kfuse stream"));
  ck_assert_ptr_nonnull(strstr(buf, p.launches[0].name));
  free(buf);
  remove(path);
  kf_profile_release(&p);
  release();
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_profile");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, memory_round_trip);
  tcase_add_test(tc, profile_times_and_occupancy);
  tcase_add_test(tc, profile_streams_lanes);
  tcase_add_test(tc, benchmark_and_copy);
  tcase_add_test(tc, trace_has_kernels);
  suite_add_tcase(s, tc);
  return s;
}
