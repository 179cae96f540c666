/* test_gpu_attention.c - the flash attention kernels on a real GPU against
 * the CPU reference at small shapes (on an sm_90 GPU the Hopper kernel for
 * what it takes, and every case again with KFUSE_ATTN90=0 on the mma.sync
 * kernel): no mask, a boolean mask, causal masks
 * from iota (with offsets, and in the negated where form), grouped-query
 * and multi-query heads, a tanh soft-cap and an added bias, odd lengths,
 * queries and keys of different lengths (a decode-like 1 x 300), head dims
 * 64, 128 and 256, f16 and bf16, and inputs off 16-byte alignment (the
 * mma.sync kernel's element-load path; on sm_90 the run falls back to it
 * from the Hopper kernel). Every output element is checked, in outputs
 * poisoned with NaN first, within the documented attention tolerance
 * (docs/attention.md): fused attention reorders the softmax's arithmetic,
 * so it is not bit-identical to the unfused graph. Each plan must be one
 * attention launch. The cases named "lse" also write the logsumexp of
 * the scores (f32 or the scores' dtype; causal with rows that see no key:
 * -inf), checked the same way, every element (attn_lse_check.h). Skips
 * (exit 77) without a GPU. */
#include "../attn_graphs.h"
#include "../knob_env.h"
#include "attn_lse_check.h"
#include "fuser/attention_decode.h"
#include "gpu_util.h"
#include "planted.h"

static bool G_sm90;

/* docs/attention.md: |got - want| <= tol + tol |want| per element; two
 * units in the last place near 1 of the output dtype. */
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

/* A "ramp" case's bias rises by 0.05 a key over runs of 250 keys, so that
 * row maxima grow by more than the lazy rescale's threshold (2^8 in p)
 * from tile to tile and the rescale path runs too. */
static void fix_bias(kf_graph *g, run_io *io, const attn_spec *s, bool ramp) {
  for (int i = 0; i < io->n_in && ramp; i++) {
    const char *name = kf_value_name(g, kf_graph_input(g, i));
    if (!name || strcmp(name, "bias")) continue;
    uint16_t *b = io->hin[i].data;
    int64_t n = s->h * s->sq * s->sk;
    for (int64_t e = 0; e < n; e++) {
      float x = (float)((e % s->sk) % 250) * 0.05f;
      b[e] = s->dt == KF_BF16 ? kf_float_to_bf16(x) : kf_float_to_f16(x);
    }
    G_drv->MemcpyHtoD((CUdeviceptr)(uintptr_t)io->din[i].data, b, (size_t)n * 2);
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

/* The kernel a plan must hold: the Hopper one (sm90), the decode one (at
 * most FUSE_DECODE_MAX_QUERIES queries), else the mma.sync one. */
static const char *kernel_marker(const attn_spec *s, bool sm90) {
  if (s->sq <= FUSE_DECODE_MAX_QUERIES) return "attention: decode";
  return sm90 ? "flash on sm_90" : "flash (mma.sync";
}

/* One run of plan on io (outputs poisoned), every element compared. */
static void run_compare(kf_graph *g, kf_plan *plan, run_io *io, const attn_spec *s,
                        const char *what) {
  io_poison(io);
  kf_status st = kf_plan_run(plan, io->din, io->n_in, io->dout, io->n_out, NULL);
  ck_assert_msg(st == KF_OK, "%s: run: %s", what, kf_plan_errmsg(plan));
  io_fetch(io);
  int64_t n = kf_value_numel(g, kf_graph_output(g, 0));
  int64_t bad = compare_all(io->hout[0].data, io->href[0].data, s->dt, n, what);
  ck_assert_msg(bad == 0, "%s: %lld of %lld elements off", what, (long long)bad, (long long)n);
  attn_lse_check(g, io, s->dt, what);
}

/* Runs s against the reference; sm90: whether the plan must be the
 * Hopper kernel where it is not a decode. A Hopper kernel over operands
 * off 16-byte alignment (views its copy engine cannot read) falls back to
 * the launch's form without tensor maps, the mma.sync kernel: one warning,
 * every element right, in plain and then graph mode. */
static void run_case(const attn_spec *s, size_t offset, bool sm90, bool ramp, const char *what,
                     const char *marker2) {
  if (s->sq <= FUSE_DECODE_MAX_QUERIES) sm90 = false;
  kf_graph *g = attn_build(s);
  kf_options opt;
  kf_options_init(&opt);
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &opt, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
  ck_assert_msg(kf_plan_num_launches(plan) == 1 && plan_has(plan, "attention: "),
                "%s: not one attention launch", what);
  const char *marker = kernel_marker(s, sm90);
  ck_assert_msg(plan_has(plan, marker), "%s: not the kernel of '%s'", what, marker);
  ck_assert_msg(!marker2 || plan_has(plan, marker2), "%s: no '%s' in the source", what, marker2);
  G_offset = offset;
  run_io io;
  io_setup(g, &io, 4242);
  fix_mask(g, &io, s);
  fix_bias(g, &io, s, ramp);
  kf_status st = kf_graph_run_reference(g, io.hin, io.n_in, io.href, io.n_out);
  ck_assert_msg(st == KF_OK, "%s: reference: %s", what, kf_graph_errmsg(g));
  bool falls_back = sm90 && offset % 16;
  if (falls_back) watch_warnings("not 16-byte aligned");
  run_compare(g, plan, &io, s, what);
  if (s->lse) ck_assert_msg(plan_has(plan, "writing the logsumexp"), "%s: no logsumexp", what);
  if (falls_back) {
    ck_assert_int_eq(kf_plan_set_mode(plan, KF_MODE_GRAPH), KF_OK);
    run_compare(g, plan, &io, s, what);
    int hits = unwatch_warnings();
    ck_assert_msg(hits == 1, "%s: %d fallback warnings, want 1", what, hits);
    printf("%s: the sm_90 kernel's form without tensor maps ran, plain and graph mode\n", what);
  }
  io_free(&io);
  G_offset = 0;
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}

typedef struct gcase {
  const char *what;
  kf_dtype dt;
  int64_t h, hk, sq, sk, d;
  int mask, modifier;
  int64_t shift;
  bool mqa, hand;
  size_t offset;
  bool bshd, keys64; /* [B, S, H, D] operands; KFUSE_ATTN90_KEYS=64 */
  int lse;           /* attn_spec.lse: the logsumexp output's form */
  bool ramp;         /* the bias rises along the keys (fix_bias) */
} gcase;

static const gcase CASES[] = {
    {"bf16 d64 none", KF_BF16, 4, 4, 64, 64, 64, 0, 0, 0, false, false, 0, false, false, 0, false},
    {"f16 d64 none odd", KF_F16, 4, 4, 37, 77, 64, 0, 0, 0, false, false, 0, false, false, 0,
     false},
    {"bf16 d128 bool odd", KF_BF16, 2, 2, 93, 131, 128, 1, 0, 0, false, false, 0, false, false, 0,
     false},
    {"f16 d128 causal", KF_F16, 2, 2, 200, 200, 128, 2, 0, 0, false, false, 0, false, false, 0,
     false},
    {"bf16 d64 causal shift", KF_BF16, 2, 2, 70, 150, 64, 2, 0, 80, false, true, 0, false, false, 0,
     false},
    {"f16 d64 causal negated", KF_F16, 2, 2, 129, 129, 64, 3, 0, 0, false, false, 0, false, false,
     0, false},
    {"bf16 d128 gqa causal", KF_BF16, 8, 2, 96, 96, 128, 2, 0, 0, false, false, 0, false, false, 0,
     false},
    {"f16 d64 mqa", KF_F16, 8, 1, 48, 100, 64, 0, 0, 0, true, false, 0, false, false, 0, false},
    {"bf16 d64 softcap", KF_BF16, 2, 2, 64, 192, 64, 0, 1, 0, false, false, 0, false, false, 0,
     false},
    {"f16 d128 bias", KF_F16, 2, 2, 50, 66, 128, 0, 2, 0, false, true, 0, false, false, 0, false},
    {"bf16 d256 causal", KF_BF16, 2, 2, 80, 80, 256, 2, 0, 0, false, false, 0, false, false, 0,
     false},
    {"f16 d256 none", KF_F16, 2, 2, 33, 65, 256, 0, 0, 0, false, false, 0, false, false, 0, false},
    {"bf16 d128 decode 1x300", KF_BF16, 4, 4, 1, 300, 128, 0, 0, 0, false, false, 0, false, false,
     0, false},
    {"f16 d64 unaligned", KF_F16, 2, 2, 40, 72, 64, 1, 0, 0, false, false, 2, false, false, 0,
     false},
    /* many key tiles (the sm_90 kernel's ring wraps), several query tiles */
    {"bf16 d128 gqa causal long", KF_BF16, 4, 2, 300, 1000, 128, 2, 0, 700, false, false, 0, false,
     false, 0, false},
    {"f16 d64 long", KF_F16, 2, 2, 257, 1100, 64, 0, 0, 0, false, false, 0, false, false, 0, false},
    {"f16 d128 bool long", KF_F16, 2, 2, 130, 500, 128, 1, 0, 0, false, false, 0, false, false, 0,
     false},
    {"bf16 d128 causal 512", KF_BF16, 2, 2, 512, 512, 128, 2, 0, 0, false, false, 0, false, false,
     0, false},
    {"f16 d64 causal 640 hand", KF_F16, 2, 2, 640, 640, 64, 3, 0, 0, false, true, 0, false, false,
     0, false},
    {"bf16 d128 softcap keys64", KF_BF16, 2, 2, 200, 333, 128, 0, 1, 0, false, false, 0, false,
     true, 0, false},
    {"f16 d128 bias keys64 causal", KF_F16, 2, 2, 150, 150, 128, 2, 2, 0, false, true, 0, false,
     true, 0, false},
    /* a head's rows H rows apart: the mma.sync kernel on sm_90 too */
    {"bf16 d64 bshd", KF_BF16, 4, 4, 100, 130, 64, 0, 0, 0, false, false, 0, true, false, 0, false},
    /* the logsumexp output: kf_logsumexp of the scores cast to f32 (1), in
     * the scores' dtype (2), the hand-written m + log(s) (3), built after
     * the product (4); shift -20: queries 0-19 see no key (o NaN, L -inf) */
    {"lse f16 d64 odd", KF_F16, 4, 4, 37, 77, 64, 0, 0, 0, false, false, 0, false, false, 1, false},
    {"lse bf16 d128 causal", KF_BF16, 2, 2, 200, 200, 128, 2, 0, 0, false, false, 0, false, false,
     1, false},
    {"lse f16 d128 causal shift -20 late", KF_F16, 2, 2, 130, 150, 128, 2, 0, -20, false, false, 0,
     false, false, 4, false},
    {"lse bf16 d64 bool half", KF_BF16, 2, 2, 93, 131, 64, 1, 0, 0, false, false, 0, false, false,
     2, false},
    {"lse f16 d64 hand shared", KF_F16, 2, 2, 70, 100, 64, 0, 0, 0, false, true, 0, false, false, 3,
     false},
    {"lse bf16 d64 causal shift -20 hand", KF_BF16, 2, 2, 64, 64, 64, 2, 0, -20, false, true, 0,
     false, false, 3, false},
    {"lse f16 d256 none", KF_F16, 2, 2, 33, 65, 256, 0, 0, 0, false, false, 0, false, false, 1,
     false},
    {"lse bf16 d128 gqa causal long", KF_BF16, 4, 2, 300, 1000, 128, 2, 0, 700, false, false, 0,
     false, false, 1, false},
    {"lse f16 d128 softcap keys64", KF_F16, 2, 2, 200, 333, 128, 0, 1, 0, false, false, 0, false,
     true, 2, false},
    {"lse bf16 d128 decode 1x300", KF_BF16, 4, 4, 1, 300, 128, 0, 0, 0, false, false, 0, false,
     false, 1, false},
    /* row maxima that grow along the keys by more than the lazy rescale's
     * threshold: its rescale runs (with KFUSE_ATTN90_LAZY) */
    {"lse f16 d128 ramp causal", KF_F16, 2, 2, 130, 700, 128, 2, 2, 600, false, true, 0, false,
     false, 1, true},
    {"f16 d64 ramp odd", KF_F16, 2, 2, 77, 555, 64, 0, 2, 0, false, true, 0, false, false, 0, true},
};
enum { N_CASES = (int)(sizeof CASES / sizeof CASES[0]) };

/* Whether the sm_90 kernel takes the case (flash90.c's rules). */
static bool takes90(const gcase *c) {
  return (c->d == 64 || c->d == 128) && !c->bshd;
}

/* The knob variants of the kernels (docs/attention.md, "Knobs"), each run
 * on every case: alone, then all together. */
static const char *const VARIANTS[][7] = {
    {"KFUSE_ATTN90_EX2"},
    {"KFUSE_ATTN90_EDGE"},
    {"KFUSE_ATTN90_LAZY"},
    {"KFUSE_ATTN90_DESC"},
    {"KFUSE_ATTN90_PINGPONG"},
    {"KFUSE_ATTN_FAST_TANH"},
    {"KFUSE_ATTN90_EX2", "KFUSE_ATTN90_EDGE", "KFUSE_ATTN90_LAZY", "KFUSE_ATTN90_DESC",
     "KFUSE_ATTN90_PINGPONG", "KFUSE_ATTN_FAST_TANH"},
};
enum { N_VARIANTS = (int)(sizeof VARIANTS / sizeof VARIANTS[0]) };

static void run_gcase_knobs(const gcase *c, bool attn90, const char *const *knobs);

static void run_gcase(const gcase *c, bool attn90) {
  run_gcase_knobs(c, attn90, NULL);
}

static void run_gcase_knobs(const gcase *c, bool attn90, const char *const *knobs) {
  attn_spec s = attn_base();
  s.dt = c->dt, s.h = c->h, s.hk = c->hk, s.sq = c->sq, s.sk = c->sk, s.d = c->d;
  s.mask = c->mask, s.modifier = c->modifier, s.shift = c->shift, s.hand = c->hand;
  s.gqa_reshape = !c->mqa, s.bshd = c->bshd, s.lse = c->lse;
  kt_setenv("KFUSE_ATTN90", attn90 ? "1" : "0", 1);
  if (c->keys64) kt_setenv("KFUSE_ATTN90_KEYS", "64", 1);
  char what[192];
  snprintf(what, sizeof what, "%s%s", c->what, attn90 ? "" : " (KFUSE_ATTN90=0)");
  bool sm90 = attn90 && G_sm90 && takes90(c) && c->sq > FUSE_DECODE_MAX_QUERIES;
  const char *marker2 = NULL;
  for (int i = 0; knobs && i < 7 && knobs[i]; i++) {
    kt_setenv(knobs[i], "1", 1);
    size_t used = strlen(what);
    snprintf(what + used, sizeof what - used, " %s=1", knobs[i]);
    /* the source must show the variant: the Hopper kernel's decisions, the
     * fast tanh in the modifier (every kernel) */
    if (!strcmp(knobs[i], "KFUSE_ATTN_FAST_TANH") && c->modifier == 1)
      marker2 = "kf_tanh_approx(";
    else if (sm90 && !strcmp(knobs[i], "KFUSE_ATTN90_EX2")) /* not with the soft-cap's tanh */
      marker2 = marker2 ? marker2 : c->modifier == 1 ? "the modifier uses the SFU" : "kf_fa90_ex2(";
    else if (sm90 && !strcmp(knobs[i], "KFUSE_ATTN90_EDGE")) /* not where the modifier loads */
      marker2 = marker2                            ? marker2
                : c->mask == 1 || c->modifier == 2 ? "no edge tiles"
                                                   : "edge-tile bounds";
    else if (sm90 && !strcmp(knobs[i], "KFUSE_ATTN90_LAZY"))
      marker2 = marker2 ? marker2 : "lazy rescale";
    else if (sm90 && !strcmp(knobs[i], "KFUSE_ATTN90_DESC"))
      marker2 = marker2 ? marker2 : "descriptor steps";
    else if (sm90 && !strcmp(knobs[i], "KFUSE_ATTN90_PINGPONG"))
      marker2 = marker2 ? marker2 : "ping-pong";
  }
  run_case(&s, c->offset, sm90, c->ramp, what, marker2);
  for (int i = 0; knobs && i < 7 && knobs[i]; i++) kt_unsetenv(knobs[i]);
  kt_unsetenv("KFUSE_ATTN90_KEYS");
  kt_unsetenv("KFUSE_ATTN90");
}

/* Every case as the defaults plan it (on sm_90 the Hopper kernel where it
 * takes the case). */
START_TEST(against_reference) {
  run_gcase(&CASES[_i], true);
}
END_TEST

/* On an sm_90 GPU, every case again on the mma.sync kernel. */
START_TEST(mma_kernel_on_sm90) {
  if (G_sm90) run_gcase(&CASES[_i], false);
}
END_TEST

/* Every case under each knob variant (the sm_90 ones change the Hopper
 * kernel only; KFUSE_ATTN_FAST_TANH every kernel's modifier). */
START_TEST(knob_variants) {
  const gcase *c = &CASES[_i % N_CASES];
  const char *const *knobs = VARIANTS[_i / N_CASES];
  bool fast_tanh_only = !strcmp(knobs[0], "KFUSE_ATTN_FAST_TANH") && !knobs[1];
  if (G_sm90 || fast_tanh_only) run_gcase_knobs(c, true, knobs);
}
END_TEST

START_TEST(worst) {
  for (int d = 0; d < KF_DTYPE_COUNT; d++)
    if (G_worst[d] > 0)
      printf("attention worst |error| %s: %.3g (allowed %.3g + the same relative)\n",
             kf_dtype_name((kf_dtype)d), G_worst[d], attn_tol((kf_dtype)d));
  if (G_lse_worst > 0) printf("attention logsumexp worst |error|: %.3g\n", G_lse_worst);
}
END_TEST

static Suite *make_suite(void) {
  kf_device_info info;
  G_sm90 = kf_device_query(G_ctx, 0, &info) == KF_OK && info.cc_major == 9 && info.cc_minor == 0;
  Suite *s = suite_create("gpu_attention");
  TCase *tc = tcase_create("attention");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, against_reference, 0, N_CASES);
  tcase_add_loop_test(tc, mma_kernel_on_sm90, 0, N_CASES);
  tcase_add_loop_test(tc, knob_variants, 0, N_CASES * N_VARIANTS);
  tcase_add_test(tc, worst);
  suite_add_tcase(s, tc);
  return s;
}
