/* test_index_ops.c - slice, concat, gather and iota: builder and shape
 * errors, reference values (Python's slice rule, gather's clamping), the
 * YAML form both ways, hashes, and fused kernels compiled by NVRTC. */
#include "ref_util.h"

static void expect_shape(kf_value v, int rank, const int64_t *shape) {
  ck_assert_msg(v != KF_NONE, "%s", kf_graph_errmsg(G));
  ck_assert_int_eq(kf_value_rank(G, v), rank);
  for (int d = 0; d < rank; d++) ck_assert_int_eq(kf_value_shape(G, v)[d], shape[d]);
}

static const double X34[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

/* ---- builders ------------------------------------------------------------------- */

START_TEST(slice_python_rules) {
  kf_value x = IN("x", KF_F32, 3, 4);
  expect_shape(kf_slice(G, x, 1, 1, KF_SLICE_END, 2), 2, (const int64_t[]){3, 2});
  expect_shape(kf_slice(G, x, -1, -3, -1, 1), 2, (const int64_t[]){3, 2});
  expect_shape(kf_slice(G, x, 0, -100, 100, 1), 2, (const int64_t[]){3, 4});
  expect_shape(kf_slice(G, x, 1, 0, 4, 3), 2, (const int64_t[]){3, 2});
  expect_shape(kf_slice(G, x, 1, 3, 4, 1000), 2, (const int64_t[]){3, 1});
}
END_TEST

START_TEST(slice_errors) {
  kf_value x = IN("x", KF_F32, 3, 4);
  ck_assert_int_eq(kf_slice(G, x, 1, 0, 4, 0), KF_NONE);
  ck_assert_int_eq(kf_graph_status(G), KF_ERR_INVALID_ARG);
  MSG_HAS("step 0");
  ref_teardown(), ref_setup();
  x = IN("x", KF_F32, 3, 4);
  ck_assert_int_eq(kf_slice(G, x, 1, 3, 2, 1), KF_NONE);
  ck_assert_int_eq(kf_graph_status(G), KF_ERR_SHAPE);
  MSG_HAS("empty");
  ref_teardown(), ref_setup();
  x = IN("x", KF_F32, 3, 4);
  ck_assert_int_eq(kf_slice(G, x, 2, 0, 1, 1), KF_NONE);
  MSG_HAS("axis 2 is out of range");
}
END_TEST

START_TEST(concat_shapes_and_errors) {
  kf_value a = IN("a", KF_F32, 2, 3), b = IN("b", KF_F32, 2, 5), c = IN("c", KF_F32, 4, 3);
  expect_shape(kf_concat(G, 3, (const kf_value[]){a, b, a}, -1), 2, (const int64_t[]){2, 11});
  expect_shape(kf_concat(G, 2, (const kf_value[]){a, c}, 0), 2, (const int64_t[]){6, 3});
  ck_assert_int_eq(kf_concat(G, 1, &a, 0), a);
  ck_assert_int_eq(kf_concat(G, 2, (const kf_value[]){a, b}, 0), KF_NONE);
  ck_assert_int_eq(kf_graph_status(G), KF_ERR_SHAPE);
  MSG_HAS("does not fit");
  ref_teardown(), ref_setup();
  a = IN("a", KF_F32, 2, 3);
  kf_value h = IN("h", KF_F16, 2, 3);
  ck_assert_int_eq(kf_concat(G, 2, (const kf_value[]){a, h}, 0), KF_NONE);
  ck_assert_int_eq(kf_graph_status(G), KF_ERR_DTYPE);
  ref_teardown(), ref_setup();
  ck_assert_int_eq(kf_concat(G, 0, NULL, 0), KF_NONE);
  ck_assert_int_eq(kf_graph_status(G), KF_ERR_INVALID_ARG);
}
END_TEST

START_TEST(gather_shapes_and_errors) {
  kf_value w = IN("w", KF_BF16, 100, 16), ids = IN("ids", KF_I64, 2, 7);
  expect_shape(kf_gather(G, w, ids, 0), 3, (const int64_t[]){2, 7, 16});
  kf_value x = IN("x", KF_F32, 3, 4, 5), i1 = IN("i1", KF_I32, 6);
  expect_shape(kf_gather(G, x, i1, 1), 3, (const int64_t[]){3, 6, 5});
  ck_assert_int_eq(kf_gather(G, x, x, 0), KF_NONE);
  ck_assert_int_eq(kf_graph_status(G), KF_ERR_DTYPE);
  MSG_HAS("i32 or i64");
  ref_teardown(), ref_setup();
  x = IN("x", KF_F32, 2, 2, 2, 2, 2);
  kf_value i5 = IN("i", KF_I32, 2, 2, 2, 2, 2);
  ck_assert_int_eq(kf_gather(G, x, i5, 0), KF_NONE);
  MSG_HAS("rank 9");
}
END_TEST

START_TEST(iota_errors) {
  ck_assert_int_eq(kf_iota(G, KF_BOOL, 1, (const int64_t[]){4}, 0), KF_NONE);
  ck_assert_int_eq(kf_graph_status(G), KF_ERR_DTYPE);
  ref_teardown(), ref_setup();
  ck_assert_int_eq(kf_iota(G, KF_F32, 1, (const int64_t[]){0}, 0), KF_NONE);
  ck_assert_int_eq(kf_graph_status(G), KF_ERR_INVALID_ARG);
  ref_teardown(), ref_setup();
  ck_assert_int_eq(kf_iota(G, KF_F32, 2, (const int64_t[]){2, 3}, 2), KF_NONE);
  MSG_HAS("out of range");
  ref_teardown(), ref_setup();
  ck_assert_int_eq(kf_iota(G, KF_I32, 1, (const int64_t[]){(int64_t)1 << 32}, 0), KF_NONE);
  MSG_HAS("i32");
}
END_TEST

/* ---- reference values -------------------------------------------------------------- */

START_TEST(slice_values) {
  kf_value x = IN("x", KF_F32, 3, 4);
  ref_out(kf_slice(G, x, 1, -3, KF_SLICE_END, 2)); /* columns 1, 3 */
  double out[6];
  RUN(out, X34);
  EXPECT(out, 0, 1, 3, 5, 7, 9, 11);
}
END_TEST

START_TEST(concat_values) {
  kf_value a = IN("a", KF_I32, 2, 1), b = IN("b", KF_I32, 2, 2);
  ref_out(kf_concat(G, 3, (const kf_value[]){b, a, b}, 1));
  double out[10];
  RUN(out, (double[]){7, 8}, (double[]){1, 2, 3, 4});
  EXPECT(out, 0, 1, 2, 7, 1, 2, 3, 4, 8, 3, 4);
}
END_TEST

/* Indices -5 and 9 into 3 rows clamp to rows 0 and 2. */
START_TEST(gather_values_clamped) {
  kf_value w = IN("w", KF_F32, 3, 4), ids = IN("ids", KF_I64, 2, 2);
  ref_out(kf_gather(G, w, ids, 0));
  double out[16];
  RUN(out, X34, (double[]){1, -5, 9, 2});
  EXPECT(out, 0, 4, 5, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11, 8, 9, 10, 11);
}
END_TEST

START_TEST(gather_inner_axis) {
  kf_value x = IN("x", KF_F32, 3, 4), ids = IN("ids", KF_I32, 2);
  ref_out(kf_gather(G, x, ids, 1));
  double out[6];
  RUN(out, X34, (double[]){3, 0});
  EXPECT(out, 0, 3, 0, 7, 4, 11, 8);
}
END_TEST

START_TEST(iota_values) {
  ref_out(kf_iota(G, KF_I64, 2, (const int64_t[]){2, 3}, 1));
  ref_out(kf_iota(G, KF_BF16, 2, (const int64_t[]){300, 1}, 0));
  double out[6];
  RUN_NO_INPUTS(out);
  EXPECT(out, 0, 0, 1, 2, 0, 1, 2);
  ck_assert(ref_get(&OUTS[1], 257) == 256); /* 257 rounds to even in bf16 */
  ck_assert(ref_get(&OUTS[1], 299) == 300);
}
END_TEST

/* Error bounds move with the values: concat's second half has exp(b)'s
 * bounds, gather's rows the gathered rows' bounds; an f32 iota is exact. */
START_TEST(bounds_move_with_values) {
  kf_value a = IN("a", KF_F32, 2, 3), b = IN("b", KF_F32, 2, 3);
  kf_value eb = kf_exp(G, b);
  kf_value rev = kf_sub(G, kf_scalar(G, 1, KF_I32), kf_iota(G, KF_I32, 1, (const int64_t[]){2}, 0));
  ref_out(kf_concat(G, 2, (const kf_value[]){kf_exp(G, a), eb}, 0));
  ref_out(eb);
  ref_out(kf_gather(G, eb, rev, 0));
  ref_out(kf_iota(G, KF_F32, 2, (const int64_t[]){2, 3}, 1));
  double in[6] = {0.1, 0.7, 1.3, -2.1, 3.3, 0.5};
  ref_bind(0, in);
  ref_bind(1, in);
  for (int j = 0; j < 4; j++) OUTS[j] = ref_host_like(kf_graph_output(G, j));
  double e0[12], e1[6], e2[6], e3[6];
  double *const bounds[4] = {e0, e1, e2, e3};
  ck_assert_int_eq(kf_graph_run_reference_bounded(G, INS, 2, OUTS, bounds, 4), KF_OK);
  for (int k = 0; k < 6; k++) {
    ck_assert(e1[k] > 0);
    ck_assert(e0[6 + k] == e1[k]);
    ck_assert(e2[k] == e1[(k + 3) % 6]);
    ck_assert(e3[k] == 0);
  }
}
END_TEST

/* ---- YAML, hash, compile ------------------------------------------------------------ */

static const char YAML_ALL[] =
    "kfuse: 1\nname: idx\n"
    "inputs:\n"
    "  w: {dtype: f32, shape: [5, 4]}\n"
    "  ids: {dtype: i32, shape: [3]}\n"
    "  b: {dtype: f32, shape: [3, 2]}\n"
    "nodes:\n"
    "  - {name: e, op: gather, args: [w, ids]}\n"
    "  - {name: h, op: slice, args: [e], axis: 1, start: 1, step: 2}\n"
    "  - {name: c, op: concat, args: [h, b, h], axis: -1}\n"
    "  - {name: r, op: iota, dtype: f32, shape: [3, 6], axis: 1}\n"
    "  - {name: y, op: add, args: [c, r]}\n"
    "outputs: [y]\n";

/* The context of a loaded G: it must outlive G (ref_teardown destroys G,
 * then free_load_ctx this). */
static kf_ctx *LCTX;

static void free_load_ctx(void) {
  kf_ctx_destroy(LCTX);
  LCTX = NULL;
}

static void load(const char *text) {
  kf_graph_destroy(G);
  G = NULL;
  free_load_ctx();
  ck_assert_int_eq(kf_ctx_create(&LCTX), KF_OK);
  kf_status st = kf_graph_load_yaml_string(LCTX, text, strlen(text), "t.yaml", &G);
  ck_assert_msg(st == KF_OK, "%s", kf_ctx_errmsg(LCTX));
}

START_TEST(yaml_all_ops_values_and_roundtrip) {
  load(YAML_ALL);
  double w[20];
  for (int k = 0; k < 20; k++) w[k] = k;
  double out[18];
  RUN(out, w, (double[]){4, 0, 2}, (double[]){100, 101, 102, 103, 104, 105});
  /* row 4 is 16..19: h = {17, 19}; c = {17, 19, 100, 101, 17, 19} + 0..5 */
  EXPECT(out, 0, 17, 20, 102, 104, 21, 24);
  EXPECT(out + 6, 0, 1, 4, 104, 106, 5, 8);
  kf_hash128 h = kf_graph_hash(G);
  char *text = kf_graph_to_yaml(G);
  ck_assert_ptr_nonnull(text);
  load(text);
  free(text);
  kf_hash128 h2 = kf_graph_hash(G);
  ck_assert(memcmp(&h, &h2, sizeof h) == 0);
}
END_TEST

START_TEST(yaml_errors) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  static const char bad_step[] =
      "kfuse: 1\ninputs: {x: {dtype: f32, shape: [4]}}\n"
      "nodes: [{name: y, op: slice, args: [x], axis: 0, step: 0}]\noutputs: [y]\n";
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, bad_step, sizeof bad_step - 1, "b.yaml", &g),
                   KF_ERR_PARSE);
  ck_assert_msg(strstr(kf_ctx_errmsg(ctx), "step"), "%s", kf_ctx_errmsg(ctx));
  static const char no_dtype[] =
      "kfuse: 1\ninputs: {x: {dtype: f32, shape: [4]}}\n"
      "nodes: [{name: y, op: iota, shape: [4]}, {name: z, op: add, args: [x, y]}]\n"
      "outputs: [z]\n";
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, no_dtype, sizeof no_dtype - 1, "b.yaml", &g),
                   KF_ERR_PARSE);
  ck_assert_msg(strstr(kf_ctx_errmsg(ctx), "dtype"), "%s", kf_ctx_errmsg(ctx));
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(hash_tells_slices_apart) {
  kf_value x = IN("x", KF_F32, 8);
  ref_out(kf_slice(G, x, 0, 0, 4, 1));
  kf_hash128 a = kf_graph_hash(G);
  ref_teardown(), ref_setup();
  x = IN("x", KF_F32, 8);
  ref_out(kf_slice(G, x, 0, 4, 8, 1));
  kf_hash128 b = kf_graph_hash(G);
  ck_assert(memcmp(&a, &b, sizeof a) != 0);
}
END_TEST

/* Pointwise work before and after every index op: one kernel, and NVRTC
 * compiles it (bf16 vectorizable shapes, so the vector path is taken). */
static void compile_one_kernel(const char *text) {
  load(text);
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(ctx, G, NULL, &plan), KF_OK);
  ck_assert_int_eq(kf_plan_num_kernels(plan), 1);
  kf_status st = kf_plan_compile(plan);
  ck_assert_msg(st == KF_OK, "%s", kf_plan_errmsg(plan));
  kf_plan_destroy(plan);
  kf_ctx_destroy(ctx);
}

START_TEST(fused_kernel_compiles) {
  compile_one_kernel(YAML_ALL);
  compile_one_kernel(
      "kfuse: 1\ninputs:\n"
      "  w: {dtype: bf16, shape: [1000, 256]}\n"
      "  ids: {dtype: i64, shape: [4, 32]}\n"
      "  k: {dtype: bf16, shape: [4, 32, 128]}\n"
      "nodes:\n"
      "  - {name: s, op: sigmoid, args: [w]}\n"
      "  - {name: e, op: gather, args: [s, ids]}\n"
      "  - {name: lo, op: slice, args: [e], axis: -1, stop: 128}\n"
      "  - {name: hi, op: slice, args: [e], axis: -1, start: 128}\n"
      "  - {name: n, op: neg, args: [hi]}\n"
      "  - {name: c, op: concat, args: [n, lo, k], axis: 2}\n"
      "  - {name: r, op: iota, dtype: bf16, shape: [4, 32, 384], axis: 1}\n"
      "  - {name: y, op: mul, args: [c, r]}\n"
      "outputs: [y]\n");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("index_ops");
  TCase *tc = ref_tcase("build");
  tcase_add_test(tc, slice_python_rules);
  tcase_add_test(tc, slice_errors);
  tcase_add_test(tc, concat_shapes_and_errors);
  tcase_add_test(tc, gather_shapes_and_errors);
  tcase_add_test(tc, iota_errors);
  suite_add_tcase(s, tc);
  tc = ref_tcase("reference");
  tcase_add_test(tc, slice_values);
  tcase_add_test(tc, concat_values);
  tcase_add_test(tc, gather_values_clamped);
  tcase_add_test(tc, gather_inner_axis);
  tcase_add_test(tc, iota_values);
  tcase_add_test(tc, bounds_move_with_values);
  suite_add_tcase(s, tc);
  tc = ref_tcase("forms");
  tcase_add_checked_fixture(tc, NULL, free_load_ctx);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, yaml_all_ops_values_and_roundtrip);
  tcase_add_test(tc, yaml_errors);
  tcase_add_test(tc, hash_tells_slices_apart);
  tcase_add_test(tc, fused_kernel_compiles);
  suite_add_tcase(s, tc);
  return s;
}
