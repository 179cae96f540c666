/* test_reduce_edges.c - regression tests of the reductions that did not
 * plan or compile (issue 18): extent-1 reductions (a batch of 1, a scalar,
 * softmax over a length-1 axis) become pointwise copies, axes that do not
 * merge get a per-dim indexed reduce kernel, and a launch of many strided
 * reductions keeps its shared memory under 48 KB. Each plans, emits and
 * compiles for sm_90 (no GPU needed); the CPU reference runs. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "kfuse.h"

static char G_dir[64];
static kf_ctx *G_ctx;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static void setup(void) {
  snprintf(G_dir, sizeof G_dir, "/tmp/kfuse-redge-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(G_dir));
  setenv("KFUSE_CACHE_DIR", G_dir, 1);
  ck_assert_int_eq(kf_ctx_create(&G_ctx), KF_OK);
  kf_ctx_set_log(G_ctx, NULL, NULL);
}

static void teardown(void) {
  kf_ctx_destroy(G_ctx);
  nftw(G_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Plans g (fusion on or off), compiles it for sm_90 and returns the plan's
 * JSON (caller frees with kf_free) and launch 0's source in *src. */
static char *compile_ok(kf_graph *g, bool fusion, char **src) {
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  opt.fusion = fusion;
  kf_plan *plan = NULL;
  kf_status st = kf_compile(G_ctx, g, &opt, &plan);
  ck_assert_msg(st == KF_OK, "compile failed: %s", kf_ctx_errmsg(G_ctx));
  char *json = kf_plan_describe(plan, KF_FORMAT_JSON);
  ck_assert_ptr_nonnull(json);
  if (src) {
    *src = kf_plan_source(plan, 0, NULL);
    ck_assert_ptr_nonnull(*src);
  }
  kf_plan_destroy(plan);
  return json;
}

/* Whether the plan's JSON holds text (both written without spaces, so
 * that the JSON's spacing does not matter). */
static bool has(const char *json, const char *text) {
  char *a = malloc(strlen(json) + 1), *b = malloc(strlen(text) + 1);
  ck_assert(a && b);
  size_t n = 0, m = 0;
  for (const char *c = json; *c; c++)
    if (*c != ' ') a[n++] = *c;
  for (const char *c = text; *c; c++)
    if (*c != ' ') b[m++] = *c;
  a[n] = b[m] = '\0';
  bool found = strstr(a, b) != NULL;
  free(a), free(b);
  return found;
}

static kf_graph *new_graph(void) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  return g;
}

/* mean over axis 0 of [1, 4096] (a batch of 1): stored an undefined red1. */
START_TEST(mean_of_batch_one) {
  kf_graph *g = new_graph();
  int64_t s[2] = {1, 4096};
  int ax = 0;
  kf_set_output(g, kf_mean(g, kf_input(g, "x", KF_F32, 2, s), 1, &ax, false));
  for (int fusion = 0; fusion < 2; fusion++) {
    char *src = NULL, *json = compile_ok(g, fusion, &src);
    ck_assert_msg(has(json, "\"kind\": \"pointwise\""), "%s", json);
    ck_assert_ptr_null(strstr(src, "red1"));
    kf_free(json), kf_free(src);
  }
  kf_graph_destroy(g);
}
END_TEST

/* sum, mean, max and min of a rank-0 value, and over only 1-extents. */
START_TEST(reductions_of_one_element) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 0, NULL);
  int64_t s[3] = {3, 1, 5};
  kf_value y = kf_input(g, "y", KF_F16, 3, s);
  int ax = 1;
  kf_set_output(g, kf_sum(g, x, 0, NULL, false));
  kf_set_output(g, kf_mean(g, x, 0, NULL, true));
  kf_set_output(g, kf_max(g, y, 1, &ax, false));
  kf_set_output(g, kf_min(g, y, 1, &ax, true));
  kf_set_output(g, kf_sum(g, y, 1, &ax, true));
  char *json = compile_ok(g, true, NULL);
  ck_assert(!has(json, "\"kind\": \"reduce\""));
  ck_assert(!has(json, "\"kind\": \"row\""));
  kf_free(json);
  kf_graph_destroy(g);
}
END_TEST

/* softmax over [8, 1] (ERR_UNSUPPORTED bad row extents 0 x 0) and over a
 * middle axis of length 1: one pointwise kernel each. */
START_TEST(softmax_over_length_one) {
  int64_t a[2] = {8, 1}, b[3] = {4, 1, 6};
  for (int i = 0; i < 2; i++) {
    kf_graph *g = new_graph();
    kf_value x = kf_input(g, "x", KF_F32, i ? 3 : 2, i ? b : a);
    kf_set_output(g, kf_softmax(g, x, i ? 1 : -1));
    char *json = compile_ok(g, true, NULL);
    ck_assert_msg(has(json, "\"n_kernels\": 1,"), "%s", json);
    ck_assert_msg(has(json, "\"kind\": \"pointwise\""), "%s", json);
    kf_free(json);
    kf_graph_destroy(g);
  }
}
END_TEST

/* A sum over axes 0 and 2 of [3, 4, 5] ("axes that do not merge"): one
 * reduce kernel, the operand indexed per dim. */
START_TEST(axes_that_do_not_merge) {
  kf_graph *g = new_graph();
  int64_t s[3] = {3, 4, 5};
  int axes[2] = {0, 2};
  kf_set_output(g, kf_sum(g, kf_input(g, "x", KF_F32, 3, s), 2, axes, false));
  char *src = NULL, *json = compile_ok(g, true, &src);
  ck_assert_msg(has(json, "\"outer\": 4, \"red\": 15, \"inner\": 1, \"strided\": true"), "%s",
                json);
  ck_assert_msg(strstr(src, "((k) / 5) * 20 + (o) * 5 + (k) % 5"), "%s", src);
  kf_free(json), kf_free(src);
  kf_graph_destroy(g);
  /* and with kept inner axes (the strided template), every rank-4 set */
  int64_t t[4] = {2, 3, 4, 5};
  for (unsigned m = 1; m < 16; m++) {
    g = new_graph();
    int ax[4], n = 0;
    for (int d = 0; d < 4; d++)
      if (m & (1u << d)) ax[n++] = d;
    kf_set_output(g, kf_max(g, kf_input(g, "x", KF_BF16, 4, t), n, ax, m & 1));
    kf_free(compile_ok(g, true, NULL));
    kf_graph_destroy(g);
  }
}
END_TEST

/* Many independent strided reductions of one input (every adjacent axis
 * set that keeps the last axis): their launch passed 48 KB of static
 * shared memory (ptxas: 0x17104 bytes). */
START_TEST(packed_shared_memory) {
  kf_graph *g = new_graph();
  int64_t s[4] = {2, 3, 4, 5};
  kf_value x = kf_input(g, "x", KF_F32, 4, s);
  static const unsigned masks[] = {1, 2, 4, 3, 6, 7};
  for (int i = 0; i < 6; i++) {
    int ax[4], n = 0;
    for (int d = 0; d < 4; d++)
      if (masks[i] & (1u << d)) ax[n++] = d;
    kf_set_output(g, kf_sum(g, x, n, ax, false));
    kf_set_output(g, kf_max(g, x, n, ax, true));
    kf_set_output(g, kf_min(g, x, n, ax, true));
    kf_set_output(g, kf_mean(g, x, n, ax, false));
  }
  char *json = compile_ok(g, true, NULL);
  ck_assert_msg(has(json, "\"rule\": \"shared-memory\""), "no shared-memory decision");
  kf_free(json);
  kf_graph_destroy(g);
}
END_TEST

/* Contiguous reductions (inner == 1: full reductions, axes that do not
 * merge with the last reduced): their plan comes from the shape alone
 * (elements per step, threads, split), so a fused prologue (reading bf16)
 * and the unfused reduction (reading the f32 cast) sum in one order; few
 * outputs are split over enough blocks to fill the GPU (a full sum of 2^26
 * f32 had 528 blocks of scalar loads; fam41's 106 outputs 530). Every
 * variant compiles: 8, 4, 2 and 1 elements per step (runs of 4096, 12, 6,
 * 5), f32, bf16, f64 and i32, a per-dim index, a stored prologue value. */
/* Compiles g and returns the source of its last launch (the reduction's). */
static char *last_source(kf_graph *g, bool fusion) {
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  opt.fusion = fusion;
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &opt, &plan) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
  char *src = kf_plan_source(plan, kf_plan_num_launches(plan) - 1, NULL);
  ck_assert_ptr_nonnull(src);
  kf_plan_destroy(plan);
  return src;
}

static void contiguous_case(kf_dtype dt, int rank, const int64_t *shape, int n, const int *axes,
                            const char *want) {
  char *line[2] = {NULL, NULL};
  for (int fusion = 0; fusion < 2; fusion++) {
    kf_graph *g = new_graph();
    kf_value x = kf_input(g, "x", dt, rank, shape);
    kf_value c = kf_cast(g, kf_mul(g, x, x), dt == KF_I32 ? KF_I32 : KF_F32);
    kf_set_output(g, kf_sum(g, c, n, axes, false));
    char *src = last_source(g, fusion);
    char *reduce = strstr(src, "decisions: reduce:");
    ck_assert_msg(reduce != NULL, "%s", src);
    line[fusion] = strndup(reduce, strcspn(reduce, "\n"));
    ck_assert_msg(strstr(line[fusion], want), "want '%s' in %s", want, line[fusion]);
    if (strstr(want, "8 elements") && dt != KF_F64)
      ck_assert_msg(strstr(src, "kf_ldv<"), "no vector load: %s", line[fusion]);
    kf_free(src);
    kf_graph_destroy(g);
  }
  /* fused reads x (the mul and cast fused), unfused the cast's result */
  ck_assert_msg(strcmp(strstr(line[0], "a block"), strstr(line[1], "a block")) == 0,
                "fused and unfused plans differ:\n%s\n%s", line[0], line[1]);
  free(line[0]), free(line[1]);
}

START_TEST(contiguous_plan_from_shape) {
  int all[3] = {0, 1, 2}, a02[2] = {0, 2};
  int64_t big[1] = {(int64_t)1 << 26}, f41[3] = {128, 106, 4096};
  contiguous_case(KF_BF16, 1, big, 1, all,
                  "1 x 67108864 contiguous, a block of 256 per output, 8 elements per step, "
                  "split over 2048 blocks of 32768");
  contiguous_case(KF_BF16, 3, f41, 2, a02,
                  "106 x 524288 contiguous, a block of 256 per output, 8 elements per step, "
                  "split over 20 blocks of 26216");
  int64_t r12[3] = {7, 3, 12}, r6[3] = {5, 9, 6}, r5[3] = {4, 3, 5}, small[2] = {3, 40};
  contiguous_case(KF_F32, 3, r12, 2, a02,
                  "3 x 84 contiguous, a block of 32 per output, 4 elements");
  contiguous_case(KF_F64, 3, r6, 2, a02, "9 x 30 contiguous, a block of 32 per output, 2 elements");
  contiguous_case(KF_I32, 3, r5, 2, a02, "3 x 20 contiguous, a block of 32 per output, 1 elements");
  contiguous_case(KF_F32, 2, small, 2, all,
                  "1 x 120 contiguous, a block of 32 per output, 8 elements");
  /* a full-size prologue value stored as it is visited (sibling merge) */
  kf_graph *g = new_graph();
  int64_t s[2] = {1000, 4096};
  kf_value x = kf_input(g, "x", KF_BF16, 2, s);
  kf_set_output(g, kf_sum(g, x, 2, all, false));
  kf_set_output(g, kf_abs(g, kf_neg(g, x)));
  char *src = NULL, *json = compile_ok(g, true, &src);
  ck_assert_msg(has(json, "\"kind\": \"reduce\"") && strstr(src, "8 elements per step"),
                "a prologue output");
  kf_free(json), kf_free(src);
  kf_graph_destroy(g);
  /* a strided reduction of an odd inner extent: scalar lanes unrolled by
   * 8, the split's fold through L2 without volatile loads */
  g = new_graph();
  int64_t t[3] = {2500, 96, 99};
  int a01[2] = {0, 1};
  kf_set_output(g, kf_max(g, kf_input(g, "x", KF_F16, 3, t), 2, a01, true));
  json = compile_ok(g, true, &src);
  ck_assert_msg(strstr(src, "#pragma unroll 8\n      for (int k = k0 + ty;") &&
                    strstr(src, "__ldcg(") && !strstr(src, "((volatile"),
                "odd inner: no unroll 8 or an old fold");
  ck_assert_msg(strstr(src, "50 x 1 outputs x 5 slices"), "99 lanes not spread over 2 tiles");
  ck_assert_msg(strstr(src, "n0 < 99 && ty < TY") && strstr(src, "if (ty < TY) kf_c"),
                "idle thread rows not masked");
  kf_free(json), kf_free(src);
  kf_graph_destroy(g);
}
END_TEST

/* A reduction over a suffix of few long rows with no full-size dependent
 * is a reduce kernel split over blocks (8 rows of 2^24 f32 had 8 blocks of
 * a row kernel); many rows, or a dependent per element (x / sum), stay row
 * kernels. */
START_TEST(few_long_rows_are_reduce_kernels) {
  int a1[1] = {1};
  int64_t few[2] = {8, (int64_t)1 << 24}, many[2] = {1000, 8192};
  kf_graph *g = new_graph();
  kf_set_output(g, kf_mean(g, kf_input(g, "x", KF_F32, 2, few), 1, a1, false));
  char *src = NULL, *json = compile_ok(g, true, &src);
  ck_assert_msg(has(json, "\"kind\": \"reduce\"") && strstr(src, "split over 264 blocks"), "%s",
                json);
  kf_free(json), kf_free(src);
  kf_graph_destroy(g);
  g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, few);
  kf_set_output(g, kf_div(g, x, kf_sum(g, x, 1, a1, true)));
  json = compile_ok(g, true, NULL);
  ck_assert_msg(has(json, "\"kind\": \"row\"") && !has(json, "\"kind\": \"reduce\""), "%s", json);
  kf_free(json);
  kf_graph_destroy(g);
  g = new_graph();
  kf_set_output(g, kf_sum(g, kf_input(g, "x", KF_F32, 2, many), 1, a1, false));
  json = compile_ok(g, true, NULL);
  ck_assert_msg(has(json, "\"kind\": \"row\""), "%s", json);
  kf_free(json);
  kf_graph_destroy(g);
}
END_TEST

/* Inner extents that do not tile by 32 lanes (spread over tiles of TX not
 * a power of two, idle threads past TX x TY) and ones that do, in f16 and
 * f32, with a split: every variant compiles. */
START_TEST(strided_tiles_compile) {
  static const int64_t inners[] = {3, 17, 33, 99, 200, 1000, 4096};
  for (int i = 0; i < 7; i++)
    for (int d = 0; d < 2; d++) {
      kf_graph *g = new_graph();
      int64_t s[2] = {20000, inners[i]};
      int a0[1] = {0};
      kf_value x = kf_input(g, "x", d ? KF_F32 : KF_F16, 2, s);
      kf_set_output(g, kf_sum(g, kf_abs(g, x), 1, a0, true));
      kf_free(compile_ok(g, true, NULL));
      kf_graph_destroy(g);
    }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("reduce_edges");
  TCase *tc = tcase_create("edges");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, mean_of_batch_one);
  tcase_add_test(tc, reductions_of_one_element);
  tcase_add_test(tc, softmax_over_length_one);
  tcase_add_test(tc, axes_that_do_not_merge);
  tcase_add_test(tc, packed_shared_memory);
  tcase_add_test(tc, contiguous_plan_from_shape);
  tcase_add_test(tc, strided_tiles_compile);
  tcase_add_test(tc, few_long_rows_are_reduce_kernels);
  suite_add_tcase(s, tc);
  return s;
}
