/* bench_gemm_lt.c - the cuBLASLt path's speed: for each product (bf16
 * 4096^3 and 8192^3, alone and + bias + tanh-GELU; the odd shapes of issue
 * 20), every heuristic candidate timed by CUDA events (median of 20 runs
 * after 5 of warm-up, random data, never zeros), and the heuristic's first
 * choice beside the fastest. Exits 77 without a GPU or cuBLASLt.
 * Usage: bench_gemm_lt [--quick]  (--quick: 4096^3 only) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gemm_lt.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

static const rt_driver *D;

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Median ms of 20 runs of candidate i. */
static float time_candidate(rt_gemm_lt *p, int i, const rt_gemm_args *args, CUstream s) {
  CUevent e0, e1;
  D->EventCreate(&e0, CU_EVENT_DEFAULT), D->EventCreate(&e1, CU_EVENT_DEFAULT);
  char err[256];
  for (int w = 0; w < 5; w++)
    if (rt_gemm_lt_run(p, i, args, s, err, sizeof err) != KF_OK) return -1;
  float ms[20];
  for (int r = 0; r < 20; r++) {
    D->EventRecord(e0, s);
    rt_gemm_lt_run(p, i, args, s, err, sizeof err);
    D->EventRecord(e1, s);
    D->EventSynchronize(e1);
    D->EventElapsedTime(&ms[r], e0, e1);
  }
  D->EventDestroy(e0), D->EventDestroy(e1);
  qsort(ms, 20, sizeof ms[0], cmp_float);
  return (ms[9] + ms[10]) / 2;
}

static void fill_bf16(uint16_t *x, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    x[i] = kf_float_to_bf16((float)((double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0));
  }
}

static void bench_one(const rt_blaslt *lt, cublasLtHandle_t h, const char *name, rt_gemm g) {
  size_t ab = kf_dtype_size(g.ab_type), ds = kf_dtype_size(g.d_type);
  size_t na = (size_t)(g.a_stride ? g.batch : 1) * g.m * g.k,
         nb = (size_t)(g.b_stride ? g.batch : 1) * g.k * g.n, nd = (size_t)g.batch * g.m * g.n;
  uint16_t *host = malloc((na > nb ? na : nb) * ab);
  rt_gemm_args args = {.workspace_size = 64u << 20};
  D->MemAlloc(&args.a, na * ab), D->MemAlloc(&args.b, nb * ab), D->MemAlloc(&args.d, nd * ds);
  D->MemAlloc(&args.bias, g.n * ds), D->MemAlloc(&args.workspace, args.workspace_size);
  fill_bf16(host, na, 1), D->MemcpyHtoD(args.a, host, na * ab);
  fill_bf16(host, nb, 2), D->MemcpyHtoD(args.b, host, nb * ab);
  fill_bf16(host, g.n, 3), D->MemcpyHtoD(args.bias, host, g.n * ds);
  rt_gemm_lt p;
  char err[256];
  if (rt_gemm_lt_prepare(&p, lt, h, &g, NULL, args.workspace_size, 8, err, sizeof err) != KF_OK) {
    printf("%-28s prepare failed: %s\n", name, err);
  } else {
    double flop = 2.0 * g.batch * g.m * g.n * g.k;
    float first = time_candidate(&p, 0, &args, NULL), best = first;
    int best_i = 0;
    for (int i = 1; i < p.ncand; i++) {
      float t = time_candidate(&p, i, &args, NULL);
      if (t > 0 && t < best) best = t, best_i = i;
    }
    printf(
        "%-28s %2d candidates  heuristic #0 %8.3f ms %6.1f TFLOP/s  best #%d %8.3f ms %6.1f "
        "TFLOP/s\n",
        name, p.ncand, first, flop / first / 1e9, best_i, best, flop / best / 1e9);
    rt_gemm_lt_release(&p);
  }
  D->MemFree(args.a), D->MemFree(args.b), D->MemFree(args.d), D->MemFree(args.bias);
  D->MemFree(args.workspace);
  free(host);
}

int main(int argc, char **argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  kf_ctx *ctx;
  int n = 0;
  rt_state *rt;
  if (kf_ctx_create(&ctx) != KF_OK || kf_device_count(ctx, &n) != KF_OK || n == 0 ||
      rt_state_get(ctx, &rt) != KF_OK) {
    printf("skipped: no GPU\n");
    return 77;
  }
  D = rt->drv;
  D->CtxPushCurrent(rt->cuctx);
  const rt_blaslt *lt;
  char err[256];
  if (rt_blaslt_get(&lt, err, sizeof err) != KF_OK) {
    printf("skipped: %s\n", err);
    return 77;
  }
  cublasLtHandle_t h;
  lt->Create(&h);
  printf("cuBLASLt %zu on %s\n", lt->GetVersion(), rt->info.name);
  const int64_t sizes[] = {4096, 8192};
  for (int s = 0; s < (quick ? 1 : 2); s++) {
    int64_t z = sizes[s];
    rt_gemm g = {.batch = 1,
                 .m = z,
                 .n = z,
                 .k = z,
                 .ab_type = KF_BF16,
                 .d_type = KF_BF16,
                 .b_trans = false,
                 .alpha = 1,
                 .d_stride = z * z};
    char name[64];
    snprintf(name, sizeof name, "bf16 %lld^3", (long long)z);
    bench_one(lt, h, name, g);
    g.bias = true, g.act = RT_GEMM_ACT_GELU_TANH;
    snprintf(name, sizeof name, "bf16 %lld^3 +bias+gelu", (long long)z);
    bench_one(lt, h, name, g);
  }
  const int64_t odd[][4] = {
      {1, 4095, 4097, 1000}, {1, 33, 4096, 4096}, {1, 4096, 33, 4096}, {8, 512, 1024, 768}};
  for (int i = 0; i < (quick ? 0 : 4); i++) {
    rt_gemm g = {.batch = odd[i][0],
                 .m = odd[i][1],
                 .n = odd[i][2],
                 .k = odd[i][3],
                 .ab_type = KF_BF16,
                 .d_type = KF_BF16,
                 .b_trans = true,
                 .alpha = 1,
                 .a_stride = odd[i][1] * odd[i][3],
                 .b_stride = 0,
                 .d_stride = odd[i][1] * odd[i][2]};
    char name[64];
    snprintf(name, sizeof name, "bf16 b%lld %lldx%lldx%lld", (long long)g.batch, (long long)g.m,
             (long long)g.n, (long long)g.k);
    bench_one(lt, h, name, g);
  }
  lt->Destroy(h);
  D->CtxPopCurrent(NULL);
  kf_ctx_destroy(ctx);
  return 0;
}
