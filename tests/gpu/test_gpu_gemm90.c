/* test_gpu_gemm90.c - the sm_90 matmul template (templates/gemm_sm90.cu)
 * on a Hopper GPU, through plans with KFUSE_MATMUL=template: small shapes
 * with tails in M, N and K, bf16 and f16, each epilogue, against the CPU
 * reference within its bound (every element, outputs poisoned first), in
 * plain and graph mode, in three settings of the template's knobs (clusters,
 * tile order, tile width, staged or direct stores); outputs not 16-byte
 * aligned; inputs not 16-byte aligned (the run falls back to the kernel
 * without tensor maps); large shapes against the same graph's library
 * plan (cuBLASLt); paired products (SwiGLU's two products of one A in one
 * kernel) at small shapes against the reference and at 2048x11008x4096
 * against the library plan. Skips (exit 77) without a GPU, and on one without
 * sm_90 (the template is not planned there). */
#include "gpu/gpu_util.h"

enum { EPI_NONE, EPI_BIAS_GELU_TANH, EPI_RESIDUAL_RELU, EPI_CAST, EPI_TWO, EPI_N };
static const char *const epi_name[EPI_N] = {"none", "bias+gelu_tanh", "residual+relu",
                                            "cast to f32", "two outputs (bias; relu to f32)"};

static kf_graph *product(int64_t m, int64_t n, int64_t k, kf_dtype t, int epi) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  int64_t xs[2] = {m, k}, ws[2] = {k, n}, bs[1] = {n}, rs[2] = {m, n};
  kf_value mm = kf_matmul(g, kf_input(g, "x", t, 2, xs), kf_input(g, "w", t, 2, ws)), y = mm;
  if (epi == EPI_BIAS_GELU_TANH) y = kf_gelu_tanh(g, kf_add(g, mm, kf_input(g, "bias", t, 1, bs)));
  if (epi == EPI_RESIDUAL_RELU) y = kf_relu(g, kf_add(g, mm, kf_input(g, "r", t, 2, rs)));
  if (epi == EPI_CAST) y = kf_cast(g, mm, KF_F32);
  if (epi == EPI_TWO) { /* two staging areas of two dtypes */
    kf_value s = kf_add(g, mm, kf_input(g, "bias", t, 1, bs));
    kf_set_name(g, s, "s");
    kf_set_output(g, s);
    y = kf_cast(g, kf_relu(g, s), KF_F32);
  }
  kf_set_name(g, y, "y");
  kf_set_output(g, y);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

/* Whether launch 0 of the plan is the sm_90 template (its source says). */
static bool on_template(kf_plan *plan) {
  char *src = kf_plan_source(plan, 0, NULL);
  bool yes = src && strstr(src, "wgmma.mma_async");
  kf_free(src);
  return yes;
}

/* The first few elements outside the bound, by (row, col): a layout error
 * shows as a pattern. */
static void show_bad(const run_io *io, int64_t n) {
  const kf_host_tensor *h = &io->hout[0], *r = &io->href[0];
  int shown = 0;
  for (int64_t i = 0; i < h->shape[0] * n && shown < 8; i++) {
    double got = load_elem(h->data, h->dtype, i), want = load_elem(r->data, r->dtype, i);
    double lim = io->bound ? io->bound[0][i] + 1e-2 * fabs(want) + 1e-3 : 1e-2;
    if (!(fabs(got - want) <= lim)) {
      printf("  bad at row %lld col %lld: got %.6g want %.6g\n", (long long)(i / n),
             (long long)(i % n), got, want);
      shown++;
    }
  }
}

static bool G_sm90;

/* One compile and run of g in `mode` on poisoned outputs, checked against
 * the reference: the count of elements outside the bound. `kind` says
 * which kernel the plan must hold (its failure message: `not_kind`). */
static int run_one(kf_graph *g, run_io *io, int mode, bool (*kind)(kf_plan *), const char *not_kind,
                   const char *what, int64_t n) {
  kf_options o;
  kf_options_init(&o);
  o.mode = (kf_run_mode)mode;
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &o, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
  ck_assert_msg(kind(plan), "%s: %s", what, not_kind);
  io_poison(io);
  kf_status st = kf_plan_run(plan, io->din, io->n_in, io->dout, io->n_out, NULL);
  ck_assert_msg(st == KF_OK, "%s: run failed: %s", what, kf_plan_errmsg(plan));
  io_fetch(io);
  kf_plan_destroy(plan);
  int b = io_check(g, io, what);
  if (b) show_bad(io, n);
  return b;
}

START_TEST(small_shapes_against_the_reference) {
  if (!G_sm90) return;
  static const int64_t shapes[][3] = {{128, 256, 64},  {300, 520, 136}, {1, 8, 8},
                                      {129, 64, 1000}, {257, 136, 200}, {64, 1032, 520}};
  static const kf_dtype types[] = {KF_BF16, KF_F16};
  int bad = 0, runs = 0;
  kt_setenv("KFUSE_MATMUL", "template", 1);
  /* The template's settings: the defaults (staged stores, bands of 16 tile
   * rows); clusters of 2 with bands of one tile row and no k-block in
   * flight; each element stored from registers with bands of 2 and 128-wide
   * tiles. The other settings take shapes 1, 3 and 5, bf16 and three
   * epilogues (compiles cost time). KFUSE_TEST_SMALL (the sanitizer runs):
   * the defaults and the first three shapes only. */
  static const char *const knob[] = {"KFUSE_GEMM90", "KFUSE_GEMM90_STAGE", "KFUSE_GEMM90_BAND",
                                     "KFUSE_GEMM90_BN", "KFUSE_GEMM90_INFLIGHT"};
  static const char *const setting[3][5] = {
      {"1", "1", "16", "0", "1"}, {"2", "1", "1", "0", "0"}, {"1", "0", "2", "128", "1"}};
  int n_cl = gpu_small() ? 1 : 3;
  size_t n_shapes = gpu_small() ? 3 : sizeof shapes / sizeof shapes[0];
  for (int cl = 1; cl <= n_cl; cl++) {
    for (int kn = 0; kn < 5; kn++) kt_setenv(knob[kn], setting[cl - 1][kn], 1);
    for (size_t si = 0; si < n_shapes; si++)
      for (int ti = 0; ti < 2; ti++)
        for (int e = 0; e < EPI_N; e++) {
          if (cl > 1 && (si % 2 == 0 || ti == 1 || e == EPI_RESIDUAL_RELU || e == EPI_CAST))
            continue;
          int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
          kf_graph *g = product(m, n, k, types[ti], e);
          run_io io;
          io_setup(g, &io, 5 + si * 13 + (size_t)ti * 3 + (size_t)e);
          ck_assert(io_bound(g, &io));
          for (int mode = 0; mode < 3; mode += 2) {
            char what[128];
            snprintf(what, sizeof what, "%lldx%lldx%lld %s %s mode %d setting %d", (long long)m,
                     (long long)n, (long long)k, kf_dtype_name(types[ti]), epi_name[e], mode, cl);
            bad += run_one(g, &io, mode, on_template, "not on the sm_90 template", what, n);
            runs++;
          }
          io_free(&io);
          kf_graph_destroy(g);
        }
  }
  for (int kn = 0; kn < 5; kn++) kt_unsetenv(knob[kn]);
  kt_unsetenv("KFUSE_MATMUL");
  printf("gemm90 small: %d of %d runs within the reference's bound\n", runs - bad, runs);
  print_worst("gemm90 small");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Outputs whose address is not 16-byte aligned (2 and 4 bytes past it):
 * the staged stores copy them element by element, still every element
 * within the reference's bound. The operands stay aligned (the copy
 * engine's reads need it). */
START_TEST(unaligned_outputs) {
  if (!G_sm90) return;
  static const int epis[2] = {EPI_BIAS_GELU_TANH, EPI_TWO};
  static const size_t offs[2] = {2, 4};
  int bad = 0;
  kt_setenv("KFUSE_MATMUL", "template", 1);
  for (int i = 0; i < 2; i++) {
    kf_graph *g = product(300, 520, 136, KF_BF16, epis[i]);
    G_offset = offs[i]; /* every allocation starts this far past its base */
    run_io io;
    io_setup(g, &io, 900 + (uint64_t)i);
    for (int k = 0; k < io.n_in; k++) { /* the inputs back at their aligned bases */
      io.din[k].data = (char *)io.din[k].data - offs[i];
      size_t bytes = (size_t)value_numel(g, kf_graph_input(g, k)) * kf_dtype_size(io.din[k].dtype);
      G_drv->MemcpyHtoD((CUdeviceptr)(uintptr_t)io.din[k].data, io.hin[k].data, bytes);
    }
    ck_assert(io_bound(g, &io));
    char what[96];
    snprintf(what, sizeof what, "300x520x136 bf16 %s, outputs %zu bytes past 16", epi_name[epis[i]],
             offs[i]);
    kf_plan *plan = NULL;
    ck_assert_msg(kf_compile(G_ctx, g, NULL, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
    ck_assert_msg(on_template(plan), "%s: not on the sm_90 template", what);
    io_poison(&io);
    kf_status st = kf_plan_run(plan, io.din, io.n_in, io.dout, io.n_out, NULL);
    ck_assert_msg(st == KF_OK, "%s: run failed: %s", what, kf_plan_errmsg(plan));
    io_fetch(&io);
    kf_plan_destroy(plan);
    int b = io_check(g, &io, what);
    if (b) show_bad(&io, 520);
    bad += b;
    for (int k = 0; k < io.n_in; k++) io.din[k].data = (char *)io.din[k].data + offs[i];
    io_free(&io);
    G_offset = 0;
    kf_graph_destroy(g);
  }
  kt_unsetenv("KFUSE_MATMUL");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* One run of plan on io, outputs poisoned first, every element against
 * the reference's bound; returns the number of bad outputs. */
static int run_checked(kf_graph *g, kf_plan *plan, run_io *io, int64_t n, const char *what) {
  io_poison(io);
  kf_status st = kf_plan_run(plan, io->din, io->n_in, io->dout, io->n_out, NULL);
  ck_assert_msg(st == KF_OK, "%s: run failed: %s", what, kf_plan_errmsg(plan));
  io_fetch(io);
  int b = io_check(g, io, what);
  if (b) show_bad(io, n);
  return b;
}

/* Inputs (and outputs) 2 and 8 bytes past a 16-byte boundary, views the
 * copy engine cannot read: the run takes the launch's form without tensor
 * maps (generated with the sm_90 kernels off, one warning naming the
 * operand), every element within the reference's bound; the same plan
 * then runs aligned buffers on the sm_90 kernel (no new warning) and the
 * misaligned ones again. bf16 and f16, three epilogues, plain and graph
 * mode (which rebuilds its graph when the kernel changes). */
START_TEST(unaligned_inputs_fall_back) {
  if (!G_sm90) return;
  static const int epis[3] = {EPI_NONE, EPI_BIAS_GELU_TANH, EPI_RESIDUAL_RELU};
  static const size_t offs[2] = {2, 8};
  static const kf_dtype types[2] = {KF_BF16, KF_F16};
  int bad = 0, runs = 0, fell_back = 0, plans = 0;
  kt_setenv("KFUSE_MATMUL", "template", 1);
  for (int oi = 0; oi < 2; oi++)
    for (int ti = 0; ti < 2; ti++)
      for (int e = 0; e < 3; e++) {
        kf_graph *g = product(300, 520, 136, types[ti], epis[e]);
        run_io odd, even;
        G_offset = offs[oi]; /* every allocation starts this far past its base */
        io_setup(g, &odd, 700 + (uint64_t)(oi * 6 + ti * 3 + e));
        ck_assert(io_bound(g, &odd));
        G_offset = 0;
        io_setup(g, &even, 800 + (uint64_t)(oi * 6 + ti * 3 + e));
        ck_assert(io_bound(g, &even));
        for (int mode = 0; mode < 3; mode += 2) {
          char what[160];
          snprintf(what, sizeof what, "300x520x136 %s %s, inputs %zu bytes past 16, mode %d",
                   kf_dtype_name(types[ti]), epi_name[epis[e]], offs[oi], mode);
          kf_options o;
          kf_options_init(&o);
          o.mode = (kf_run_mode)mode;
          kf_plan *plan = NULL;
          ck_assert_msg(kf_compile(G_ctx, g, &o, &plan) == KF_OK, "%s: %s", what,
                        kf_ctx_errmsg(G_ctx));
          ck_assert_msg(on_template(plan), "%s: not on the sm_90 template", what);
          watch_warnings("not 16-byte aligned");
          bad += run_checked(g, plan, &odd, 520, what);
          int hits = unwatch_warnings();
          ck_assert_msg(hits == 1, "%s: %d fallback warnings, want 1", what, hits);
          fell_back += hits;
          watch_warnings("not 16-byte aligned");
          bad += run_checked(g, plan, &even, 520, what);
          bad += run_checked(g, plan, &odd, 520, what);
          hits = unwatch_warnings();
          ck_assert_msg(hits == 0, "%s: %d more fallback warnings", what, hits);
          runs += 3;
          plans++;
          kf_plan_destroy(plan);
        }
        G_offset = offs[oi];
        io_free(&odd);
        G_offset = 0;
        io_free(&even);
        kf_graph_destroy(g);
      }
  kt_unsetenv("KFUSE_MATMUL");
  printf(
      "gemm90 unaligned inputs: %d of %d runs within the reference's bound; the fallback "
      "taken in %d of %d plans\n",
      runs - bad, runs, fell_back, plans);
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Large shapes: the template plan against the library plan of the same
 * graph, within the fixed bf16 tolerance. */
START_TEST(large_shapes_match_the_library) {
  if (!G_sm90) return;
  static const int64_t shapes[][3] = {
      {4096, 4096, 4096}, {4095, 4104, 1000}, {33, 4096, 4096}, {2048, 11008, 4096}};
  int n = gpu_small() ? 1 : 4, bad = 0;
  for (int si = 0; si < n; si++) {
    const int64_t *s = shapes[si];
    kf_graph *g = product(s[0], s[1], s[2], KF_BF16, EPI_BIAS_GELU_TANH);
    run_io io;
    io_setup(g, &io, 700 + (uint64_t)si);
    char what[96];
    snprintf(what, sizeof what, "%lldx%lldx%lld bf16 bias+gelu_tanh", (long long)s[0],
             (long long)s[1], (long long)s[2]);
    kt_setenv("KFUSE_MATMUL", "library", 1);
    kf_plan *lp = NULL;
    ck_assert_int_eq(kf_compile(G_ctx, g, NULL, &lp), KF_OK);
    io_poison(&io);
    ck_assert_int_eq(kf_plan_run(lp, io.din, io.n_in, io.dout, io.n_out, NULL), KF_OK);
    io_fetch(&io);
    kf_plan_destroy(lp);
    io_keep_as_reference(&io);
    kt_setenv("KFUSE_MATMUL", "template", 1);
    kf_plan *tp = NULL;
    ck_assert_int_eq(kf_compile(G_ctx, g, NULL, &tp), KF_OK);
    ck_assert_msg(on_template(tp), "%s: not on the sm_90 template", what);
    io_poison(&io);
    ck_assert_int_eq(kf_plan_run(tp, io.din, io.n_in, io.dout, io.n_out, NULL), KF_OK);
    io_fetch(&io);
    kf_plan_destroy(tp);
    kt_unsetenv("KFUSE_MATMUL");
    int b = io_check(g, &io, what);
    if (b) show_bad(&io, s[1]);
    bad += b;
    io_free(&io);
    kf_graph_destroy(g);
  }
  print_worst("gemm90 large");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* The paired product (docs/matmul.md): silu(x @ wg) * (x @ wu), with a
 * residual when res, as one kernel. */
static kf_graph *swiglu(int64_t m, int64_t n, int64_t k, kf_dtype t, bool res) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  int64_t xs[2] = {m, k}, ws[2] = {k, n}, rs[2] = {m, n};
  kf_value x = kf_input(g, "x", t, 2, xs);
  kf_value gate = kf_matmul(g, x, kf_input(g, "wg", t, 2, ws));
  kf_value up = kf_matmul(g, x, kf_input(g, "wu", t, 2, ws));
  kf_value y = kf_mul(g, kf_silu(g, gate), up);
  if (res) y = kf_add(g, y, kf_input(g, "r", t, 2, rs));
  kf_set_name(g, y, "y");
  kf_set_output(g, y);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

static bool paired(kf_plan *plan) {
  char *text = kf_plan_describe(plan, KF_FORMAT_TEXT);
  bool yes = text && strstr(text, "a paired product (two B, one A)");
  kf_free(text);
  return yes && kf_plan_num_kernels(plan) == 1 && on_template(plan);
}

/* Paired products at small shapes with tails in M, N (the output tile is
 * 128 or 64 wide) and K, bf16 and f16, with and without a residual, plain
 * and graph mode, every element within the reference's bound; then
 * (shapes 1 and 3, bf16) clusters of 2 (each B box multicast from its own
 * map) and 64-wide output tiles (KFUSE_GEMM90_BN=128). */
START_TEST(paired_products_against_the_reference) {
  if (!G_sm90) return;
  static const int64_t shapes[][3] = {{300, 520, 136}, {1, 8, 8},       {129, 64, 1000},
                                      {257, 136, 200}, {64, 1032, 520}, {200, 72, 48}};
  static const kf_dtype types[] = {KF_BF16, KF_F16};
  static const char *const setting[3][2] = {{"1", "0"}, {"2", "0"}, {"1", "128"}};
  int bad = 0, runs = 0;
  kt_setenv("KFUSE_MATMUL", "template", 1);
  size_t n_shapes = gpu_small() ? 3 : sizeof shapes / sizeof shapes[0];
  for (int st = 0; st < (gpu_small() ? 1 : 3); st++) {
    kt_setenv("KFUSE_GEMM90", setting[st][0], 1);
    kt_setenv("KFUSE_GEMM90_BN", setting[st][1], 1);
    for (size_t si = 0; si < n_shapes; si++)
      for (int ti = 0; ti < 2; ti++)
        for (int res = 0; res < 2; res++) {
          if (st > 0 && (si % 2 == 1 || si > 3 || ti == 1)) continue;
          int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
          kf_graph *g = swiglu(m, n, k, types[ti], res);
          run_io io;
          io_setup(g, &io, 300 + si * 7 + (size_t)ti * 3 + (size_t)res);
          ck_assert(io_bound(g, &io));
          for (int mode = 0; mode < 3; mode += 2) {
            char what[128];
            snprintf(what, sizeof what, "pair %lldx%lldx%lld %s%s mode %d setting %d", (long long)m,
                     (long long)n, (long long)k, kf_dtype_name(types[ti]), res ? " + residual" : "",
                     mode, st);
            bad += run_one(g, &io, mode, paired, "not one paired sm_90 kernel", what, n);
            runs++;
          }
          io_free(&io);
          kf_graph_destroy(g);
        }
  }
  kt_unsetenv("KFUSE_GEMM90");
  kt_unsetenv("KFUSE_GEMM90_BN");
  kt_unsetenv("KFUSE_MATMUL");
  printf("gemm90 paired: %d of %d runs within the reference's bound\n", runs - bad, runs);
  print_worst("gemm90 paired");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* A paired product whose inputs are 2 bytes past a 16-byte boundary: the
 * run takes the launch's form without tensor maps (the simple kernel with
 * two accumulators, one warning), every element within the reference's
 * bound; aligned inputs then run the paired sm_90 kernel again. Plain and
 * graph mode. */
START_TEST(paired_unaligned_inputs_fall_back) {
  if (!G_sm90) return;
  int bad = 0;
  kt_setenv("KFUSE_MATMUL", "template", 1);
  kf_graph *g = swiglu(300, 520, 136, KF_BF16, true);
  run_io odd, even;
  G_offset = 2;
  io_setup(g, &odd, 950);
  ck_assert(io_bound(g, &odd));
  G_offset = 0;
  io_setup(g, &even, 951);
  ck_assert(io_bound(g, &even));
  for (int mode = 0; mode < 3; mode += 2) {
    char what[96];
    snprintf(what, sizeof what, "pair 300x520x136 bf16 + residual, inputs 2 bytes past 16, mode %d",
             mode);
    kf_options o;
    kf_options_init(&o);
    o.mode = (kf_run_mode)mode;
    kf_plan *plan = NULL;
    ck_assert_msg(kf_compile(G_ctx, g, &o, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
    ck_assert_msg(paired(plan), "%s: not one paired sm_90 kernel", what);
    watch_warnings("not 16-byte aligned");
    bad += run_checked(g, plan, &odd, 520, what);
    int hits = unwatch_warnings();
    ck_assert_msg(hits == 1, "%s: %d fallback warnings, want 1", what, hits);
    bad += run_checked(g, plan, &even, 520, what);
    bad += run_checked(g, plan, &odd, 520, what);
    kf_plan_destroy(plan);
  }
  G_offset = 2;
  io_free(&odd);
  G_offset = 0;
  io_free(&even);
  kf_graph_destroy(g);
  kt_unsetenv("KFUSE_MATMUL");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* A large paired product (SwiGLU at 2048 tokens, 4096 -> 11008, with the
 * residual) against the library plan of the same graph (two cuBLASLt
 * products, then the epilogue kernel), within the fixed bf16 tolerance. */
START_TEST(large_paired_matches_the_library) {
  if (!G_sm90) return;
  kf_graph *g = swiglu(2048, 11008, 4096, KF_BF16, true);
  run_io io;
  io_setup(g, &io, 777);
  kt_setenv("KFUSE_MATMUL", "library", 1);
  kf_plan *lp = NULL;
  ck_assert_int_eq(kf_compile(G_ctx, g, NULL, &lp), KF_OK);
  io_poison(&io);
  ck_assert_int_eq(kf_plan_run(lp, io.din, io.n_in, io.dout, io.n_out, NULL), KF_OK);
  io_fetch(&io);
  kf_plan_destroy(lp);
  io_keep_as_reference(&io);
  kt_setenv("KFUSE_MATMUL", "template", 1);
  kf_plan *tp = NULL;
  ck_assert_int_eq(kf_compile(G_ctx, g, NULL, &tp), KF_OK);
  ck_assert_msg(paired(tp), "2048x11008x4096: not one paired sm_90 kernel");
  io_poison(&io);
  ck_assert_int_eq(kf_plan_run(tp, io.din, io.n_in, io.dout, io.n_out, NULL), KF_OK);
  io_fetch(&io);
  kf_plan_destroy(tp);
  kt_unsetenv("KFUSE_MATMUL");
  int b = io_check(g, &io, "pair 2048x11008x4096 bf16 + residual");
  if (b) show_bad(&io, 11008);
  io_free(&io);
  kf_graph_destroy(g);
  print_worst("gemm90 paired large");
  ck_assert_int_eq(b, 0);
}
END_TEST

static Suite *make_suite(void) {
  int major = 0, minor = 0;
  kf_device_info info;
  if (kf_device_query(G_ctx, 0, &info) == KF_OK) major = info.cc_major, minor = info.cc_minor;
  G_sm90 = major == 9 && minor == 0;
  if (!G_sm90) printf("SKIP: not an sm_90 GPU: the template is not planned there\n");
  Suite *s = suite_create("gpu_gemm90");
  TCase *tc = tcase_create("gemm90");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, small_shapes_against_the_reference);
  tcase_add_test(tc, unaligned_outputs);
  tcase_add_test(tc, unaligned_inputs_fall_back);
  tcase_add_test(tc, paired_products_against_the_reference);
  tcase_add_test(tc, paired_unaligned_inputs_fall_back);
  suite_add_tcase(s, tc);
  /* A case of its own, so that CK_RUN_CASE=gemm90 runs only the small
   * shapes: compute-sanitizer racecheck fails inside itself at the large
   * ones ("failed to handle a hardware exception"), where memcheck and the
   * plain runs are clean (docs/matmul.md, "Sanitizers"). */
  TCase *large = tcase_create("large");
  tcase_set_timeout(large, 600);
  tcase_add_test(large, large_shapes_match_the_library);
  tcase_add_test(large, large_paired_matches_the_library);
  suite_add_tcase(s, large);
  return s;
}
