/* test_hpack.c - horizontal launches whose identical parts share one
 * generic body with the pointers packed in one parameter (src/codegen/
 * hpack.c), heavy pointwise bodies kept small for NVRTC, and the runtime's
 * packed launch (one kernel argument) in plain and graph mode against the
 * fake driver. Generated code is compiled with NVRTC for sm_90. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "codegen/cg_internal.h"
#include "codegen/codegen.h"
#include "codegen/emit.h"
#include "codegen/part.h"
#include "codegen/pointwise.h"
#include "codegen/target.h"
#include "fake_driver.h"
#include "fuser/fuse.h"
#include "fuser/plan.h"
#include "kfuse.h"
#include "pipeline/pipeline.h"
#include "runtime/driver.h"
#include "runtime/rt.h"

/* n updates o_i = 0.9 x_i + 0.1 y_i of sizes 4000 + 1001 i (odd sizes
 * too: the scalar tail runs), plus `extra` distinct kernels. */
static kf_graph *updates(kf_ctx *ctx, int n, int extra, int64_t *sizes) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  for (int i = 0; i < n; i++) {
    char nx[16], ny[16];
    snprintf(nx, sizeof nx, "x%d", i);
    snprintf(ny, sizeof ny, "y%d", i);
    int64_t s[1] = {4000 + 1001 * (int64_t)i};
    if (sizes) sizes[i] = s[0];
    kf_value x = kf_input(g, nx, KF_F32, 1, s);
    kf_value y = kf_input(g, ny, KF_F32, 1, s);
    kf_value o =
        kf_add(g, kf_mul(g, x, kf_scalar(g, 0.9, KF_F32)), kf_mul(g, y, kf_scalar(g, 0.1, KF_F32)));
    kf_set_output(g, o);
  }
  for (int i = 0; i < extra; i++) {
    char nz[16];
    snprintf(nz, sizeof nz, "z%d", i);
    int64_t s[1] = {3000};
    kf_value z = kf_input(g, nz, KF_F32, 1, s);
    kf_set_output(g, kf_mul(g, kf_exp(g, z), kf_scalar(g, 1.0 + i, KF_F32)));
  }
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

static void emit(const kf_graph *g, fuse_plan **fp, cg_launch_src *src) {
  fuse_options opt;
  fuse_options_default(&opt);
  char err[512] = "";
  ck_assert_msg(fuse_plan_build(g, &opt, fp, err, sizeof err) == KF_OK, "%s", err);
  ck_assert_int_eq((*fp)->n_launches, 1);
  cg_target t;
  ck_assert(cg_target_from_arch("sm_90", &t));
  ck_assert_msg(cg_emit_launch(g, *fp, 0, &t, src, err, sizeof err) == KF_OK, "%s", err);
}

/* Compiles with NVRTC for sm_90; returns the log (ptxas -v), NULL when the
 * compile failed (the log is printed). */
static char *nvrtc_log(const char *source) {
  nvrtcProgram prog;
  ck_assert_int_eq(nvrtcCreateProgram(&prog, source, "hpack.cu", 0, NULL, NULL), NVRTC_SUCCESS);
  const char *opts[] = {"--gpu-architecture=sm_90", "--std=c++17", "-default-device",
                        "--ptxas-options=-v"};
  nvrtcResult r = nvrtcCompileProgram(prog, 4, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  char *log = calloc(n + 1, 1);
  nvrtcGetProgramLog(prog, log);
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS) {
    fprintf(stderr, "NVRTC failed:\n%s\n", log);
    free(log);
    return NULL;
  }
  return log;
}

static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

START_TEST(identical_parts_share_one_body) {
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  int64_t sizes[40];
  kf_graph *g = updates(ctx, 40, 2, sizes);
  fuse_plan *fp = NULL;
  cg_launch_src src;
  emit(g, &fp, &src);
  ck_assert_int_eq(fp->launches[0].n_kernels, 42);
  ck_assert(src.packed_params);
  /* one body for the 40 updates, one each for the two distinct kernels */
  ck_assert_int_eq(count(src.source, "KF_INLINE void kf_g0("), 1);
  ck_assert_int_eq(count(src.source, "KF_INLINE void kf_g1("), 0);
  ck_assert_int_eq(count(src.source, "KF_INLINE void kf_part"), 2 * 2); /* fn and fn_elems */
  ck_assert_ptr_nonnull(strstr(src.source, "__constant__ unsigned kf_g0_start[41]"));
  ck_assert_ptr_nonnull(strstr(src.source, "const __grid_constant__ kf_params_124 P"));
  /* pointers per part in part order: x_i, y_i, o_i; then the others */
  ck_assert_int_eq(src.n_params, 40 * 3 + 2 * 2);
  for (int i = 0; i < 40; i++) {
    ck_assert_int_eq(kf_value_numel(g, src.params[3 * i].value), sizes[i]);
    ck_assert(!src.params[3 * i].written && !src.params[3 * i + 1].written);
    ck_assert(src.params[3 * i + 2].written);
  }
  /* each part's block range covers 2 vector iterations of 256 threads */
  char want[64];
  snprintf(want, sizeof want, "kf_g0_start[41] = {0, %lld, ",
           (long long)((sizes[0] / 4 + 511) / 512));
  ck_assert_msg(strstr(src.source, want) != NULL, "no '%s'", want);
  ck_assert_int_eq(src.block, 256);
  char *log = nvrtc_log(src.source);
  ck_assert_ptr_nonnull(log);
  ck_assert_msg(strstr(log, "0 bytes stack frame, 0 bytes spill stores") != NULL, "%s", log);
  free(log);
  cg_launch_src_free(&src);
  fuse_plan_free(fp);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* One random part: a few templates, dtypes, constants and shapes drawn
 * from small pools so that parts repeat each other's structure at other
 * sizes; some broadcast a bias or transpose (no key: dims reach the text). */
static void random_part(kf_graph *g, uint64_t *s, int i) {
  static const kf_dtype dts[] = {KF_F32, KF_BF16, KF_F64, KF_I32};
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  uint64_t r = *s >> 20;
  kf_dtype dt = dts[r % 4];
  int tmpl = (int)((r >> 4) % 6), rank = 1 + (int)((r >> 8) % 2);
  double c = (r >> 10) % 2 ? (dt == KF_I32 ? 3.0 : 0.5) : 2.0; /* i32 constants are integers */
  int64_t shape[2] = {1 + (int64_t)((r >> 12) % 7) * 3, 8 + (int64_t)((r >> 16) % 5) * 8};
  if (tmpl == 5) shape[0] = shape[1] = 8 * (1 + (int64_t)((r >> 20) % 3));
  char nx[16], ny[16];
  snprintf(nx, sizeof nx, "x%d", i);
  snprintf(ny, sizeof ny, "y%d", i);
  kf_value x = kf_input(g, nx, dt, rank, rank == 1 ? shape + 1 : shape);
  kf_value o;
  if (tmpl == 0) {
    kf_value y = kf_input(g, ny, dt, rank, rank == 1 ? shape + 1 : shape);
    o = kf_add(g, kf_mul(g, x, kf_scalar(g, c, dt)), y);
  } else if (tmpl == 1) {
    o = kf_clamp(g, kf_sub(g, x, kf_scalar(g, c, dt)), -c, c);
  } else if (tmpl == 2) {
    o = kf_cast(g, kf_maximum(g, x, kf_scalar(g, c, dt)), KF_F32);
  } else if (tmpl == 3) {
    kf_value y = kf_input(g, ny, dt, rank, rank == 1 ? shape + 1 : shape);
    o = kf_where(g, kf_gt(g, x, y), x, kf_neg(g, y));
  } else if (tmpl == 4) { /* a bias broadcast along rows */
    int64_t bs[1] = {shape[1]};
    kf_value b = kf_input(g, ny, dt, 1, bs);
    o = kf_mul(g, x, b);
  } else { /* a square transpose: same shape, index arithmetic with the dims */
    int perm[2] = {1, 0};
    o = rank == 2 ? kf_add(g, kf_transpose(g, x, perm), x) : kf_abs(g, x);
  }
  kf_set_output(g, o);
}

/* Two keys present and equal (length and bytes). */
static bool same_bytes(const cg_buf *a, const cg_buf *b) {
  return a->s && b->s && a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

/* Generic keys are sound: over random horizontal launches, two parts with
 * equal keys have equal generic texts (each part emitted here, none
 * reused), and the keys are not needlessly fine (the updates share one). */
START_TEST(generic_keys_sound) {
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  cg_target t;
  ck_assert(cg_target_from_arch("sm_90", &t));
  int pairs = 0, keyed = 0, parts_seen = 0;
  for (int seed = 0; seed < 40; seed++) {
    kf_graph *g = NULL;
    ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
    uint64_t s = 977 + (uint64_t)seed;
    if (seed == 0) {
      kf_graph_destroy(g);
      g = updates(ctx, 30, 0, NULL);
    } else {
      for (int i = 0; i < 24; i++) random_part(g, &s, i);
    }
    ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
    fuse_plan *fp = NULL;
    fuse_options opt;
    fuse_options_default(&opt);
    char err[512] = "";
    ck_assert_msg(fuse_plan_build(g, &opt, &fp, err, sizeof err) == KF_OK, "%s", err);
    int n = fp->n_kernels;
    cg_buf *keys = calloc((size_t)n, sizeof *keys);
    char **texts = calloc((size_t)n, sizeof *texts);
    ck_assert(keys && texts);
    for (int i = 0; i < n; i++) {
      if (fp->kernels[i].kind != FK_POINTWISE) continue;
      cg_part p;
      memset(&p, 0, sizeof p);
      p.k = &fp->kernels[i];
      snprintf(p.fn, sizeof p.fn, "KF_GENERIC_FN");
      ck_assert(cg_part_params(&p));
      cg_buf text = {0};
      cg_emit_args a = {g, p.k, &t, &p, &text, err, sizeof err};
      ck_assert_int_eq(cg_plan_pointwise_generic(&a), KF_OK);
      p.launch_threads = (int)p.threads;
      if (!cg_pointwise_generic_key(g, &p, &keys[i])) cg_buf_free(&keys[i]);
      ck_assert_msg(cg_emit_pointwise_generic(&a) == KF_OK, "%s", err);
      texts[i] = cg_buf_take(&text);
      free(p.params);
      parts_seen++;
      keyed += keys[i].s != NULL;
    }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < i; j++)
        if (same_bytes(&keys[i], &keys[j])) {
          pairs++;
          ck_assert_msg(strcmp(texts[i], texts[j]) == 0,
                        "seed %d: parts %d and %d share a key but not a text:\n%s\n---\n%s", seed,
                        j, i, texts[j], texts[i]);
        }
    if (seed == 0)
      for (int i = 1; i < n; i++) ck_assert(same_bytes(&keys[i], &keys[0]));
    for (int i = 0; i < n; i++) cg_buf_free(&keys[i]), free(texts[i]);
    free(keys), free(texts);
    fuse_plan_free(fp);
    kf_graph_destroy(g);
  }
  printf("generic keys: %d of %d parts keyed, %d equal-key pairs\n", keyed, parts_seen, pairs);
  /* the pools are small: plenty of parts must share keys */
  ck_assert_int_gt(pairs, 500);
  ck_assert_int_gt(keyed, parts_seen / 2);
  ck_assert_int_lt(keyed, parts_seen);
  kf_ctx_destroy(ctx);
}
END_TEST

/* Parts that differ (here by a constant) keep their own bodies and
 * parameters: the binary search over the parts' starts. */
START_TEST(different_parts_keep_bodies) {
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g = updates(ctx, 0, 12, NULL);
  fuse_plan *fp = NULL;
  cg_launch_src src;
  emit(g, &fp, &src);
  ck_assert(!src.packed_params);
  ck_assert_ptr_nonnull(strstr(src.source, "kf_starts[12]"));
  ck_assert_int_eq(src.n_params, 24);
  char *log = nvrtc_log(src.source);
  ck_assert_ptr_nonnull(log);
  free(log);
  cg_launch_src_free(&src);
  fuse_plan_free(fp);
  kf_graph_destroy(g);
  /* two identical parts among 12 others: 13 units, routed by a search
   * over the units' starts, then the group's own search */
  g = updates(ctx, 2, 12, NULL);
  emit(g, &fp, &src);
  ck_assert(src.packed_params);
  ck_assert_ptr_nonnull(strstr(src.source, "kf_unit_start[13]"));
  ck_assert_ptr_nonnull(strstr(src.source, "case 12: {"));
  ck_assert_ptr_nonnull(strstr(src.source, "kf_g0_start[3]"));
  ck_assert_int_eq(src.n_params, 2 * 3 + 12 * 2);
  log = nvrtc_log(src.source);
  ck_assert_ptr_nonnull(log);
  free(log);
  cg_launch_src_free(&src);
  fuse_plan_free(fp);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* A 64-op chain with 16 sin: one scalar body, sin called out of line. */
START_TEST(heavy_chain_stays_small) {
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t s[1] = {4096};
  kf_value t = kf_input(g, "x", KF_F32, 1, s);
  for (int i = 0; i < 16; i++) {
    t = kf_mul(g, t, kf_scalar(g, 0.999, KF_F32));
    t = kf_add(g, t, kf_scalar(g, 0.01, KF_F32));
    t = kf_sin(g, t);
    t = kf_mul(g, t, kf_scalar(g, 1.5, KF_F32));
  }
  kf_set_output(g, t);
  fuse_plan *fp = NULL;
  cg_launch_src src;
  emit(g, &fp, &src);
  ck_assert_ptr_nonnull(strstr(src.source, "1 lanes per thread"));
  ck_assert_int_eq(count(src.source, "= kf_ol_sin("), 16);
  ck_assert_int_eq(count(src.source, "= kf_sin("), 0);
  char *log = nvrtc_log(src.source);
  ck_assert_ptr_nonnull(log);
  free(log);
  cg_launch_src_free(&src);
  fuse_plan_free(fp);
  kf_graph_destroy(g);
  /* a light chain keeps its 16-byte accesses */
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  t = kf_input(g, "x", KF_F32, 1, s);
  for (int i = 0; i < 8; i++) t = kf_mul(g, kf_add(g, t, kf_scalar(g, 1, KF_F32)), t);
  kf_set_output(g, t);
  emit(g, &fp, &src);
  ck_assert_ptr_nonnull(strstr(src.source, "4 lanes per thread (16-byte accesses)"));
  cg_launch_src_free(&src);
  fuse_plan_free(fp);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- runtime: one kernel argument, the whole pointer array ----------------- */

#define NU 10

static struct {
  kf_ctx *ctx;
  kf_graph *g;
  kf_plan *plan;
  kf_tensor in[2 * NU], out[NU];
} R;

static void rt_setup(void) {
  memset(&R, 0, sizeof R);
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  ck_assert_int_eq(kf_ctx_create(&R.ctx), KF_OK);
  int64_t sizes[NU];
  R.g = updates(R.ctx, NU, 0, sizes);
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  ck_assert_msg(kf_compile(R.ctx, R.g, &opt, &R.plan) == KF_OK, "%s", kf_ctx_errmsg(R.ctx));
  for (int i = 0; i < 3 * NU; i++) {
    kf_tensor *t = i < 2 * NU ? &R.in[i] : &R.out[i - 2 * NU];
    int64_t n = sizes[i < 2 * NU ? i / 2 : i - 2 * NU];
    *t = (kf_tensor){NULL, KF_F32, 1, {n}};
    ck_assert_int_eq(kf_device_alloc(R.ctx, (size_t)n * 4, &t->data), KF_OK);
  }
}

static void rt_teardown(void) {
  for (int i = 0; i < 2 * NU; i++) kf_device_free(R.ctx, R.in[i].data);
  for (int i = 0; i < NU; i++) kf_device_free(R.ctx, R.out[i].data);
  kf_plan_destroy(R.plan);
  kf_graph_destroy(R.g);
  kf_ctx_destroy(R.ctx);
  ck_assert_msg(rt_fake_live_objects() == 0, "%d fake objects leaked", rt_fake_live_objects());
  rt_driver_override(NULL);
  rt_fake_reset();
}

static kf_status rt_run(void) {
  return kf_plan_run(R.plan, R.in, 2 * NU, R.out, NU, (void *)0xca11);
}

/* The launch's pointers are x_i, y_i, o_i per part, and argv holds one
 * entry: the address of that array. */
static void check_packed_args(void) {
  const rt_launch *l = &R.plan->rt->launches[0];
  ck_assert_int_eq(R.plan->rt->n_launches, 1);
  ck_assert_int_eq(l->n_params, 3 * NU);
  ck_assert_ptr_eq(l->argv[0], &l->args[0]);
  ck_assert_ptr_null(l->argv[1]);
  for (int i = 0; i < NU; i++) {
    ck_assert_uint_eq(l->args[3 * i], (CUdeviceptr)(uintptr_t)R.in[2 * i].data);
    ck_assert_uint_eq(l->args[3 * i + 1], (CUdeviceptr)(uintptr_t)R.in[2 * i + 1].data);
    ck_assert_uint_eq(l->args[3 * i + 2], (CUdeviceptr)(uintptr_t)R.out[i].data);
  }
}

START_TEST(packed_launch_plain) {
  ck_assert_int_eq(rt_run(), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), 1);
  char want[64];
  snprintf(want, sizeof want, "args=%#llx", (unsigned long long)(uintptr_t)R.in[0].data);
  int i = rt_fake_find(0, "LaunchKernel", want);
  ck_assert_msg(i >= 0, "no launch with '%s'", want);
  ck_assert_ptr_null(strstr(rt_fake_line(i), "args=0x0"));
  ck_assert_ptr_null(strchr(strstr(rt_fake_line(i), "args="), ','));
  check_packed_args();
}
END_TEST

START_TEST(packed_launch_graph_update) {
  ck_assert_int_eq(kf_plan_set_mode(R.plan, KF_MODE_GRAPH), KF_OK);
  ck_assert_int_eq(rt_run(), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphAddKernelNode"), 1);
  check_packed_args();
  /* a new address for a later part's input: the node is updated in place */
  void *moved = NULL;
  ck_assert_int_eq(kf_device_alloc(R.ctx, (size_t)R.in[15].shape[0] * 4, &moved), KF_OK);
  void *old = R.in[15].data;
  R.in[15].data = moved;
  ck_assert_int_eq(rt_run(), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphExecKernelNodeSetParams"), 1);
  ck_assert_int_eq(R.plan->rt->graph_updates, 1);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 1);
  check_packed_args();
  kf_device_free(R.ctx, old);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("hpack");
  TCase *cg = tcase_create("codegen");
  tcase_set_timeout(cg, 120);
  tcase_add_test(cg, identical_parts_share_one_body);
  tcase_add_test(cg, different_parts_keep_bodies);
  tcase_add_test(cg, generic_keys_sound);
  tcase_add_test(cg, heavy_chain_stays_small);
  suite_add_tcase(s, cg);
  TCase *rt = tcase_create("runtime");
  tcase_set_timeout(rt, 120);
  tcase_add_checked_fixture(rt, rt_setup, rt_teardown);
  tcase_add_test(rt, packed_launch_plain);
  tcase_add_test(rt, packed_launch_graph_update);
  suite_add_tcase(s, rt);
  return s;
}
