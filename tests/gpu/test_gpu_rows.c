/* test_gpu_rows.c - row kernels whose rows do not fit in registers (the
 * looped variant, one pass for max+sum by online softmax and for mean+variance
 * by Welford; an odd length makes that path W = 1) and the unaligned
 * fallback (W = 1, looped, unpaired), and rows held in registers, on a
 * real GPU:
 *  - fresh random rows against the CPU reference within the computed error
 *    bound (kf_graph_run_reference_bounded), aligned and one element off
 *    alignment;
 *    (one row with a large common offset among them);
 *  - the same inputs with special rows: the first half -inf (a masked row),
 *    all -inf, one +inf, one NaN. Those rows are
 *    compared with the reference within a per-row relative tolerance (NaN
 *    where the reference has NaN); every other row must come out bit for bit
 *    as in the run without them (rows are independent).
 * Skips (exit 77) without a GPU. */
#include "gpu_util.h"
#include "runtime/rt_state.h"

/* G_LADDER (not in the loops over G_COUNT): the residual ladder of issue 18,
 * 8 phases in one held row whose running sums are kept across phases. */
enum {
  G_SOFTMAX,
  G_LOG_SOFTMAX,
  G_LAYERNORM,
  G_VARSUM,
  G_RATIO,
  G_MINSHIFT,
  G_COUNT,
  G_LADDER = G_COUNT
};
static const char *const G_names[G_COUNT + 1] = {
    "softmax", "log_softmax", "layernorm", "variance_sum", "ratio", "min_shift", "ladder"};

enum { SPECIAL_ROWS = 4, OFFSET_ROW = 4 };

static kf_graph *row_graph(int which, kf_dtype dt, int64_t rows, int64_t cols) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  int64_t shape[2] = {rows, cols}, ws[1] = {cols};
  kf_value x = kf_input(g, "x", dt, 2, shape);
  int ax = -1;
  if (which == G_SOFTMAX) {
    kf_set_output(g, kf_softmax(g, x, -1));
  } else if (which == G_LOG_SOFTMAX) {
    kf_set_output(g, kf_log_softmax(g, x, -1));
  } else if (which == G_LAYERNORM) {
    kf_value w = kf_input(g, "w", dt, 1, ws), b = kf_input(g, "b", dt, 1, ws);
    kf_set_output(g, kf_layernorm(g, x, w, b, 1e-5));
  } else if (which == G_RATIO) {
    /* x / sum(y) over the row: a division by a per-row value whose
     * numerator may be infinite while the divisor is finite (the quotient
     * is then +-inf, where the fast form gives NaN and the chunk is
     * computed again) */
    kf_value y = kf_input(g, "y", dt, 2, shape);
    kf_set_output(g, kf_div(g, x, kf_sum(g, kf_abs(g, y), 1, &ax, true)));
  } else if (which == G_MINSHIFT) {
    /* x - min(x) and the min per row (a bf16 min phase runs on pairs) */
    kf_value m = kf_min(g, x, 1, &ax, true);
    kf_set_output(g, kf_sub(g, x, m));
    kf_set_output(g, m);
  } else if (which == G_LADDER) {
    for (int i = 0; i < 8; i++) {
      kf_value e = kf_exp(g, x);
      x = kf_add(g, kf_div(g, e, kf_sum(g, e, 1, &ax, true)), x);
    }
    kf_set_output(g, x);
  } else {
    /* the sum of squared deviations as a per-row output, next to them */
    kf_value d = kf_sub(g, x, kf_mean(g, x, 1, &ax, true));
    kf_set_output(g, kf_sum(g, kf_mul(g, d, d), 1, &ax, false));
    kf_set_output(g, d);
  }
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

static void store_elem(void *buf, kf_dtype dt, int64_t i, double v) {
  switch (dt) {
    case KF_BF16:
      ((uint16_t *)buf)[i] = kf_float_to_bf16((float)v);
      break;
    case KF_F16:
      ((uint16_t *)buf)[i] = kf_float_to_f16((float)v);
      break;
    case KF_F32:
      ((float *)buf)[i] = (float)v;
      break;
    default:
      ((double *)buf)[i] = v;
      break;
  }
}

/* Row 4 of input 0 (x, rows x cols) gets a large common offset (+1000: the
 * mean dwarfs the spread, where a one-pass variance must not cancel); it
 * is finite, so the error bound checks it with the random rows. Rows 0..3
 * become non-finite: the first half -inf (a masked row), all -inf, one
 * +inf, one NaN. Host and device both. */
static void inject(run_io *io, int64_t cols, bool non_finite) {
  kf_host_tensor *h = &io->hin[0];
  if (non_finite) {
    for (int64_t c = 0; c < cols / 2; c++) store_elem(h->data, h->dtype, c, -INFINITY);
    for (int64_t c = 0; c < cols; c++) store_elem(h->data, h->dtype, cols + c, -INFINITY);
    store_elem(h->data, h->dtype, 2 * cols + 777 % cols, INFINITY);
    store_elem(h->data, h->dtype, 3 * cols + 5, NAN);
  } else {
    for (int64_t c = 0; c < cols; c++)
      store_elem(h->data, h->dtype, OFFSET_ROW * cols + c,
                 load_elem(h->data, h->dtype, OFFSET_ROW * cols + c) + 1000.0);
  }
  size_t bytes = (size_t)((OFFSET_ROW + 1) * cols) * kf_dtype_size(h->dtype);
  G_drv->MemcpyHtoD((CUdeviceptr)(uintptr_t)io->din[0].data, h->data, bytes);
}

/* A special row's elements against the reference: NaN for NaN, an infinity
 * for itself, else within rtol of the element plus rtol of the row's
 * largest finite magnitude. Returns the number of bad elements. */
static int64_t check_special_row(const void *got, const void *want, kf_dtype dt, int64_t base,
                                 int64_t n, double *worst) {
  double rtol = dt == KF_F64 ? 1e-11 : dt == KF_F32 ? 1e-5 : 1.0 / 64;
  double scale = 0;
  for (int64_t i = 0; i < n; i++) {
    double w = fabs(load_elem(want, dt, base + i));
    if (isfinite(w) && w > scale) scale = w;
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double g = load_elem(got, dt, base + i), w = load_elem(want, dt, base + i);
    bool ok;
    if (!nonfinite_verdict(g, w, &ok)) {
      double allowed = rtol * (fabs(w) + scale);
      if (allowed > 0 && fabs(g - w) / allowed > *worst) *worst = fabs(g - w) / allowed;
      ok = fabs(g - w) <= allowed;
    }
    if (!ok && bad++ == 0)
      printf("  element %lld: got %.9g want %.9g\n", (long long)(base + i), g, w);
  }
  return bad;
}

/* One graph: bound-checked on random rows, then with special rows. */
static int check_rows(int which, kf_dtype dt, int64_t rows, int64_t cols, size_t offset) {
  kf_graph *g = row_graph(which, dt, rows, cols);
  kf_options opt;
  kf_options_init(&opt);
  G_offset = offset;
  run_io io;
  io_setup(g, &io, 1000 + (uint64_t)which * 17 + (uint64_t)cols + offset);
  char what[128];
  snprintf(what, sizeof what, "%s %s %lld x %lld%s", G_names[which], kf_dtype_name(dt),
           (long long)rows, (long long)cols, offset ? " unaligned" : "");
  inject(&io, cols, false);
  ck_assert_msg(io_bound(g, &io), "%s: no error bound", what);
  int bad = check_plan(g, &opt, &io, false, what);
  /* keep the random-row results, then inject the special rows */
  kf_host_tensor *first = calloc((size_t)io.n_out, sizeof *first);
  ck_assert_ptr_nonnull(first);
  for (int j = 0; j < io.n_out; j++) {
    size_t bytes =
        (size_t)kf_value_numel(g, kf_graph_output(g, j)) * kf_dtype_size(io.hout[j].dtype);
    first[j].data = malloc(bytes);
    ck_assert_ptr_nonnull(first[j].data);
    memcpy(first[j].data, io.hout[j].data, bytes);
  }
  for (int j = 0; j < io.n_out; j++) free(io.bound[j]);
  free(io.bound);
  io.bound = NULL;
  inject(&io, cols, true);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_compile(G_ctx, g, &opt, &plan), KF_OK);
  ck_assert_int_eq(kf_graph_run_reference(g, io.hin, io.n_in, io.href, io.n_out), KF_OK);
  io_poison(&io);
  ck_assert_msg(kf_plan_run(plan, io.din, io.n_in, io.dout, io.n_out, NULL) == KF_OK, "%s: %s",
                what, kf_plan_errmsg(plan));
  io_fetch(&io);
  kf_plan_destroy(plan);
  double worst = 0;
  int64_t special_bad = 0, other_bad = 0;
  for (int j = 0; j < io.n_out; j++) {
    kf_dtype odt = io.hout[j].dtype;
    int64_t per_row = kf_value_numel(g, kf_graph_output(g, j)) / rows;
    for (int r = 0; r < SPECIAL_ROWS; r++)
      special_bad +=
          check_special_row(io.hout[j].data, io.href[j].data, odt, r * per_row, per_row, &worst);
    size_t skip = (size_t)(SPECIAL_ROWS * per_row) * kf_dtype_size(odt);
    size_t bytes = (size_t)(rows * per_row) * kf_dtype_size(odt);
    other_bad +=
        memcmp((char *)io.hout[j].data + skip, (char *)first[j].data + skip, bytes - skip) != 0;
    free(first[j].data);
  }
  free(first);
  printf("rows: %-44s random rows %s; special rows %s (worst %.3g of allowed), other rows %s\n",
         what, bad ? "FAILED" : "ok", special_bad ? "FAILED" : "ok", worst,
         other_bad ? "CHANGED" : "bitwise unchanged");
  io_free(&io);
  G_offset = 0;
  kf_graph_destroy(g);
  return (bad != 0) + (special_bad != 0) + (other_bad != 0);
}

/* Rows too long for one block's registers: 131072 f32, 262144 bf16,
 * 65536 f64. On sm_90 the f32 rows are held by a cluster of 8 blocks
 * (16384 columns each; ratio's two inputs are too many and loop); the
 * others and an odd length loop (1-lane chunks for the odd one). */
START_TEST(looped_rows) {
  int64_t rows = gpu_small() ? 6 : 32;
  int failed = 0;
  for (int which = 0; which < G_COUNT; which++) {
    failed += check_rows(which, KF_F32, rows, 131072, 0);
    failed += check_rows(which, KF_F64, rows, 65536, 0);
  }
  failed += check_rows(G_SOFTMAX, KF_BF16, rows, 262144, 0);
  failed += check_rows(G_LAYERNORM, KF_BF16, rows, 262144, 0);
  failed += check_rows(G_LAYERNORM, KF_F32, rows, 100003, 0);
  failed += check_rows(G_SOFTMAX, KF_F32, rows, 100003, 0);
  ck_assert_int_eq(failed, 0);
}
END_TEST

/* The looped form on the rows a cluster would hold (KFUSE_ROW_SPLIT=0),
 * and the clusters with more rows than clusters in the grid
 * (KFUSE_ROW_WAVES=1: 66 clusters of 8 on an H200, so each takes two
 * rows or more), where a row's slots are written again for the next row:
 * min_shift has one reduction per row (the row ends with a cluster
 * barrier), variance_sum a per-row output. */
START_TEST(split_rows) {
  int64_t rows = gpu_small() ? 6 : 32, many = gpu_small() ? 6 : 150;
  int failed = 0;
  kt_setenv("KFUSE_ROW_SPLIT", "0", 1);
  failed += check_rows(G_SOFTMAX, KF_F32, rows, 131072, 0);
  failed += check_rows(G_LAYERNORM, KF_F32, rows, 131072, 0);
  failed += check_rows(G_LAYERNORM, KF_BF16, rows, 262144, 0);
  kt_unsetenv("KFUSE_ROW_SPLIT");
  kt_setenv("KFUSE_ROW_WAVES", "1", 1);
  failed += check_rows(G_SOFTMAX, KF_F32, many, 131072, 0);
  failed += check_rows(G_MINSHIFT, KF_F32, many, 131072, 0);
  failed += check_rows(G_VARSUM, KF_F32, many, 131072, 0);
  failed += check_rows(G_LAYERNORM, KF_F32, many, 131072, 0);
  kt_unsetenv("KFUSE_ROW_WAVES");
  ck_assert_int_eq(failed, 0);
}
END_TEST

/* Rows held in registers (the common case: the suite's 8192 columns): the
 * bf16 max phase on packed pairs, the row-output divisions that flag a NaN
 * quotient and compute the chunk again, f16/bf16 outputs rounded once by
 * their store; with the special rows above in every graph; the residual
 * ladder (running sums kept across phases, f32; bf16 keeps nothing). */
START_TEST(held_rows) {
  int64_t rows = gpu_small() ? 6 : 64;
  int failed = 0;
  for (int which = 0; which < G_COUNT; which++) {
    failed += check_rows(which, KF_F32, rows, 8192, 0);
    failed += check_rows(which, KF_BF16, rows, 8192, 0);
    failed += check_rows(which, KF_F16, rows, 2048, 0);
  }
  failed += check_rows(G_SOFTMAX, KF_BF16, rows, 1000, 0);
  failed += check_rows(G_RATIO, KF_BF16, rows, 1000, 0);
  /* 128 columns: 4 per thread, so the kept running sums fit (codegen.md) */
  failed += check_rows(G_LADDER, KF_F32, rows, 128, 0);
  failed += check_rows(G_LADDER, KF_BF16, rows, 128, 0);
  failed += check_rows(G_LADDER, KF_F32, rows, 128, 4); /* off the 16-byte path */
  ck_assert_int_eq(failed, 0);
}
END_TEST

/* Whether graph `which` compiles to one staged row launch (sm_90: the next
 * row copied into shared memory while the block works on this one, by
 * `copy`: "kf_bulk_g2s(" or "kf_cp_async16(") whose persistent grid has
 * fewer blocks than rows, so that blocks go through several rows and their
 * staged copies; false (with a message) otherwise. Before sm_90 nothing is
 * staged: true without checking. */
static bool staged_and_striding(int which, kf_dtype dt, int64_t rows, int64_t cols,
                                const char *copy) {
  rt_state *rt;
  ck_assert_int_eq(rt_state_get(G_ctx, &rt), KF_OK);
  if (rt->info.cc_major < 9) return true;
  kf_graph *g = row_graph(which, dt, rows, cols);
  kf_options opt;
  kf_options_init(&opt);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_compile(G_ctx, g, &opt, &plan), KF_OK);
  char *src = kf_plan_source(plan, 0, NULL);
  bool staged = kf_plan_num_launches(plan) == 1 && src && strstr(src, copy);
  kf_free(src);
  run_io io;
  io_setup(g, &io, 5);
  kf_profile prof;
  ck_assert_int_eq(kf_plan_profile(plan, io.din, io.n_in, io.dout, io.n_out, NULL, &prof), KF_OK);
  unsigned grid = prof.n_launches == 1 ? prof.launches[0].grid : 0;
  kf_profile_release(&prof);
  io_free(&io);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  bool ok = staged && grid > 0 && grid < rows;
  if (!ok)
    printf("rows: %s %s %lld x %lld: %s, grid %u\n", G_names[which], kf_dtype_name(dt),
           (long long)rows, (long long)cols, staged ? "staged" : "NOT staged", grid);
  return ok;
}

/* Staged rows (sm_90; off by default: KFUSE_ROW_STAGE turns them on), by
 * bulk copies and by each thread's copies: more rows than resident blocks,
 * so that each block takes several, its next row's copy landing while it
 * works (an uneven count: some blocks take one more); two staged inputs
 * (ratio: x and y, bulk copies); f32, bf16 and f16 rows; the special rows
 * too. */
START_TEST(staged_rows) {
  int64_t rows = 1201; /* above 660, 5 resident blocks on 132 SMs */
  int failed = 0;
  kt_setenv("KFUSE_ROW_STAGE", "2", 1);
  static const int graphs[] = {G_SOFTMAX, G_LAYERNORM, G_RATIO, G_MINSHIFT};
  for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
    failed += !staged_and_striding(graphs[i], KF_BF16, rows, 8192, "kf_bulk_g2s(");
    failed += check_rows(graphs[i], KF_BF16, rows, 8192, 0);
  }
  failed += !staged_and_striding(G_LAYERNORM, KF_F32, rows, 8192, "kf_bulk_g2s(");
  failed += check_rows(G_LAYERNORM, KF_F32, rows, 8192, 0);
  failed += check_rows(G_SOFTMAX, KF_F32, rows, 8192, 0);
  failed += !staged_and_striding(G_SOFTMAX, KF_F16, rows * 8, 2048, "kf_bulk_g2s(");
  failed += check_rows(G_SOFTMAX, KF_F16, rows * 8, 2048, 0);
  kt_setenv("KFUSE_ROW_STAGE", "thread", 1);
  static const int by_thread[] = {G_SOFTMAX, G_LAYERNORM, G_MINSHIFT};
  for (size_t i = 0; i < sizeof by_thread / sizeof by_thread[0]; i++) {
    failed += !staged_and_striding(by_thread[i], KF_BF16, rows, 8192, "kf_cp_async16(");
    failed += check_rows(by_thread[i], KF_BF16, rows, 8192, 0);
  }
  failed += !staged_and_striding(G_LOG_SOFTMAX, KF_F16, rows * 8, 2048, "kf_cp_async16(");
  failed += check_rows(G_LOG_SOFTMAX, KF_F16, rows * 8, 2048, 0);
  kt_unsetenv("KFUSE_ROW_STAGE");
  ck_assert_int_eq(failed, 0);
}
END_TEST

/* Dynamic rows (KFUSE_ROW_PERSIST=dynamic: a persistent grid whose blocks
 * take their next row from a launch-wide counter, reset by the last block
 * out), on their own and with two bulk-copy stages (KFUSE_ROW_STAGE=2: the
 * row number travels with its stage, a row past the end arrives empty):
 * more rows than resident blocks, the same plan run three times (a counter
 * not reset would make the later runs skip rows: their outputs stay
 * poisoned), and the special rows through check_rows. */
START_TEST(dynamic_rows) {
  int64_t rows = 1201;
  int failed = 0;
  static const struct {
    const char *stage, *marker;
  } ways[] = {{NULL, "r = kf_part0_k0_row_take(i)"}, {"2", "_row_of[slot] = r;"}};
  kt_setenv("KFUSE_ROW_PERSIST", "dynamic", 1);
  for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
    if (ways[w].stage)
      kt_setenv("KFUSE_ROW_STAGE", ways[w].stage, 1);
    else
      kt_unsetenv("KFUSE_ROW_STAGE");
    failed += !staged_and_striding(G_SOFTMAX, KF_BF16, rows, 8192, ways[w].marker);
    kf_graph *g = row_graph(G_LAYERNORM, KF_BF16, rows, 8192);
    kf_options opt;
    kf_options_init(&opt);
    kf_plan *plan = NULL;
    ck_assert_int_eq(kf_compile(G_ctx, g, &opt, &plan), KF_OK);
    run_io io;
    io_setup(g, &io, 77);
    ck_assert(io_bound(g, &io));
    ck_assert_int_eq(kf_graph_run_reference(g, io.hin, io.n_in, io.href, io.n_out), KF_OK);
    for (int run = 0; run < 3; run++) {
      io_poison(&io);
      ck_assert_msg(kf_plan_run(plan, io.din, io.n_in, io.dout, io.n_out, NULL) == KF_OK, "%s",
                    kf_plan_errmsg(plan));
      io_fetch(&io);
      char what[96];
      snprintf(what, sizeof what, "dynamic rows%s layernorm bf16, run %d",
               ways[w].stage ? ", staged" : "", run + 1);
      failed += io_check(g, &io, what);
    }
    io_free(&io);
    kf_plan_destroy(plan);
    kf_graph_destroy(g);
    failed += check_rows(G_SOFTMAX, KF_BF16, rows, 8192, 0);
    failed += check_rows(G_MINSHIFT, KF_BF16, rows, 8192, 0);
  }
  failed += check_rows(G_RATIO, KF_F32, rows, 8192, 0); /* persistent only: 2 x 32 KB */
  kt_unsetenv("KFUSE_ROW_STAGE");
  kt_unsetenv("KFUSE_ROW_PERSIST");
  ck_assert_int_eq(failed, 0);
}
END_TEST

/* Off-by-default knobs that change held rows' code but not their results:
 * the output phase computing its values again (KFUSE_ROW_RECOMPUTE=1),
 * held loads first to leave L1 (KFUSE_ROW_STREAM=evict_first), the
 * weights prefetched into L1 (KFUSE_ROW_PREFETCH=1) and the row 8 ahead
 * into L2 (KFUSE_ROW_L2PF=8: prefetched for every row but the last 8), on
 * the special rows too. */
START_TEST(row_knobs) {
  int64_t rows = gpu_small() ? 6 : 64;
  int failed = 0;
  static const char *const knobs[][2] = {{"KFUSE_ROW_RECOMPUTE", "1"},
                                         {"KFUSE_ROW_STREAM", "evict_first"},
                                         {"KFUSE_ROW_PREFETCH", "1"},
                                         {"KFUSE_ROW_L2PF", "8"}};
  for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
    kt_setenv(knobs[i][0], knobs[i][1], 1);
    failed += check_rows(G_SOFTMAX, KF_BF16, rows, 8192, 0);
    failed += check_rows(G_LAYERNORM, KF_BF16, rows, 8192, 0);
    failed += check_rows(G_RATIO, KF_F32, rows, 8192, 0);
    kt_unsetenv(knobs[i][0]);
  }
  ck_assert_int_eq(failed, 0);
}
END_TEST

/* Rows one element off alignment: the W = 1 fallback (looped, one pass per
 * reduction: it stays compact), for held and for long rows. */
START_TEST(unaligned_fallback_rows) {
  int64_t rows = gpu_small() ? 6 : 64;
  int failed = 0;
  for (int which = 0; which < G_COUNT; which++) {
    failed += check_rows(which, KF_F32, rows, 8192, sizeof(float));
    failed += check_rows(which, KF_F32, rows, 131072, sizeof(float));
  }
  failed += check_rows(G_SOFTMAX, KF_BF16, rows, 8192, 2);
  failed += check_rows(G_LAYERNORM, KF_BF16, rows, 8192, 2);
  ck_assert_int_eq(failed, 0);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_rows");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, held_rows);
  tcase_add_test(tc, staged_rows);
  tcase_add_test(tc, row_knobs);
  tcase_add_test(tc, dynamic_rows);
  tcase_add_test(tc, looped_rows);
  tcase_add_test(tc, split_rows);
  tcase_add_test(tc, unaligned_fallback_rows);
  suite_add_tcase(s, tc);
  return s;
}
