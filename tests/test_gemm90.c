/* test_gemm90.c - the sm_90 matmul template (codegen/gemm_sm90.c): which
 * products take it, what it asks of the runtime (tensor maps, shared
 * memory, threads, sm_90a), and that its sources compile with NVRTC for
 * sm_90a; the rest keep the simple kernel. */
#include "check_main.h"
#include "codegen/emit.h"
#include "codegen/target.h"
#include "codegen_util.h"
#include "fake_driver.h"
#include "knob_env.h"

static kf_graph *new_graph(void) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  return g;
}

/* y = gelu_tanh(a @ b + bias) as one matmul kernel, emitted for arch. */
static void emit_case(kf_dtype dt, int64_t m, int64_t n, int64_t k, int64_t batch, const char *arch,
                      cg_launch_src *src, kf_graph **gout) {
  kf_graph *g = new_graph();
  int64_t sa[3] = {batch, m, k}, sb[2] = {k, n}, sc[1] = {n};
  kf_value a = batch > 1 ? kf_input(g, "a", dt, 3, sa) : kf_input(g, "a", dt, 2, sa + 1);
  kf_value b = kf_input(g, "b", dt, 2, sb);
  kf_value bias = kf_input(g, "bias", dt, 1, sc);
  kf_value y = kf_gelu_tanh(g, kf_add(g, kf_matmul(g, a, b), bias));
  kf_set_output(g, y);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  int32_t nodes[16], outs[1] = {y};
  int nn = tu_collect(g, 0, y, nodes);
  tu_kernel(&tp, g, FK_MATMUL, nodes, nn, outs, 1);
  tu_emit_arch(g, &tp, 0, arch, src);
  *gout = g;
}

START_TEST(takes_16bit_products) {
  static const kf_dtype dts[] = {KF_BF16, KF_F16};
  static const int64_t shapes[][3] = {{300, 520, 136}, {1, 8, 8}, {129, 64, 1000}, {64, 136, 24}};
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) kt_setenv("KFUSE_GEMM90", "2", 1);
    for (int d = 0; d < 2; d++)
      for (int s = 0; s < 4; s++) {
        int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        cg_launch_src src;
        kf_graph *g;
        emit_case(dts[d], m, n, k, 1, "sm_90", &src, &g);
        int bn = n > 128 ? 256 : n > 64 ? 128 : 64;
        char want[96];
        snprintf(want, sizeof want, "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s", bn,
                 dts[d] == KF_BF16 ? "bf16" : "f16", dts[d] == KF_BF16 ? "bf16" : "f16");
        ck_assert_msg(strstr(src.source, want), "%s missing", want);
        ck_assert(src.arch_specific);
        ck_assert_int_eq(src.block, 384);
        ck_assert(src.persistent);
        ck_assert_int_eq(src.n_tmaps, 2);
        /* A [m, k]: boxes of 64 K x 128 rows; B [k, n]: 64 N x 64 K */
        ck_assert_uint_eq(src.tmaps[0].dims[0], (uint64_t)k);
        ck_assert_uint_eq(src.tmaps[0].dims[1], (uint64_t)m);
        ck_assert_uint_eq(src.tmaps[0].strides[0], (uint64_t)k * 2);
        ck_assert_uint_eq(src.tmaps[0].box[0], 64);
        ck_assert_uint_eq(src.tmaps[0].box[1], 128);
        ck_assert_uint_eq(src.tmaps[1].dims[0], (uint64_t)n);
        ck_assert_uint_eq(src.tmaps[1].dims[1], (uint64_t)k);
        ck_assert_uint_eq(src.tmaps[1].strides[0], (uint64_t)n * 2);
        /* KFUSE_GEMM90=2 (the second pass): clusters of 2 blocks along M (B
         * multicast) where there are 2 tile rows */
        int64_t tm = (m + 127) / 128, cl = tm > 1 && pass == 1 ? 2 : 1;
        ck_assert_uint_eq(src.grid, (uint32_t)((tm + cl - 1) / cl * cl * ((n + bn - 1) / bn)));
        ck_assert_int_eq(src.cluster, (int)cl);
        ck_assert((strstr(src.source, "__cluster_dims__(2, 1, 1)") != NULL) == (cl == 2));
        ck_assert(src.smem_bytes > 48 * 1024 && src.smem_bytes <= 232448);
        ck_assert_ptr_nonnull(strstr(src.source, "const __grid_constant__ kf_tmap kf_tm1"));
        char what[64];
        snprintf(what, sizeof what, "gemm90 %s %lldx%lldx%lld", kf_dtype_name(dts[d]), (long long)m,
                 (long long)n, (long long)k);
        ck_assert_msg(tu_nvrtc_arch(src.source, what, "sm_90a") >= 0, "%s does not compile", what);
        const char *dump = getenv("KFUSE_GEMM90_DUMP"); /* a file to look at with ptxas */
        if (dump && s == 1 && d == 0) {
          FILE *f = fopen(dump, "w");
          if (f) fputs(src.source, f), fclose(f);
        }
        cg_launch_src_free(&src);
        kf_graph_destroy(g);
      }
  }
  kt_unsetenv("KFUSE_GEMM90");
}
END_TEST

/* What the template cannot take goes elsewhere (test_gemm80.c says where): another arch,
 * K or N rows the copy engine cannot address, a batch, f32. */
START_TEST(others_keep_the_simple_kernel) {
  struct {
    kf_dtype dt;
    int64_t m, n, k, batch;
    const char *arch;
  } cases[] = {{KF_BF16, 300, 520, 136, 1, "sm_80"}, {KF_BF16, 300, 520, 100, 1, "sm_100"},
               {KF_BF16, 300, 520, 100, 1, "sm_90"}, {KF_BF16, 300, 33, 136, 1, "sm_90"},
               {KF_F16, 64, 64, 64, 4, "sm_90"},     {KF_F32, 300, 520, 136, 1, "sm_90"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cg_launch_src src;
    kf_graph *g;
    emit_case(cases[i].dt, cases[i].m, cases[i].n, cases[i].k, cases[i].batch, cases[i].arch, &src,
              &g);
    ck_assert_msg(!strstr(src.source, "wgmma"), "case %zu", i); /* test_gemm80.c: which other */
    ck_assert(!src.arch_specific);
    ck_assert_int_eq(src.n_tmaps, 0);
    cg_launch_src_free(&src);
    kf_graph_destroy(g);
  }
}
END_TEST

/* KFUSE_GEMM90=1 (the default): no clusters; 0: not this template. */
START_TEST(knob) {
  cg_launch_src src;
  kf_graph *g;
  emit_case(KF_BF16, 1000, 512, 256, 1, "sm_90", &src, &g);
  ck_assert(src.arch_specific);
  ck_assert_int_eq(src.cluster, 1);
  ck_assert_ptr_null(strstr(src.source, "__cluster_dims__("));
  ck_assert_msg(tu_nvrtc_arch(src.source, "gemm90 no cluster", "sm_90a") >= 0, "no compile");
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
  kt_setenv("KFUSE_GEMM90", "0", 1);
  emit_case(KF_BF16, 1000, 512, 256, 1, "sm_90", &src, &g);
  ck_assert_ptr_null(strstr(src.source, "wgmma"));
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
  kt_unsetenv("KFUSE_GEMM90");
}
END_TEST

/* s = a @ b + bias (bf16) and y = relu(s) as f32: two outputs of two
 * dtypes, each with its own staging rows. */
static void emit_two_outputs(cg_launch_src *src, kf_graph **gout) {
  kf_graph *g = new_graph();
  int64_t sa[2] = {1000, 256}, sb[2] = {256, 512}, sc[1] = {512};
  kf_value mm = kf_matmul(g, kf_input(g, "a", KF_BF16, 2, sa), kf_input(g, "b", KF_BF16, 2, sb));
  kf_value s = kf_add(g, mm, kf_input(g, "bias", KF_BF16, 1, sc));
  kf_value y = kf_cast(g, kf_relu(g, s), KF_F32);
  kf_set_output(g, s);
  kf_set_output(g, y);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  int32_t nodes[16], outs[2] = {s, y};
  int nn = tu_collect(g, 0, y, nodes);
  tu_kernel(&tp, g, FK_MATMUL, nodes, nn, outs, 2);
  tu_emit_arch(g, &tp, 0, "sm_90", src);
  *gout = g;
}

static void has(const cg_launch_src *src, const char *text) {
  ck_assert_msg(strstr(src->source, text) != NULL, "no \"%s\" in the source", text);
}

/* The stores: staged through shared memory by default (64-column chunks of
 * a bf16 output: 64 rows of 64 + 8 elements per consumer warpgroup, after
 * 4 stages of 48 KB and the barriers), each element from its register with
 * KFUSE_GEMM90_STAGE=0 (the ring and barriers only); two outputs of 2 and 4
 * bytes take 32-column chunks. The tile order, the tile width and the
 * k-blocks in flight follow their knobs. Every form compiles. */
START_TEST(stores_order_width_knobs) {
  cg_launch_src src;
  kf_graph *g;
  emit_case(KF_BF16, 4096, 512, 256, 1, "sm_90", &src, &g);
  has(&src, "stores staged in shared memory");
  has(&src, "bands of 16 tile rows");
  has(&src, "(lr * 72 + lc)");
  has(&src, "commit_group.sync.aligned;\\n\\twgmma.wait_group.sync.aligned 1;");
  ck_assert_uint_eq(src.smem_bytes, 4 * 49152 + 1024 + 128 + 2 * 64 * (64 * 2 + 16));
  cg_launch_src_free(&src);
  kf_graph_destroy(g);

  kt_setenv("KFUSE_GEMM90_STAGE", "0", 1);
  kt_setenv("KFUSE_GEMM90_BAND", "0", 1);
  emit_case(KF_BF16, 4096, 512, 256, 1, "sm_90", &src, &g);
  has(&src, "each element stored from registers");
  has(&src, "bands of 32 tile rows"); /* one band: all 32 rows of tiles */
  ck_assert_ptr_null(strstr(src.source, "(lr * 72 + lc)"));
  ck_assert_uint_eq(src.smem_bytes, 4 * 49152 + 2 * 4 * 8 + 1024);
  ck_assert_msg(tu_nvrtc_arch(src.source, "gemm90 direct", "sm_90a") >= 0, "no compile");
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
  kt_unsetenv("KFUSE_GEMM90_STAGE");

  kt_setenv("KFUSE_GEMM90_BAND", "3", 1);
  kt_setenv("KFUSE_GEMM90_BN", "128", 1);
  kt_setenv("KFUSE_GEMM90_INFLIGHT", "0", 1);
  emit_case(KF_BF16, 1000, 512, 256, 1, "sm_90", &src, &g);
  has(&src, "bands of 3 tile rows");
  has(&src, "wgmma.mma_async.sync.aligned.m64n128k16");
  has(&src, "6 stages");
  has(&src, "commit_group.sync.aligned;\\n\\twgmma.wait_group.sync.aligned 0;");
  ck_assert_uint_eq(src.grid, 8 * 4);
  ck_assert_msg(tu_nvrtc_arch(src.source, "gemm90 bn 128", "sm_90a") >= 0, "no compile");
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
  kt_unsetenv("KFUSE_GEMM90_BAND");
  kt_unsetenv("KFUSE_GEMM90_BN");
  kt_unsetenv("KFUSE_GEMM90_INFLIGHT");

  emit_two_outputs(&src, &g);
  has(&src, "stores staged in shared memory");
  has(&src, "(lr * 40 + lc)"); /* bf16: 32 + 8 */
  has(&src, "(lr * 36 + lc)"); /* f32: 32 + 4 */
  ck_assert_uint_eq(src.smem_bytes,
                    4 * 49152 + 1024 + 128 + 2 * (64 * (32 * 2 + 16) + 64 * (32 * 4 + 16)));
  ck_assert_msg(tu_nvrtc_arch(src.source, "gemm90 two outputs", "sm_90a") >= 0, "no compile");
  cg_launch_src_free(&src);
  kf_graph_destroy(g);
}
END_TEST

/* A grid capped below one cluster (cg_target.max_grid, as test_grid.c
 * lowers it) still launches one whole cluster: the body strides over the
 * tile groups, and a grid of 0 (or of half a cluster) would not run. */
START_TEST(capped_grid_keeps_a_cluster) {
  kt_setenv("KFUSE_GEMM90", "2", 1);
  kf_graph *g = new_graph();
  int64_t xs[2] = {1000, 256}, ws[2] = {256, 512};
  kf_value y = kf_matmul(g, kf_input(g, "x", KF_BF16, 2, xs), kf_input(g, "w", KF_BF16, 2, ws));
  kf_set_output(g, y);
  tu_plan tp;
  memset(&tp, 0, sizeof tp);
  int32_t nodes[8], outs[1] = {y};
  int nn = tu_collect(g, 0, y, nodes);
  tu_kernel(&tp, g, FK_MATMUL, nodes, nn, outs, 1);
  for (uint32_t cap = 1; cap <= 3; cap++) {
    cg_target t;
    ck_assert(cg_target_from_arch("sm_90", &t));
    t.max_grid = cap;
    cg_launch_src src;
    char err[256] = "";
    ck_assert_int_eq(cg_emit_launch(g, &tp.plan, 0, &t, &src, err, sizeof err), KF_OK);
    ck_assert_int_eq(src.cluster, 2);
    ck_assert_uint_eq(src.grid, 2);
    cg_launch_src_free(&src);
  }
  kf_graph_destroy(g);
  kt_unsetenv("KFUSE_GEMM90");
}
END_TEST

/* ---- the runtime's tensor maps, on the fake driver ---------------------- */

#define DEV ((CUdeviceptr)0x300000000ull)

static int encodes(void) {
  return rt_fake_count_prefix("TensorMapEncodeTiled");
}

/* relu(x @ w + bias), bf16 300x520x136, on template kernels: the maps are
 * encoded from the bound addresses (A: 136 x 300 elements in 64 x 128
 * boxes, B: 520 x 136 in 64 x 64, 128-byte swizzle), passed after the
 * pointers, encoded again only for an address that changed. */
START_TEST(runtime_encodes_tensor_maps) {
  kt_setenv("KFUSE_MATMUL", "template", 1);
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  rt_fake_add_device_range(DEV, 1 << 24);
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t xs[2] = {300, 136}, ws[2] = {136, 520}, bs[1] = {520};
  kf_value x = kf_input(g, "x", KF_BF16, 2, xs), w = kf_input(g, "w", KF_BF16, 2, ws);
  kf_value y = kf_relu(g, kf_add(g, kf_matmul(g, x, w), kf_input(g, "bias", KF_BF16, 1, bs)));
  kf_set_output(g, y);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(ctx, g, NULL, &plan), KF_OK);
  kf_tensor tin[3] = {{(void *)(uintptr_t)DEV, KF_BF16, 2, {300, 136}},
                      {(void *)(uintptr_t)(DEV + 0x100000), KF_BF16, 2, {136, 520}},
                      {(void *)(uintptr_t)(DEV + 0x200000), KF_BF16, 1, {520}}};
  kf_tensor tout[1] = {{(void *)(uintptr_t)(DEV + 0x300000), KF_BF16, 2, {300, 520}}};
  kf_status st = kf_plan_run(plan, tin, 3, tout, 1, NULL);
  ck_assert_msg(st == KF_OK, "%s", kf_plan_errmsg(plan));
  ck_assert_int_eq(encodes(), 2);
  int i = rt_fake_find(0, "TensorMapEncodeTiled", "addr=0x300000000 ");
  ck_assert_int_ge(i, 0);
  ck_assert_ptr_nonnull(strstr(rt_fake_line(i), "dims=136x300 stride=272 box=64x128 swizzle=3"));
  i = rt_fake_find(0, "TensorMapEncodeTiled", "addr=0x300100000 ");
  ck_assert_int_ge(i, 0);
  ck_assert_ptr_nonnull(strstr(rt_fake_line(i), "dims=520x136 stride=1040 box=64x64 swizzle=3"));
  /* the launch: 384 threads, the pointers, then the two maps (the fake
   * keeps each map's address in its first word) */
  i = rt_fake_find(0, "LaunchKernel", "block=384");
  ck_assert_int_ge(i, 0);
  ck_assert_msg(strstr(rt_fake_line(i), ",0x300000000,0x300100000"), "%s", rt_fake_line(i));
  /* the same addresses: nothing encoded; a new x: one map */
  ck_assert_int_eq(kf_plan_run(plan, tin, 3, tout, 1, NULL), KF_OK);
  ck_assert_int_eq(encodes(), 2);
  tin[0].data = (void *)(uintptr_t)(DEV + 0x400000);
  ck_assert_int_eq(kf_plan_run(plan, tin, 3, tout, 1, NULL), KF_OK);
  ck_assert_int_eq(encodes(), 3);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  ck_assert_msg(rt_fake_live_objects() == 0, "%d fake objects leaked", rt_fake_live_objects());
  rt_driver_override(NULL);
  rt_fake_reset();
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

/* Warnings of the runtime, counted, the last one kept. */
static int fallback_warnings;
static char last_warning[1024];

static void count_warnings(void *user, kf_log_level level, const char *component, const char *msg) {
  (void)user;
  if (level <= KF_LOG_WARN && strcmp(component, "runtime") == 0) {
    fallback_warnings++;
    snprintf(last_warning, sizeof last_warning, "%s", msg);
  }
}

/* The launches logged from line `from` on with 384 threads (the sm_90
 * kernel) and with another block size (its form without tensor maps). */
static void count_launches(int from, const char *what, int *sm90, int *other) {
  *sm90 = *other = 0;
  for (int i = from; (i = rt_fake_find(i, what, "")) >= 0; i++)
    (strstr(rt_fake_line(i), "block=384 ") ? sm90 : other)[0]++;
}

/* The plan of runtime_encodes_tensor_maps' graph on the fake driver. */
static kf_plan *fake_plan(kf_ctx **ctx, kf_graph **g) {
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  rt_fake_add_device_range(DEV, 1 << 24);
  ck_assert_int_eq(kf_ctx_create(ctx), KF_OK);
  kf_ctx_set_log(*ctx, count_warnings, NULL);
  fallback_warnings = 0;
  ck_assert_int_eq(kf_graph_create(*ctx, g), KF_OK);
  int64_t xs[2] = {300, 136}, ws[2] = {136, 520}, bs[1] = {520};
  kf_value x = kf_input(*g, "x", KF_BF16, 2, xs), w = kf_input(*g, "w", KF_BF16, 2, ws);
  kf_value y = kf_relu(*g, kf_add(*g, kf_matmul(*g, x, w), kf_input(*g, "bias", KF_BF16, 1, bs)));
  kf_set_output(*g, y);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(*ctx, *g, NULL, &plan), KF_OK);
  return plan;
}

static void fake_done(kf_plan *plan, kf_graph *g, kf_ctx *ctx) {
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  ck_assert_msg(rt_fake_live_objects() == 0, "%d fake objects leaked", rt_fake_live_objects());
  rt_driver_override(NULL);
  rt_fake_reset();
}

/* An operand off 16-byte alignment (a view into a bigger buffer) cannot
 * be read by the copy engine: the run takes the launch's form without
 * tensor maps (generated with the sm_90 kernels off, compiled and loaded
 * at the first such run, one warning), encodes no map for it, and an
 * aligned run goes back to the sm_90 kernel with the module already
 * loaded. Inputs 2 and 8 bytes off, in turn, and both. */
START_TEST(misaligned_operands_fall_back) {
  kt_setenv("KFUSE_MATMUL", "template", 1);
  kf_ctx *ctx;
  kf_graph *g;
  kf_plan *plan = fake_plan(&ctx, &g);
  kf_tensor tin[3] = {{(void *)(uintptr_t)DEV, KF_BF16, 2, {300, 136}},
                      {(void *)(uintptr_t)(DEV + 0x100000), KF_BF16, 2, {136, 520}},
                      {(void *)(uintptr_t)(DEV + 0x200000), KF_BF16, 1, {520}}};
  kf_tensor tout[1] = {{(void *)(uintptr_t)(DEV + 0x300000), KF_BF16, 2, {300, 520}}};
  ck_assert_msg(kf_plan_run(plan, tin, 3, tout, 1, NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  int sm90, other, modules = rt_fake_count_prefix("ModuleLoadData");
  count_launches(0, "LaunchKernel", &sm90, &other);
  ck_assert_int_eq(sm90, 1);
  ck_assert_int_eq(other, 0);
  ck_assert_int_eq(fallback_warnings, 0);
  /* x 2 bytes off: the fallback, its module loaded once, no map encoded */
  int from = rt_fake_count(), maps = encodes();
  tin[0].data = (void *)(uintptr_t)(DEV + 0x500002);
  ck_assert_msg(kf_plan_run(plan, tin, 3, tout, 1, NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  count_launches(from, "LaunchKernel", &sm90, &other);
  ck_assert_int_eq(sm90, 0);
  ck_assert_int_eq(other, 1);
  ck_assert_int_eq(encodes(), maps);
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), modules + 1);
  int i = rt_fake_find(from, "LaunchKernel", "");
  ck_assert_msg(strstr(rt_fake_line(i), "0x300500002"), "%s", rt_fake_line(i));
  ck_assert_int_eq(fallback_warnings, 1);
  ck_assert_msg(strstr(last_warning, "not 16-byte aligned") && strstr(last_warning, "0x300500002"),
                "%s", last_warning);
  /* w 8 bytes off too, then w alone: the same module, no new warning */
  from = rt_fake_count();
  tin[1].data = (void *)(uintptr_t)(DEV + 0x100008);
  ck_assert_int_eq(kf_plan_run(plan, tin, 3, tout, 1, NULL), KF_OK);
  tin[0].data = (void *)(uintptr_t)DEV;
  ck_assert_int_eq(kf_plan_run(plan, tin, 3, tout, 1, NULL), KF_OK);
  count_launches(from, "LaunchKernel", &sm90, &other);
  ck_assert_int_eq(sm90, 0);
  ck_assert_int_eq(other, 2);
  ck_assert_int_eq(fallback_warnings, 1);
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), modules + 1);
  /* aligned again: the sm_90 kernel, its maps encoded for the new address */
  from = rt_fake_count();
  tin[1].data = (void *)(uintptr_t)(DEV + 0x100000);
  tin[0].data = (void *)(uintptr_t)(DEV + 0x400000);
  ck_assert_int_eq(kf_plan_run(plan, tin, 3, tout, 1, NULL), KF_OK);
  count_launches(from, "LaunchKernel", &sm90, &other);
  ck_assert_int_eq(sm90, 1);
  ck_assert_int_eq(other, 0);
  ck_assert_int_ge(rt_fake_find(from, "TensorMapEncodeTiled", "addr=0x300400000 "), 0);
  fake_done(plan, g, ctx);
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

/* Graph mode: a binding that moves a launch between its sm_90 kernel and
 * its form without tensor maps rebuilds the graph (a node never replays
 * the sm_90 kernel with an operand it cannot read); same-form address
 * changes still update the node in place. During a capture the fallback
 * is not compiled or loaded: a clear error until a run outside the
 * capture has loaded it. */
START_TEST(graph_mode_swaps_the_node) {
  kt_setenv("KFUSE_MATMUL", "template", 1);
  kf_ctx *ctx;
  kf_graph *g;
  kf_plan *plan = fake_plan(&ctx, &g);
  ck_assert_int_eq(kf_plan_set_mode(plan, KF_MODE_GRAPH), KF_OK);
  kf_tensor tin[3] = {{(void *)(uintptr_t)DEV, KF_BF16, 2, {300, 136}},
                      {(void *)(uintptr_t)(DEV + 0x100000), KF_BF16, 2, {136, 520}},
                      {(void *)(uintptr_t)(DEV + 0x200000), KF_BF16, 1, {520}}};
  kf_tensor tout[1] = {{(void *)(uintptr_t)(DEV + 0x300000), KF_BF16, 2, {300, 520}}};
  ck_assert_msg(kf_plan_run(plan, tin, 3, tout, 1, NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  int sm90, other;
  count_launches(0, "GraphAddKernelNode", &sm90, &other);
  ck_assert_int_eq(sm90, 1);
  ck_assert_int_eq(other, 0);
  /* misaligned inside the caller's capture, fallback not loaded: refused */
  rt_fake_set_capturing(true);
  tin[0].data = (void *)(uintptr_t)(DEV + 0x500002);
  ck_assert_int_eq(kf_plan_run(plan, tin, 3, tout, 1, NULL), KF_ERR_INVALID_ARG);
  ck_assert_msg(strstr(kf_plan_errmsg(plan), "before capturing"), "%s", kf_plan_errmsg(plan));
  rt_fake_set_capturing(false);
  /* outside: the graph is rebuilt with the fallback's node */
  int from = rt_fake_count(), inst = rt_fake_count_prefix("GraphInstantiate");
  ck_assert_msg(kf_plan_run(plan, tin, 3, tout, 1, NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  count_launches(from, "GraphAddKernelNode", &sm90, &other);
  ck_assert_int_eq(sm90, 0);
  ck_assert_int_eq(other, 1);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), inst + 1);
  /* another misaligned x: updated in place */
  from = rt_fake_count();
  tin[0].data = (void *)(uintptr_t)(DEV + 0x600008);
  ck_assert_int_eq(kf_plan_run(plan, tin, 3, tout, 1, NULL), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), inst + 1);
  int i = rt_fake_find(from, "GraphExecKernelNodeSetParams", "0x300600008");
  ck_assert_int_ge(i, 0);
  /* aligned: rebuilt with the sm_90 kernel */
  from = rt_fake_count();
  tin[0].data = (void *)(uintptr_t)DEV;
  ck_assert_int_eq(kf_plan_run(plan, tin, 3, tout, 1, NULL), KF_OK);
  count_launches(from, "GraphAddKernelNode", &sm90, &other);
  ck_assert_int_eq(sm90, 1);
  ck_assert_int_eq(other, 0);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), inst + 2);
  ck_assert_int_eq(fallback_warnings, 1);
  fake_done(plan, g, ctx);
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gemm90");
  TCase *tc = tcase_create("gemm90");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, takes_16bit_products);
  tcase_add_test(tc, others_keep_the_simple_kernel);
  tcase_add_test(tc, knob);
  tcase_add_test(tc, stores_order_width_knobs);
  tcase_add_test(tc, capped_grid_keeps_a_cluster);
  tcase_add_test(tc, runtime_encodes_tensor_maps);
  tcase_add_test(tc, misaligned_operands_fall_back);
  tcase_add_test(tc, graph_mode_swaps_the_node);
  suite_add_tcase(s, tc);
  return s;
}
