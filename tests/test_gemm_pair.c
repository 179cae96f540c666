/* test_gemm_pair.c - paired products (docs/matmul.md): which two matmuls
 * the fuser pairs into one sm_90 template kernel and why others are
 * refused, and that the paired kernel's source compiles with NVRTC for
 * sm_90a (two B maps, the second half of the tile from the second B). */
#include "check_main.h"
#include "codegen_util.h"
#include "fake_driver.h"
#include "fuser/legal.h"
#include "kfuse.h"
#include "knob_env.h"
#include "pipeline/pipeline.h"

/* The SwiGLU pattern out = silu(x @ wg) * (x @ wu) (+ r), with variants:
 * y_for_up reads the up product from another A, up_cols gives wu its own
 * width, gate_out makes the gate product a graph output too. */
typedef struct {
  kf_dtype dt;
  int64_t m, n, k;
  bool y_for_up, gate_out, residual;
  int64_t up_cols; /* 0: n */
} swiglu;

static kf_ctx *ctx;

static kf_graph *build_in(kf_ctx *in, const swiglu *c) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(in, &g), KF_OK);
  int64_t xs[2] = {c->m, c->k}, ws[2] = {c->k, c->n},
          us[2] = {c->k, c->up_cols ? c->up_cols : c->n};
  int64_t os[2] = {c->m, c->n};
  kf_value x = kf_input(g, "x", c->dt, 2, xs);
  kf_value y = c->y_for_up ? kf_input(g, "y", c->dt, 2, xs) : x;
  kf_value wg = kf_input(g, "wg", c->dt, 2, ws), wu = kf_input(g, "wu", c->dt, 2, us);
  kf_value gate = kf_matmul(g, x, wg), up = kf_matmul(g, y, wu);
  kf_set_name(g, gate, "gate");
  kf_set_name(g, up, "up");
  kf_value out = kf_mul(g, kf_silu(g, gate), up);
  if (c->residual) out = kf_add(g, out, kf_input(g, "r", c->dt, 2, os));
  kf_set_output(g, out);
  if (c->gate_out) kf_set_output(g, gate);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

static kf_graph *build(const swiglu *c) {
  if (!ctx) ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  return build_in(ctx, c);
}

/* The plan of c for arch on template kernels, its text in *text. */
static kf_plan *plan_of(const swiglu *c, const char *arch, kf_graph **g, char **text) {
  *g = build(c);
  kf_options o;
  kf_options_init(&o);
  o.arch = arch;
  kf_plan *p = NULL;
  ck_assert_msg(kf_plan_create(ctx, *g, &o, &p) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  *text = kf_plan_describe(p, KF_FORMAT_TEXT);
  ck_assert_ptr_nonnull(*text);
  return p;
}

static void done(kf_plan *p, kf_graph *g, char *text) {
  kf_free(text);
  kf_plan_destroy(p);
  kf_graph_destroy(g);
}

START_TEST(pairs_swiglu) {
  kt_setenv("KFUSE_MATMUL", "template", 1);
  swiglu c = {KF_BF16, 300, 520, 136, false, false, true, 0};
  kf_graph *g;
  char *text;
  kf_plan *p = plan_of(&c, "sm_90", &g, &text);
  ck_assert_int_eq(kf_plan_num_kernels(p), 1);
  ck_assert_msg(strstr(text, "+ gemm-pair: paired product: gate and up share x"), "%s", text);
  ck_assert_msg(strstr(text, "a paired product (two B, one A)"), "%s", text);
  char why[256] = "";
  ck_assert_msg(fuse_kernel_legal(p->fuse, 0, why, sizeof why), "%s", why);
  ck_assert(p->fuse->kernels[0].paired);
  ck_assert_int_eq(p->fuse->kernels[0].n_epilogue, 3); /* silu, mul, the residual */
  char *json = kf_plan_describe(p, KF_FORMAT_JSON);
  ck_assert_ptr_nonnull(strstr(json, "\"paired\":true"));
  kf_free(json);
  done(p, g, text);
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

/* Each refusal leaves gate a kernel of its own, with the reason logged. */
START_TEST(refusals_say_why) {
  kt_setenv("KFUSE_MATMUL", "template", 1);
  struct {
    swiglu c;
    const char *arch, *env, *why;
  } cases[] = {
      {{KF_BF16, 300, 520, 136, true, false, false, 0},
       "sm_90",
       NULL,
       "read different A (x and y)"},
      {{KF_BF16, 300, 520, 136, false, false, false, 1},
       "sm_90",
       NULL,
       "their B differ in shape or dtype"},
      {{KF_BF16, 300, 520, 136, false, true, false, 0},
       "sm_90",
       NULL,
       "gate is written (a graph output, or read outside the epilogue)"},
      {{KF_BF16, 300, 520, 136, false, false, false, 0},
       "sm_80",
       NULL,
       "paired products off (the target is sm_80, not sm_90)"},
      {{KF_BF16, 300, 520, 136, false, false, false, 0},
       "sm_90",
       "KFUSE_GEMM_PAIR",
       "paired products off (KFUSE_GEMM_PAIR=0)"},
      {{KF_BF16, 300, 520, 136, false, false, false, 0},
       "sm_90",
       "KFUSE_GEMM90",
       "paired products off (KFUSE_GEMM90=0)"},
      {{KF_BF16, 300, 33, 136, false, false, false, 0},
       "sm_90",
       NULL,
       "not for the sm_90 template (K or N not a multiple of 8)"},
      {{KF_F32, 300, 520, 136, false, false, false, 0},
       "sm_90",
       NULL,
       "not for the sm_90 template (not a bf16 or f16 product)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (cases[i].env) kt_setenv(cases[i].env, "0", 1);
    kf_graph *g;
    char *text;
    kf_plan *p = plan_of(&cases[i].c, cases[i].arch, &g, &text);
    ck_assert_msg(!strstr(text, "+ gemm-pair"), "case %zu paired: %s", i, text);
    ck_assert_msg(strstr(text, cases[i].why), "case %zu: no '%s' in\n%s", i, cases[i].why, text);
    ck_assert_int_ge(kf_plan_num_kernels(p), 2);
    done(p, g, text);
    if (cases[i].env) kt_unsetenv(cases[i].env);
    kt_setenv("KFUSE_GEMM_PAIR", "1", 1); /* on for the next case (off by default) */
  }
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

/* Library plans (the default) keep one product a call. */
START_TEST(library_plans_do_not_pair) {
  kt_setenv("KFUSE_MATMUL", "library", 1);
  swiglu c = {KF_BF16, 300, 520, 136, false, false, false, 0};
  kf_graph *g;
  char *text;
  kf_plan *p = plan_of(&c, "sm_90", &g, &text);
  ck_assert_msg(!strstr(text, "+ gemm-pair"), "%s", text);
  ck_assert_msg(!strstr(text, "a paired product"), "%s", text);
  done(p, g, text);
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

/* The paired kernel: m64n(2 OW) wgmma, three maps (A, then each B with the
 * same dims and boxes), OW-wide output tiles; it compiles for sm_90a. The
 * same plan emitted for sm_80 is the simple kernel with a second B. */
START_TEST(paired_kernel_compiles) {
  kt_setenv("KFUSE_MATMUL", "template", 1);
  static const int64_t shapes[][3] = {{300, 520, 136}, {1, 8, 8}, {129, 64, 1000}, {257, 136, 200}};
  for (int d = 0; d < 2; d++)
    for (int s = 0; s < 4; s++) {
      kf_dtype dt = d ? KF_F16 : KF_BF16;
      swiglu c = {dt, shapes[s][0], shapes[s][1], shapes[s][2], false, false, s % 2 == 0, 0};
      kf_graph *g;
      char *text;
      kf_plan *p = plan_of(&c, "sm_90", &g, &text);
      ck_assert_int_eq(kf_plan_num_launches(p), 1);
      char *src = kf_plan_source(p, 0, "sm_90");
      ck_assert_msg(src, "%s", kf_plan_errmsg(p));
      int ow = c.n > 64 ? 128 : 64;
      char want[96];
      snprintf(want, sizeof want, "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s", 2 * ow,
               d ? "f16" : "bf16");
      ck_assert_msg(strstr(src, want), "%s missing", want);
      ck_assert_ptr_nonnull(strstr(src, "const __grid_constant__ kf_tmap kf_tm2"));
      ck_assert_ptr_nonnull(strstr(src, "paired: "));
      snprintf(want, sizeof want, "for (int c = 0; c < %d / ", ow);
      ck_assert_msg(strstr(src, want), "%s missing", want);
      snprintf(want, sizeof want, "= d[i + %d];", ow / 2);
      ck_assert_msg(strstr(src, want), "%s missing", want);
      char what[64];
      snprintf(what, sizeof what, "pair %s %lldx%lldx%lld", d ? "f16" : "bf16", (long long)c.m,
               (long long)c.n, (long long)c.k);
      ck_assert_msg(tu_nvrtc_arch(src, what, "sm_90a") >= 0, "%s does not compile", what);
      const char *dump = getenv("KFUSE_GEMM_PAIR_DUMP"); /* a file to look at with ptxas */
      if (dump && s == 0 && d == 0) {
        FILE *f = fopen(dump, "w");
        if (f) fputs(src, f), fclose(f);
      }
      kf_free(src);
      /* off the sm_90 template (another arch, or the fallback form for
       * operands the copy engine cannot read): the simple kernel with two
       * accumulators, the same buffers */
      src = kf_plan_source(p, 0, "sm_80");
      ck_assert_msg(src, "%s", kf_plan_errmsg(p));
      ck_assert_ptr_null(strstr(src, "wgmma"));
      ck_assert_ptr_nonnull(strstr(src, "paired (two B, one A), simple 16x16"));
      ck_assert_ptr_nonnull(strstr(src, "kf_bs2[i][tx]"));
      if (s < 2) {
        snprintf(what, sizeof what, "pair simple %s %lldx%lldx%lld", d ? "f16" : "bf16",
                 (long long)c.m, (long long)c.n, (long long)c.k);
        ck_assert_msg(tu_nvrtc_arch(src, what, "sm_80") >= 0, "%s does not compile", what);
      }
      kf_free(src);
      done(p, g, text);
    }
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

/* A plan fused for sm_90 and compiled for sm_80 (its arch changed between
 * the two: what a caller's second arch does) is fused again without pairs
 * before code generation: two products, their reason logged. */
START_TEST(compile_for_another_arch_unpairs) {
  kt_setenv("KFUSE_MATMUL", "template", 1);
  swiglu c = {KF_BF16, 64, 64, 64, false, false, false, 0};
  kf_graph *g;
  char *text;
  kf_plan *p = plan_of(&c, "sm_90", &g, &text);
  ck_assert_int_eq(kf_plan_num_kernels(p), 1);
  p->options.arch = "sm_80";
  ck_assert_msg(kf_plan_compile(p) == KF_OK, "%s", kf_plan_errmsg(p));
  ck_assert_int_eq(kf_plan_num_kernels(p), 2);
  ck_assert(!p->fuse->options.gemm_pair);
  kf_free(text);
  text = kf_plan_describe(p, KF_FORMAT_TEXT);
  ck_assert_msg(strstr(text, "paired products off (the target is sm_80, not sm_90)"), "%s", text);
  done(p, g, text);
  /* a plan with nothing to pair is compiled as it was fused */
  kf_graph *one = NULL;
  ck_assert_int_eq(kf_graph_create(ctx, &one), KF_OK);
  int64_t sh[2] = {64, 64};
  kf_set_output(
      one, kf_matmul(one, kf_input(one, "a", KF_BF16, 2, sh), kf_input(one, "b", KF_BF16, 2, sh)));
  kf_options o;
  kf_options_init(&o);
  o.arch = "sm_90";
  ck_assert_int_eq(kf_plan_create(ctx, one, &o, &p), KF_OK);
  const fuse_plan *fused = p->fuse;
  ck_assert_msg(kf_plan_compile(p) == KF_OK, "%s", kf_plan_errmsg(p));
  ck_assert_ptr_eq(p->fuse, fused);
  kf_plan_destroy(p);
  kf_graph_destroy(one);
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

#define DEV ((CUdeviceptr)0x300000000ull)

/* On the fake driver (an sm_90 device): the paired plan, fused for the
 * device's arch, encodes three maps (A, then each B with the same dims and
 * boxes) from the bound addresses and passes them after the pointers; a
 * misaligned B runs the form without maps. */
START_TEST(runtime_passes_three_maps) {
  kt_setenv("KFUSE_MATMUL", "template", 1);
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  rt_fake_add_device_range(DEV, 1 << 24);
  kf_ctx *fc = NULL;
  ck_assert_int_eq(kf_ctx_create(&fc), KF_OK);
  swiglu c = {KF_BF16, 300, 520, 136, false, false, false, 0};
  kf_graph *g = build_in(fc, &c);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(fc, g, NULL, &plan), KF_OK);
  ck_assert_int_eq(kf_plan_num_kernels(plan), 1);
  kf_tensor tin[3] = {{(void *)(uintptr_t)DEV, KF_BF16, 2, {300, 136}},
                      {(void *)(uintptr_t)(DEV + 0x100000), KF_BF16, 2, {136, 520}},
                      {(void *)(uintptr_t)(DEV + 0x200000), KF_BF16, 2, {136, 520}}};
  kf_tensor tout[1] = {{(void *)(uintptr_t)(DEV + 0x300000), KF_BF16, 2, {300, 520}}};
  kf_status st = kf_plan_run(plan, tin, 3, tout, 1, NULL);
  ck_assert_msg(st == KF_OK, "%s", kf_plan_errmsg(plan));
  ck_assert_int_eq(rt_fake_count_prefix("TensorMapEncodeTiled"), 3);
  int i = rt_fake_find(0, "TensorMapEncodeTiled", "addr=0x300000000 ");
  ck_assert_int_ge(i, 0);
  ck_assert_ptr_nonnull(strstr(rt_fake_line(i), "dims=136x300 stride=272 box=64x128 swizzle=3"));
  for (int b = 1; b <= 2; b++) {
    char addr[48];
    snprintf(addr, sizeof addr, "addr=0x3%08x ", 0x100000 * b);
    i = rt_fake_find(0, "TensorMapEncodeTiled", addr);
    ck_assert_msg(i >= 0, "no map of %s", addr);
    ck_assert_ptr_nonnull(strstr(rt_fake_line(i), "dims=520x136 stride=1040 box=64x64 swizzle=3"));
  }
  i = rt_fake_find(0, "LaunchKernel", "block=384");
  ck_assert_int_ge(i, 0);
  ck_assert_msg(strstr(rt_fake_line(i), ",0x300000000,0x300100000,0x300200000"), "%s",
                rt_fake_line(i));
  /* wu 2 bytes off: the launch's form without maps (the simple kernel, 256
   * threads, the same pointers), no map encoded; aligned: paired again */
  int from = rt_fake_count();
  tin[2].data = (void *)(uintptr_t)(DEV + 0x500002);
  ck_assert_msg(kf_plan_run(plan, tin, 3, tout, 1, NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  ck_assert_int_eq(rt_fake_count_prefix("TensorMapEncodeTiled"), 3);
  i = rt_fake_find(from, "LaunchKernel", "block=256");
  ck_assert_msg(i >= 0, "no fallback launch");
  ck_assert_msg(strstr(rt_fake_line(i), "0x300500002"), "%s", rt_fake_line(i));
  ck_assert_int_lt(rt_fake_find(from, "LaunchKernel", "block=384"), 0);
  from = rt_fake_count();
  tin[2].data = (void *)(uintptr_t)(DEV + 0x200000);
  ck_assert_int_eq(kf_plan_run(plan, tin, 3, tout, 1, NULL), KF_OK);
  ck_assert_int_ge(rt_fake_find(from, "LaunchKernel", "block=384"), 0);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(fc);
  ck_assert_msg(rt_fake_live_objects() == 0, "%d fake objects leaked", rt_fake_live_objects());
  rt_driver_override(NULL);
  rt_fake_reset();
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

static Suite *make_suite(void) {
  /* the pairing is off by default until the GPU suite has passed */
  kt_setenv("KFUSE_GEMM_PAIR", "1", 1);
  Suite *s = suite_create("gemm_pair");
  TCase *tc = tcase_create("gemm_pair");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, pairs_swiglu);
  tcase_add_test(tc, refusals_say_why);
  tcase_add_test(tc, library_plans_do_not_pair);
  tcase_add_test(tc, paired_kernel_compiles);
  tcase_add_test(tc, runtime_passes_three_maps);
  tcase_add_test(tc, compile_for_another_arch_unpairs);
  suite_add_tcase(s, tc);
  return s;
}
