/* test_gpu_reduce.c - the reduce kernels' plans on a real GPU: contiguous
 * reductions (full, and axes that do not merge with the last reduced) at
 * every step width (V = 8, 4, 2, 1) and split, and strided ones of odd and
 * spread inner extents, each within the reference's error bound; then, as
 * the plan of a contiguous reduction comes from the shape alone, the fused
 * kernel (reading the bf16/f16 input) and the unfused one (reading its f32
 * cast) bit for bit, every plan run twice bit for bit (deterministic
 * splits), and every plan on tensors one element off their 16-byte
 * alignment (the scalar fallback reads the same elements in the same
 * order) bit for bit with the aligned run. Skips (exit 77) without a GPU. */
#include "gpu_util.h"

typedef struct red_case {
  const char *name;
  kf_dtype in; /* the input's dtype; the reduction is over its f32 cast */
  int rank;
  int64_t shape[3];
  int naxes, axes[3];
  int op;    /* 0 sum, 1 mean, 2 max, 3 min */
  bool rows; /* a contiguous reduction: fused == unfused bitwise */
} red_case;

static const red_case G_cases[] = {
    {"full sum bf16 [2^22] (V 8, split)", KF_BF16, 1, {1 << 22}, 1, {0}, 0, true},
    {"mean [0,2] bf16 [64,53,4096] (per dim, split)",
     KF_BF16,
     3,
     {64, 53, 4096},
     2,
     {0, 2},
     1,
     true},
    {"sum [0,2] f16 [4000,3,12] (V 4)", KF_F16, 3, {4000, 3, 12}, 2, {0, 2}, 0, true},
    {"max [0,2] f32 [3000,5,6] (V 2)", KF_F32, 3, {3000, 5, 6}, 2, {0, 2}, 2, true},
    {"sum [0,2] f32 [3000,3,5] (V 1)", KF_F32, 3, {3000, 3, 5}, 2, {0, 2}, 0, true},
    {"min all bf16 [1000,4099]", KF_BF16, 2, {1000, 4099}, 2, {0, 1}, 3, true},
    {"mean [0,2] f32 [2,3,2^20] (3 outputs)", KF_F32, 3, {2, 3, 1 << 20}, 2, {0, 2}, 1, true},
    {"mean [1] bf16 [8,2^20] (few long rows: reduce kind)",
     KF_BF16,
     2,
     {8, 1 << 20},
     1,
     {1},
     1,
     true},
    {"max [0,1] f16 [2500,96,99] (odd inner, spread)",
     KF_F16,
     3,
     {2500, 96, 99},
     2,
     {0, 1},
     2,
     false},
    {"sum [0] f32 [20000,200] (spread tiles)", KF_F32, 2, {20000, 200}, 1, {0}, 0, false},
    {"sum [0] f32 [1<<20,31] (one tile, split)", KF_F32, 2, {1 << 20, 31}, 1, {0}, 0, false},
};
#define N_CASES ((int)(sizeof G_cases / sizeof G_cases[0]))

/* y = reduce(cast(x, f32) * 0.75) and a sibling, abs of the reduction. */
static kf_graph *case_graph(const red_case *c) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  kf_value x = kf_input(g, "x", c->in, c->rank, c->shape);
  kf_value t = kf_mul(g, kf_cast(g, x, KF_F32), kf_scalar(g, 0.75, KF_F32));
  kf_value r = c->op == 0   ? kf_sum(g, t, c->naxes, c->axes, false)
               : c->op == 1 ? kf_mean(g, t, c->naxes, c->axes, false)
               : c->op == 2 ? kf_max(g, t, c->naxes, c->axes, false)
                            : kf_min(g, t, c->naxes, c->axes, false);
  kf_set_output(g, kf_abs(g, r));
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

static void run_once(kf_graph *g, bool fusion, run_io *io, const char *what) {
  kf_options opt;
  kf_options_init(&opt);
  opt.fusion = fusion;
  opt.horizontal = fusion;
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &opt, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
  io_poison(io);
  ck_assert_msg(kf_plan_run(plan, io->din, io->n_in, io->dout, io->n_out, NULL) == KF_OK, "%s: %s",
                what, kf_plan_errmsg(plan));
  io_fetch(io);
  kf_plan_destroy(plan);
}

static size_t out_bytes(kf_graph *g) {
  kf_value v = kf_graph_output(g, 0);
  return (size_t)value_numel(g, v) * kf_dtype_size(kf_value_dtype(g, v));
}

/* The outputs of one run on inputs of seed, offset by off bytes. */
static void *outputs_of(kf_graph *g, bool fusion, size_t off, const char *what) {
  G_offset = off;
  run_io io;
  io_setup(g, &io, 7);
  run_once(g, fusion, &io, what);
  void *copy = malloc(out_bytes(g));
  ck_assert(copy != NULL);
  memcpy(copy, io.hout[0].data, out_bytes(g));
  io_free(&io);
  G_offset = 0;
  return copy;
}

START_TEST(reduce_plans_bound_and_bitwise) {
  int bad = 0;
  for (int i = 0; i < N_CASES; i++) {
    const red_case *c = &G_cases[i];
    kf_graph *g = case_graph(c);
    run_io io;
    io_setup(g, &io, 7);
    ck_assert(io_bound(g, &io));
    kf_options opt;
    kf_options_init(&opt);
    int b = check_plan(g, &opt, &io, true, c->name);
    io_free(&io);
    size_t n = out_bytes(g);
    void *fused = outputs_of(g, true, 0, c->name);
    void *again = outputs_of(g, true, 0, c->name);
    /* the offset moves the outputs (f32) too: keep them aligned to their
     * element; a 16-bit input is then 2 elements off, still no 16-byte line */
    size_t off = kf_dtype_size(c->in) > 4 ? kf_dtype_size(c->in) : 4;
    void *shifted = outputs_of(g, true, off, c->name);
    bool same_run = memcmp(fused, again, n) == 0, same_shift = memcmp(fused, shifted, n) == 0;
    bool same_unfused = true;
    if (c->rows) {
      void *unfused = outputs_of(g, false, 0, c->name);
      same_unfused = memcmp(fused, unfused, n) == 0;
      free(unfused);
    }
    printf("reduce %-48s %s: bound %s, rerun %s, unaligned %s, unfused %s\n", c->name,
           b || !same_run || !same_shift || !same_unfused ? "FAILED" : "ok", b ? "BAD" : "ok",
           same_run ? "bitwise" : "DIFFERS", same_shift ? "bitwise" : "DIFFERS",
           !c->rows       ? "(not compared)"
           : same_unfused ? "bitwise"
                          : "DIFFERS");
    bad += b || !same_run || !same_shift || !same_unfused;
    free(fused), free(again), free(shifted);
    kf_graph_destroy(g);
  }
  ck_assert_int_eq(bad, 0);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_reduce");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, reduce_plans_bound_and_bitwise);
  suite_add_tcase(s, tc);
  return s;
}
