/* test_gpu_matmul_lib.c - plans whose matrix products run as cuBLASLt
 * calls, through the public API, on a GPU: small odd shapes, every dtype
 * and epilogue (in the call, split into the next kernel, a cast to f32, a
 * residual, a transposed weight, a batch sharing one weight) against the
 * CPU reference within its bound, in plain, streams and graph mode; and
 * large odd shapes (33x4096x4096, 4095x4097x1000, batch 8 of
 * 512x1024x768 with a shared weight) against the same plan's template
 * kernels (KFUSE_MATMUL=template); operands off 16-byte alignment (the
 * heuristic asked again for their alignments). Every plan must hold a
 * library call:
 * a GPU machine without cuBLASLt fails here. Skips (exit 77) without a GPU. */
#include "gpu/gpu_util.h"

enum { EPI_NONE, EPI_BIAS_GELU_TANH, EPI_BIAS_RELU, EPI_RESIDUAL, EPI_SILU, EPI_CAST, EPI_N };
static const char *const epi_name[EPI_N] = {"none",     "bias+gelu_tanh",     "bias+relu",
                                            "residual", "silu (next kernel)", "cast to f32"};

typedef struct shape {
  int64_t batch, m, n, k;
  bool trans_w, shared_w;
} shape;

/* y = epilogue(x @ w) with x [batch?, m, k] and w [k, n] (or its
 * transpose stored [n, k]; one for the batch when shared_w). */
static kf_graph *product(const shape *s, kf_dtype t, int epi) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  bool batched = s->batch > 1;
  int64_t xs[3] = {s->batch, s->m, s->k}, ws[3] = {s->batch, s->k, s->n};
  kf_value x = batched ? kf_input(g, "x", t, 3, xs) : kf_input(g, "x", t, 2, xs + 1);
  int wr = batched && !s->shared_w ? 3 : 2;
  int64_t *wsh = wr == 3 ? ws : ws + 1;
  kf_value w;
  if (s->trans_w) {
    int64_t st[3] = {s->batch, s->n, s->k};
    kf_value wt = kf_input(g, "w", t, wr, wr == 3 ? st : st + 1);
    int perm[3] = {0, 2, 1}, perm2[2] = {1, 0};
    w = kf_transpose(g, wt, wr == 3 ? perm : perm2);
  } else {
    w = kf_input(g, "w", t, wr, wsh);
  }
  kf_value mm = kf_matmul(g, x, w), y = mm;
  int64_t bs[1] = {s->n};
  if (epi == EPI_BIAS_GELU_TANH || epi == EPI_BIAS_RELU) {
    kf_value b = kf_input(g, "bias", t, 1, bs);
    y = kf_add(g, mm, b);
    y = epi == EPI_BIAS_RELU ? kf_relu(g, y) : kf_gelu_tanh(g, y);
  }
  if (epi == EPI_RESIDUAL) {
    int64_t rs[3] = {s->batch, s->m, s->n};
    y = kf_add(g, mm, kf_input(g, "r", t, batched ? 3 : 2, batched ? rs : rs + 1));
  }
  if (epi == EPI_SILU) y = kf_silu(g, mm);
  if (epi == EPI_CAST) y = t == KF_F32 ? mm : kf_cast(g, mm, KF_F32);
  kf_set_name(g, y, "y");
  kf_set_output(g, y);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

static bool has_library(kf_plan *plan) {
  char *text = kf_plan_describe(plan, KF_FORMAT_TEXT);
  bool yes = text && strstr(text, "a library call");
  kf_free(text);
  return yes;
}

static int G_fallbacks; /* plans cuBLASLt did not take (they ran as templates) */

/* Runs g in mode on io's inputs into io's (poisoned) outputs; need_lib:
 * the plan must hold a library call (else a refusal is counted). */
static void run_mode(kf_graph *g, kf_run_mode mode, run_io *io, const char *what, bool need_lib) {
  kf_options o;
  kf_options_init(&o);
  o.mode = mode;
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &o, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
  io_poison(io);
  kf_status st = kf_plan_run(plan, io->din, io->n_in, io->dout, io->n_out, NULL);
  ck_assert_msg(st == KF_OK, "%s: run failed: %s", what, kf_plan_errmsg(plan));
  bool lib = has_library(plan);
  ck_assert_msg(lib || !need_lib, "%s: no library call in the plan (is cuBLASLt there?)", what);
  if (!lib) printf("fallback: %s ran as template kernels\n", what), G_fallbacks++;
  io_fetch(io);
  kf_plan_destroy(plan);
}

START_TEST(small_shapes_every_epilogue_and_mode) {
  static const shape shapes[] = {{1, 33, 17, 100, false, false},
                                 {1, 7, 129, 65, true, false},
                                 {1, 1, 1, 1, false, false},
                                 {3, 20, 24, 40, false, true},
                                 {2, 16, 8, 12, true, false}};
  static const kf_dtype types[] = {KF_F32, KF_BF16, KF_F16};
  int bad = 0, runs = 0;
  /* the library path itself: at these sizes the measured choice may well be
   * the template (an f32 33x17x100 product took it on the H200) */
  kt_setenv("KFUSE_MATMUL", "library", 1);
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (int ti = 0; ti < 3; ti++)
      for (int e = 0; e < EPI_N; e++) {
        kf_graph *g = product(&shapes[si], types[ti], e);
        run_io io;
        io_setup(g, &io, 17 + si * 31 + (size_t)ti * 7 + (size_t)e);
        ck_assert(io_bound(g, &io));
        for (int mode = 0; mode < 3; mode++) {
          char what[160];
          snprintf(what, sizeof what, "%lldx%lldx%lldx%lld%s%s %s %s mode %d",
                   (long long)shapes[si].batch, (long long)shapes[si].m, (long long)shapes[si].n,
                   (long long)shapes[si].k, shapes[si].trans_w ? " w^T" : "",
                   shapes[si].shared_w ? " shared w" : "", kf_dtype_name(types[ti]), epi_name[e],
                   mode);
          run_mode(g, (kf_run_mode)mode, &io, what, si == 0 || si == 3);
          bad += io_check(g, &io, what);
          runs++;
        }
        io_free(&io);
        kf_graph_destroy(g);
      }
  kt_unsetenv("KFUSE_MATMUL");
  printf("small: %d of %d runs within the reference's bound, %d on the template fallback\n",
         runs - bad, runs, G_fallbacks);
  print_worst("matmul_lib small");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Large odd shapes: the library plan against the template plan of the same
 * graph (kfuse's own kernel, an independent implementation), bf16 with a
 * bias and tanh-GELU, within the fixed bf16 tolerance. The library plan
 * is asked for (KFUSE_MATMUL=library): auto's measured choice may be the
 * template (4095x4097x1000 since the mma.sync kernel is the default:
 * 0.25 ms against cuBLASLt's 0.37), which would compare it with itself. */
START_TEST(large_odd_shapes_match_the_template) {
  static const shape shapes[] = {{1, 33, 4096, 4096, false, false},
                                 {1, 4095, 4097, 1000, false, false},
                                 {1, 4096, 33, 4096, true, false},
                                 {8, 512, 1024, 768, false, true}};
  int n = gpu_small() ? 1 : 4, bad = 0;
  for (int si = 0; si < n; si++) {
    kf_graph *g = product(&shapes[si], KF_BF16, EPI_BIAS_GELU_TANH);
    run_io io;
    io_setup(g, &io, 1000 + (uint64_t)si);
    char what[96];
    snprintf(what, sizeof what, "%lldx%lldx%lldx%lld bf16 bias+gelu_tanh",
             (long long)shapes[si].batch, (long long)shapes[si].m, (long long)shapes[si].n,
             (long long)shapes[si].k);
    kt_setenv("KFUSE_MATMUL", "template", 1);
    kf_plan *tp = NULL;
    ck_assert_int_eq(kf_compile(G_ctx, g, NULL, &tp), KF_OK);
    io_poison(&io);
    ck_assert_int_eq(kf_plan_run(tp, io.din, io.n_in, io.dout, io.n_out, NULL), KF_OK);
    ck_assert(!has_library(tp));
    io_fetch(&io);
    kf_plan_destroy(tp);
    kt_unsetenv("KFUSE_MATMUL");
    io_keep_as_reference(&io);
    kt_setenv("KFUSE_MATMUL", "library", 1);
    run_mode(g, KF_MODE_PLAIN, &io, what, true);
    kt_unsetenv("KFUSE_MATMUL");
    bad += io_check(g, &io, what);
    io_free(&io);
    kf_graph_destroy(g);
  }
  print_worst("matmul_lib large");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Graph mode with new tensor addresses at each run: the library call is
 * captured again and replaces its child graph in the instantiated graph
 * (docs/matmul.md); every run must read and write the new tensors. */
START_TEST(graph_mode_follows_new_addresses) {
  static const shape sh = {1, 96, 80, 72, false, false};
  kf_graph *g = product(&sh, KF_BF16, EPI_BIAS_GELU_TANH);
  run_io io[2];
  for (int i = 0; i < 2; i++) {
    io_setup(g, &io[i], 4242 + (uint64_t)i);
    ck_assert(io_bound(g, &io[i]));
  }
  kt_setenv("KFUSE_MATMUL", "library", 1);
  kf_options o;
  kf_options_init(&o);
  o.mode = KF_MODE_GRAPH;
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &o, &plan) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
  ck_assert(has_library(plan));
  int bad = 0;
  for (int r = 0; r < 5; r++) {
    run_io *x = &io[r % 2];
    io_poison(x);
    kf_status st = kf_plan_run(plan, x->din, x->n_in, x->dout, x->n_out, NULL);
    ck_assert_msg(st == KF_OK, "run %d: %s", r, kf_plan_errmsg(plan));
    io_fetch(x);
    char what[64];
    snprintf(what, sizeof what, "graph mode, run %d on tensors %d", r, r % 2);
    bad += io_check(g, x, what);
  }
  kf_plan_destroy(plan);
  kt_unsetenv("KFUSE_MATMUL");
  for (int i = 0; i < 2; i++) io_free(&io[i]);
  kf_graph_destroy(g);
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Operands 2 and 8 bytes past a 16-byte boundary (views into bigger
 * buffers; the output and any bias or residual too): cuBLASLt's heuristic,
 * told the real alignments, gives candidates for them, or the run takes
 * the launch's template form where it has none (one warning either way),
 * every element within the reference's bound; the same plan then runs aligned
 * tensors (the load's candidates, no new warning) and the misaligned ones
 * again. bf16 and f16, three epilogues, plain and graph mode. */
START_TEST(unaligned_operands_get_their_own_candidates) {
  static const shape sh = {1, 96, 80, 72, false, false};
  static const int epis[3] = {EPI_NONE, EPI_BIAS_GELU_TANH, EPI_RESIDUAL};
  static const size_t offs[2] = {2, 8};
  static const kf_dtype types[2] = {KF_BF16, KF_F16};
  int bad = 0, runs = 0, plans = 0, warned = 0;
  kt_setenv("KFUSE_MATMUL", "library", 1);
  for (int oi = 0; oi < 2; oi++)
    for (int ti = 0; ti < 2; ti++)
      for (int e = 0; e < 3; e++) {
        kf_graph *g = product(&sh, types[ti], epis[e]);
        run_io odd, even;
        G_offset = offs[oi]; /* every allocation starts this far past its base */
        io_setup(g, &odd, 600 + (uint64_t)(oi * 6 + ti * 3 + e));
        ck_assert(io_bound(g, &odd));
        G_offset = 0;
        io_setup(g, &even, 650 + (uint64_t)(oi * 6 + ti * 3 + e));
        ck_assert(io_bound(g, &even));
        for (int mode = 0; mode < 3; mode += 2) {
          char what[160];
          snprintf(what, sizeof what, "96x80x72 %s %s, operands %zu bytes past 16, mode %d",
                   kf_dtype_name(types[ti]), epi_name[epis[e]], offs[oi], mode);
          kf_options o;
          kf_options_init(&o);
          o.mode = (kf_run_mode)mode;
          kf_plan *plan = NULL;
          ck_assert_msg(kf_compile(G_ctx, g, &o, &plan) == KF_OK, "%s: %s", what,
                        kf_ctx_errmsg(G_ctx));
          ck_assert_msg(has_library(plan), "%s: no library call in the plan", what);
          run_io *order[3] = {&odd, &even, &odd};
          /* "aligned to a ": the new candidates' line, or the template
           * form's where cuBLASLt has none (either is right; printed) */
          watch_warnings("aligned to a ");
          for (int r = 0; r < 3; r++) {
            io_poison(order[r]);
            kf_status st = kf_plan_run(plan, order[r]->din, order[r]->n_in, order[r]->dout,
                                       order[r]->n_out, NULL);
            ck_assert_msg(st == KF_OK, "%s, run %d: %s", what, r, kf_plan_errmsg(plan));
            io_fetch(order[r]);
            bad += io_check(g, order[r], what);
            runs++;
          }
          int hits = unwatch_warnings();
          ck_assert_msg(hits == 1, "%s: %d warnings of new candidates, want 1", what, hits);
          warned += hits;
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
      "matmul_lib unaligned operands: %d of %d runs within the reference's bound; new "
      "candidates asked for in %d of %d plans\n",
      runs - bad, runs, warned, plans);
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* The SwiGLU example plans three library calls and one pointwise kernel,
 * and runs (small shapes: its YAML's are large). */
START_TEST(mlp_silu_runs_on_the_library) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_load_yaml(G_ctx, KFUSE_SOURCE_DIR "/examples/graphs/mlp_silu.yaml", &g),
                   KF_OK);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(G_ctx, g, NULL, &plan), KF_OK);
  ck_assert_int_eq(kf_plan_num_kernels(plan), 4);
  ck_assert(has_library(plan));
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_matmul_lib");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, small_shapes_every_epilogue_and_mode);
  tcase_add_test(tc, large_odd_shapes_match_the_template);
  tcase_add_test(tc, graph_mode_follows_new_addresses);
  tcase_add_test(tc, unaligned_operands_get_their_own_candidates);
  tcase_add_test(tc, mlp_silu_runs_on_the_library);
  suite_add_tcase(s, tc);
  return s;
}
