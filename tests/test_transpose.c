/* test_transpose.c - tiled transposes (fuser/tile.c, codegen/transpose.c):
 * every permutation of ranks 2-4 in f32, f16 and bf16 (tests/
 * transpose_graphs.h) plans as one kernel, is tiled exactly when it moves
 * the innermost axis (the plan's "transpose-tile" decision and the
 * source's decisions agree), and compiles with NVRTC for sm_90; the rule's
 * edges (short extents, other shapes, several transposes) plan as
 * docs/fusion.md says. The GPU suite tests/gpu/test_gpu_transpose.c runs
 * the same graphs against the reference. */
#include "check_main.h"
#include "codegen_util.h"
#include "transpose_graphs.h"

static kf_ctx *G_ctx;

static kf_plan *plan_of(kf_graph *g) {
  if (!G_ctx) ck_assert_int_eq(kf_ctx_create(&G_ctx), KF_OK);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  kf_options o;
  kf_options_init(&o);
  o.arch = "sm_90";
  kf_plan *p = NULL;
  ck_assert_msg(kf_plan_create(G_ctx, g, &o, &p) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
  return p;
}

static bool has_decision(kf_plan *p, const char *rule) {
  char *text = kf_plan_describe(p, KF_FORMAT_TEXT);
  ck_assert_ptr_nonnull(text);
  bool has = strstr(text, rule) != NULL;
  kf_free(text);
  return has;
}

/* Plans, emits and (when it is tiled) compiles one graph; checks the
 * decision and what the source says of the accesses. */
static void check_case(int rank, const int *perm, const int64_t *out, kf_dtype dt, bool even) {
  char what[128];
  tg_name(rank, perm, out, dt, what, sizeof what);
  kf_graph *g = tg_graph(NULL, rank, perm, out, dt);
  ck_assert_ptr_nonnull(g);
  kf_plan *p = plan_of(g);
  bool tiled = tg_moves_inner(rank, perm);
  ck_assert_msg(kf_plan_num_kernels(p) == 1, "%s: %d kernels", what, kf_plan_num_kernels(p));
  ck_assert_msg(has_decision(p, "transpose-tile") == tiled, "%s: decision", what);
  char *src = kf_plan_source(p, 0, "sm_90");
  ck_assert_msg(src != NULL, "%s: %s", what, kf_plan_errmsg(p));
  ck_assert_msg((strstr(src, "tiled transpose: 1 transpose through") != NULL) == tiled,
                "%s: source decisions", what);
  if (tiled) {
    /* even extents: 16-byte accesses on both sides; odd: scalar */
    const char *want = !even          ? "1 lanes in ("
                       : dt == KF_F32 ? "4 lanes in (16-byte loads), 4 lanes out (16-byte stores)"
                                      : "8 lanes in (16-byte loads), 8 lanes out (16-byte stores)";
    ck_assert_msg(strstr(src, want) != NULL, "%s: wants \"%s\"", what, want);
    ck_assert_msg(tu_nvrtc(src, what) >= 0, "%s does not compile", what);
  }
  kf_free(src);
  kf_plan_destroy(p);
  kf_graph_destroy(g);
}

/* Every permutation of rank _i + 2, odd extents, each dtype; the ones that
 * move the innermost axis also with even extents (one dtype each, in turn). */
START_TEST(every_permutation) {
  int rank = _i + 2;
  for (int q = 0; q < tg_perms(rank); q++) {
    int perm[4];
    tg_perm(rank, q, perm);
    for (int d = 0; d < 3; d++) check_case(rank, perm, TG_ODD[rank - 2], TG_DTYPES[d], false);
    if (tg_moves_inner(rank, perm))
      check_case(rank, perm, TG_EVEN[rank - 2], TG_DTYPES[q % 3], true);
  }
}
END_TEST

/* Kept short runs (TG_RUNS): tiled as the table says, with the run in the
 * tile's element (the decision and the source say so), compiled. */
START_TEST(kept_runs) {
  for (int i = 0; i < TG_N_RUNS; i++) {
    const tg_run_case *r = &TG_RUNS[i];
    char what[128];
    tg_name(r->rank, r->perm, r->out, r->dt, what, sizeof what);
    kf_graph *g = tg_graph(NULL, r->rank, r->perm, r->out, r->dt);
    ck_assert_ptr_nonnull(g);
    kf_plan *p = plan_of(g);
    ck_assert_msg(kf_plan_num_kernels(p) == 1, "%s: %d kernels", what, kf_plan_num_kernels(p));
    ck_assert_msg(has_decision(p, "transpose-tile") == r->tiled, "%s: decision", what);
    ck_assert_msg(has_decision(p, "-value elements through shared memory") == r->tiled,
                  "%s: a run in the element", what);
    char *src = kf_plan_source(p, 0, "sm_90");
    ck_assert_msg(src != NULL, "%s: %s", what, kf_plan_errmsg(p));
    ck_assert_msg((strstr(src, "-value elements (row stride") != NULL) == r->tiled,
                  "%s: source decisions", what);
    if (r->tiled) ck_assert_msg(tu_nvrtc(src, what) >= 0, "%s does not compile", what);
    kf_free(src);
    kf_plan_destroy(p);
    kf_graph_destroy(g);
  }
}
END_TEST

/* x: [a, b] transposed and added to y [b, a]: tiled iff both extents are
 * at least FUSE_TILE_MIN_EXTENT (8). */
static bool tiled_2d(int64_t a, int64_t b, kf_dtype dt) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t xs[2] = {a, b}, ys[2] = {b, a};
  int perm[2] = {1, 0};
  kf_value x = kf_input(g, "x", dt, 2, xs), y = kf_input(g, "y", dt, 2, ys);
  kf_set_output(g, kf_add(g, kf_transpose(g, x, perm), y));
  kf_plan *p = plan_of(g);
  bool t = has_decision(p, "transpose-tile");
  kf_plan_destroy(p);
  kf_graph_destroy(g);
  return t;
}

START_TEST(rule_extents_and_types) {
  ck_assert(tiled_2d(8, 8, KF_F32));
  ck_assert(!tiled_2d(7, 4096, KF_F32)); /* rows of 7 f32: whole sectors already */
  ck_assert(!tiled_2d(4096, 7, KF_F32));
  ck_assert(tiled_2d(100, 100, KF_I32));
  ck_assert(!tiled_2d(100, 100, KF_F64)); /* 8-byte values: index arithmetic */
}
END_TEST

/* A transpose read through a reshape (not at the iteration's element) is
 * not tiled; two transposes moving the innermost axis to the same axis
 * share the tiling; one moving it elsewhere is read as before. */
START_TEST(rule_uses) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t s3[3] = {16, 24, 32}, flat[2] = {16 * 32, 24};
  int p021[3] = {0, 2, 1};
  kf_value x = kf_input(g, "x", KF_F32, 3, s3);
  kf_value r = kf_reshape(g, kf_transpose(g, x, p021), 2, flat);
  kf_set_output(g, kf_relu(g, r));
  kf_plan *p = plan_of(g);
  ck_assert(!has_decision(p, "transpose-tile"));
  kf_plan_destroy(p);
  kf_graph_destroy(g);

  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t a[3] = {8, 40, 24}, c[3] = {24, 40, 8};
  int p201[3] = {2, 0, 1}; /* [8, 24, 40] from c: c's innermost axis to axis 0, not 1 */
  kf_value xa = kf_input(g, "a", KF_F32, 3, a), xb = kf_input(g, "b", KF_F32, 3, a);
  kf_value xc = kf_input(g, "c", KF_F32, 3, c);
  kf_value s = kf_add(g, kf_transpose(g, xa, p021), kf_transpose(g, xb, p021));
  kf_set_output(g, kf_mul(g, s, kf_transpose(g, xc, p201)));
  p = plan_of(g);
  char *src = kf_plan_source(p, 0, "sm_90");
  ck_assert_ptr_nonnull(src);
  ck_assert_msg(strstr(src, "tiled transpose: 2 transposes through") != NULL, "%s", src);
  ck_assert_msg(tu_nvrtc(src, "two tiled, one gathered") >= 0, "does not compile");
  kf_free(src);
  kf_plan_destroy(p);
  kf_graph_destroy(g);
}
END_TEST

/* Compiles a YAML graph's launch 0; its source must contain want. */
static void yaml_case(const char *yaml, const char *want, const char *what) {
  kf_graph *g = NULL;
  if (!G_ctx) ck_assert_int_eq(kf_ctx_create(&G_ctx), KF_OK);
  ck_assert_msg(kf_graph_load_yaml_string(G_ctx, yaml, strlen(yaml), NULL, &g) == KF_OK, "%s",
                kf_ctx_errmsg(G_ctx));
  kf_plan *p = plan_of(g);
  char *src = kf_plan_source(p, 0, "sm_90");
  ck_assert_msg(src != NULL, "%s: %s", what, kf_plan_errmsg(p));
  ck_assert_msg(strstr(src, want) != NULL, "%s: wants \"%s\"", what, want);
  ck_assert_msg(tu_nvrtc(src, what) >= 0, "%s does not compile", what);
  kf_free(src);
  kf_plan_destroy(p);
  kf_graph_destroy(g);
}

/* 2^31 elements and more: 64-bit indices; a tiled part in a horizontal
 * launch of 512-thread blocks (a row part): named barriers of 256. */
START_TEST(index64_and_horizontal) {
  yaml_case(
      "kfuse: 1\ninputs:\n  x: {dtype: f16, shape: [32768, 65537]}\nnodes:\n"
      "  - {name: t, op: transpose, args: [x], perm: [1, 0]}\n"
      "  - {name: r, op: relu, args: [t]}\noutputs: [r]\n",
      "long long index", "index64");
  yaml_case(
      "kfuse: 1\ninputs:\n  x: {dtype: f32, shape: [40, 72]}\n"
      "  z: {dtype: f32, shape: [4, 8192]}\nnodes:\n"
      "  - {name: t, op: transpose, args: [x], perm: [1, 0]}\n"
      "  - {name: r, op: relu, args: [t]}\n"
      "  - {name: s, op: softmax, args: [z], axis: -1}\noutputs: [r, s]\n",
      "kf_sync<256, 512>()", "horizontal");
}
END_TEST

/* fam26 of bench/family.py: bf16 [256, 128, 512, 2] perm [1, 2, 0, 3]:
 * 64 x 64 tiles of 2-value elements, 16-byte accesses on both sides. */
START_TEST(kept_run_fam26) {
  yaml_case(
      "kfuse: 1\ninputs:\n  x: {dtype: bf16, shape: [256, 128, 512, 2]}\nnodes:\n"
      "  - {name: a, op: rsqrt, args: [x]}\n"
      "  - {name: t, op: transpose, args: [a], perm: [1, 2, 0, 3]}\n"
      "  - {name: s, op: sigmoid, args: [t]}\noutputs: [s]\n",
      "64x64 shared tiles of 2-value elements (row stride 129 words) of axes 1 x 2, 4096 "
      "tiles (8 x 4, batch 128); 8 lanes in (16-byte loads), 8 lanes out (16-byte stores)",
      "fam26");
}
END_TEST

/* A whole tile issues phase 2's loads of the other input (y) before phase
 * 1 and the barrier, so that they are in flight together. */
START_TEST(phase2_loads_before_barrier) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t xs[2] = {128, 256}, ys[2] = {256, 128};
  int perm[2] = {1, 0};
  kf_value x = kf_input(g, "x", KF_F32, 2, xs), y = kf_input(g, "y", KF_F32, 2, ys);
  kf_set_output(g, kf_relu(g, kf_add(g, kf_transpose(g, x, perm), y)));
  kf_plan *p = plan_of(g);
  char *src = kf_plan_source(p, 0, "sm_90");
  ck_assert_ptr_nonnull(src);
  const char *load = strstr(src, "kf_o[q].load("), *in = strstr(src, "_in<4>(kf_bt");
  const char *sync = strstr(src, "kf_sync<256, 256>();"), *run = strstr(src, "kf_o[q].run(");
  ck_assert_msg(load && in && sync && run, "%s", src);
  ck_assert_msg(load < in && in < sync && sync < run, "phase 2's loads after the barrier");
  /* the load member reads y (p1), the run member reads the tile */
  const char *lm = strstr(src, "KF_INLINE void load("), *rm = strstr(src, "KF_INLINE void run(");
  ck_assert_msg(lm && rm && strstr(lm, "kf_ldv<float, W>(r0, p1") < rm, "%s", src);
  ck_assert_msg(tu_nvrtc(src, "prefetch") >= 0, "does not compile");
  kf_free(src);
  kf_plan_destroy(p);
  kf_graph_destroy(g);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("transpose");
  TCase *tc = tcase_create("tiles");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, every_permutation, 0, 3);
  tcase_add_test(tc, rule_extents_and_types);
  tcase_add_test(tc, rule_uses);
  tcase_add_test(tc, index64_and_horizontal);
  tcase_add_test(tc, phase2_loads_before_barrier);
  tcase_add_test(tc, kept_runs);
  tcase_add_test(tc, kept_run_fam26);
  suite_add_tcase(s, tc);
  return s;
}
