/* test_attention90.c - the sm_90 attention kernel (codegen/flash90.c,
 * templates/attention_sm90.cu) without a GPU: which attention graphs take
 * it on sm_90 and which keep the mma.sync kernel, with the reason in the
 * part's decisions; what it asks of the runtime (384 threads, its shared
 * memory, the grid, three 3-D tensor maps); and its sources compiled by
 * NVRTC for sm_90a at head dims 64 and 128, f16 and bf16, with masks and
 * modifiers, ptxas reporting no spills; on the fake driver, a q view off
 * 16-byte alignment runs the launch's form without tensor maps. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_graphs.h"
#include "check_main.h"
#include "codegen/codegen.h"
#include "codegen/emit.h"
#include "codegen/target.h"
#include "core/knobs.h"
#include "fake_driver.h"
#include "fuser/fuse.h"
#include "fuser_util.h"

/* The one launch of s's plan for arch (knobs kn, or the defaults). */
static kf_status emit(const attn_spec *s, const char *arch, const core_knobs *kn,
                      cg_launch_src *src, char *err, size_t errsize) {
  kf_graph *g = attn_build(s);
  fuse_plan *p = fz_plan(g);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->kernels[0].kind, FK_ATTENTION);
  cg_target t;
  ck_assert(cg_target_from_arch(arch, &t));
  if (kn) t.knobs = kn;
  kf_status st = cg_emit_launch(g, p, 0, &t, src, err, errsize);
  fuse_plan_free(p);
  kf_graph_destroy(g);
  return st;
}

static bool is_sm90(const cg_launch_src *src) {
  return src->block == 384 && src->n_tmaps == 3 && src->arch_specific &&
         strstr(src->source, "flash on sm_90") && strstr(src->source, "wgmma.mma_async");
}

/* s keeps the mma.sync kernel on sm_90a, with reason in its decisions. */
static void keeps_mma(const attn_spec *s, const core_knobs *kn, const char *reason) {
  cg_launch_src src;
  char err[512] = "";
  ck_assert_msg(emit(s, "sm_90a", kn, &src, err, sizeof err) == KF_OK, "%s", err);
  ck_assert_msg(!is_sm90(&src) && src.block == 128 && src.n_tmaps == 0 && !src.arch_specific,
                "took the sm_90 kernel");
  const char *d = strstr(src.source, "not the sm_90 kernel: ");
  ck_assert_msg(d && strstr(d, reason), "wanted '%s' in the decisions", reason);
  cg_launch_src_free(&src);
}

START_TEST(which_graphs_take_it) {
  attn_spec s = attn_base();
  s.h = 8, s.hk = 2, s.sq = 300, s.sk = 200, s.d = 128, s.mask = 2; /* GQA, causal, tails */
  cg_launch_src src;
  char err[512] = "";
  ck_assert_msg(emit(&s, "sm_90a", NULL, &src, err, sizeof err) == KF_OK, "%s", err);
  ck_assert(is_sm90(&src));
  ck_assert_uint_eq(src.grid, 2 * 8 * 3); /* heads x tiles of 128 queries */
  /* q [2, 8, 300, 128]: 16 heads of 300 rows; k and v [2, 2, 200, 128]: 4 */
  const uint64_t heads[3] = {16, 4, 4}, rows[3] = {300, 200, 200}, box[3] = {128, 96, 96};
  for (int i = 0; i < 3; i++) {
    const cg_tmap *m = &src.tmaps[i];
    ck_assert_int_eq(m->rank, 3);
    ck_assert_uint_eq(m->dims[0], 128);
    ck_assert_uint_eq(m->dims[1], rows[i]);
    ck_assert_uint_eq(m->dims[2], heads[i]);
    ck_assert_uint_eq(m->strides[0], 256);
    ck_assert_uint_eq(m->strides[1], rows[i] * 256);
    ck_assert_uint_eq(m->box[0], 64);
    ck_assert_uint_eq(m->box[1], box[i]);
    ck_assert_uint_eq(m->box[2], 1);
  }
  ck_assert_ptr_nonnull(strstr(src.source, "kf_tm0, kf_tm1, kf_tm2"));
  /* q 32 KB + 4 stages of k and v of 96 keys, 48 KB + barriers, in 227 KB */
  ck_assert_uint_eq(src.smem_bytes, 1024 + 32768 + 4 * 49152 + 8 * 17);
  cg_launch_src_free(&src);
  /* MQA through the product's broadcast, f16, head dim 64: taken too */
  s = attn_base();
  s.dt = KF_F16, s.h = 8, s.hk = 1, s.gqa_reshape = false, s.modifier = 1;
  ck_assert_msg(emit(&s, "sm_90a", NULL, &src, err, sizeof err) == KF_OK, "%s", err);
  ck_assert(is_sm90(&src));
  ck_assert_uint_eq(src.tmaps[1].dims[2], 2); /* k [2, 1, 72, 64]: one head a batch entry */
  ck_assert_uint_eq(src.smem_bytes, 1024 + 16384 + 4 * 32768 + 8 * 17);
  cg_launch_src_free(&src);
}
END_TEST

START_TEST(which_keep_the_mma_kernel) {
  attn_spec s = attn_base();
  s.d = 256;
  keeps_mma(&s, NULL, "its head dims are 64 and 128");
  s = attn_base();
  s.bshd = true; /* a head's rows are H rows apart: not a 3-D box of whole rows */
  keeps_mma(&s, NULL, "not read as whole rows");
  s = attn_base();
  core_knobs kn = *core_knobs_quiet();
  kn.attn90 = 0;
  keeps_mma(&s, &kn, "KFUSE_ATTN90=0");
  /* other targets: the mma.sync kernel, and no word of sm_90 */
  const char *other[2] = {"sm_80", "sm_100a"};
  for (int i = 0; i < 2; i++) {
    cg_launch_src src;
    char err[512] = "";
    ck_assert_msg(emit(&s, other[i], NULL, &src, err, sizeof err) == KF_OK, "%s", err);
    ck_assert(!is_sm90(&src) && src.block == 128);
    ck_assert_ptr_null(strstr(src.source, "sm_90 kernel"));
    cg_launch_src_free(&src);
  }
}
END_TEST

static void compile(const attn_spec *s, const core_knobs *kn) {
  cg_launch_src src;
  char err[512] = "";
  ck_assert_msg(emit(s, "sm_90a", kn, &src, err, sizeof err) == KF_OK, "%s", err);
  ck_assert_msg(is_sm90(&src), "not the sm_90 kernel: %.300s", strstr(src.source, "decisions"));
  nvrtcProgram prog;
  /* the logsumexp variant calls its store; the default has none */
  ck_assert((strstr(src.source, "_lse(") != NULL) == (s->lse != 0));
  ck_assert_int_eq(nvrtcCreateProgram(&prog, src.source, "attn90.cu", 0, NULL, NULL),
                   NVRTC_SUCCESS);
  /* --fmad=false and -default-device as the runtime compiles
   * (src/runtime/nvrtc.c) */
  const char *opts[] = {"--gpu-architecture=sm_90a", "--std=c++17", "--ptxas-options=-v",
                        "--fmad=false", "-default-device"};
  nvrtcResult r = nvrtcCompileProgram(prog, 5, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  char *log = malloc(n + 1);
  ck_assert_ptr_nonnull(log);
  nvrtcGetProgramLog(prog, log);
  ck_assert_msg(r == NVRTC_SUCCESS, "%s", log);
  const char *used = strstr(log, "Used ");
  const char *spill = strstr(log, "bytes spill stores");
  fprintf(stderr, "attention sm_90 %s d%lld: %.40s | %.24s\n", s->dt == KF_BF16 ? "bf16" : "f16",
          (long long)s->d, used ? used : "?", spill ? spill - 12 : "?");
  ck_assert_msg(spill && strstr(spill - 12, " 0 bytes spill"), "%s", log);
  /* ptxas serializes wgmma it cannot keep asynchronous, with a warning */
  ck_assert_msg(!strstr(log, "serialized"), "%s", log);
  free(log);
  nvrtcDestroyProgram(&prog);
  cg_launch_src_free(&src);
}

/* Head dims 64 and 128, f16 and bf16, the masks and modifiers; at 128
 * both tile widths (KFUSE_ATTN90_KEYS); the logsumexp output. */
START_TEST(nvrtc_sm90a) {
  attn_spec s = attn_base();
  core_knobs kn = *core_knobs_quiet();
  kn.attn90_keys = _i == 5;
  switch (_i) {
    case 0:
      s.d = 128, s.sq = s.sk = 2048, s.h = s.hk = 16;
      break; /* the bench shape */
    case 1:
      s.dt = KF_F16, s.mask = 1, s.sq = 37, s.sk = 77;
      break;
    case 2:
      s.dt = KF_F16, s.d = 128, s.h = 8, s.hk = 2, s.mask = 2, s.shift = 5;
      break;
    case 3:
      s.h = 8, s.hk = 1, s.gqa_reshape = false, s.modifier = 1, s.sq = 17,
      s.sk = 300; /* 17: past the decode kernel's 16 */
      break;
    case 4:
      s.d = 128, s.modifier = 2, s.hand = true, s.mask = 3;
      break;
    case 6: /* the logsumexp output, f32 and in the scores' dtype */
      s.dt = KF_F16, s.mask = 2, s.sq = 37, s.sk = 77, s.lse = 1;
      break;
    case 7:
      s.d = 128, s.mask = 1, s.lse = 2;
      break;
    default:
      s.d = 128, s.mask = 2;
      break;
  }
  compile(&s, &kn);
}
END_TEST

/* ---- misaligned q, k or v on the fake driver ----------------------------- */

#define DEV ((CUdeviceptr)0x300000000ull)

static int warned;

static void count_warnings(void *user, kf_log_level level, const char *component, const char *msg) {
  (void)user, (void)component;
  if (level <= KF_LOG_WARN && strstr(msg, "not 16-byte aligned")) warned++;
}

/* The launches from line `from` on: with 384 threads (the Hopper kernel)
 * and with another block size. */
static void launches(int from, int *sm90, int *other) {
  *sm90 = *other = 0;
  for (int i = from; (i = rt_fake_find(i, "LaunchKernel", "")) >= 0; i++)
    (strstr(rt_fake_line(i), "block=384 ") ? sm90 : other)[0]++;
}

/* A q view 2 bytes off its alignment: the run takes the launch's form
 * without tensor maps, the mma.sync kernel (generated with KFUSE_ATTN90=0
 * for this launch, compiled by NVRTC, loaded: one warning); aligned runs
 * go back to the Hopper kernel. */
START_TEST(misaligned_q_falls_back) {
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  rt_fake_add_device_range(DEV, 1 << 26);
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_ctx_set_log(ctx, count_warnings, NULL);
  warned = 0;
  attn_spec sp = attn_base();
  kf_graph *g = attn_build(&sp);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(ctx, g, NULL, &plan), KF_OK);
  int n_in = kf_graph_num_inputs(g);
  ck_assert_int_le(n_in, 8);
  kf_tensor tin[8], tout[1];
  for (int i = 0; i <= n_in; i++) {
    kf_value v = i < n_in ? kf_graph_input(g, i) : kf_graph_output(g, 0);
    kf_tensor t = {(void *)(uintptr_t)(DEV + ((CUdeviceptr)i << 20)),
                   kf_value_dtype(g, v),
                   kf_value_rank(g, v),
                   {0}};
    memcpy(t.shape, kf_value_shape(g, v), (size_t)t.rank * sizeof t.shape[0]);
    if (i < n_in)
      tin[i] = t;
    else
      tout[0] = t;
  }
  ck_assert_msg(kf_plan_run(plan, tin, n_in, tout, 1, NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  int sm90, other;
  launches(0, &sm90, &other);
  ck_assert_int_eq(sm90, 1);
  ck_assert_int_eq(other, 0);
  int from = rt_fake_count();
  tin[0].data = (char *)tin[0].data + 2;
  ck_assert_msg(kf_plan_run(plan, tin, n_in, tout, 1, NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  launches(from, &sm90, &other);
  ck_assert_int_eq(sm90, 0);
  ck_assert_int_eq(other, 1);
  ck_assert_int_eq(warned, 1);
  from = rt_fake_count();
  tin[0].data = (char *)tin[0].data - 2;
  ck_assert_int_eq(kf_plan_run(plan, tin, n_in, tout, 1, NULL), KF_OK);
  launches(from, &sm90, &other);
  ck_assert_int_eq(sm90, 1);
  ck_assert_int_eq(other, 0);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  ck_assert_msg(rt_fake_live_objects() == 0, "%d fake objects leaked", rt_fake_live_objects());
  rt_driver_override(NULL);
  rt_fake_reset();
}
END_TEST

/* The knob variants (KFUSE_ATTN90_EX2, _EDGE, _LAZY, _DESC, _PINGPONG,
 * KFUSE_ATTN_FAST_TANH):
 * each source shows its variant and compiles with no spills, at the
 * bench's shapes and at small odd ones. */
START_TEST(nvrtc_sm90a_variants) {
  attn_spec s = attn_base();
  core_knobs kn = *core_knobs_quiet();
  kn.attn90_ex2 = kn.attn90_edge = kn.attn90_lazy = kn.attn90_desc = kn.attn90_pingpong = true;
  switch (_i) {
    case 0: /* the bench shape */
      s.d = 128, s.sq = s.sk = 2048, s.h = s.hk = 16;
      break;
    case 1: /* causal, GQA */
      s.d = 128, s.sq = s.sk = 4096, s.h = 8, s.hk = 2, s.mask = 2;
      break;
    case 2: /* the soft-cap, fast (no ex2 there: it spilled) */
      s.d = 128, s.sq = s.sk = 2048, s.modifier = 1, kn.attn_fast_tanh = true;
      break;
    case 3: /* the soft-cap with every knob at 64 keys */
      s.d = 128, s.sq = 200, s.sk = 333, s.modifier = 1, kn.attn_fast_tanh = true;
      kn.attn90_keys = 1;
      break;
    case 4: /* head dim 64, odd lengths, a boolean mask, f16 */
      s.dt = KF_F16, s.sq = 37, s.sk = 77, s.mask = 1;
      break;
    case 5: /* head dim 64, the soft-cap, fast */
      s.sq = 64, s.sk = 192, s.modifier = 1, kn.attn_fast_tanh = true;
      break;
    case 6: /* a bias, a negated causal mask (the default's case 4) */
      s.d = 128, s.modifier = 2, s.hand = true, s.mask = 3;
      break;
    default: /* 128 keys a tile (KFUSE_ATTN90_KEYS=128) spill: not checked */
      s.d = 128, s.mask = 2, kn.attn90_lazy = false;
      break;
  }
  cg_launch_src src;
  char err[512] = "";
  ck_assert_msg(emit(&s, "sm_90a", &kn, &src, err, sizeof err) == KF_OK, "%s", err);
  /* not with an SFU function in the modifier (the soft-cap's tanh) */
  bool sfu = s.modifier == 1;
  ck_assert(!kn.attn90_ex2 || sfu || strstr(src.source, "kf_fa90_ex2("));
  ck_assert(!kn.attn90_ex2 || !sfu ||
            (strstr(src.source, "(exp2f: the modifier uses the SFU)") &&
             !strstr(src.source, "kf_fa90_ex2(")));
  /* no edge tiles where the modifier loads (a mask, a bias): the loads
   * would all be hoisted and spill */
  bool loads = s.modifier == 2 || s.mask == 1;
  ck_assert(!kn.attn90_edge || loads || strstr(src.source, "softmax(j, kf_fa90_flag<false>())"));
  ck_assert(!kn.attn90_edge || !loads ||
            (strstr(src.source, "(no edge tiles: the modifier reads memory)") &&
             !strstr(src.source, "kf_fa90_flag")));
  ck_assert(!kn.attn90_lazy || strstr(src.source, "__any_sync("));
  ck_assert(!kn.attn90_desc || strstr(src.source, "kf_fa90_dq + ("));
  ck_assert(!kn.attn90_pingpong || strstr(src.source, "kf_fa90_bar_sync(1 + cw);"));
  /* causal (an iota mask), edge tiles: inner tiles skip the comparison */
  bool causal = s.mask == 2 || s.mask == 3;
  ck_assert(!kn.attn90_edge || loads || (strstr(src.source, "_modv(") != NULL) == causal);
  if (kn.attn_fast_tanh && s.modifier == 1) { /* the modifier: no tanhf, no division */
    const char *m = strstr(src.source, "_mod(float kf_acc"), *end = m ? strstr(m, "\n}\n") : NULL;
    ck_assert(m && end);
    char *body = strndup(m, (size_t)(end - m));
    ck_assert_msg(strstr(body, "kf_tanh_approx(") && !strstr(body, "kf_div(") &&
                      !strstr(body, "kf_tanh_h16("),
                  "%s", body);
    free(body);
  }
  cg_launch_src_free(&src);
  compile(&s, &kn);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("attention90");
  TCase *tc = tcase_create("select");
  tcase_add_test(tc, which_graphs_take_it);
  tcase_add_test(tc, which_keep_the_mma_kernel);
  suite_add_tcase(s, tc);
  TCase *tn = tcase_create("nvrtc");
  tcase_set_timeout(tn, 300);
  tcase_add_loop_test(tn, nvrtc_sm90a, 0, 8);
  tcase_add_test(tn, misaligned_q_falls_back);
  tcase_add_loop_test(tn, nvrtc_sm90a_variants, 0, 8);
  suite_add_tcase(s, tn);
  return s;
}
