/* bench_attention.c - the fused attention kernel's speed (issue 22): B2 H16
 * S2048 D128 bf16 without a mask, causal (an iota comparison) at S 4096 and
 * 8192, with a tanh soft-cap at S 2048, and B4 H16 S2048 D64; each plan compiled once, run 5
 * times for warm-up, then timed by CUDA events around each of 20 runs (the
 * median), in TFLOP/s counted as 4 B H S^2 D (halved when causal, as
 * FlashAttention and torch count). Random data in [-1, 1). Exits 77
 * without a GPU. The decode lines (issue 22: 1 query, 4096 keys, batch 16,
 * 32 query heads over 8 k/v heads through reshape and broadcast_to, D128,
 * bf16 and f16) time 100 runs back to back between two events (10 times,
 * the median), so that no launch gap is counted, and print microseconds,
 * GB/s on the bytes of k and v, and the percentage of a copy ceiling
 * measured in the same run (cuMemcpyDtoDAsync, read plus written bytes,
 * kf_device_copy_bandwidth) at the same bytes moved and at 1 GiB.
 * Usage: bench_attention [--quick | --decode | --prefill]  (--quick: S 2048
 * only; --decode: the decode lines only; --prefill: every prefill line, no
 * decode lines: the A/B runs of the sm_90 kernel's knobs, docs/attention.md) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"
#include "runtime/rt_state.h"

static const rt_driver *D;
static kf_ctx *C;

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* q k^T / sqrt(D) [-> softcap 30] [-> causal where] -> softmax -> v. */
static kf_graph *attention(int64_t b, int64_t h, int64_t s, int64_t d, bool causal, bool cap) {
  kf_graph *g = NULL;
  if (kf_graph_create(C, &g) != KF_OK) return NULL;
  int64_t sh[4] = {b, h, s, d}, ss[2] = {s, s};
  int perm[4] = {0, 1, 3, 2};
  kf_value q = kf_input(g, "q", KF_BF16, 4, sh), k = kf_input(g, "k", KF_BF16, 4, sh);
  kf_value v = kf_input(g, "v", KF_BF16, 4, sh);
  kf_value x = kf_mul(g, kf_matmul(g, q, kf_transpose(g, k, perm)),
                      kf_scalar(g, 1.0 / sqrt((double)d), KF_BF16));
  if (cap) {
    kf_value c = kf_scalar(g, 30.0, KF_BF16);
    x = kf_mul(g, kf_tanh(g, kf_div(g, x, c)), c);
  }
  if (causal) {
    kf_value vis = kf_ge(g, kf_iota(g, KF_I32, 2, ss, 0), kf_iota(g, KF_I32, 2, ss, 1));
    x = kf_where(g, vis, x, kf_scalar(g, -INFINITY, KF_BF16));
  }
  kf_set_output(g, kf_matmul(g, kf_softmax(g, x, -1), v));
  return g;
}

static void fill(void *dev, size_t n, uint64_t seed) {
  uint16_t *h = malloc(n * 2);
  for (size_t i = 0; i < n; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    h[i] = kf_float_to_bf16((float)((double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0));
  }
  kf_memcpy_to_device(C, dev, h, n * 2);
  free(h);
}

static void bench(const char *name, int64_t b, int64_t h, int64_t s, int64_t d, bool causal,
                  bool cap) {
  kf_graph *g = attention(b, h, s, d, causal, cap);
  kf_plan *plan = NULL;
  kf_options o;
  kf_options_init(&o);
  if (!g || kf_compile(C, g, &o, &plan) != KF_OK) {
    printf("%-34s compile failed: %s\n", name, kf_ctx_errmsg(C));
    kf_graph_destroy(g);
    return;
  }
  size_t n = (size_t)(b * h * s * d);
  kf_tensor in[3], out[1];
  for (int i = 0; i < 4; i++) {
    kf_tensor *t = i < 3 ? &in[i] : &out[0];
    memset(t, 0, sizeof *t);
    t->dtype = KF_BF16, t->rank = 4;
    t->shape[0] = b, t->shape[1] = h, t->shape[2] = s, t->shape[3] = d;
    kf_device_alloc(C, n * 2, &t->data);
    if (i < 3) fill(t->data, n, 7 + (uint64_t)i);
  }
  CUevent e0, e1;
  D->EventCreate(&e0, CU_EVENT_DEFAULT), D->EventCreate(&e1, CU_EVENT_DEFAULT);
  kf_status st = KF_OK;
  for (int w = 0; w < 5 && st == KF_OK; w++) st = kf_plan_run(plan, in, 3, out, 1, NULL);
  float ms[20];
  for (int r = 0; r < 20 && st == KF_OK; r++) {
    D->EventRecord(e0, NULL);
    st = kf_plan_run(plan, in, 3, out, 1, NULL);
    D->EventRecord(e1, NULL);
    D->EventSynchronize(e1);
    D->EventElapsedTime(&ms[r], e0, e1);
  }
  if (st != KF_OK) {
    printf("%-34s run failed: %s\n", name, kf_plan_errmsg(plan));
  } else {
    qsort(ms, 20, sizeof ms[0], cmp_float);
    float med = (ms[9] + ms[10]) / 2;
    double flop = 4.0 * b * h * s * s * d * (causal ? 0.5 : 1.0);
    printf("%-34s %d launch%s %8.3f ms %7.1f TFLOP/s\n", name, kf_plan_num_launches(plan),
           kf_plan_num_launches(plan) == 1 ? " " : "es", med, flop / med / 1e9);
  }
  D->EventDestroy(e0), D->EventDestroy(e1);
  for (int i = 0; i < 3; i++) kf_device_free(C, in[i].data);
  kf_device_free(C, out[0].data);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}

/* q [B, H, 1, D] against k, v [B, Hk, S, D] read as [B, H, S, D]. */
static kf_graph *decode_graph(kf_dtype dt, int64_t b, int64_t h, int64_t hk, int64_t s, int64_t d) {
  kf_graph *g = NULL;
  if (kf_graph_create(C, &g) != KF_OK) return NULL;
  int64_t qs[4] = {b, h, 1, d}, ks[4] = {b, hk, s, d}, g5[5] = {b, hk, 1, s, d};
  int64_t b5[5] = {b, hk, h / hk, s, d}, r4[4] = {b, h, s, d};
  int perm[4] = {0, 1, 3, 2};
  kf_value q = kf_input(g, "q", dt, 4, qs), kv[2];
  for (int i = 0; i < 2; i++) {
    kf_value x = kf_input(g, i ? "v" : "k", dt, 4, ks);
    kv[i] = kf_reshape(g, kf_broadcast_to(g, kf_reshape(g, x, 5, g5), 5, b5), 4, r4);
  }
  kf_value x = kf_mul(g, kf_matmul(g, q, kf_transpose(g, kv[0], perm)),
                      kf_scalar(g, 1.0 / sqrt((double)d), dt));
  kf_set_output(g, kf_matmul(g, kf_softmax(g, x, -1), kv[1]));
  return g;
}

static void decode_bench(const char *name, kf_dtype dt, int64_t b, int64_t h, int64_t hk, int64_t s,
                         int64_t d, double copy_same, double copy_1g) {
  kf_graph *g = decode_graph(dt, b, h, hk, s, d);
  kf_plan *plan = NULL;
  kf_options o;
  kf_options_init(&o);
  if (!g || kf_compile(C, g, &o, &plan) != KF_OK) {
    printf("%-34s compile failed: %s\n", name, kf_ctx_errmsg(C));
    kf_graph_destroy(g);
    return;
  }
  int64_t n[4] = {b * h * d, b * hk * s * d, b * hk * s * d, b * h * d};
  kf_tensor t[4];
  for (int i = 0; i < 4; i++) {
    memset(&t[i], 0, sizeof t[i]);
    t[i].dtype = dt, t[i].rank = 4;
    t[i].shape[0] = b, t[i].shape[1] = i == 1 || i == 2 ? hk : h;
    t[i].shape[2] = i == 1 || i == 2 ? s : 1, t[i].shape[3] = d;
    kf_device_alloc(C, (size_t)n[i] * 2, &t[i].data);
    if (i < 3) fill(t[i].data, (size_t)n[i], 11 + (uint64_t)i); /* bf16 bits: fine as f16 data */
  }
  CUevent e0, e1;
  D->EventCreate(&e0, CU_EVENT_DEFAULT), D->EventCreate(&e1, CU_EVENT_DEFAULT);
  kf_status st = KF_OK;
  for (int w = 0; w < 20 && st == KF_OK; w++) st = kf_plan_run(plan, t, 3, &t[3], 1, NULL);
  float ms[10];
  for (int r = 0; r < 10 && st == KF_OK; r++) {
    D->EventRecord(e0, NULL);
    for (int i = 0; i < 100 && st == KF_OK; i++) st = kf_plan_run(plan, t, 3, &t[3], 1, NULL);
    D->EventRecord(e1, NULL);
    D->EventSynchronize(e1);
    D->EventElapsedTime(&ms[r], e0, e1);
  }
  if (st != KF_OK) {
    printf("%-34s run failed: %s\n", name, kf_plan_errmsg(plan));
  } else {
    qsort(ms, 10, sizeof ms[0], cmp_float);
    double us = (ms[4] + ms[5]) / 2 * 10.0; /* per run: ms / 100 runs * 1000 */
    double kv = 2.0 * (double)n[1] * 2, gbps = kv / us / 1e3;
    printf(
        "%-34s %d launch%s %8.2f us %7.0f GB/s on k+v (%.0f MiB): %5.1f%% of copy at the same "
        "bytes (%.0f GB/s), %5.1f%% of copy at 1 GiB (%.0f GB/s)\n",
        name, kf_plan_num_launches(plan), kf_plan_num_launches(plan) == 1 ? " " : "es", us, gbps,
        kv / 1048576.0, 100.0 * gbps / copy_same, copy_same, 100.0 * gbps / copy_1g, copy_1g);
  }
  D->EventDestroy(e0), D->EventDestroy(e1);
  for (int i = 0; i < 4; i++) kf_device_free(C, t[i].data);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}

static void decode_lines(void) {
  /* copies of half the k+v bytes move (read + write) the bytes the kernel reads */
  double same = 0, big = 0;
  size_t kv = (size_t)16 * 8 * 4096 * 128 * 2 * 2;
  if (kf_device_copy_bandwidth(C, kv / 2, 20, &same) != KF_OK ||
      kf_device_copy_bandwidth(C, (size_t)1 << 30, 20, &big) != KF_OK) {
    printf("decode: copy ceiling failed: %s\n", kf_ctx_errmsg(C));
    return;
  }
  decode_bench("decode B16 H32/8 1x4096 D128 bf16", KF_BF16, 16, 32, 8, 4096, 128, same, big);
  decode_bench("decode B16 H32/8 1x4096 D128 f16", KF_F16, 16, 32, 8, 4096, 128, same, big);
}

int main(int argc, char **argv) {
  bool quick = argc > 1 && !strcmp(argv[1], "--quick");
  bool decode_only = argc > 1 && !strcmp(argv[1], "--decode");
  bool prefill_only = argc > 1 && !strcmp(argv[1], "--prefill");
  int n = 0;
  rt_state *rt;
  if (kf_ctx_create(&C) != KF_OK || kf_device_count(C, &n) != KF_OK || n == 0 ||
      rt_state_get(C, &rt) != KF_OK) {
    printf("skipped: no GPU (%s)\n", C ? kf_ctx_errmsg(C) : "no context");
    kf_ctx_destroy(C);
    return 77;
  }
  D = rt->drv;
  D->CtxPushCurrent(rt->cuctx);
  if (!decode_only) {
    bench("B2 H16 S2048 D128 bf16", 2, 16, 2048, 128, false, false);
    bench("B2 H16 S2048 D128 bf16 softcap", 2, 16, 2048, 128, false, true);
    bench("B4 H16 S2048 D64 bf16", 4, 16, 2048, 64, false, false);
  }
  if (!quick && !decode_only) {
    bench("B2 H16 S4096 D128 bf16 causal", 2, 16, 4096, 128, true, false);
    bench("B2 H16 S8192 D128 bf16 causal", 2, 16, 8192, 128, true, false);
  }
  if (!prefill_only) decode_lines();
  D->CtxPopCurrent(NULL);
  kf_ctx_destroy(C);
  return 0;
}
