/* planted.h - wrong kernels on purpose, for proving that the checker
 * fails them: a copy of templates/ with one small bug, read through
 * KFUSE_TEMPLATE_DIR, and graphs whose kernels contain it. Shared by
 * tests/gpu/test_gpu_check.c (runs them: each must be a mismatch) and
 * tests/test_planted.c (CI without a GPU: each patch still applies, reaches
 * a kernel of one of its graphs and compiles for sm_90). The includer
 * provides G_ctx and Check. */
#ifndef KF_TEST_PLANTED_H
#define KF_TEST_PLANTED_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kfuse.h"
#include "knob_env.h"

/* ---- a patched copy of templates/ ------------------------------------------ */

static char G_dir[256];

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot read %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  ck_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
  s[n] = 0;
  fclose(f);
  return s;
}

static void spit(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  ck_assert_msg(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

/* Every occurrence of from in s replaced by to (at least one). */
static char *replace_all(const char *s, const char *from, const char *to) {
  size_t nf = strlen(from), nt = strlen(to), count = 0;
  for (const char *p = strstr(s, from); p; p = strstr(p + nf, from)) count++;
  ck_assert_msg(count > 0, "the template lacks '%s'", from);
  char *out = malloc(strlen(s) + count * nt + 1), *o = out;
  ck_assert(out != NULL);
  const char *p = s;
  for (const char *q; (q = strstr(p, from)); p = q + nf) {
    memcpy(o, p, (size_t)(q - p)), o += q - p;
    memcpy(o, to, nt), o += nt;
  }
  strcpy(o, p);
  return out;
}

/* A fresh copy of the build's templates (build/templates: templates/ and
 * the common.cuh generated from ops.def) in G_dir, file `name` patched
 * (NULL: none), and KFUSE_TEMPLATE_DIR pointing at it. */
static void templates_copy(const char *name, const char *from, const char *to) {
  snprintf(G_dir, sizeof G_dir, "/tmp/kfuse-planted-%d", (int)getpid());
  mkdir(G_dir, 0700);
  DIR *d = opendir(KFUSE_BINARY_DIR "/templates");
  ck_assert(d != NULL);
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char src[512], dst[512];
    snprintf(src, sizeof src, "%s/templates/%s", KFUSE_BINARY_DIR, e->d_name);
    snprintf(dst, sizeof dst, "%s/%s", G_dir, e->d_name);
    char *text = slurp(src);
    if (name && !strcmp(name, e->d_name)) {
      char *p = replace_all(text, from, to);
      free(text);
      text = p;
    }
    spit(dst, text);
    free(text);
  }
  closedir(d);
  kt_setenv("KFUSE_TEMPLATE_DIR", G_dir, 1);
  /* The bugs are planted in kfuse's own kernels, matmul.cu's included:
   * its products run as template kernels, not cuBLASLt calls. */
  kt_setenv("KFUSE_MATMUL", "template", 1);
}

static void templates_done(void) {
  kt_unsetenv("KFUSE_TEMPLATE_DIR");
  kt_unsetenv("KFUSE_MATMUL");
  DIR *d = opendir(G_dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", G_dir, e->d_name);
    if (e->d_name[0] != '.') unlink(p);
  }
  if (d) closedir(d);
  rmdir(G_dir);
}

/* ---- graphs -------------------------------------------------------------------------- */

static kf_graph *new_graph(void) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  return g;
}

static kf_graph *finish(kf_graph *g, kf_value out) {
  ck_assert_msg(out != KF_NONE && kf_set_output(g, out) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

static kf_graph *g_exp_pointwise(void) { /* exp(x) * x + x */
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){4096, 256});
  return finish(g, kf_add(g, kf_mul(g, kf_exp(g, x), x), x));
}

static kf_graph *g_x_over_colsum(void) { /* the H200 finding */
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){1024, 4096});
  return finish(g, kf_div(g, x, kf_sum(g, x, 1, (int[]){0}, true)));
}

static kf_graph *g_colsum(void) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){1024, 4096});
  return finish(g, kf_sum(g, x, 1, (int[]){0}, false));
}

/* A sum of squares: terms of one sign, so that losing a share of them is a
 * bias the bound must catch. (Lost terms of random sign, a few thousand of
 * 2^20, stay inside what an f32 sum of 2^20 terms may err: the H200 run
 * did not catch them, rightly.) */
static kf_graph *g_total_sum(void) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 1, (int64_t[]){1 << 20});
  return finish(g, kf_sum(g, kf_mul(g, x, x), 1, (int[]){0}, false));
}

static kf_graph *g_rowsum(void) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){64, 65536});
  return finish(g, kf_sum(g, x, 1, (int[]){1}, false));
}

static kf_graph *g_softmax(void) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){512, 4096});
  return finish(g, kf_softmax(g, x, -1));
}

static kf_graph *g_softmax_long(void) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){64, 65536});
  return finish(g, kf_softmax(g, x, -1));
}

static kf_graph *g_bf16_matmul(void) { /* the other H200 finding */
  kf_graph *g = new_graph();
  kf_value a = kf_input(g, "a", KF_BF16, 2, (int64_t[]){256, 512});
  kf_value b = kf_input(g, "b", KF_BF16, 2, (int64_t[]){512, 256});
  kf_value c = kf_cast(g, kf_matmul(g, a, b), KF_F32);
  return finish(g, kf_add(g, kf_mul(g, c, kf_scalar(g, 3.0, KF_F32)), kf_scalar(g, 1.0, KF_F32)));
}

/* The same batched (2 of 256x512x256): a batch takes the mma.sync
 * template (gemm_sm80.cu) on sm_90, where the plain product takes
 * gemm_sm90.cu. */
static kf_graph *g_bf16_bmm(void) {
  kf_graph *g = new_graph();
  kf_value a = kf_input(g, "a", KF_BF16, 3, (int64_t[]){2, 256, 512});
  kf_value b = kf_input(g, "b", KF_BF16, 2, (int64_t[]){512, 256});
  kf_value c = kf_cast(g, kf_matmul(g, a, b), KF_F32);
  return finish(g, kf_add(g, kf_mul(g, c, kf_scalar(g, 3.0, KF_F32)), kf_scalar(g, 1.0, KF_F32)));
}

/* An f32 batched product: the simple kernel (matmul.cu) everywhere. */
static kf_graph *g_f32_bmm(void) {
  kf_graph *g = new_graph();
  kf_value a = kf_input(g, "a", KF_F32, 3, (int64_t[]){2, 256, 512});
  kf_value b = kf_input(g, "b", KF_F32, 2, (int64_t[]){512, 256});
  return finish(g, kf_add(g, kf_matmul(g, a, b), kf_scalar(g, 1.0, KF_F32)));
}

typedef kf_graph *graph_fn(void);

typedef struct planted {
  const char *what, *file, *from, *to;
  graph_fn *graphs[3]; /* the first whose kernels contain the bug is used */
} planted;

/* Every patch carries this marker, so that a kernel containing it shows. */
#define MARK "/*PLANTED*/"
static const planted G_planted[] = {
    {"exp 2e-4 too large",
     "common.cuh",
     "KF_INLINE float kf_exp(float x) {\n#ifdef KF_MATH_FAST\n  return __expf(x);\n#else\n"
     "  return expf(x);",
     "KF_INLINE float kf_exp(float x) {\n#ifdef KF_MATH_FAST\n  return __expf(x);\n#else\n"
     "  return expf(x) * 1.0002f; " MARK,
     {g_exp_pointwise}},
    {"column sum without row 0",
     "reduce_cols.cu",
     "k = k0 + ty; k < k1; k += TY",
     "k = k0 + ty + (k0 == 0 && ty == 0) " MARK "; k < k1; k += TY",
     {g_x_over_colsum, g_colsum}},
    /* one term among 65536 is within an f32 sum's bound: thread 0's share (4096
     * squares of 2^20 in the split full sum; both loops of the template) */
    {"row sum without thread 0's terms",
     "reduce_rows.cu",
     "kb = k0 + ({{IDX}})threadIdx.x * V; kb < k1;",
     "kb = k0 + ({{IDX}})threadIdx.x * V + (threadIdx.x == 0 ? k1 : 0) " MARK "; kb < k1;",
     {g_total_sum, g_rowsum}},
    {"warp reduction without its last exchange",
     "common.cuh",
     "for (int o = 16; o > 0; o >>= 1) v = R::op(v, kf_shfl_xor(v, o));",
     "for (int o = 16; o > 1; o >>= 1) v = R::op(v, kf_shfl_xor(v, o)); " MARK,
     {g_softmax, g_softmax_long, g_rowsum}},
    /* kf_div_rcp and kf_div_rcpf (the row kernels' output phase) */
    {"per-row division 5e-4 off",
     "common.cuh",
     "const float q1 = __fmaf_rn(-e, r, q0);",
     "const float q1 = __fmaf_rn(-e, r, q0) * 1.0005f; " MARK,
     {g_softmax, g_x_over_colsum}},
    {"matmul without one product in 16",
     "matmul.cu",
     "for (int i = 0; i < 16; i++) acc =",
     "for (int i = 1 " MARK "; i < 16; i++) acc =",
     {g_f32_bmm}},
    /* the mma.sync template: each k-block's first k16 step left out */
    {"mma.sync matmul without one k16 step in 2",
     "gemm_sm80.cu",
     "for (int kk = 0; kk < 2; kk++) {",
     "for (int kk = 1 " MARK "; kk < 2; kk++) {",
     {g_bf16_bmm}},
    /* the sm_90 template: each k-block's first k16 step left out */
    {"sm_90 matmul without one k16 step in 4",
     "gemm_sm90.cu",
     "for (int kk = 0; kk < {{BK}} / 16; kk++)",
     "for (int kk = 1 " MARK "; kk < {{BK}} / 16; kk++)",
     {g_bf16_matmul}},
};

#define N_PLANTED ((int)(sizeof G_planted / sizeof G_planted[0]))

/* Every graph above, for the unpatched runs. */
static graph_fn *const G_all_graphs[] = {
    g_exp_pointwise, g_x_over_colsum, g_colsum,      g_total_sum, g_rowsum,
    g_softmax,       g_softmax_long,  g_bf16_matmul, g_bf16_bmm,  g_f32_bmm};
#define N_ALL_GRAPHS ((int)(sizeof G_all_graphs / sizeof G_all_graphs[0]))

/* Whether some launch of the plan contains marker. */
static bool plan_has(kf_plan *plan, const char *marker) {
  bool found = false;
  for (int l = 0; l < kf_plan_num_launches(plan) && !found; l++) {
    char *src = kf_plan_source(plan, l, NULL);
    found = src && strstr(src, marker);
    kf_free(src);
  }
  return found;
}

#endif /* KF_TEST_PLANTED_H */
