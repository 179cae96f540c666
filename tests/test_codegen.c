/* test_codegen.c - code generation: every generated source compiles with
 * NVRTC for sm_90 (pointwise kernels of every dtype, broadcast, layout ops,
 * several outputs, 64-bit indices), templates and targets. Row, reduce,
 * horizontal and matmul kernels are in test_codegen_kinds.c. */
#include <math.h>

#include "check_main.h"
#include "codegen/cg_internal.h"
#include "codegen/div_const.h"
#include "codegen/emit.h"
#include "codegen/target.h"
#include "codegen/template.h"
#include "codegen_util.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "knob_env.h"

static kf_graph *new_graph(void) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  return g;
}

/* One pointwise kernel computing everything after the inputs, outputs outs. */
static void compile_pointwise(kf_graph *g, const int32_t *outs, int n_outs, const char *what,
                              cg_launch_src *keep) {
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  int32_t nodes[64];
  int last = 0;
  for (int i = 0; i < n_outs; i++)
    if (outs[i] > last) last = outs[i];
  int n = tu_collect(g, 0, last, nodes);
  tu_kernel(&tp, g, FK_POINTWISE, nodes, n, outs, n_outs);
  tu_emit_compile_all(g, &tp, what);
  if (keep) tu_emit(g, &tp, 0, keep);
}

START_TEST(target_parse) {
  cg_target t;
  ck_assert(cg_target_from_arch("sm_90", &t));
  ck_assert_int_eq(t.cc_major, 9);
  ck_assert_int_eq(t.cc_minor, 0);
  ck_assert_int_eq(t.sm_count, 132);
  ck_assert(cg_target_from_arch("sm_90a", &t));
  ck_assert(cg_target_from_arch("compute_80", &t));
  ck_assert_int_eq(t.cc_major, 8);
  ck_assert(!cg_target_from_arch("sm_", &t));
  ck_assert(!cg_target_from_arch("gfx90a", &t));
  ck_assert(!cg_target_from_arch("sm_90x", &t));
  ck_assert(!cg_target_from_arch(NULL, &t));
}
END_TEST

START_TEST(template_fill) {
  char err[256] = "";
  char *common = cg_template_text("common.cuh", err, sizeof err);
  ck_assert_msg(common != NULL, "%s", err);
  ck_assert_ptr_nonnull(strstr(common, "kf_gelu_tanh"));
  free(common);
  ck_assert_ptr_null(cg_template_text("nope.cu", err, sizeof err));
  cg_buf b = {0};
  cg_hole holes[] = {{"entry", "E"},  {"cluster", ""}, {"THREADS", "256"}, {"decls", "D;\n"},
                     {"params", "P"}, {"dep", "S;\n"}, {"route", "R"}};
  ck_assert(cg_fill(&b, "horizontal.cu", holes, 7, err, sizeof err));
  ck_assert_ptr_nonnull(
      strstr(b.s, "D;\nextern \"C\" __global__ void __launch_bounds__(256) E(P) {\nS;\nR}"));
  cg_buf_free(&b);
  ck_assert(!cg_fill(&b, "horizontal.cu", holes, 6, err, sizeof err));
  ck_assert_ptr_nonnull(strstr(err, "route"));
  cg_buf_free(&b);
}
END_TEST

/* Every unary and binary op on every dtype it accepts compiles. */
START_TEST(every_op_every_dtype) {
  static const kf_dtype dts[] = {KF_F16, KF_BF16, KF_F32, KF_F64, KF_I32, KF_I64, KF_BOOL};
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    kf_graph *g = new_graph();
    int64_t shape[2] = {64, 48};
    kf_value a = kf_input(g, "a", dts[d], 2, shape);
    kf_value b = kf_input(g, "b", dts[d], 2, shape);
    int32_t outs[64];
    int n = 0;
    for (int op = 0; op < IR_OP_COUNT; op++) {
      const ir_op_info *info = &ir_ops[op];
      if (info->kind != KIND_UNARY && info->kind != KIND_BINARY) continue;
      bool flt = ir_dtype_is_float(dts[d]);
      if (info->accepts == ACC_FLT && !flt) continue;
      if (info->accepts == ACC_NUM && dts[d] == KF_BOOL) continue;
      ir_node nd;
      memset(&nd, 0, sizeof nd);
      nd.op = (ir_op)op;
      nd.dtype = info->result == RES_BOOL ? KF_BOOL : dts[d];
      nd.rank = 2;
      nd.shape[0] = 64;
      nd.shape[1] = 48;
      nd.nargs = info->kind == KIND_UNARY ? 1 : 2;
      nd.args[0] = a;
      nd.args[1] = b;
      kf_value v = ir_append(g, &nd);
      ck_assert_int_ge(v, 0);
      outs[n++] = v;
    }
    for (int i = 0; i < n; i++) kf_set_output(g, outs[i]);
    char what[64];
    snprintf(what, sizeof what, "every_op_%s", kf_dtype_name(dts[d]));
    compile_pointwise(g, outs, n, what, NULL);
    kf_graph_destroy(g);
  }
}
END_TEST

START_TEST(chain_f32_vectorized) {
  kf_graph *g = new_graph();
  int64_t shape[2] = {1024, 1024};
  kf_value x = kf_input(g, "x", KF_F32, 2, shape);
  kf_value y = kf_input(g, "y", KF_F32, 2, shape);
  kf_value t = kf_mul(g, kf_exp(g, x), y);
  t = kf_add(g, t, kf_scalar(g, 1.0, KF_F32));
  kf_value o = kf_relu(g, kf_tanh(g, t));
  kf_set_output(g, o);
  cg_launch_src src;
  int32_t outs[1] = {o};
  compile_pointwise(g, outs, 1, "chain_f32", &src);
  ck_assert_int_eq(src.vec_bytes, 16);
  ck_assert(!src.index64);
  ck_assert_int_eq(src.n_params, 3);
  ck_assert(!src.params[0].written);
  ck_assert(src.params[2].written);
  ck_assert_int_eq(src.params[2].value, o);
  ck_assert_int_eq(src.block, 256);
  ck_assert_ptr_nonnull(strstr(src.source, "kf_ldv<float, W>"));
  ck_assert_ptr_nonnull(strstr(src.source, "kf_aligned(p"));
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(chain_bf16_f16_i32) {
  static const kf_dtype dts[] = {KF_BF16, KF_F16, KF_I32, KF_I64, KF_F64};
  for (int d = 0; d < 5; d++) {
    kf_graph *g = new_graph();
    int64_t shape[1] = {100003};
    kf_value x = kf_input(g, "x", dts[d], 1, shape);
    kf_value y = kf_input(g, "y", dts[d], 1, shape);
    kf_value t = kf_mul(g, kf_add(g, x, y), kf_scalar(g, 3.0, dts[d]));
    t = kf_maximum(g, t, kf_neg(g, y));
    kf_value c = kf_gt(g, t, x);
    kf_value o = kf_where(g, c, t, kf_clamp(g, x, -2.0, 5.5));
    kf_value f = kf_cast(g, o, KF_F32);
    kf_set_output(g, o);
    kf_set_output(g, f);
    int32_t outs[2] = {o, f};
    cg_launch_src src;
    compile_pointwise(g, outs, 2, kf_dtype_name(dts[d]), &src);
    ck_assert_int_eq(src.vec_bytes, 16);
    cg_launch_src_free(&src);
    kf_graph_destroy(g);
  }
}
END_TEST

/* A bias [C] against [R,C] keeps the vector path (C % W == 0); a column
 * [R,1] is the same value for the W lanes. */
START_TEST(broadcast_bias) {
  kf_graph *g = new_graph();
  int64_t s2[2] = {512, 768}, s1[1] = {768}, sc[2] = {512, 1};
  kf_value x = kf_input(g, "x", KF_BF16, 2, s2);
  kf_value b = kf_input(g, "b", KF_BF16, 1, s1);
  kf_value c = kf_input(g, "c", KF_BF16, 2, sc);
  kf_value o = kf_gelu(g, kf_mul(g, kf_add(g, x, b), c));
  kf_set_output(g, o);
  int32_t outs[1] = {o};
  cg_launch_src src;
  compile_pointwise(g, outs, 1, "broadcast_bias", &src);
  char want[128];
  snprintf(want, sizeof want, "kf_ldv<kf_bf16, W>(r1, p%d + ((e) %% 768))", b);
  ck_assert_msg(strstr(src.source, "% 768)") != NULL, "%s", src.source);
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
}
END_TEST

/* An operand broadcast over trailing axes repeats each element over `rep`
 * consecutive elements: with rep % W == 0 it is one scalar for the W lanes,
 * with gcd(rep, W) = S >= 2 one per aligned run of S lanes (fam16 of the
 * issue-23 family: [R, 12] f16 + [R, 1] on 8 lanes loaded 8 times per group
 * before, with its index arithmetic; now twice), otherwise per lane. */
static void repeat_case(kf_dtype dt, int rank, const int64_t *xs, const int64_t *cs,
                        const char *want, const char *what) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", dt, rank, xs);
  kf_value c = kf_input(g, "c", dt, rank, cs);
  kf_value o = kf_add(g, kf_sigmoid(g, kf_sign(g, c)), x);
  kf_set_output(g, o);
  int32_t outs[1] = {o};
  cg_launch_src src;
  compile_pointwise(g, outs, 1, what, &src);
  ck_assert_msg(strstr(src.source, want) != NULL, "%s: no \"%s\" in\n%s", what, want, src.source);
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
}

START_TEST(broadcast_repeat_runs) {
  int64_t x12[2] = {300, 12}, c1[2] = {300, 1}, x6[2] = {300, 6}, x7[2] = {300, 7};
  int64_t x3d[3] = {40, 6, 2}, c3d[3] = {40, 1, 1}, x24[2] = {300, 24};
  /* f16, W = 8: 12 -> runs of 4 lanes; 6 -> runs of 2; 24 -> one scalar */
  repeat_case(KF_F16, 2, x12, c1, "r0[j / 4]", "repeat12_f16");
  repeat_case(KF_F16, 2, x12, c1, "const int e = i + kf_q * 4;", "repeat12_f16");
  repeat_case(KF_F16, 2, x6, c1, "r0[j / 2]", "repeat6_f16");
  repeat_case(KF_F16, 2, x24, c1, "const float t0 = r0;", "repeat24_f16");
  /* f32, W = 4: [40, 6, 2] + [40, 1, 1] repeats 12 (its inner 2 alone: per lane) */
  repeat_case(KF_F32, 3, x3d, c3d, "const float t0 = r0;", "repeat6x2_f32");
  /* an odd repeat stays per lane */
  repeat_case(KF_F16, 2, x7, c1, "const float t0 = kf_ld(", "repeat7_f16");
}
END_TEST

/* KFUSE_PW_GROUPS=2: two vector groups per thread, both groups' loads
 * before either computes (templates/pointwise_groups.cu); half the blocks.
 * The default (1) keeps pointwise.cu. */
START_TEST(pointwise_groups_knob) {
  int64_t x12[2] = {301, 12}, c1[2] = {301, 1};
  for (int pass = 0; pass < 2; pass++) {
    if (pass) kt_setenv("KFUSE_PW_GROUPS", "2", 1);
    kf_graph *g = new_graph();
    kf_value x = kf_input(g, "x", KF_F16, 2, x12);
    kf_value c = kf_input(g, "c", KF_F16, 2, c1);
    kf_value o = kf_add(g, kf_mul(g, kf_tanh(g, x), c), x);
    kf_set_output(g, o);
    int32_t outs[1] = {o};
    cg_launch_src src;
    compile_pointwise(g, outs, 1, pass ? "groups2" : "groups1", &src);
    bool grp = strstr(src.source, "_grp<8> g[2];") != NULL;
    ck_assert_msg(grp == (pass == 1), "pass %d:\n%s", pass, src.source);
    ck_assert((strstr(src.source, "groups per thread: 2 (loads first)") != NULL) == (pass == 1));
    ck_assert_uint_eq(src.grid, pass ? 1 : 2); /* 3612 / 8 = 451 groups */
    cg_launch_src_free(&src);
    kf_graph_destroy(g);
  }
  kt_unsetenv("KFUSE_PW_GROUPS");
}
END_TEST

START_TEST(odd_broadcast_scalar_path) {
  kf_graph *g = new_graph();
  int64_t s2[2] = {333, 7}, s1[1] = {7};
  kf_value x = kf_input(g, "x", KF_F32, 2, s2);
  kf_value b = kf_input(g, "b", KF_F32, 1, s1);
  kf_value o = kf_sub(g, x, b);
  kf_set_output(g, o);
  int32_t outs[1] = {o};
  compile_pointwise(g, outs, 1, "odd_broadcast", NULL);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(transpose_reshape_broadcast_to) {
  kf_graph *g = new_graph();
  int64_t s[3] = {16, 32, 64}, st[3] = {64, 32, 16}, sr[2] = {512, 64}, sb[3] = {8, 512, 64};
  kf_value x = kf_input(g, "x", KF_F32, 3, s);
  kf_value y = kf_input(g, "y", KF_F32, 3, st);
  int perm[3] = {2, 1, 0};
  kf_value t = kf_add(g, kf_transpose(g, kf_exp(g, x), perm), y);
  kf_value r = kf_reshape(g, kf_transpose(g, t, perm), 2, sr);
  kf_value o = kf_broadcast_to(g, kf_sigmoid(g, r), 3, sb);
  kf_value o2 = kf_mul(g, o, kf_scalar(g, 2.0, KF_F32));
  kf_set_output(g, o2);
  int32_t outs[1] = {o2};
  compile_pointwise(g, outs, 1, "layout", NULL);
  kf_graph_destroy(g);
}
END_TEST

/* 3 * 2^30 elements: offsets past 2^31 need 64-bit index arithmetic. */
START_TEST(index64_when_needed) {
  kf_graph *g = new_graph();
  int64_t s[2] = {3, 1LL << 30};
  kf_value x = kf_input(g, "x", KF_F32, 2, s);
  kf_value o = kf_sqrt(g, x);
  kf_set_output(g, o);
  int32_t outs[1] = {o};
  cg_launch_src src;
  compile_pointwise(g, outs, 1, "index64", &src);
  ck_assert(src.index64);
  ck_assert_int_eq(src.max_offset, 3LL * (1LL << 30) - 1);
  ck_assert_ptr_nonnull(strstr(src.source, "long long"));
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(tiny_and_scalar) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 0, NULL);
  kf_value o = kf_add(g, kf_exp(g, x), kf_scalar(g, -0.5, KF_F32));
  kf_set_output(g, o);
  int32_t outs[1] = {o};
  cg_launch_src src;
  compile_pointwise(g, outs, 1, "scalar", &src);
  ck_assert_int_eq(src.grid, 1);
  ck_assert_int_eq(src.block, 32);
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(bad_launch_is_an_error) {
  kf_graph *g = new_graph();
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  tp.plan.graph = g;
  cg_target t;
  cg_target_from_arch("sm_90", &t);
  cg_launch_src src;
  char err[128];
  ck_assert_int_eq(cg_emit_launch(g, &tp.plan, 0, &t, &src, err, sizeof err), KF_ERR_INVALID_ARG);
  ck_assert_ptr_null(src.source);
  kf_graph_destroy(g);
}
END_TEST

/* Every launch of a graph file, planned by the fuser, as CUDA C (sm_90). */
static int example_sources(const char *file, char **srcs, int max) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/graphs/%s", KFUSE_SOURCE_DIR, file);
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g = NULL;
  ck_assert_msg(kf_graph_load_yaml(ctx, path, &g) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  kf_plan *plan = NULL;
  ck_assert_msg(kf_plan_create(ctx, g, NULL, &plan) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  int n = kf_plan_num_launches(plan);
  ck_assert_int_le(n, max);
  for (int L = 0; L < n; L++) {
    srcs[L] = kf_plan_source(plan, L, "sm_90");
    ck_assert_msg(srcs[L] != NULL, "%s launch %d: %s", file, L, kf_plan_errmsg(plan));
  }
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return n;
}

static const char *const examples[] = {
    "adam_step.yaml",     "add_rmsnorm.yaml",      "attention.yaml",       "axpby_many.yaml",
    "bias_gelu.yaml",     "broadcast.yaml",        "casts_clamp.yaml",     "column_stats.yaml",
    "compare_where.yaml", "cross_entropy.yaml",    "horizontal.yaml",      "integer_ops.yaml",
    "layernorm.yaml",     "mlp_silu.yaml",         "pointwise_chain.yaml", "rmsnorm_residual.yaml",
    "softmax.yaml",       "transpose_reshape.yaml"};

START_TEST(every_example_compiles) {
  const char *file = examples[_i];
  char *srcs[64];
  int n = example_sources(file, srcs, 64);
  for (int L = 0; L < n; L++) {
    /* the Hopper kernels (the sm_90 matmul's, attention's) are for the
     * arch-specific target, as the runtime compiles them
     * (cg_launch_src.arch_specific) */
    const char *arch = strstr(srcs[L], "setmaxnreg") ? "sm_90a" : "sm_90";
    double ms = tu_nvrtc_arch(srcs[L], file, arch);
    if (getenv("KFUSE_CODEGEN_VERBOSE")) fprintf(stderr, "%s launch %d: %.0f ms\n", file, L, ms);
    ck_assert_msg(ms >= 0, "%s launch %d does not compile", file, L);
    kf_free(srcs[L]);
  }
}
END_TEST

/* The off-by-default row variants (staged rows by bulk copies in one or two
 * buffers and by each thread's cp.async, the persistent grid alone, the
 * output phase recomputing, held loads first to leave L1, the weights
 * prefetched into L1, rows never held) still generate
 * what they say and compile with NVRTC: f32 softmax (32 KB rows: one
 * buffer, not staged by thread), bf16 layernorm (16 KB: two) and add +
 * rmsnorm (two bf16 inputs). */
START_TEST(staged_row_variants_compile) {
  static const struct {
    const char *var, *value, *var2, *value2, *file, *marker; /* var2: NULL or a second knob */
  } cases[] = {
      {"KFUSE_ROW_STAGE", "1", NULL, NULL, "softmax.yaml",
       "kf_bulk_g2s(kf_part0_k0_row_s0[slot], p0 + r * 8192, 32768u"},
      {"KFUSE_ROW_STAGE", "2", NULL, NULL, "layernorm.yaml", "kf_part0_k0_row_s0[2][8192]"},
      {"KFUSE_ROW_STAGE", "2", NULL, NULL, "add_rmsnorm.yaml", "kf_part0_k0_row_s1[1][8192]"},
      {"KFUSE_ROW_STAGE", "thread", NULL, NULL, "layernorm.yaml",
       "kf_cp_async16(kf_part0_k0_row_s0[slot]"},
      /* f32 rows: two buffers do not fit, so not staged */
      {"KFUSE_ROW_STAGE", "thread", NULL, NULL, "softmax.yaml", "r += (int)8192 * 1"},
      {"KFUSE_ROW_PERSIST", "1", NULL, NULL, "layernorm.yaml", "r += (int)gridDim.x * 1"},
      {"KFUSE_ROW_PERSIST", "dynamic", NULL, NULL, "layernorm.yaml",
       "r = kf_part0_k0_row_take(i), i++"},
      {"KFUSE_ROW_PERSIST", "dynamic", "KFUSE_ROW_STAGE", "2", "layernorm.yaml",
       "r = kf_part0_k0_row_row_of[slot];"},
      {"KFUSE_ROW_RECOMPUTE", "1", NULL, NULL, "softmax.yaml", "kf_fresh(kf_in_at(x0[kk], j))"},
      {"KFUSE_ROW_STREAM", "evict_first", NULL, NULL, "layernorm.yaml", "= kf_ldef(q + i)"},
      {"KFUSE_ROW_STREAM", "l2_evict_first", NULL, NULL, "layernorm.yaml", "= kf_ldl2ef(q + i)"},
      {"KFUSE_ROW_PREFETCH", "1", NULL, NULL, "layernorm.yaml", "kf_prefetch_l1(p2 + c0)"},
      /* never held: the looped form, mean and variance in one pass */
      {"KFUSE_ROW_HOLD", "0", NULL, NULL, "layernorm.yaml",
       "looped: inputs re-read per phase, paired"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    kt_setenv(cases[c].var, cases[c].value, 1);
    if (cases[c].var2) kt_setenv(cases[c].var2, cases[c].value2, 1);
    char *srcs[4];
    int n = example_sources(cases[c].file, srcs, 4);
    kt_unsetenv(cases[c].var);
    if (cases[c].var2) kt_unsetenv(cases[c].var2);
    ck_assert_int_eq(n, 1);
    ck_assert_msg(strstr(srcs[0], cases[c].marker), "%s=%s %s: no '%s'", cases[c].var,
                  cases[c].value, cases[c].file, cases[c].marker);
    double ms = tu_nvrtc(srcs[0], cases[c].file);
    ck_assert_msg(ms >= 0, "%s=%s %s does not compile", cases[c].var, cases[c].value,
                  cases[c].file);
    kf_free(srcs[0]);
  }
}
END_TEST

/* Reviewed sources of known graphs (KFUSE_UPDATE_GOLDEN=1 rewrites them). */
START_TEST(golden_sources) {
  static const char *const files[] = {"pointwise_chain.yaml", "softmax.yaml", "add_rmsnorm.yaml",
                                      "broadcast.yaml", "column_stats.yaml"};
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    char *srcs[16];
    int n = example_sources(files[f], srcs, 16);
    for (int L = 0; L < n; L++) {
      char name[128];
      snprintf(name, sizeof name, "%.*s.%d.cu", (int)(strlen(files[f]) - 5), files[f], L);
      tu_golden(name, srcs[L]);
      kf_free(srcs[L]);
    }
  }
}
END_TEST

/* cg_div_const_exact: a division by 30 rounds as the product by 1/30 for
 * every bf16 value but not for every f16 one (some f16 input's product
 * rounds to the other neighbour), powers of two always do; zero, infinities, NaN and
 * values that are not a float are refused; the reciprocal comes back. */
START_TEST(div_const_exact) {
  float r = 0;
  ck_assert(cg_div_const_exact(KF_BF16, 30.0, &r) && r == 1.0f / 30.0f);
  ck_assert(!cg_div_const_exact(KF_F16, 30.0, &r));
  for (int e = -8; e <= 8; e++) {
    ck_assert(cg_div_const_exact(KF_F16, ldexp(1.0, e), &r) && r == (float)ldexp(1.0, -e));
    ck_assert(cg_div_const_exact(KF_BF16, -ldexp(1.0, e), &r));
  }
  ck_assert(!cg_div_const_exact(KF_BF16, 0.0, &r));
  ck_assert(!cg_div_const_exact(KF_BF16, INFINITY, &r));
  ck_assert(!cg_div_const_exact(KF_BF16, NAN, &r));
  ck_assert(!cg_div_const_exact(KF_BF16, 0.1, &r)); /* not a float */
  ck_assert(!cg_div_const_exact(KF_F32, 2.0, &r));
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("codegen");
  TCase *tc = tcase_create("pointwise");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, target_parse);
  tcase_add_test(tc, div_const_exact);
  tcase_add_test(tc, template_fill);
  tcase_add_test(tc, every_op_every_dtype);
  tcase_add_test(tc, chain_f32_vectorized);
  tcase_add_test(tc, chain_bf16_f16_i32);
  tcase_add_test(tc, broadcast_bias);
  tcase_add_test(tc, odd_broadcast_scalar_path);
  tcase_add_test(tc, broadcast_repeat_runs);
  tcase_add_test(tc, pointwise_groups_knob);
  tcase_add_test(tc, transpose_reshape_broadcast_to);
  tcase_add_test(tc, index64_when_needed);
  tcase_add_test(tc, tiny_and_scalar);
  tcase_add_test(tc, bad_launch_is_an_error);
  suite_add_tcase(s, tc);
  TCase *te = tcase_create("examples");
  tcase_set_timeout(te, 300);
  tcase_add_loop_test(te, every_example_compiles, 0, (int)(sizeof examples / sizeof examples[0]));
  tcase_add_test(te, golden_sources);
  tcase_add_test(te, staged_row_variants_compile);
  suite_add_tcase(s, te);
  return s;
}
