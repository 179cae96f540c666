/* test_gpu_attention_decode.c - the split-key decode attention kernel
 * (templates/attention_decode.cu) on a real GPU against the CPU reference:
 * 1, 7 and 16 queries against 1, 100, 4096 and 5000 keys (5000 is no
 * multiple of any split), grouped-query (32 heads over 8) and multi-query
 * heads, head dims 64 and 128 (and one 256), f16 and bf16, a boolean mask,
 * a tanh soft-cap, a causal mask from iota, inputs off 16-byte alignment,
 * and the key splits forced to 1 (no cluster: the sm_80 form) and 8.
 * Every output element is checked, in outputs poisoned with NaN first,
 * within the attention tolerance of docs/attention.md. Each plan must be
 * one decode attention launch. The cases named "lse" also write the
 * logsumexp of the scores, merged over the key split like the output,
 * checked every element (attn_lse_check.h). Skips (exit 77) without a
 * GPU. */
#include "../attn_graphs.h"
#include "attn_lse_check.h"
#include "gpu_util.h"
#include "planted.h"

/* docs/attention.md: |got - want| <= tol + tol |want| per element. */
static double attn_tol(kf_dtype dt) {
  return dt == KF_BF16 ? 1.0 / 64 : 1.0 / 512;
}

static double G_worst[KF_DTYPE_COUNT];

/* A boolean mask sees each query's key q % Sk, so that no row is wholly
 * masked (whose softmax is NaN in both). */
static void fix_mask(kf_graph *g, run_io *io, const attn_spec *s) {
  for (int i = 0; i < io->n_in; i++) {
    const char *name = kf_value_name(g, kf_graph_input(g, i));
    if (!name || strcmp(name, "mask")) continue;
    uint8_t *m = io->hin[i].data;
    for (int64_t q = 0; q < s->sq; q++) m[q * s->sk + q % s->sk] = 1;
    G_drv->MemcpyHtoD((CUdeviceptr)(uintptr_t)io->din[i].data, m, (size_t)(s->sq * s->sk));
  }
}

static int64_t compare_all(const void *got, const void *want, kf_dtype dt, int64_t n,
                           const char *what) {
  double tol = attn_tol(dt);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double g = load_elem(got, dt, i), w = load_elem(want, dt, i);
    bool ok = isnan(w) ? isnan(g) : fabs(g - w) <= tol + tol * fabs(w);
    if (!isnan(w) && !isnan(g) && fabs(g - w) > G_worst[dt]) G_worst[dt] = fabs(g - w);
    if (!ok && bad++ < 4)
      printf("MISMATCH %s at %lld: got %.6g want %.6g\n", what, (long long)i, g, w);
  }
  return bad;
}

typedef struct dcase {
  const char *what;
  kf_dtype dt;
  int64_t b, h, hk, sq, sk, d;
  int mask, modifier;
  bool mqa;
  size_t offset;
  const char *split; /* KFUSE_ATTN_SPLIT, NULL: by the shape */
  int lse;           /* attn_spec.lse */
  int64_t shift;     /* causal: ge(qi + shift, ki) */
} dcase;

static const dcase CASES[] = {
    {"bf16 d128 gqa 1x4096 (issue shape, b4)", KF_BF16, 4, 32, 8, 1, 4096, 128, 0, 0, 0, 0, NULL, 0,
     0},
    {"f16 d128 gqa 1x4096", KF_F16, 2, 32, 8, 1, 4096, 128, 0, 0, 0, 0, NULL, 0, 0},
    {"bf16 d64 gqa 1x5000", KF_BF16, 1, 32, 8, 1, 5000, 64, 0, 0, 0, 0, NULL, 0, 0},
    {"f16 d64 gqa 7x5000 mask", KF_F16, 1, 32, 8, 7, 5000, 64, 1, 0, 0, 0, NULL, 0, 0},
    {"bf16 d128 gqa 16x100", KF_BF16, 2, 32, 8, 16, 100, 128, 0, 0, 0, 0, NULL, 0, 0},
    {"f16 d128 gqa 7x1", KF_F16, 2, 32, 8, 7, 1, 128, 0, 0, 0, 0, NULL, 0, 0},
    {"bf16 d64 mqa 1x1", KF_BF16, 2, 8, 1, 1, 1, 64, 0, 0, true, 0, NULL, 0, 0},
    {"f16 d128 mqa 16x4096 softcap", KF_F16, 1, 8, 1, 16, 4096, 128, 0, 1, true, 0, NULL, 0, 0},
    {"bf16 d64 mqa 7x100 softcap", KF_BF16, 2, 16, 1, 7, 100, 64, 0, 1, true, 0, NULL, 0, 0},
    {"bf16 d128 gqa 16x5000 causal", KF_BF16, 1, 8, 2, 16, 5000, 128, 2, 0, 0, 0, NULL, 0, 0},
    {"f16 d64 plain 1x5000", KF_F16, 2, 4, 4, 1, 5000, 64, 0, 0, 0, 0, NULL, 0, 0},
    {"bf16 d256 gqa 7x777", KF_BF16, 1, 8, 2, 7, 777, 256, 0, 0, 0, 0, NULL, 0, 0},
    {"f16 d128 gqa 1x4096 split 1", KF_F16, 2, 32, 8, 1, 4096, 128, 0, 0, 0, 0, "1", 0, 0},
    {"bf16 d64 gqa 7x5000 split 8", KF_BF16, 1, 32, 8, 7, 5000, 64, 1, 0, 0, 0, "8", 0, 0},
    {"f16 d64 gqa 1x100 unaligned", KF_F16, 1, 32, 8, 1, 100, 64, 0, 0, 0, 2, NULL, 0, 0},
    /* the logsumexp output (attn_spec.lse 1: f32, 2: the scores' dtype, 4:
     * built after the product); shift -5: queries 0-4 of 7 see no key */
    {"lse bf16 d128 gqa 1x4096", KF_BF16, 2, 32, 8, 1, 4096, 128, 0, 0, 0, 0, NULL, 1, 0},
    {"lse f16 d64 gqa 7x5000 mask split 8", KF_F16, 1, 32, 8, 7, 5000, 64, 1, 0, 0, 0, "8", 2, 0},
    {"lse bf16 d128 gqa 16x100 split 1", KF_BF16, 2, 32, 8, 16, 100, 128, 0, 0, 0, 0, "1", 4, 0},
    {"lse f16 d64 7x5 causal shift -5", KF_F16, 2, 8, 2, 7, 5, 64, 2, 0, 0, 0, NULL, 1, -5},
    {"lse bf16 d256 gqa 7x777", KF_BF16, 1, 8, 2, 7, 777, 256, 0, 0, 0, 0, NULL, 1, 0},
};

static void run_case(const attn_spec *s, size_t offset, const char *what) {
  kf_graph *g = attn_build(s);
  kf_options opt;
  kf_options_init(&opt);
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &opt, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
  ck_assert_msg(kf_plan_num_launches(plan) == 1 && plan_has(plan, "attention: decode"),
                "%s: not one decode attention launch", what);
  G_offset = offset;
  run_io io;
  io_setup(g, &io, 4243);
  fix_mask(g, &io, s);
  kf_status st = kf_graph_run_reference(g, io.hin, io.n_in, io.href, io.n_out);
  ck_assert_msg(st == KF_OK, "%s: reference: %s", what, kf_graph_errmsg(g));
  io_poison(&io);
  st = kf_plan_run(plan, io.din, io.n_in, io.dout, io.n_out, NULL);
  ck_assert_msg(st == KF_OK, "%s: run: %s", what, kf_plan_errmsg(plan));
  io_fetch(&io);
  int64_t n = kf_value_numel(g, kf_graph_output(g, 0));
  int64_t bad = compare_all(io.hout[0].data, io.href[0].data, s->dt, n, what);
  ck_assert_msg(bad == 0, "%s: %lld of %lld elements off", what, (long long)bad, (long long)n);
  attn_lse_check(g, &io, s->dt, what);
  if (s->lse) ck_assert_msg(plan_has(plan, "writing the logsumexp"), "%s: no logsumexp", what);
  io_free(&io);
  G_offset = 0;
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}

START_TEST(against_reference) {
  const dcase *c = &CASES[_i];
  attn_spec s = attn_base();
  s.dt = c->dt, s.b = c->b, s.h = c->h, s.hk = c->hk, s.sq = c->sq, s.sk = c->sk, s.d = c->d;
  s.mask = c->mask, s.modifier = c->modifier;
  s.gqa_reshape = !c->mqa, s.lse = c->lse, s.shift = c->shift;
  if (c->split) kt_setenv("KFUSE_ATTN_SPLIT", c->split, 1);
  run_case(&s, c->offset, c->what);
  if (c->split) kt_unsetenv("KFUSE_ATTN_SPLIT");
}
END_TEST

START_TEST(worst) {
  for (int d = 0; d < KF_DTYPE_COUNT; d++)
    if (G_worst[d] > 0)
      printf("decode attention worst |error| %s: %.3g (allowed %.3g + the same relative)\n",
             kf_dtype_name((kf_dtype)d), G_worst[d], attn_tol((kf_dtype)d));
  if (G_lse_worst > 0) printf("decode attention logsumexp worst |error|: %.3g\n", G_lse_worst);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_attention_decode");
  TCase *tc = tcase_create("decode");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, against_reference, 0, (int)(sizeof CASES / sizeof CASES[0]));
  tcase_add_test(tc, worst);
  suite_add_tcase(s, tc);
  return s;
}
