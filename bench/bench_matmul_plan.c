/* bench_matmul_plan.c - matrix products through kfuse plans (kf_compile,
 * kf_plan_benchmark: cuBLASLt calls with their epilogue, the rest in the
 * next kernel), in TFLOP/s, then the same graph with template kernels
 * only (KFUSE_MATMUL=template: the sm_90 template on an H200 where it
 * fits, else the mma.sync template; KFUSE_GEMM90=0 gives every 16-bit
 * product to the mma.sync one), on issue 20's shapes: bf16 4096^3 and 8192^3
 * with bias + tanh-GELU, 8192^3 alone, the SwiGLU MLP (tokens 2048,
 * hidden 4096, intermediate 11008; tokens 8192, intermediate 14336; +
 * residual), the odd shapes. Prints
 * each plan's matmul decision (library or template, with times). Needs a
 * GPU; run bench/gemm_peers.py in the same call for torch's figures.
 *
 * With KFUSE_MATMUL=template set, each graph is timed once (the template
 * plan). --quick: 4096^3 and the smaller SwiGLU only; --odd: the odd shapes
 * alone; --square: the square products only (4096^3, and 8192^3 without
 * --quick), for A/B runs of the template's knobs; --swiglu: the two SwiGLU
 * MLPs only (2048 and 8192 tokens), for A/B runs of KFUSE_GEMM_PAIR. A
 * paired kernel is marked [sm_90 template, paired].
 *
 *     build/bench/bench_matmul_plan [--quick] [--odd] [--square] [--swiglu] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/knobs.h"
#include "kfuse.h"

static kf_ctx *ctx;

static kf_value in(kf_graph *g, const char *name, int rank, int64_t a, int64_t b, int64_t c) {
  int64_t s[3] = {a, b, c};
  return kf_input(g, name, KF_BF16, rank, rank == 1 ? s + 2 : rank == 2 ? s + 1 : s);
}

/* y = [gelu_tanh](x @ w [+ bias]), x [bt?, m, k], w [k, n] shared. */
static kf_graph *gemm(int64_t bt, int64_t m, int64_t n, int64_t k, bool epi) {
  kf_graph *g = NULL;
  kf_graph_create(ctx, &g);
  kf_value x = bt > 1 ? in(g, "x", 3, bt, m, k) : in(g, "x", 2, 0, m, k);
  kf_value w = in(g, "w", 2, 0, k, n);
  kf_value y = kf_matmul(g, x, w);
  if (epi) y = kf_gelu_tanh(g, kf_add(g, y, in(g, "bias", 1, 0, 0, n)));
  kf_set_output(g, y);
  return g;
}

/* out = x + down(silu(x @ wg) * (x @ wu)). */
static kf_graph *swiglu(int64_t tokens, int64_t hidden, int64_t inter) {
  kf_graph *g = NULL;
  kf_graph_create(ctx, &g);
  kf_value x = in(g, "x", 2, 0, tokens, hidden), wg = in(g, "wg", 2, 0, hidden, inter);
  kf_value wu = in(g, "wu", 2, 0, hidden, inter), wd = in(g, "wd", 2, 0, inter, hidden);
  kf_value h = kf_mul(g, kf_silu(g, kf_matmul(g, x, wg)), kf_matmul(g, x, wu));
  kf_set_output(g, kf_add(g, x, kf_matmul(g, h, wd)));
  return g;
}

/* Random inputs in [-1, 1), outputs allocated; times the plan (as the
 * load chose, then with template kernels only: KFUSE_MATMUL=template). */
static int bench_one(const char *name, kf_graph *g, double flop, bool template_only);

static int bench(const char *name, kf_graph *g, double flop) {
  if (kf_graph_status(g) != KF_OK) return fprintf(stderr, "%s: %s\n", name, kf_graph_errmsg(g)), 1;
  const char *was = getenv("KFUSE_MATMUL");
  if (was && strcmp(was, "template") == 0) { /* the plan is the template's already */
    int bad = bench_one(name, g, flop, true);
    kf_graph_destroy(g);
    return bad;
  }
  int bad = bench_one(name, g, flop, false);
  char keep[32];
  snprintf(keep, sizeof keep, "%s", was ? was : "");
  setenv("KFUSE_MATMUL", "template", 1);
  core_knobs_reload(); /* the library reads its knobs once */
  bad += bench_one(name, g, flop, true);
  if (was)
    setenv("KFUSE_MATMUL", keep, 1);
  else
    unsetenv("KFUSE_MATMUL");
  core_knobs_reload();
  kf_graph_destroy(g);
  return bad;
}

static int bench_one(const char *name, kf_graph *g, double flop, bool template_only) {
  kf_plan *plan = NULL;
  if (kf_compile(ctx, g, NULL, &plan) != KF_OK || kf_plan_load(plan) != KF_OK)
    return fprintf(stderr, "%s: %s\n", name, kf_ctx_errmsg(ctx)), 1;
  int ni = kf_graph_num_inputs(g), no = kf_graph_num_outputs(g);
  kf_tensor t[8];
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < ni + no; i++) {
    kf_value v = i < ni ? kf_graph_input(g, i) : kf_graph_output(g, i - ni);
    int64_t n = kf_value_numel(g, v);
    size_t bytes = (size_t)n * kf_dtype_size(kf_value_dtype(g, v));
    t[i] = (kf_tensor){NULL, kf_value_dtype(g, v), kf_value_rank(g, v), {0}};
    memcpy(t[i].shape, kf_value_shape(g, v), sizeof(int64_t) * (size_t)t[i].rank);
    if (kf_device_alloc(ctx, bytes, &t[i].data) != KF_OK)
      return fprintf(stderr, "%s: %s\n", name, kf_ctx_errmsg(ctx)), 1;
    if (i >= ni) continue;
    uint16_t *h = malloc(bytes);
    for (int64_t e = 0; e < n; e++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      float f = (float)((double)(s >> 11) / 9007199254740992.0 * 2 - 1);
      uint32_t u;
      memcpy(&u, &f, 4);
      h[e] = (uint16_t)(u >> 16);
    }
    kf_memcpy_to_device(ctx, t[i].data, h, bytes);
    free(h);
  }
  kf_bench_options o;
  kf_bench_options_init(&o);
  o.host_timing = false;
  o.nvml = false;
  kf_bench_result r;
  kf_status st = kf_plan_benchmark(plan, t, ni, t + ni, no, NULL, &o, &r);
  if (st != KF_OK) return fprintf(stderr, "%s: %s\n", name, kf_plan_errmsg(plan)), 1;
  char *src = kf_plan_source(plan, 0, NULL); /* which kernel the first product runs as */
  const char *kind = !src                              ? ""
                     : strstr(src, "(paired: ")        ? " [sm_90 template, paired]"
                     : strstr(src, "wgmma.mma_async")  ? " [sm_90 template]"
                     : strstr(src, "kf_g80_mma<BF>")   ? " [mma.sync template]"
                     : strstr(src, "not tensor cores") ? " [simple kernel]"
                                                       : "";
  /* the plan as chosen says its kind too: a template plan is told apart
   * from the library's by its paired kernel or a first launch that runs
   * wgmma */
  printf("%s %-30s %8.3f ms %6.1f TFLOP/s  (%d launches)%s\n",
         template_only ? "  template" : "kfuse", name, r.ms_median, flop / r.ms_median / 1e9,
         kf_plan_num_launches(plan), kind);
  kf_free(src);
  char *text = kf_plan_describe(plan, KF_FORMAT_TEXT);
  for (char *p = text ? strstr(text, "matmul-choice") : NULL; p; p = NULL) {
    char *end = strchr(p, '\n');
    printf("    %.*s\n", end ? (int)(end - p) : (int)strlen(p), p);
  }
  kf_free(text);
  for (int i = 0; i < ni + no; i++) kf_device_free(ctx, t[i].data);
  kf_plan_destroy(plan);
  return 0;
}

int main(int argc, char **argv) {
  bool quick = false, square = false, odd_only = false; /* odd_only: the odd shapes alone */
  bool swiglu_only = false; /* the two SwiGLU rows alone (the paired product's A/B) */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (strcmp(argv[i], "--square") == 0)
      square = true;
    else if (strcmp(argv[i], "--odd") == 0)
      odd_only = true;
    else if (strcmp(argv[i], "--swiglu") == 0)
      swiglu_only = true;
    else
      return fprintf(stderr, "usage: bench_matmul_plan [--quick] [--odd] [--square] [--swiglu]\n"),
             2;
  }
  if (kf_ctx_create(&ctx) != KF_OK) return 1;
  int n = 0;
  if (kf_device_count(ctx, &n) != KF_OK || n == 0) {
    printf("SKIP: no GPU: %s\n", kf_ctx_errmsg(ctx));
    return 77;
  }
  int bad = 0;
  for (int64_t z = 4096; !odd_only && !swiglu_only && z <= (quick ? 4096 : 8192); z *= 2) {
    char name[64];
    snprintf(name, sizeof name, "bf16 %lld^3 + bias + gelu_tanh", (long long)z);
    bad += bench(name, gemm(1, z, z, z, true), 2.0 * z * z * z);
    snprintf(name, sizeof name, "bf16 %lld^3", (long long)z);
    bad += bench(name, gemm(1, z, z, z, false), 2.0 * z * z * z);
  }
  if (!odd_only && !square)
    bad += bench("SwiGLU 2048x4096x11008 + res", swiglu(2048, 4096, 11008),
                 3 * 2.0 * 2048 * 4096 * 11008);
  if (!quick && !square) {
    if (!odd_only)
      bad += bench("SwiGLU 8192x4096x14336 + res", swiglu(8192, 4096, 14336),
                   3 * 2.0 * 8192 * 4096 * 14336);
    static const int64_t odd[4][4] = {
        {1, 4095, 4097, 1000}, {1, 33, 4096, 4096}, {1, 4096, 33, 4096}, {8, 512, 1024, 768}};
    for (int i = 0; i < 4 && !swiglu_only; i++) {
      char name[64];
      snprintf(name, sizeof name, "b%lld %lldx%lldx%lld", (long long)odd[i][0],
               (long long)odd[i][1], (long long)odd[i][2], (long long)odd[i][3]);
      bad += bench(name, gemm(odd[i][0], odd[i][1], odd[i][2], odd[i][3], false),
                   2.0 * odd[i][0] * odd[i][1] * odd[i][2] * odd[i][3]);
    }
  }
  kf_ctx_destroy(ctx);
  return bad ? 1 : 0;
}
