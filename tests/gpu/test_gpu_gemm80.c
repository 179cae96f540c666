/* test_gpu_gemm80.c - the mma.sync matmul template (templates/gemm_sm80.cu)
 * on an sm_80 to sm_90 GPU through plans (KFUSE_MATMUL=template; on sm_90
 * KFUSE_GEMM90=0, so that the sm_90 template leaves every product to it):
 * shapes with tails in M, N and K and odd N and K, bf16 and f16, each
 * epilogue, batched with a shared or a batched weight, operands 2 bytes
 * off their 16-byte alignment, every element against the CPU reference within its bound on poisoned
 * outputs; large odd shapes against the same graph's library plan. Skips (exit 77) without a GPU,
 * and on one outside sm_80 to sm_90 (not planned there). */
#include "gpu/gpu_util.h"

enum { EPI_NONE, EPI_BIAS_GELU_TANH, EPI_RESIDUAL_RELU, EPI_CAST, EPI_N };
static const char *const epi_name[EPI_N] = {"none", "bias+gelu_tanh", "residual+relu",
                                            "cast to f32"};

/* y = epi(x @ w): x [batch, m, k] ([m, k] for batch 1), w [k, n], or
 * [batch, k, n] with wb. */
static kf_graph *product(int64_t batch, int64_t m, int64_t n, int64_t k, bool wb, kf_dtype t,
                         int epi) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  int ra = batch > 1 ? 3 : 2, rw = wb ? 3 : 2;
  int64_t xs[3] = {batch, m, k}, ws[3] = {batch, k, n}, bs[1] = {n}, rs[3] = {batch, m, n};
  kf_value x = kf_input(g, "x", t, ra, xs + 3 - ra);
  kf_value w = kf_input(g, "w", t, rw, ws + 3 - rw);
  kf_value mm = kf_matmul(g, x, w), y = mm;
  if (epi == EPI_BIAS_GELU_TANH) y = kf_gelu_tanh(g, kf_add(g, mm, kf_input(g, "bias", t, 1, bs)));
  if (epi == EPI_RESIDUAL_RELU) y = kf_relu(g, kf_add(g, mm, kf_input(g, "r", t, ra, rs + 3 - ra)));
  if (epi == EPI_CAST) y = kf_cast(g, mm, KF_F32);
  kf_set_name(g, y, "y");
  kf_set_output(g, y);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

/* Whether launch 0 of the plan is the mma.sync template (its source says). */
static bool on_template(kf_plan *plan) {
  char *src = kf_plan_source(plan, 0, NULL);
  bool yes = src && strstr(src, "kf_g80_tile<");
  kf_free(src);
  return yes;
}

static bool G_fits;

/* Compiles g (mode), checks it is on the template, runs it on poisoned
 * outputs and checks every element; returns the number of bad outputs. */
static int run_checked(kf_graph *g, run_io *io, int mode, const char *what) {
  kf_options o;
  kf_options_init(&o);
  o.mode = (kf_run_mode)mode;
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &o, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
  ck_assert_msg(on_template(plan), "%s: not on the mma.sync template", what);
  io_poison(io);
  kf_status st = kf_plan_run(plan, io->din, io->n_in, io->dout, io->n_out, NULL);
  ck_assert_msg(st == KF_OK, "%s: run failed: %s", what, kf_plan_errmsg(plan));
  io_fetch(io);
  kf_plan_destroy(plan);
  return io_check(g, io, what);
}

START_TEST(small_shapes_against_the_reference) {
  if (!G_fits) return;
  /* batch, m, n, k, batched weight */
  static const int64_t shapes[][5] = {
      {1, 1, 8, 8, 0},       {1, 300, 520, 136, 0}, {1, 129, 64, 1000, 0}, {1, 33, 17, 101, 0},
      {1, 257, 136, 200, 0}, {1, 64, 1031, 520, 0}, {1, 200, 72, 47, 0},   {8, 64, 72, 40, 0},
      {3, 100, 136, 72, 1},  {5, 17, 9, 33, 1}};
  static const kf_dtype types[] = {KF_BF16, KF_F16};
  int bad = 0, runs = 0;
  kt_setenv("KFUSE_MATMUL", "template", 1);
  kt_setenv("KFUSE_GEMM90", "0", 1);
  size_t n_shapes = gpu_small() ? 4 : sizeof shapes / sizeof shapes[0];
  for (size_t si = 0; si < n_shapes; si++)
    for (int ti = 0; ti < 2; ti++)
      for (int e = 0; e < EPI_N; e++) {
        const int64_t *s = shapes[si];
        kf_graph *g = product(s[0], s[1], s[2], s[3], s[4] != 0, types[ti], e);
        /* every third case with each tensor off its 16-byte alignment:
         * the element-by-element copy instead of cp.async. One element of
         * the widest tensor (the f32 output of the cast), since a tensor
         * off its element alignment is refused at run time. */
        G_offset = (si + (size_t)e) % 3 == 2 ? (e == EPI_CAST ? 4 : 2) : 0;
        run_io io;
        io_setup(g, &io, 5 + si * 13 + (size_t)ti * 3 + (size_t)e);
        ck_assert(io_bound(g, &io));
        for (int mode = 0; mode < 3; mode += 2) {
          char what[160];
          snprintf(what, sizeof what, "%lld x %lldx%lldx%lld%s %s %s mode %d%s", (long long)s[0],
                   (long long)s[1], (long long)s[2], (long long)s[3],
                   s[4] ? " (batched weight)" : "", kf_dtype_name(types[ti]), epi_name[e], mode,
                   G_offset ? " misaligned" : "");
          int b = run_checked(g, &io, mode, what);
          bad += b;
          runs++;
        }
        io_free(&io);
        G_offset = 0;
        kf_graph_destroy(g);
      }
  kt_unsetenv("KFUSE_GEMM90");
  kt_unsetenv("KFUSE_MATMUL");
  printf("gemm80 small: %d of %d runs within the reference's bound\n", runs - bad, runs);
  print_worst("gemm80 small");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Large shapes: the template plan against the library plan of the same
 * graph (the library's epilogue of a 16-bit product runs in the next
 * kernel, with the graph's roundings), within the fixed bf16 tolerance. */
START_TEST(large_shapes_match_the_library) {
  if (!G_fits) return;
  static const int64_t shapes[][4] = {
      {1, 4095, 4097, 1000}, {8, 512, 1024, 768}, {1, 4096, 4096, 4096}};
  int n = gpu_small() ? 1 : 3, bad = 0;
  G_offset = 0; /* the suite does not fork: a failed case before may have left it set */
  kt_setenv("KFUSE_GEMM90", "0", 1);
  for (int si = 0; si < n; si++) {
    const int64_t *s = shapes[si];
    kf_graph *g = product(s[0], s[1], s[2], s[3], false, KF_BF16, EPI_BIAS_GELU_TANH);
    run_io io;
    io_setup(g, &io, 700 + (uint64_t)si);
    char what[96];
    snprintf(what, sizeof what, "%lld x %lldx%lldx%lld bf16 bias+gelu_tanh", (long long)s[0],
             (long long)s[1], (long long)s[2], (long long)s[3]);
    kt_setenv("KFUSE_MATMUL", "library", 1);
    kf_plan *lp = NULL;
    ck_assert_int_eq(kf_compile(G_ctx, g, NULL, &lp), KF_OK);
    io_poison(&io);
    kf_status st = kf_plan_run(lp, io.din, io.n_in, io.dout, io.n_out, NULL);
    ck_assert_msg(st == KF_OK, "%s: the library plan failed: %s", what, kf_plan_errmsg(lp));
    io_fetch(&io);
    kf_plan_destroy(lp);
    io_keep_as_reference(&io);
    kt_setenv("KFUSE_MATMUL", "template", 1);
    bad += run_checked(g, &io, 0, what);
    kt_unsetenv("KFUSE_MATMUL");
    io_free(&io);
    kf_graph_destroy(g);
  }
  kt_unsetenv("KFUSE_GEMM90");
  print_worst("gemm80 large");
  ck_assert_int_eq(bad, 0);
}
END_TEST

static Suite *make_suite(void) {
  /* off by default until this suite has passed on a GPU (docs/matmul.md) */
  kt_setenv("KFUSE_GEMM80", "1", 1);
  int cc = 0;
  kf_device_info info;
  if (kf_device_query(G_ctx, 0, &info) == KF_OK) cc = info.cc_major * 10 + info.cc_minor;
  G_fits = cc >= 80 && cc <= 90;
  if (!G_fits) printf("SKIP: not an sm_80 to sm_90 GPU: the template is not planned there\n");
  Suite *s = suite_create("gpu_gemm80");
  TCase *tc = tcase_create("gemm80");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, small_shapes_against_the_reference);
  tcase_add_test(tc, large_shapes_match_the_library);
  suite_add_tcase(s, tc);
  return s;
}
