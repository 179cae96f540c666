/* test_attention_decode.c - the split-key decode attention kernel's choice
 * (fuser/attention_decode.c): taken for 1-16 queries, refused for longer
 * query runs, with the decision log's reasons; the query heads found to
 * share k and v (grouped-query through layout ops, multi-query through the
 * product's broadcasting, none); the plan of codegen (threads, cluster,
 * grid) for sm_90a and sm_80; and NVRTC compiles of the kernel's variants
 * for both, with ptxas's report of no spills. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_graphs.h"
#include "check_main.h"
#include "codegen/codegen.h"
#include "codegen/emit.h"
#include "codegen/target.h"
#include "fuser/attention_decode.h"
#include "fuser/fuse.h"
#include "fuser_util.h"

static const fuse_decision *decision(const fuse_plan *p, const char *rule) {
  for (int32_t i = 0; i < p->n_decisions; i++)
    if (!strcmp(p->decisions[i].rule, rule)) return &p->decisions[i];
  return NULL;
}

/* The decode shape of issue 22 at a size the CPU tests can afford: GQA
 * through reshape and broadcast_to. */
static attn_spec decode_spec(int64_t h, int64_t hk, int64_t sq, int64_t sk, int64_t d) {
  attn_spec s = attn_base();
  s.b = 2, s.h = h, s.hk = hk, s.sq = sq, s.sk = sk, s.d = d;
  return s;
}

static fuse_plan *one_attention(const kf_graph *g) {
  fuse_plan *p = fz_plan(g);
  ck_assert_ptr_nonnull(p);
  char why[512];
  ck_assert_msg(fz_check_plan(g, p, why, sizeof why), "%s", why);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->kernels[0].kind, FK_ATTENTION);
  return p;
}

/* The heads sharing k and v, and the log line, for each head layout. */
START_TEST(shared_heads_and_the_log) {
  struct {
    int64_t h, hk, sq;
    bool gqa_reshape;
    int64_t share, group;
  } cases[] = {
      {32, 8, 1, true, 4, 4},   /* GQA 32 over 8 (issue 22's decode) */
      {8, 1, 1, false, 8, 8},   /* MQA: k of one head, the product broadcasts */
      {8, 1, 1, true, 8, 8},    /* MQA through layout ops */
      {4, 4, 7, true, 1, 1},    /* plain heads: nothing shared */
      {32, 8, 16, true, 4, 4},  /* 16 queries x 4 heads = 64 rows */
      {16, 1, 16, false, 16, 4} /* 16 heads share; 4 of them fill the 64 rows */
  };
  for (int i = 0; i < 6; i++) {
    attn_spec s = decode_spec(cases[i].h, cases[i].hk, cases[i].sq, 300, 64);
    s.gqa_reshape = cases[i].gqa_reshape;
    kf_graph *g = attn_build(&s);
    fuse_plan *p = one_attention(g);
    const fuse_kernel *k = &p->kernels[0];
    fuse_attn_decode dec;
    char why[256];
    ck_assert_msg(fuse_attn_decode_pick(g, &k->attn, k->nodes, k->n_nodes, &dec, why, sizeof why),
                  "case %d: %s", i, why);
    ck_assert_msg(dec.share == cases[i].share, "case %d: share %lld", i, (long long)dec.share);
    ck_assert_int_eq(dec.group, cases[i].group);
    ck_assert_int_eq(dec.rows, cases[i].group * cases[i].sq);
    ck_assert_int_eq(dec.pairs, s.b * s.h / cases[i].group);
    const fuse_decision *d = decision(p, "attention-decode");
    ck_assert_ptr_nonnull(d);
    ck_assert(d->accepted);
    ck_assert_msg(strstr(d->text, "split-key decode") != NULL, "%s", d->text);
    fuse_plan_free(p);
    kf_graph_destroy(g);
  }
}
END_TEST

/* Query runs longer than 16 keep the flash kernel; the log says why. */
START_TEST(prefill_keeps_the_flash_kernel) {
  int64_t sq[3] = {17, 40, 1024};
  for (int i = 0; i < 3; i++) {
    attn_spec s = decode_spec(8, 2, sq[i], 128, 64);
    kf_graph *g = attn_build(&s);
    fuse_plan *p = one_attention(g);
    const fuse_decision *d = decision(p, "attention-decode");
    ck_assert_ptr_nonnull(d);
    ck_assert(!d->accepted);
    ck_assert_msg(strstr(d->text, "more than 16") != NULL, "%s", d->text);
    cg_target t;
    ck_assert(cg_target_from_arch("sm_90a", &t));
    cg_launch_src src;
    char err[512] = "";
    ck_assert_int_eq(cg_emit_launch(g, p, 0, &t, &src, err, sizeof err), KF_OK);
    ck_assert_ptr_null(strstr(src.source, "attention: decode"));
    /* on sm_90a the prefill kernel is the Hopper one (flash90.c) */
    ck_assert_ptr_nonnull(strstr(src.source, "flash on sm_90"));
    ck_assert_int_eq(src.block, 384);
    cg_launch_src_free(&src);
    fuse_plan_free(p);
    kf_graph_destroy(g);
  }
}
END_TEST

/* The launch of s for arch: source, threads, cluster and grid checked. */
static void emit_for(const attn_spec *s, const char *arch, cg_launch_src *src, kf_graph **gp,
                     fuse_plan **pp) {
  kf_graph *g = attn_build(s);
  fuse_plan *p = one_attention(g);
  cg_target t;
  ck_assert(cg_target_from_arch(arch, &t));
  char err[512] = "";
  kf_status st = cg_emit_launch(g, p, 0, &t, src, err, sizeof err);
  ck_assert_msg(st == KF_OK, "%s: %s", kf_status_name(st), err);
  ck_assert_ptr_nonnull(strstr(src->source, "attention: decode"));
  ck_assert_int_le(src->smem_bytes, (uint32_t)t.max_smem_per_block);
  *gp = g, *pp = p;
}

/* The plan of issue 22's decode shape (batch 16, 32 heads over 8, 4096
 * keys, D128): 128 groups of 4 heads; on sm_90a (132 SMs, two blocks
 * resident) each group's keys split over a cluster of 2: 256 blocks, one
 * wave; on sm_80, no clusters: a block per group. */
START_TEST(the_issue_shape_plans) {
  attn_spec s = decode_spec(32, 8, 1, 4096, 128);
  s.b = 16;
  const char *arch[2] = {"sm_90a", "sm_80"};
  for (int i = 0; i < 2; i++) {
    cg_launch_src src;
    kf_graph *g;
    fuse_plan *p;
    emit_for(&s, arch[i], &src, &g, &p);
    ck_assert_int_eq(src.block, 128); /* 1 warp of rows x 4 of keys */
    ck_assert_int_eq(src.cluster > 1 ? src.cluster : 1, i == 0 ? 2 : 1);
    ck_assert_int_eq(src.grid, 128 * (i == 0 ? 2 : 1));
    ck_assert((strstr(src.source, "__cluster_dims__(2, 1, 1)") != NULL) == (i == 0));
    cg_launch_src_free(&src);
    fuse_plan_free(p);
    kf_graph_destroy(g);
  }
}
END_TEST

/* Compiles s's decode launch with NVRTC for arch; no spills up to D128. */
static void compile_for(const attn_spec *s, const char *arch) {
  cg_launch_src src;
  kf_graph *g;
  fuse_plan *p;
  emit_for(s, arch, &src, &g, &p);
  nvrtcProgram prog;
  /* the logsumexp variant calls its store; the default has none */
  ck_assert((strstr(src.source, "_lse(") != NULL) == (s->lse != 0));
  ck_assert_int_eq(nvrtcCreateProgram(&prog, src.source, "decode.cu", 0, NULL, NULL),
                   NVRTC_SUCCESS);
  char gpu[64];
  snprintf(gpu, sizeof gpu, "--gpu-architecture=%s", arch);
  const char *opts[] = {gpu, "--std=c++17", "--ptxas-options=-v"};
  nvrtcResult r = nvrtcCompileProgram(prog, 3, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  char *log = malloc(n + 1);
  ck_assert_ptr_nonnull(log);
  nvrtcGetProgramLog(prog, log);
  ck_assert_msg(r == NVRTC_SUCCESS, "%s:\n%s\n%s", arch, log, src.source);
  const char *used = strstr(log, "Used ");
  const char *spill = strstr(log, "bytes spill stores");
  fprintf(stderr, "decode %s sq%lld sk%lld h%lld/%lld d%lld cluster %d: %.40s | %.24s\n", arch,
          (long long)s->sq, (long long)s->sk, (long long)s->h, (long long)s->hk, (long long)s->d,
          src.cluster, used ? used : "?", spill ? spill - 12 : "?");
  if (s->d <= 128) ck_assert_msg(spill && strstr(spill - 12, " 0 bytes spill"), "%s", log);
  free(log);
  nvrtcDestroyProgram(&prog);
  cg_launch_src_free(&src);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}

/* The variants: GQA and MQA, 1, 7 and 16 queries (16, 28 and 64 rows),
 * head dims 64, 128 and 256, f16 and bf16, a mask, a soft-cap, causal. */
START_TEST(nvrtc_every_variant) {
  attn_spec v[8];
  v[0] = decode_spec(32, 8, 1, 4096, 128);
  v[0].b = 16;
  v[1] = decode_spec(32, 8, 7, 5000, 64);
  v[1].dt = KF_F16, v[1].mask = 1;
  v[2] = decode_spec(8, 1, 16, 1000, 128);
  v[2].gqa_reshape = false, v[2].modifier = 1;
  v[3] = decode_spec(8, 2, 16, 100, 256);
  v[3].mask = 2, v[3].shift = 90;
  v[4] = decode_spec(16, 1, 1, 1, 64);
  v[4].gqa_reshape = false, v[4].dt = KF_F16;
  v[5] = decode_spec(4, 4, 3, 777, 128);
  v[5].dt = KF_F16, v[5].hand = true;
  v[6] = decode_spec(32, 8, 1, 4096, 128); /* the logsumexp output, f32 */
  v[6].lse = 1;
  v[7] = decode_spec(8, 2, 5, 333, 64); /* in f16, causal */
  v[7].dt = KF_F16, v[7].mask = 2, v[7].shift = 300, v[7].lse = 2;
  const char *arch[2] = {"sm_80", "sm_90a"};
  const char *only = getenv("KFUSE_ATTN_ARCHS"); /* the sanitizer runs: sm_90a */
  if (!only || strstr(only, arch[_i % 2])) compile_for(&v[_i / 2], arch[_i % 2]);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("attention_decode");
  TCase *tc = tcase_create("choice");
  tcase_add_test(tc, shared_heads_and_the_log);
  tcase_add_test(tc, prefill_keeps_the_flash_kernel);
  tcase_add_test(tc, the_issue_shape_plans);
  suite_add_tcase(s, tc);
  TCase *tn = tcase_create("nvrtc");
  tcase_set_timeout(tn, 300);
  tcase_add_loop_test(tn, nvrtc_every_variant, 0, 16);
  suite_add_tcase(s, tn);
  return s;
}
