/* test_gemm80.c - the mma.sync matmul template (codegen/gemm_sm80.c):
 * which products take it (sm_80 to sm_89 for 16-bit products, sm_90 for
 * what the sm_90 template does not take), its batch offsets and operand
 * layouts, and that its sources compile with NVRTC for sm_80, sm_86 and
 * sm_90; the rest keep the simple kernel. */
#include "check_main.h"
#include "codegen/emit.h"
#include "codegen/target.h"
#include "codegen_util.h"
#include "knob_env.h"

/* One product as a matmul kernel: y = epi(a @ b), a [batch, m, k] (or
 * [m, k] for batch 1; [batch, k, m] transposed with ta), b [k, n] shared
 * by the batch (bb: [batch, k, n]; tb: [.., n, k] transposed). */
typedef struct mm_case {
  kf_dtype dt;
  int64_t m, n, k, batch;
  bool bb, ta, tb;
  int epi; /* 0 none, 1 bias + tanh-GELU, 2 residual + relu, 3 cast to f32 */
} mm_case;

static kf_value maybe_t(kf_graph *g, const char *name, kf_dtype dt, int rank, int64_t r, int64_t c,
                        int64_t batch, bool t) {
  int64_t s[3] = {batch, t ? c : r, t ? r : c};
  kf_value x = kf_input(g, name, dt, rank, s + 3 - rank);
  if (!t) return x;
  int perm[3] = {0, 1, 2};
  perm[rank - 2] = rank - 1;
  perm[rank - 1] = rank - 2;
  return kf_transpose(g, x, perm);
}

static kf_graph *build(const mm_case *c, kf_value *yout) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int ra = c->batch > 1 ? 3 : 2, rb = c->bb ? 3 : 2;
  kf_value a = maybe_t(g, "a", c->dt, ra, c->m, c->k, c->batch, c->ta);
  kf_value b = maybe_t(g, "b", c->dt, rb, c->k, c->n, c->batch, c->tb);
  kf_value y = kf_matmul(g, a, b);
  int64_t sn[1] = {c->n}, sy[3] = {c->batch, c->m, c->n};
  if (c->epi == 1) y = kf_gelu_tanh(g, kf_add(g, y, kf_input(g, "bias", c->dt, 1, sn)));
  if (c->epi == 2) y = kf_relu(g, kf_add(g, y, kf_input(g, "res", c->dt, ra, sy + 3 - ra)));
  if (c->epi == 3) y = kf_cast(g, y, KF_F32);
  kf_set_output(g, y);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  *yout = y;
  return g;
}

static void emit(const mm_case *c, const char *arch, cg_launch_src *src, kf_graph **gout) {
  kf_value y;
  kf_graph *g = build(c, &y);
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  int32_t nodes[32], outs[1] = {y};
  int nn = tu_collect(g, 0, y, nodes);
  tu_kernel(&tp, g, FK_MATMUL, nodes, nn, outs, 1);
  tu_emit_arch(g, &tp, 0, arch, src);
  *gout = g;
}

static bool on_template(const cg_launch_src *src) {
  return strstr(src->source, "on the mma.sync template") != NULL;
}

/* 16-bit products on sm_80 and sm_86 take the template, in both dtypes,
 * every epilogue, tails in M, N and K, odd K and N (the element-wise copy),
 * batched with a shared or a batched weight, transposed operands read as
 * layouts; each source compiles with NVRTC. */
START_TEST(takes_16bit_products) {
  static const mm_case cases[] = {
      {KF_BF16, 300, 520, 136, 1, false, false, false, 1},
      {KF_F16, 1, 8, 8, 1, false, false, false, 0},
      {KF_BF16, 129, 64, 1000, 1, false, false, false, 2},
      {KF_F16, 33, 17, 101, 1, false, false, false, 3},
      {KF_BF16, 512, 1024, 768, 8, false, false, false, 1},
      {KF_F16, 64, 72, 40, 4, true, false, false, 2},
      {KF_BF16, 100, 72, 48, 1, false, true, false, 0},
      {KF_F16, 100, 72, 48, 3, false, false, true, 1},
      {KF_BF16, 65, 33, 47, 2, true, true, true, 0},
  };
  static const char *const archs[] = {"sm_80", "sm_86", "sm_89"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const mm_case *c = &cases[i];
    const char *arch = archs[i % 3];
    cg_launch_src src;
    kf_graph *g;
    emit(c, arch, &src, &g);
    ck_assert_msg(on_template(&src), "case %zu", i);
    char want[96];
    snprintf(want, sizeof want, "constexpr bool BF = %s, AT = %s, BT = %s;",
             c->dt == KF_BF16 ? "true" : "false", c->ta ? "true" : "false",
             c->tb ? "true" : "false");
    ck_assert_msg(strstr(src.source, want), "case %zu: %s missing", i, want);
    ck_assert_int_eq(src.block, 256);
    ck_assert_uint_eq(src.grid, (uint32_t)(c->batch * ((c->m + 127) / 128) * ((c->n + 127) / 128)));
    ck_assert_uint_eq(src.smem_bytes, 4 * 16384);
    ck_assert(!src.arch_specific);
    ck_assert_int_eq(src.n_tmaps, 0);
    /* the 16-byte copy where rows are whole chunks: A's K (or M
     * transposed) and B's N (or K) a multiple of 8 */
    int64_t lda = c->ta ? c->m : c->k, ldb = c->tb ? c->k : c->n;
    char al[160];
    snprintf(al, sizeof al, "kf_g80_copy<AT, BT, %s, %s> cp;", lda % 8 ? "false" : "true",
             ldb % 8 ? "false" : "true");
    ck_assert_msg(strstr(src.source, al), "case %zu: %s missing", i, al);
    char what[96];
    snprintf(what, sizeof what, "gemm80 case %zu", i);
    ck_assert_msg(tu_nvrtc_arch(src.source, what, arch) >= 0, "%s does not compile", what);
    const char *dump = getenv("KFUSE_GEMM80_DUMP"); /* files to look at with ptxas */
    if (dump) {
      char path[512];
      snprintf(path, sizeof path, "%s.%zu.cu", dump, i);
      FILE *f = fopen(path, "w");
      if (f) fputs(src.source, f), fclose(f);
    }
    cg_launch_src_free(&src);
    kf_graph_destroy(g);
  }
}
END_TEST

/* Batch offsets: a batched operand is matrix bt, a shared one is 0, one
 * that broadcasts some batch axes only sums the others' strides. */
START_TEST(batch_offsets) {
  mm_case c = {KF_BF16, 512, 1024, 768, 8, false, false, false, 0};
  cg_launch_src src;
  kf_graph *g;
  emit(&c, "sm_80", &src, &g);
  ck_assert_ptr_nonnull(
      strstr(src.source, "(const unsigned short *)p0 + ((long long)bt * 393216LL)"));
  ck_assert_ptr_nonnull(strstr(src.source, "(const unsigned short *)p1 + (0)"));
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
  /* a [2, 1, 16, 24] times b [1, 3, 24, 40]: out [2, 3, 16, 40] */
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t sa[4] = {2, 1, 16, 24}, sb[4] = {1, 3, 24, 40};
  kf_value a4 = kf_input(g, "a", KF_F16, 4, sa), b4 = kf_input(g, "b", KF_F16, 4, sb);
  kf_value y = kf_matmul(g, a4, b4);
  kf_set_output(g, y);
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  int32_t nodes[4], outs[1] = {y};
  int nn = tu_collect(g, 0, y, nodes);
  tu_kernel(&tp, g, FK_MATMUL, nodes, nn, outs, 1);
  tu_emit_arch(g, &tp, 0, "sm_80", &src);
  ck_assert(on_template(&src));
  ck_assert_msg(strstr(src.source, "p0 + ((long long)(bt / 3 % 2) * 384LL)"), "A offset");
  ck_assert_msg(strstr(src.source, "p1 + ((long long)(bt / 1 % 3) * 960LL)"), "B offset");
  ck_assert_uint_eq(src.grid, 6);
  ck_assert_msg(tu_nvrtc_arch(src.source, "gemm80 broadcast", "sm_80") >= 0, "no compile");
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
}
END_TEST

/* On sm_90 the template takes what the sm_90 template does not (a batch,
 * K or N not a multiple of 8, a transposed operand), and with
 * KFUSE_GEMM90=0 everything 16-bit; the sm_90 template keeps the rest. */
START_TEST(sm90_takes_the_rest) {
  static const mm_case cases[] = {
      {KF_BF16, 300, 520, 100, 1, false, false, false, 1},
      {KF_F16, 300, 33, 136, 1, false, false, false, 2},
      {KF_BF16, 512, 1024, 768, 8, false, false, false, 0},
      {KF_F16, 256, 128, 64, 1, false, true, false, 3},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cg_launch_src src;
    kf_graph *g;
    emit(&cases[i], "sm_90", &src, &g);
    ck_assert_msg(on_template(&src), "case %zu", i);
    ck_assert(!src.arch_specific);
    char what[64];
    snprintf(what, sizeof what, "gemm80 on sm_90, case %zu", i);
    ck_assert_msg(tu_nvrtc_arch(src.source, what, "sm_90") >= 0, "%s does not compile", what);
    cg_launch_src_free(&src);
    kf_graph_destroy(g);
  }
  mm_case c = {KF_BF16, 300, 520, 136, 1, false, false, false, 1};
  cg_launch_src src;
  kf_graph *g;
  emit(&c, "sm_90", &src, &g);
  ck_assert(!on_template(&src));
  ck_assert(src.arch_specific); /* the sm_90 template */
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
  kt_setenv("KFUSE_GEMM90", "0", 1);
  emit(&c, "sm_90", &src, &g);
  ck_assert(on_template(&src));
  ck_assert(!src.arch_specific);
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
  kt_unsetenv("KFUSE_GEMM90");
}
END_TEST

/* The simple kernel keeps: f32 products, other archs (sm_75, sm_100),
 * KFUSE_GEMM80=0, and an operand computed in the kernel. */
START_TEST(others_keep_the_simple_kernel) {
  mm_case f32 = {KF_F32, 64, 64, 64, 1, false, false, false, 0};
  mm_case h = {KF_BF16, 64, 64, 64, 1, false, false, false, 1};
  struct {
    const mm_case *c;
    const char *arch;
  } cases[] = {{&f32, "sm_80"}, {&h, "sm_75"}, {&h, "sm_100"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cg_launch_src src;
    kf_graph *g;
    emit(cases[i].c, cases[i].arch, &src, &g);
    ck_assert_msg(strstr(src.source, "not tensor cores"), "case %zu", i);
    cg_launch_src_free(&src);
    kf_graph_destroy(g);
  }
  kt_setenv("KFUSE_GEMM80", "0", 1);
  cg_launch_src src;
  kf_graph *g;
  emit(&h, "sm_80", &src, &g);
  ck_assert_ptr_nonnull(strstr(src.source, "not tensor cores"));
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
  kt_setenv("KFUSE_GEMM80", "1", 1);
  /* relu(a) @ b: a prologue the template does not compute */
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t s[2] = {64, 64};
  kf_value y =
      kf_matmul(g, kf_relu(g, kf_input(g, "a", KF_BF16, 2, s)), kf_input(g, "b", KF_BF16, 2, s));
  kf_set_output(g, y);
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  int32_t nodes[4], outs[1] = {y};
  int nn = tu_collect(g, 0, y, nodes);
  tu_kernel(&tp, g, FK_MATMUL, nodes, nn, outs, 1);
  tu_emit_arch(g, &tp, 0, "sm_80", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "not tensor cores"));
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
}
END_TEST

static Suite *make_suite(void) {
  /* off by default until it has run on a GPU (docs/matmul.md) */
  kt_setenv("KFUSE_GEMM80", "1", 1);
  Suite *s = suite_create("gemm80");
  TCase *tc = tcase_create("gemm80");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, takes_16bit_products);
  tcase_add_test(tc, batch_offsets);
  tcase_add_test(tc, sm90_takes_the_rest);
  tcase_add_test(tc, others_keep_the_simple_kernel);
  suite_add_tcase(s, tc);
  return s;
}
