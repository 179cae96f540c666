/* test_gpu_diff.c - a differential test over random graphs (1000 by
 * default; KFUSE_DIFF_GRAPHS overrides, KFUSE_TEST_SMALL=1 runs 40): each
 * graph fused, unfused (fusion off) and on the CPU reference, on fresh
 * random inputs with poisoned outputs, within the reference's per-element
 * error bound (kf_graph_run_reference_bounded, kf_compare: kernels round
 * like the reference, so only f32-versus-f64 evaluation may differ). A mutation check proves the bound can fail: one
 * input element moved by 1 (a kernel reading a wrong element) must be
 * caught on at least 80% of the graphs where it changes an output. Skips (exit
 * 77) without a GPU. */
#include "gpu_util.h"

#define MAXV 48

typedef struct gen {
  kf_graph *g;
  uint64_t s;
  kf_value vals[MAXV];
  int n;
  kf_dtype dt;
} gen;

static int pick(gen *ge, int n) { return (int)(rng_next(&ge->s) % (uint64_t)n); }

/* Shapes from a small set, so unfused kernels repeat across graphs and
 * come from the kernel cache; the odd sizes catch tail handling. */
static void random_shape(gen *ge, int *rank, int64_t *shape) {
  static const int64_t shapes[][3] = {{1024, 0, 0}, {33, 17, 0}, {8, 128, 0},
                                      {4, 5, 6},    {256, 32, 0}, {3, 1000, 0}};
  const int64_t *sh = shapes[pick(ge, 6)];
  *rank = sh[2] ? 3 : sh[1] ? 2 : 1;
  for (int k = 0; k < *rank; k++) shape[k] = sh[k];
}

static kf_value unary(gen *ge, kf_value x) {
  switch (pick(ge, 9)) {
    case 0: return kf_exp(ge->g, kf_clamp(ge->g, x, -8, 8));
    case 1: return kf_tanh(ge->g, x);
    case 2: return kf_sigmoid(ge->g, x);
    case 3: return kf_relu(ge->g, x);
    case 4: return kf_neg(ge->g, x);
    case 5: return kf_abs(ge->g, x);
    case 6: return kf_gelu(ge->g, x);
    case 7: return kf_silu(ge->g, x);
    default: return kf_sqrt(ge->g, kf_abs(ge->g, x));
  }
}

static kf_value binary(gen *ge, kf_value a, kf_value b) {
  switch (pick(ge, 5)) {
    case 0: return kf_add(ge->g, a, b);
    case 1: return kf_sub(ge->g, a, b);
    case 2: return kf_mul(ge->g, a, b);
    case 3: return kf_maximum(ge->g, a, b);
    default: return kf_where(ge->g, kf_gt(ge->g, a, b), a, b);
  }
}

/* A value of the same shape as x (for binary ops), or a broadcast-compatible
 * one: a reduction of x with keepdim. */
static kf_value partner(gen *ge, kf_value x) {
  int rank = kf_value_rank(ge->g, x);
  const int64_t *sh = kf_value_shape(ge->g, x);
  for (int tries = 0; tries < 4; tries++) {
    kf_value v = ge->vals[pick(ge, ge->n)];
    if (kf_value_rank(ge->g, v) == rank && memcmp(kf_value_shape(ge->g, v), sh, 8 * (size_t)rank) == 0)
      return v;
  }
  int ax = rank - 1;
  return pick(ge, 2) ? kf_max(ge->g, x, 1, &ax, true) : kf_mean(ge->g, x, 1, &ax, true);
}

/* Index ops that keep x's shape, so the generator goes on: a roll (two
 * slices concatenated), a reversal (a gather at n-1-iota), or x plus its
 * positions (iota). */
static kf_value index_op(gen *ge, kf_value x) {
  kf_graph *g = ge->g;
  int rank = kf_value_rank(g, x), ax = pick(ge, rank);
  int64_t n = kf_value_shape(g, x)[ax];
  kf_dtype dt = kf_value_dtype(g, x);
  int kind = n > 1 ? pick(ge, 3) : 2;
  if (kind == 0) {
    int64_t k = 1 + pick(ge, (int)(n - 1));
    kf_value hi = kf_slice(g, x, ax, k, KF_SLICE_END, 1), lo = kf_slice(g, x, ax, 0, k, 1);
    return kf_concat(g, 2, (const kf_value[]){hi, lo}, ax);
  }
  if (kind == 1) {
    kf_value rev = kf_sub(g, kf_scalar(g, (double)(n - 1), KF_I32),
                          kf_iota(g, KF_I32, 1, &n, 0));
    return kf_gather(g, x, rev, ax);
  }
  int64_t sh[KF_MAX_RANK];
  memcpy(sh, kf_value_shape(g, x), sizeof(int64_t) * (size_t)rank);
  return kf_add(g, x, kf_mul(g, kf_iota(g, dt, rank, sh, ax), kf_scalar(g, 0.25, dt)));
}

static kf_graph *random_graph(uint64_t seed) {
  gen ge = {0};
  ge.s = seed * 0x9E3779B97F4A7C15ull + 1;
  ck_assert_int_eq(kf_graph_create(G_ctx, &ge.g), KF_OK);
  static const kf_dtype dts[] = {KF_F32, KF_F32, KF_F32, KF_F16, KF_BF16};
  ge.dt = dts[pick(&ge, 5)];
  int rank;
  int64_t shape[KF_MAX_RANK];
  random_shape(&ge, &rank, shape);
  int n_in = 1 + pick(&ge, 3);
  for (int i = 0; i < n_in; i++) {
    char name[16];
    snprintf(name, sizeof name, "in%d", i);
    ge.vals[ge.n++] = kf_input(ge.g, name, ge.dt, rank, shape);
  }
  int n_ops = 2 + pick(&ge, 9);
  for (int i = 0; i < n_ops && ge.n < MAXV; i++) {
    kf_value x = ge.vals[ge.n - 1 - pick(&ge, ge.n < 3 ? ge.n : 3)];
    kf_value v;
    int r = pick(&ge, 12);
    if (r >= 10)
      v = index_op(&ge, x);
    else if (r < 4)
      v = unary(&ge, x);
    else if (r < 8)
      v = binary(&ge, x, partner(&ge, x));
    else if (r == 8)
      v = kf_softmax(ge.g, x, -1);
    else {
      int ax = kf_value_rank(ge.g, x) - 1;
      v = kf_add(ge.g, x, kf_sum(ge.g, x, 1, &ax, true));
    }
    ge.vals[ge.n++] = v;
  }
  kf_set_output(ge.g, ge.vals[ge.n - 1]);
  if (ge.n - 2 >= n_in && pick(&ge, 2)) kf_set_output(ge.g, ge.vals[ge.n - 2]);
  ck_assert_msg(kf_graph_status(ge.g) == KF_OK, "generator: %s", kf_graph_errmsg(ge.g));
  return ge.g;
}

/* Graphs [first, first + n): shards of the 1000 run as separate CTest
 * tests in parallel (tests/CMakeLists.txt). */
static int first_graph(void) {
  const char *s = getenv("KFUSE_DIFF_FIRST");
  return s && atoi(s) > 0 ? atoi(s) : 0;
}

static int n_graphs(void) {
  const char *s = getenv("KFUSE_DIFF_GRAPHS");
  if (s && atoi(s) > 0) return atoi(s);
  return gpu_small() ? 40 : 1000;
}

/* Moves element 0 of input k by +1 (or back: undo) in place. */
static void nudge(run_io *io, int k, bool undo) {
  kf_dtype dt = io->hin[k].dtype;
  double x = load_elem(io->hin[k].data, dt, 0) + (undo ? -1.0 : 1.0);
  if (dt == KF_F32)
    ((float *)io->hin[k].data)[0] = (float)x;
  else
    ((uint16_t *)io->hin[k].data)[0] = dt == KF_F16 ? kf_float_to_f16((float)x) : kf_float_to_bf16((float)x);
}

/* The mutation check, a kernel reading one wrong element: the reference on
 * inputs with element 0 of one input moved by 1. Returns -1 when no input
 * changes any output (nothing to catch), else whether the bound check of
 * the first input that does catches it. */
static int mutation_caught(kf_graph *g, run_io *io) {
  kf_host_tensor *out = calloc((size_t)io->n_out, sizeof *out);
  ck_assert(out != NULL);
  for (int j = 0; j < io->n_out; j++) {
    out[j] = io->href[j];
    out[j].data = malloc((size_t)value_numel(g, kf_graph_output(g, j)) * kf_dtype_size(out[j].dtype));
    ck_assert(out[j].data != NULL);
  }
  int result = -1;
  for (int k = 0; k < io->n_in && result < 0; k++) {
    nudge(io, k, false);
    ck_assert_int_eq(kf_graph_run_reference(g, io->hin, io->n_in, out, io->n_out), KF_OK);
    nudge(io, k, true);
    bool changed = false, caught = false;
    for (int j = 0; j < io->n_out; j++) {
      int64_t n = value_numel(g, kf_graph_output(g, j));
      changed |= memcmp(out[j].data, io->href[j].data, (size_t)n * kf_dtype_size(out[j].dtype)) != 0;
      caught |= compare(out[j].data, io->href[j].data, out[j].dtype, n, io->bound[j]).bad > 0;
    }
    if (changed) result = caught;
  }
  for (int j = 0; j < io->n_out; j++) free(out[j].data);
  free(out);
  return result;
}

START_TEST(random_graphs_fused_unfused_reference) {
  int first = first_graph(), n = first + n_graphs(), failed = 0, launches_fused = 0, launches_unfused = 0, mutants = 0, caught = 0;
  int per_dt[KF_DTYPE_COUNT] = {0}, failed_dt[KF_DTYPE_COUNT] = {0};
  for (int i = first; i < n; i++) {
    kf_graph *g = random_graph((uint64_t)i + 1);
    kf_dtype dt = kf_value_dtype(g, kf_graph_input(g, 0));
    per_dt[dt]++;
    run_io io;
    io_setup(g, &io, (uint64_t)i + 1000);
    ck_assert_msg(io_bound(g, &io), "graph %d: no error bound", i);
    kf_options fused, unfused;
    kf_options_init(&fused);
    kf_options_init(&unfused);
    fused.fusion = true;
    unfused.fusion = false;
    unfused.horizontal = false;
    char what[64];
    snprintf(what, sizeof what, "graph %d fused", i);
    int bad = check_plan(g, &fused, &io, false, what);
    snprintf(what, sizeof what, "graph %d unfused", i);
    bad += check_plan(g, &unfused, &io, true, what);
    if (bad) {
      if (failed < 5) {
        char *dump = kf_graph_dump(g);
        printf("graph %d (seed %d, %s):\n%s\n", i, i + 1, kf_dtype_name(dt), dump ? dump : "");
        kf_free(dump);
      }
      failed++;
      failed_dt[dt]++;
    }
    int m = mutation_caught(g, &io);
    mutants += m >= 0;
    caught += m > 0;
    kf_plan *p;
    if (kf_plan_create(G_ctx, g, &fused, &p) == KF_OK) launches_fused += kf_plan_num_launches(p);
    kf_plan_destroy(p);
    if (kf_plan_create(G_ctx, g, &unfused, &p) == KF_OK) launches_unfused += kf_plan_num_launches(p);
    kf_plan_destroy(p);
    io_free(&io);
    kf_graph_destroy(g);
  }
  printf("differential: %d random graphs (seeds %d..%d), %d failed; %d fused launches vs %d unfused\n",
         n - first, first + 1, n, failed,
         launches_fused, launches_unfused);
  for (int d = 0; d < KF_DTYPE_COUNT; d++)
    if (per_dt[d]) printf("differential %s: %d graphs, %d failed\n", kf_dtype_name((kf_dtype)d), per_dt[d], failed_dt[d]);
  print_worst("differential");
  printf("mutation check: %d of %d changed inputs caught by the error bound\n", caught, mutants);
  ck_assert_int_eq(failed, 0);
  ck_assert_msg(caught * 10 >= mutants * 8, "the error bound is too loose: %d of %d mutations caught",
                caught, mutants);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_diff");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, random_graphs_fused_unfused_reference);
  suite_add_tcase(s, tc);
  return s;
}
