/* test_grid.c - grids within the hardware limit for every kernel kind: a
 * part that needs more blocks than a launch may have gets a block-stride
 * loop over all of them, and shapes that fit keep their code. Huge extents
 * are planned and emitted (never run here); small ones under a lowered
 * cg_target.max_grid are compiled with NVRTC. */
#include "check_main.h"
#include "codegen/cg_internal.h"
#include "codegen/emit.h"
#include "codegen/part.h"
#include "codegen/target.h"
#include "codegen_util.h"
#include "pipeline/pipeline.h"

#define P(k) (INT64_C(1) << (k))

/* The launches of g's plan, emitted for sm_90 with max_grid (0: the
 * hardware's), each checked against the limit and, when compile, by NVRTC.
 * Returns how many launches loop ("kf_vb"); the last launch's source is
 * kept in *keep when keep is not NULL. */
static int emit_all(kf_graph *g, uint32_t max_grid, bool compile, char **keep) {
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  kt_setenv("KFUSE_MATMUL", "template", 1); /* the grids of kfuse's own matmul kernel */
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_plan *plan = NULL;
  ck_assert_msg(kf_plan_create(ctx, g, NULL, &plan) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  cg_target t;
  ck_assert(cg_target_from_arch("sm_90", &t));
  if (max_grid) t.max_grid = max_grid;
  uint32_t limit = max_grid ? max_grid : CG_MAX_GRID;
  int loops = 0;
  for (int L = 0; L < plan->fuse->n_launches; L++) {
    cg_launch_src src;
    char err[512] = "";
    kf_status st = cg_emit_launch(plan->graph, plan->fuse, L, &t, &src, err, sizeof err);
    ck_assert_msg(st == KF_OK, "launch %d: %s (%s)", L, kf_status_name(st), err);
    ck_assert_msg(src.grid >= 1 && src.grid <= limit, "launch %d: grid %u over %u", L, src.grid,
                  limit);
    if (strstr(src.source, "kf_vb")) loops++;
    if (compile) ck_assert_msg(tu_nvrtc(src.source, "grid") >= 0, "launch %d does not compile", L);
    if (keep && L == plan->fuse->n_launches - 1) *keep = strdup(src.source);
    cg_launch_src_free(&src);
  }
  kf_plan_destroy(plan);
  kf_ctx_destroy(ctx);
  return loops;
}

static kf_graph *new_graph(void) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  return g;
}

/* A [batch, m, k] @ [batch, k, n] matmul. */
static kf_graph *bmm(int64_t batch, int64_t m, int64_t k, int64_t n) {
  kf_graph *g = new_graph();
  kf_value a = kf_input(g, "a", KF_F32, 3, (int64_t[]){batch, m, k});
  kf_value b = kf_input(g, "b", KF_F32, 3, (int64_t[]){batch, k, n});
  kf_set_output(g, kf_matmul(g, a, b));
  return g;
}

START_TEST(part_grid_unit) {
  cg_part p;
  memset(&p, 0, sizeof p);
  snprintf(p.fn, sizeof p.fn, "f");
  p.max_blocks = 1000;
  cg_part_grid(&p, 999);
  ck_assert(p.blocks == 999 && p.vblocks == 999);
  ck_assert_str_eq(cg_part_bid_type(&p), "unsigned");
  cg_buf b = {0};
  cg_part_call(&b, &p, "blockIdx.x", "p1", "  ");
  ck_assert_str_eq(b.s, "f(blockIdx.x, p1);");
  cg_buf_free(&b);
  cg_part_grid(&p, 2500);
  ck_assert(p.blocks == 1000 && p.vblocks == 2500);
  ck_assert_str_eq(cg_part_bid_type(&p), "long long");
  cg_part_call(&b, &p, "blockIdx.x - 4u", "p1", "  ");
  ck_assert_str_eq(b.s,
                   "for (long long kf_vb = (long long)(blockIdx.x - 4u); kf_vb < 2500LL; "
                   "kf_vb += 1000LL) {\n    f(kf_vb, p1);\n    __syncthreads();\n  }");
  cg_buf_free(&b);
  /* The loop visits every block of work once: blocks b, b + B, ... < V. */
  int64_t V = p.vblocks, B = p.blocks, seen = 0;
  for (int64_t bid = 0; bid < B; bid++)
    for (int64_t v = bid; v < V; v += B) seen++;
  ck_assert_int_eq(seen, V);
  cg_part_grid_stride(&p, 2500);
  ck_assert(p.blocks == 1000 && p.vblocks == 1000);
  /* No cap set: the hardware's. */
  p.max_blocks = 0;
  cg_part_grid(&p, P(40));
  ck_assert(p.blocks == CG_MAX_GRID && p.vblocks == P(40));
}
END_TEST

/* The cases: batch 2^32 once got 0 blocks (launch skipped as a
 * success), 2^32 + 16 got 16. */
START_TEST(matmul_batch_2_32) {
  int64_t batches[] = {P(32), P(32) + 16, P(31)};
  for (int i = 0; i < 3; i++) {
    kf_graph *g = bmm(batches[i], 1, 1, 1);
    char *src = NULL;
    ck_assert_int_eq(emit_all(g, 0, i == 0, &src), 1);
    char want[96];
    snprintf(want, sizeof want, "kf_vb < %lldLL; kf_vb += 2147483647LL)", (long long)batches[i]);
    ck_assert_msg(strstr(src, want), "batch %lld: no '%s'", (long long)batches[i], want);
    ck_assert(strstr(src, "(long long bid,"));
    free(src);
    kf_graph_destroy(g);
  }
}
END_TEST

START_TEST(matmul_fits_unchanged) {
  kf_graph *g = bmm(4, 64, 32, 48);
  char *src = NULL;
  ck_assert_int_eq(emit_all(g, 0, false, &src), 0);
  ck_assert(strstr(src, "(unsigned bid,"));
  free(src);
  kf_graph_destroy(g);
}
END_TEST

/* A strided reduction with more tiles than 2^31 blocks (a contiguous one is
 * a row kernel unless it reduces everything, to at most 1024 blocks). */
START_TEST(reduce_huge) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 3, (int64_t[]){P(33), 2, 32});
  kf_set_output(g, kf_max(g, x, 1, (int[]){1}, false));
  ck_assert_int_eq(emit_all(g, 0, true, NULL), 1);
  kf_graph_destroy(g);
}
END_TEST

/* Pointwise and row kernels stride by their own block count: huge ones
 * stay within the limit without a loop of blocks. */
START_TEST(pointwise_row_huge) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 1, (int64_t[]){P(58)});
  kf_set_output(g, kf_exp(g, x));
  ck_assert_int_eq(emit_all(g, 0, true, NULL), 0);
  kf_graph_destroy(g);
  g = new_graph();
  x = kf_input(g, "x", KF_F32, 2, (int64_t[]){P(40), 1024});
  kf_set_output(g, kf_softmax(g, x, -1));
  ck_assert_int_eq(emit_all(g, 0, true, NULL), 0);
  kf_graph_destroy(g);
}
END_TEST

/* Every kind under a lowered limit: the loops compile, the grid stays
 * under the limit, and a horizontal launch shares it among its parts. */
START_TEST(lowered_limit_compiles) {
  kf_graph *g = bmm(3000, 20, 8, 20); /* 3000 * 2 * 2 tiles */
  ck_assert_int_eq(emit_all(g, 1000, true, NULL), 1);
  kf_graph_destroy(g);
  g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){5000, 300});
  kf_set_output(g, kf_sum(g, x, 1, (int[]){1}, false)); /* a row kernel */
  ck_assert_int_eq(emit_all(g, 1000, true, NULL), 0);
  kf_graph_destroy(g);
  g = new_graph();
  x = kf_input(g, "x", KF_F32, 3, (int64_t[]){3000, 40, 64});
  kf_set_output(g, kf_mean(g, x, 1, (int[]){1}, false));
  ck_assert_int_eq(emit_all(g, 1000, true, NULL), 1);
  kf_graph_destroy(g);
  g = new_graph();
  x = kf_input(g, "x", KF_F32, 2, (int64_t[]){P(20), 512});
  kf_value y = kf_input(g, "y", KF_F32, 2, (int64_t[]){P(20), 512});
  kf_set_output(g, kf_softmax(g, x, -1));
  kf_set_output(g, kf_exp(g, y));
  ck_assert_int_eq(emit_all(g, 1000, true, NULL), 0);
  kf_graph_destroy(g);
  /* two strided reductions packed in one launch: each loops within its
   * share of the grid */
  g = new_graph();
  kf_value c = kf_input(g, "c", KF_F32, 3, (int64_t[]){600, 40, 64});
  kf_value d = kf_input(g, "d", KF_F32, 3, (int64_t[]){700, 40, 64});
  kf_set_output(g, kf_sum(g, c, 1, (int[]){1}, false));
  kf_set_output(g, kf_sum(g, d, 1, (int[]){1}, false));
  char *src = NULL;
  ck_assert_int_eq(emit_all(g, 1000, true, &src), 1);
  const char *at = strstr(src, "kf_vb < 600LL; kf_vb += 500LL)");
  ck_assert_msg(at && strstr(at, "kf_vb < 700LL; kf_vb += 500LL)"), "%s", src);
  free(src);
  kf_graph_destroy(g);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("grid");
  TCase *tc = tcase_create("grid");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, part_grid_unit);
  tcase_add_test(tc, matmul_batch_2_32);
  tcase_add_test(tc, matmul_fits_unchanged);
  tcase_add_test(tc, reduce_huge);
  tcase_add_test(tc, pointwise_row_huge);
  tcase_add_test(tc, lowered_limit_compiles);
  suite_add_tcase(s, tc);
  return s;
}
