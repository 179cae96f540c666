/* test_codegen_kinds.c - code generation of row, reduce, horizontal and
 * matmul kernels: every source compiles with NVRTC for sm_90, and the
 * strategies chosen are the ones documented in docs/codegen.md. */
#include "check_main.h"
#include "codegen/emit.h"
#include "codegen/row_online.h"
#include "codegen_util.h"
#include "ir/dtype.h"

static kf_graph *new_graph(void) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  return g;
}

/* One kernel of `kind` computing every node up to the last output. */
static fuse_kernel *one_kernel(tu_plan *tp, kf_graph *g, fuse_kind kind, const int32_t *outs,
                               int n_outs) {
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  int32_t nodes[64];
  int last = 0;
  for (int i = 0; i < n_outs; i++)
    if (outs[i] > last) last = outs[i];
  int n = tu_collect(g, 0, last, nodes);
  return tu_kernel(tp, g, kind, nodes, n, outs, n_outs);
}

/* The arch of the source compile_one keeps (every launch is compiled for
 * sm_90 first). */
static const char *G_keep_arch = "sm_90";

static void compile_one(kf_graph *g, tu_plan *tp, const char *what, cg_launch_src *keep) {
  tu_emit_compile_all(g, tp, what);
  if (keep) tu_emit_arch(g, tp, 0, G_keep_arch, keep);
}

static void row_case(kf_dtype dt, int64_t rows, int64_t cols, int which, const char *what,
                     cg_launch_src *keep) {
  kf_graph *g = new_graph();
  int64_t shape[2] = {rows, cols}, ws[1] = {cols};
  kf_value x = kf_input(g, "x", dt, 2, shape);
  int32_t outs[2];
  int n_outs = 1;
  if (which == 0) {
    outs[0] = kf_softmax(g, x, -1);
  } else if (which == 1) {
    kf_value w = kf_input(g, "w", dt, 1, ws);
    kf_value b = kf_input(g, "b", dt, 1, ws);
    outs[0] = kf_layernorm(g, x, w, b, 1e-5);
  } else if (which == 3) {
    int ax = -1;
    outs[0] = kf_sub(g, x, kf_max(g, x, 1, &ax, true));
  } else {
    kf_value res = kf_input(g, "res", dt, 2, shape);
    kf_value w = kf_input(g, "w", dt, 1, ws);
    kf_value h = kf_add(g, x, res);
    outs[0] = h;
    outs[1] = kf_rmsnorm(g, h, w, 1e-6);
    n_outs = 2;
  }
  for (int i = 0; i < n_outs; i++) kf_set_output(g, outs[i]);
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  fuse_kernel *k = one_kernel(&tp, g, FK_ROW, outs, n_outs);
  k->rows = rows;
  k->cols = cols;
  compile_one(g, &tp, what, keep);
  kf_graph_destroy(g);
}

/* row_case with the environment variable var set to value for it alone. */
static void row_case_env(const char *var, const char *value, kf_dtype dt, int64_t rows,
                         int64_t cols, int which, const char *what, cg_launch_src *keep) {
  kt_setenv(var, value, 1);
  row_case(dt, rows, cols, which, what, keep);
  kt_unsetenv(var);
}

/* How many times needle occurs in hay. */
static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

START_TEST(softmax_rows) {
  cg_launch_src src;
  row_case(KF_F32, 8192, 8192, 0, "softmax_f32_8192", &src);
  ck_assert_int_eq(src.block, 512);
  ck_assert_int_eq(src.vec_bytes, 16);
  ck_assert_ptr_nonnull(strstr(src.source, "block per row"));
  ck_assert_ptr_nonnull(strstr(src.source, "row held in registers"));
  cg_launch_src_free(&src);
  /* bf16 of 8192 columns: 8 accesses of 8 per thread, 128 threads, the
   * row held in its storage type (64 elements in 32 words per thread: no
   * room left to keep the exp as well) */
  row_case(KF_BF16, 8192, 8192, 0, "softmax_bf16_8192", &src);
  ck_assert_int_eq(src.block, 128);
  ck_assert_int_eq(src.grid, 8192);
  ck_assert_ptr_nonnull(strstr(src.source, "kf_pack<kf_bf16, W> x"));
  ck_assert_ptr_null(strstr(src.source, "reused reduction operands"));
  /* a flagged quotient's second computation: once, after the chunk loop,
   * not unrolled, its inputs read from memory and stored one by one */
  const char *redo = strstr(src.source, "  if (kf_bad) {");
  ck_assert_ptr_nonnull(redo);
  ck_assert_ptr_null(strstr(src.source, "    if (kf_bad) {")); /* not inside a chunk */
  ck_assert_int_eq(count_of(src.source, "  if (kf_bad) {"), count_of(src.source, "  bool kf_bad = false;"));
  ck_assert_ptr_nonnull(strstr(src.source, "  bool kf_bad = false;\n  #pragma unroll\n  for (int kk"));
  ck_assert_ptr_nonnull(strstr(redo, "#pragma unroll 1\n  for (int kk = 0; kk < NV; kk++) {"));
  ck_assert_ptr_nonnull(strstr(redo, "#pragma unroll 1\n    for (int j = 0; j < W; j++) {"));
  ck_assert_ptr_nonnull(strstr(redo, "kf_ld(p0 + (r * 8192 + c))"));
  ck_assert_ptr_nonnull(strstr(redo, "kf_div_rcp(kf_fresh("));
  ck_assert_ptr_nonnull(strstr(redo, "kf_st(p"));
  ck_assert_ptr_null(strstr(redo, "kf_in_at("));
  cg_launch_src_free(&src);
  /* 4096 columns: 4 accesses of 8 per thread, 128 threads; the exp
   * computed for the sum is kept for the output */
  row_case(KF_BF16, 8192, 4096, 0, "softmax_bf16_4096", &src);
  ck_assert_int_eq(src.block, 128);
  ck_assert_ptr_nonnull(strstr(src.source, "kf_pack<kf_bf16, W> x"));
  ck_assert_ptr_nonnull(strstr(src.source, "reused reduction operands"));
  ck_assert_ptr_nonnull(strstr(src.source, "float h0[NV][W];"));
  ck_assert_ptr_nonnull(strstr(src.source, "h0[kk][j] = "));
  cg_launch_src_free(&src);
  row_case(KF_F16, 4096, 512, 0, "softmax_f16_512", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "warp per row"));
  ck_assert_int_eq(src.block, 256);
  cg_launch_src_free(&src);
  row_case(KF_F32, 64, 1000, 0, "softmax_f32_1000", NULL);
  row_case(KF_F64, 64, 3000, 0, "softmax_f64_3000", NULL);
}
END_TEST

/* Rows too long for registers: one pass computes max and sum (online
 * softmax) and mean and variance (Welford), so the row is read twice, not
 * three times. */
START_TEST(long_rows_loop) {
  cg_launch_src src;
  row_case(KF_F32, 16, 1 << 20, 0, "softmax_f32_1M", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "looped"));
  ck_assert_ptr_nonnull(strstr(src.source, "(online softmax)\n"));
  ck_assert_ptr_nonnull(strstr(src.source, "kf_osm_chunk<float, W>(acc, y)"));
  /* one pass for both in the hot path (the unaligned fallback keeps its
   * phases: compact, and no spills in 1024-thread kernels) */
  const char *fb = strstr(src.source, "_row1(");
  ck_assert_ptr_nonnull(fb);
  const char *sum = strstr(src.source, "kf_red_sum<float>::op");
  ck_assert(sum == NULL || sum > fb);
  ck_assert_ptr_nonnull(strstr(src.source, "__launch_bounds__(512, 4)"));
  cg_launch_src_free(&src);
  row_case(KF_BF16, 4, 262147, 1, "layernorm_bf16_odd_long", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "(Welford)\n"));
  ck_assert_ptr_nonnull(strstr(src.source, "kf_wf_chunk<float, W>(acc, y)"));
  cg_launch_src_free(&src);
  row_case(KF_F64, 8, 300000, 1, "layernorm_f64_long", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "kf_wf_chunk<double, W>(acc, y)"));
  cg_launch_src_free(&src);
  /* rmsnorm has one reduction: nothing to pair */
  row_case(KF_F32, 4, 1 << 20, 2, "add_rmsnorm_f32_1M", &src);
  ck_assert_ptr_null(strstr(src.source, "in one pass ("));
  cg_launch_src_free(&src);
  /* held rows keep their phases (registers, not memory, are re-read) */
  row_case(KF_F32, 8192, 8192, 0, "softmax_f32_8192_held", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "// phase: %1 max\n"));
  ck_assert_ptr_null(strstr(src.source, "in one pass ("));
  ck_assert_ptr_nonnull(strstr(src.source, "__launch_bounds__(512) "));
  cg_launch_src_free(&src);
}
END_TEST

/* Rows of x (shape) minus their mean, and the largest deviation per row (a
 * per-row output) over the middle axis, as one row kernel of rows x cols;
 * compiled, kept in src. */
static void row_output_case(int rank, const int64_t *shape, int64_t rows, int64_t cols,
                            const char *what, cg_launch_src *src) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, rank, shape);
  int ax = -1;
  kf_value m = kf_mean(g, x, 1, &ax, true);
  kf_value d = kf_sub(g, x, m);
  kf_value mx = kf_max(g, kf_abs(g, d), 1, &ax, false);
  kf_set_output(g, d);
  kf_set_output(g, mx);
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  int32_t outs[2] = {d, mx};
  fuse_kernel *k = one_kernel(&tp, g, FK_ROW, outs, 2);
  k->rows = rows;
  k->cols = cols;
  compile_one(g, &tp, what, src);
  kf_graph_destroy(g);
}

/* Rows one block cannot hold, on sm_90: held by a cluster of 8 blocks,
 * each reduction finished across the cluster; a row of one reduction ends
 * with a cluster barrier (its slot is written again by the next row); a
 * per-row output is stored by the rank 0 block only. Not on sm_80, not
 * with KFUSE_ROW_SPLIT=0, not where the columns do not split evenly. */
START_TEST(split_rows) {
  cg_launch_src src;
  row_case(KF_F32, 512, 131072, 0, "softmax_f32_131072_split", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "__cluster_dims__(8, 1, 1) __launch_bounds__(512)"));
  ck_assert_ptr_nonnull(strstr(src.source, "8 blocks per row, 16384 columns each"));
  ck_assert_ptr_nonnull(strstr(src.source, "kf_cluster_allreduce<kf_red_max<float>, 8>("));
  ck_assert_ptr_nonnull(strstr(src.source, "kf_cluster_allreduce<kf_red_sum<float>, 8>("));
  ck_assert_ptr_nonnull(strstr(src.source, "COLS = 16384"));
  ck_assert_int_eq(src.grid, 132 * 4 * 4); /* 4 waves of 4 blocks per SM: 264 clusters */
  ck_assert_int_eq(src.block, 512);
  int two = count_of(src.source, "kf_cluster_sync();");
  cg_launch_src_free(&src);
  row_case(KF_F32, 64, 131072, 1, "layernorm_f32_131072_split", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "kf_cluster_allreduce<kf_red_sum<float>, 8>("));
  cg_launch_src_free(&src);
  /* x - max(x): one reduction per row, then a cluster barrier */
  row_case(KF_F32, 32, 131072, 3, "shift_f32_131072_split", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "__cluster_dims__(8, 1, 1)"));
  ck_assert_int_eq(count_of(src.source, "kf_cluster_sync();"), two + 1);
  cg_launch_src_free(&src);
  /* 2-byte and 8-byte rows loop (measured slower held by a cluster);
   * two f32 inputs of 131072 columns need more than 32 words per thread
   * in 8 blocks of 512 */
  static const struct {
    kf_dtype dt;
    int64_t rows, cols;
    int which;
    const char *what;
  } looped[] = {{KF_BF16, 64, 262144, 1, "layernorm_bf16_262144"},
                {KF_F64, 8, 65536, 0, "softmax_f64_65536"},
                {KF_F32, 32, 131072, 2, "add_rmsnorm_f32_131072"}};
  for (size_t i = 0; i < sizeof looped / sizeof looped[0]; i++) {
    row_case(looped[i].dt, looped[i].rows, looped[i].cols, looped[i].which, looped[i].what, &src);
    ck_assert_msg(!strstr(src.source, "__cluster_dims__("), "%s", looped[i].what);
    cg_launch_src_free(&src);
  }
  /* not on sm_80, nor with the knob off */
  G_keep_arch = "sm_80";
  row_case(KF_F32, 64, 131072, 0, "softmax_f32_131072_sm80", &src);
  G_keep_arch = "sm_90";
  ck_assert_ptr_null(strstr(src.source, "__cluster_dims__("));
  ck_assert_ptr_nonnull(strstr(src.source, "looped"));
  cg_launch_src_free(&src);
  kt_setenv("KFUSE_ROW_SPLIT", "0", 1);
  row_case(KF_F32, 64, 131072, 0, "softmax_f32_131072_nosplit", &src);
  kt_unsetenv("KFUSE_ROW_SPLIT");
  ck_assert_ptr_null(strstr(src.source, "__cluster_dims__("));
  ck_assert_ptr_nonnull(strstr(src.source, "looped"));
  cg_launch_src_free(&src);
  /* 131076 columns: not a whole number of 4-lane accesses per block */
  row_case(KF_F32, 16, 131076, 0, "softmax_f32_131076", &src);
  ck_assert_ptr_null(strstr(src.source, "__cluster_dims__("));
  cg_launch_src_free(&src);
}
END_TEST

/* A held row's block ends with the bulk L2 prefetch of the row
 * kf_l2pf_rows ahead (after its stores: no register held for it), the
 * distance the runtime sets (l2_prefetch); KFUSE_ROW_L2PF=D fixes it in
 * the code, =0 turns it off; not in rows held by a cluster, nor on sm_80. */
/* Every entry starts with kf_grid_dep_sync (so the runtime may launch it
 * with programmatic dependent launch), before anything touches memory;
 * KFUSE_PDL=0 leaves it out, and grid_dep tells the runtime. */
START_TEST(grid_dep_sync) {
  cg_launch_src src;
  row_case(KF_F32, 8192, 8192, 1, "layernorm_f32_dep", &src);
  const char *entry = strstr(src.source, "extern \"C\" __global__");
  ck_assert_ptr_nonnull(entry);
  const char *body = strstr(entry, ") {\n");
  ck_assert_ptr_nonnull(body);
  ck_assert_msg(!strncmp(body, ") {\n  kf_grid_dep_sync();\n", 26), "entry body: %.80s", body);
  ck_assert(src.grid_dep);
  cg_launch_src_free(&src);
  row_case_env("KFUSE_PDL", "0", KF_F32, 8192, 8192, 1, "layernorm_f32_no_dep", &src);
  ck_assert_ptr_null(strstr(src.source, "kf_grid_dep_sync();"));
  ck_assert(!src.grid_dep);
  cg_launch_src_free(&src);
}
END_TEST

START_TEST(row_l2_prefetch) {
  cg_launch_src src;
  kt_setenv("KFUSE_ROW_L2PF", "792", 1);
  row_case(KF_F32, 8192, 8192, 1, "layernorm_f32_l2pf", &src);
  const char *pf = strstr(src.source, "kf_prefetch_l2_bulk(p0 + (long long)(r + 792) * 8192, 32768u);");
  ck_assert_ptr_nonnull(pf);
  ck_assert_ptr_nonnull(strstr(src.source, "if (lane == 0 && r + 792 < 8192)"));
  const char *st = strstr(src.source, "kf_stv<float, W>(p");
  ck_assert(st != NULL && st < pf);
  /* w and b are not full rows */
  ck_assert_ptr_null(strstr(src.source, "kf_prefetch_l2_bulk(p1"));
  cg_launch_src_free(&src);
  row_case(KF_F32, 64, 131072, 0, "softmax_f32_split_l2pf", &src);
  ck_assert_ptr_null(strstr(src.source, "kf_prefetch_l2_bulk(p"));
  ck_assert(!src.l2_prefetch);
  cg_launch_src_free(&src);
  kt_setenv("KFUSE_ROW_L2PF", "0", 1);
  row_case(KF_F32, 8192, 8192, 1, "layernorm_f32_no_l2pf", &src);
  ck_assert_ptr_null(strstr(src.source, "kf_prefetch_l2_bulk(p"));
  ck_assert(!src.l2_prefetch);
  cg_launch_src_free(&src);
  kt_unsetenv("KFUSE_ROW_L2PF");
  row_case(KF_F32, 8192, 8192, 1, "layernorm_f32", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "if (lane == 0 && kf_l2pf_rows > 0 && r + kf_l2pf_rows < 8192)"));
  ck_assert_ptr_nonnull(strstr(src.source, "kf_prefetch_l2_bulk(p0 + (long long)(r + kf_l2pf_rows) * 8192, 32768u);"));
  ck_assert(src.l2_prefetch);
  cg_launch_src_free(&src);
  /* a value that is not a distance is the default, not "off" */
  static const char *const bad[] = {"abc", "-3", "70000", "12x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    row_case_env("KFUSE_ROW_L2PF", bad[i], KF_F32, 8192, 8192, 1, "layernorm_f32_bad_l2pf", &src);
    ck_assert_msg(src.l2_prefetch, "KFUSE_ROW_L2PF=%s", bad[i]);
    cg_launch_src_free(&src);
  }
  G_keep_arch = "sm_80";
  row_case(KF_F32, 8192, 8192, 1, "layernorm_f32_sm80", &src);
  G_keep_arch = "sm_90";
  ck_assert_ptr_null(strstr(src.source, "kf_prefetch_l2_bulk(p"));
  ck_assert(!src.l2_prefetch);
  cg_launch_src_free(&src);
}
END_TEST

/* A per-row output of a split row: stored once, by the rank 0 block. */
START_TEST(split_row_output) {
  cg_launch_src src;
  int64_t shape[2] = {64, 131072};
  row_output_case(2, shape, 64, 131072, "split_row_output", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "__cluster_dims__(8, 1, 1)"));
  ck_assert_ptr_nonnull(strstr(src.source, "if (lane == 0 && kf_cb == 0)"));
  cg_launch_src_free(&src);
}
END_TEST

/* How cg_row_online pairs max(x) and sum(exp(x - max)) over a [2-D] x of
 * dtype dt, the max kept with keepdim or not. */
/* The one-input kernel of every node from x + 1 to last (nodes: room for
 * them). */
static fuse_kernel kernel_upto(const kf_graph *g, kf_value *x, kf_value last, int32_t *nodes) {
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  fuse_kernel k;
  memset(&k, 0, sizeof k);
  k.n_nodes = tu_collect(g, *x + 1, last, nodes);
  k.nodes = nodes;
  k.inputs = x;
  k.n_inputs = 1;
  return k;
}

static row_online_kind softmax_pair(kf_dtype dt, const int64_t *shape, bool keepdim) {
  kf_graph *g = new_graph();
  int ax = -1;
  kf_value x = kf_input(g, "x", dt, 2, shape);
  kf_value m = kf_max(g, x, 1, &ax, keepdim);
  kf_value s = kf_sum(g, kf_exp(g, kf_sub(g, x, m)), 1, &ax, true);
  int32_t nodes[16];
  fuse_kernel k = kernel_upto(g, &x, s, nodes);
  row_online_kind kind = cg_row_online(g, &k, m, s);
  kf_graph_destroy(g);
  return kind;
}

/* cg_row_online pairs exactly the two patterns and nothing near them. */
START_TEST(online_pairs_match_exactly) {
  kf_graph *g = new_graph();
  int64_t shape[2] = {8, 4096};
  int ax = -1;
  kf_value x = kf_input(g, "x", KF_F32, 2, shape);
  kf_value m = kf_max(g, x, 1, &ax, true);
  kf_value s = kf_sum(g, kf_exp(g, kf_sub(g, x, m)), 1, &ax, true);
  kf_value mu = kf_mean(g, x, 1, &ax, true);
  kf_value d = kf_sub(g, x, mu);
  kf_value var = kf_mean(g, kf_mul(g, d, d), 1, &ax, true);
  kf_value ss = kf_sum(g, kf_mul(g, d, d), 1, &ax, true);
  /* near misses: exp(x - mean) after mean; exp(m - x); (x - m)^2 after max;
   * a max without keepdim; d * x */
  kf_value e2 = kf_sum(g, kf_exp(g, kf_sub(g, x, mu)), 1, &ax, true);
  kf_value e3 = kf_sum(g, kf_exp(g, kf_sub(g, m, x)), 1, &ax, true);
  kf_value dm = kf_sub(g, x, m);
  kf_value v3 = kf_mean(g, kf_mul(g, dm, dm), 1, &ax, true);
  kf_value dx = kf_mean(g, kf_mul(g, d, x), 1, &ax, true);
  kf_value y = kf_add(g, kf_add(g, kf_add(g, s, var), kf_add(g, ss, e2)), kf_add(g, e3, kf_add(g, v3, dx)));
  kf_set_output(g, y);
  int32_t nodes[64];
  fuse_kernel k = kernel_upto(g, &x, y, nodes);
  ck_assert_int_eq(cg_row_online(g, &k, m, s), ROW_ONLINE_SOFTMAX);
  ck_assert_int_eq(cg_row_online(g, &k, mu, var), ROW_ONLINE_WELFORD);
  ck_assert_int_eq(cg_row_online(g, &k, mu, ss), ROW_ONLINE_WELFORD);
  ck_assert_int_eq(cg_row_online(g, &k, mu, e2), ROW_ONLINE_NONE);
  ck_assert_int_eq(cg_row_online(g, &k, m, e3), ROW_ONLINE_NONE);
  ck_assert_int_eq(cg_row_online(g, &k, m, v3), ROW_ONLINE_NONE);
  ck_assert_int_eq(cg_row_online(g, &k, mu, dx), ROW_ONLINE_NONE);
  ck_assert_int_eq(cg_row_online(g, &k, m, var), ROW_ONLINE_NONE);
  kf_graph_destroy(g);
  /* f16 values are rounded per node: never paired */
  int64_t sq[2] = {64, 64};
  ck_assert_int_eq(softmax_pair(KF_F16, shape, true), ROW_ONLINE_NONE);
  ck_assert_int_eq(softmax_pair(KF_F32, sq, true), ROW_ONLINE_SOFTMAX);
  /* without keepdim the max broadcasts along the wrong axis (8 != 4096
   * would not even build; a square row does) */
  ck_assert_int_eq(softmax_pair(KF_F32, sq, false), ROW_ONLINE_NONE);
}
END_TEST

START_TEST(norm_rows) {
  cg_launch_src src;
  row_case(KF_BF16, 8192, 8192, 1, "layernorm_bf16_8192", NULL);
  row_case(KF_F32, 1024, 768, 1, "layernorm_f32_768", NULL);
  row_case(KF_BF16, 8192, 8192, 2, "add_rmsnorm_bf16_8192", &src);
  ck_assert_int_eq(src.n_params, 5);
  cg_launch_src_free(&src);
  row_case(KF_F16, 333, 4000, 2, "add_rmsnorm_f16_4000", NULL);
}
END_TEST

/* A per-row output (the row means) next to a full-row one. */
START_TEST(row_with_row_output) {
  cg_launch_src src;
  int64_t shape[3] = {4, 256, 2048};
  row_output_case(3, shape, 1024, 2048, "row_outputs", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "if (lane == 0)"));
  cg_launch_src_free(&src);
}
END_TEST

/* Reduces x (shape) over axes with a prologue x*x+1 and epilogue mean->cast. */
static void reduce_case(kf_dtype dt, int rank, const int64_t *shape, int naxes, const int *axes,
                        const char *what, cg_launch_src *keep) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", dt, rank, shape);
  kf_value sq = kf_add(g, kf_mul(g, x, x), kf_scalar(g, 1.0, dt));
  kf_value r = ir_dtype_is_float(dt) ? kf_mean(g, sq, naxes, axes, false)
                                     : kf_max(g, sq, naxes, axes, false);
  kf_value o = kf_cast(g, r, KF_F32);
  kf_set_output(g, o);
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  int32_t outs[1] = {o};
  one_kernel(&tp, g, FK_REDUCE, outs, 1);
  compile_one(g, &tp, what, keep);
  kf_graph_destroy(g);
}

START_TEST(reductions) {
  cg_launch_src src;
  int64_t s1[1] = {1 << 24};
  reduce_case(KF_F32, 1, s1, 0, NULL, "full_sum_f32", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "atomicAdd"));
  ck_assert_ptr_nonnull(strstr(src.source, "deterministic"));
  ck_assert_uint_gt(src.grid, 100);
  cg_launch_src_free(&src);
  int64_t s2[2] = {4096, 1000};
  int ax0 = 0, ax1_ = 1;
  /* 4 tiles of 32 x 8 columns (16-byte loads), the 4096 rows split over 64
   * blocks per tile (8 rows x 8 iterations each), partials combined in order */
  reduce_case(KF_BF16, 2, s2, 1, &ax0, "column_mean_bf16", &src);
  ck_assert_ptr_nonnull(strstr(src.source, "strided"));
  ck_assert_ptr_nonnull(strstr(src.source, "split over 64 blocks per tile"));
  ck_assert_ptr_nonnull(strstr(src.source, "kf_ldv<kf_bf16, W>"));
  ck_assert_uint_eq(src.grid, 256);
  ck_assert_int_eq(src.vec_bytes, 16);
  cg_launch_src_free(&src);
  /* enough tiles to fill the GPU: no split, no partials */
  int64_t s5[3] = {512, 64, 1024};
  reduce_case(KF_F32, 3, s5, 1, &ax1_, "middle_axis_f32_no_split", &src);
  ck_assert_ptr_null(strstr(src.source, "per tile (partials combined"));
  ck_assert_uint_eq(src.grid, 512 * 8);
  cg_launch_src_free(&src);
  /* odd inner extent: scalar lanes, a 7-wide tile of 36 slices */
  int64_t s6[2] = {100000, 7};
  reduce_case(KF_F32, 2, s6, 1, &ax0, "column_sum_odd_inner", NULL);
  int64_t s3[3] = {64, 128, 32};
  int ax1 = 1;
  reduce_case(KF_F16, 3, s3, 1, &ax1, "middle_axis_f16", NULL);
  reduce_case(KF_I32, 3, s3, 1, &ax1, "middle_axis_i32_max", NULL);
  int ax12[2] = {1, 2};
  reduce_case(KF_F64, 3, s3, 2, ax12, "trailing_f64", NULL);
  int64_t s4[2] = {3, 1LL << 31};
  int axl = 1;
  reduce_case(KF_F32, 2, s4, 1, &axl, "huge_rows_index64", &src);
  ck_assert(src.index64);
  cg_launch_src_free(&src);
}
END_TEST

/* Three independent kernels of different kinds in one launch. */
START_TEST(horizontal_pack) {
  kf_graph *g = new_graph();
  int64_t sa[2] = {256, 1024}, sb[1] = {100000}, sc[2] = {64, 4096};
  kf_value a = kf_input(g, "a", KF_F32, 2, sa);
  kf_value b = kf_input(g, "b", KF_BF16, 1, sb);
  kf_value c = kf_input(g, "c", KF_F32, 2, sc);
  kf_value ya = kf_softmax(g, a, -1);
  int32_t na[8], nb[8], nc[8];
  int n_a = tu_collect(g, a + 1, ya, na);
  kf_value yb = kf_sum(g, kf_abs(g, b), 0, NULL, false);
  int n_b = tu_collect(g, ya + 1, yb, nb);
  kf_value yc = kf_mul(g, kf_silu(g, c), c);
  int n_c = tu_collect(g, yb + 1, yc, nc);
  kf_set_output(g, ya);
  kf_set_output(g, yb);
  kf_set_output(g, yc);
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  fuse_kernel *ka = tu_kernel(&tp, g, FK_ROW, na, n_a, &ya, 1);
  ka->rows = 256;
  ka->cols = 1024;
  tu_kernel(&tp, g, FK_REDUCE, nb, n_b, &yb, 1);
  tu_kernel(&tp, g, FK_POINTWISE, nc, n_c, &yc, 1);
  tu_pack(&tp, 0, 3);
  cg_launch_src src;
  tu_emit(g, &tp, 0, &src);
  ck_assert_msg(tu_nvrtc(src.source, "horizontal") >= 0, "horizontal does not compile");
  ck_assert_int_eq(src.n_params, 6);
  ck_assert_ptr_nonnull(strstr(src.source, "else if (blockIdx.x <"));
  ck_assert_ptr_nonnull(strstr(src.source, "bar.sync 1"));
  cg_launch_src_free(&src);
  /* many parts: binary search over the starts */
  tu_plan tp2;
  memset(&tp2, 0, sizeof tp2);
  for (int i = 0; i < 12; i++) tu_kernel(&tp2, g, FK_POINTWISE, nc, n_c, &yc, 1);
  tu_pack(&tp2, 0, 12);
  tu_emit(g, &tp2, 0, &src);
  ck_assert_msg(tu_nvrtc(src.source, "horizontal12") >= 0, "horizontal12 does not compile");
  /* identical parts share one generic body; pointers packed per part */
  ck_assert(src.packed_params);
  ck_assert_ptr_nonnull(strstr(src.source, "kf_g0_start[13]"));
  ck_assert_int_eq(src.n_params, 24);
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(matmul_epilogue) {
  static const kf_dtype dts[] = {KF_BF16, KF_F32, KF_F64, KF_I32};
  for (int d = 0; d < 4; d++) {
    kf_graph *g = new_graph();
    int64_t sa[3] = {4, 100, 72}, sb[2] = {72, 130}, sc[1] = {130};
    kf_value a = kf_input(g, "a", dts[d], 3, sa);
    kf_value b = kf_input(g, "b", dts[d], 2, sb);
    kf_value bias = kf_input(g, "bias", dts[d], 1, sc);
    kf_value y = kf_relu(g, kf_add(g, kf_matmul(g, a, b), bias));
    kf_set_output(g, y);
    tu_plan tp;
    memset(&tp, 0, sizeof tp);
    int32_t outs[1] = {y};
    one_kernel(&tp, g, FK_MATMUL, outs, 1);
    cg_launch_src src;
    compile_one(g, &tp, kf_dtype_name(dts[d]), &src);
    if (dts[d] == KF_BF16) { /* the mma.sync template (test_gemm80.c): 128 x 128 tiles */
      ck_assert_uint_eq(src.grid, 4 * 1 * 2);
      ck_assert_ptr_nonnull(strstr(src.source, "kf_m80_mma<BF>"));
    } else { /* the simple kernel: 16 x 16 tiles */
      ck_assert_uint_eq(src.grid, 4 * 7 * 9);
      ck_assert_ptr_nonnull(strstr(src.source, "not tensor cores"));
    }
    cg_launch_src_free(&src);
    kf_graph_destroy(g);
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("codegen_kinds");
  TCase *tc = tcase_create("row");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, softmax_rows);
  tcase_add_test(tc, long_rows_loop);
  tcase_add_test(tc, split_rows);
  tcase_add_test(tc, split_row_output);
  tcase_add_test(tc, row_l2_prefetch);
  tcase_add_test(tc, grid_dep_sync);
  tcase_add_test(tc, online_pairs_match_exactly);
  tcase_add_test(tc, norm_rows);
  tcase_add_test(tc, row_with_row_output);
  suite_add_tcase(s, tc);
  TCase *tr = tcase_create("reduce_horizontal");
  tcase_set_timeout(tr, 120);
  tcase_add_test(tr, reductions);
  tcase_add_test(tr, horizontal_pack);
  tcase_add_test(tr, matmul_epilogue);
  suite_add_tcase(s, tr);
  return s;
}
