/* test_matmul_lib.c - matrix products as library calls in plans: which
 * fused epilogues map onto cuBLASLt's (fuse_gemm_match), the split into a
 * library call and the next kernel, the mapping to rt_gemm, and the whole
 * launch path (plain, streams, graph mode) on the fake driver and a fake
 * cuBLASLt, with the template fallback when the library is absent or
 * refuses a product. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "codegen/program.h"
#include "fake_blaslt.h"
#include "fake_driver.h"
#include "fuser/fuse.h"
#include "fuser/render.h"
#include "pipeline/pipeline.h"
#include "runtime/lib_launch.h"
#include "runtime/lib_time.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

static kf_ctx *ctx;
static kf_graph *g;

static void open_graph(void) {
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
}

static void close_graph(void) {
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  g = NULL, ctx = NULL;
}

static kf_value in2(const char *name, kf_dtype t, int64_t r, int64_t c) {
  int64_t s[2] = {r, c};
  return kf_input(g, name, t, 2, s);
}

static kf_value in1(const char *name, kf_dtype t, int64_t n) {
  int64_t s[1] = {n};
  return kf_input(g, name, t, 1, s);
}

/* The graph's plan with matmul kernels as library calls (or not). */
static fuse_plan *plan_of(bool library) {
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  fuse_options fo;
  fuse_options_default(&fo);
  fo.matmul_library = library;
  fo.library_ws_bytes = 1 << 20;
  fuse_plan *fp = NULL;
  char err[256];
  kf_status st = fuse_plan_build(g, &fo, &fp, err, sizeof err);
  ck_assert_msg(st == KF_OK, "%s", err);
  return fp;
}

/* The one library kernel of fp. */
static const fuse_kernel *library_kernel(const fuse_plan *fp) {
  ck_assert_int_eq(fp->n_library, 1);
  for (int i = 0; i < fp->n_kernels; i++)
    if (fp->kernels[i].library) return &fp->kernels[i];
  return NULL;
}

/* Each epilogue cuBLASLt computes lands in the one library kernel (f32
 * products: a 16-bit one rounds before its epilogue, the_rest_is_...). */
START_TEST(each_epilogue_maps) {
  for (int c = 0; c < 9; c++) {
    if (c == 7) continue; /* a cast of a 16-bit product: not mapped any more */
    open_graph();
    kf_dtype t = KF_F32;
    kf_value x = in2("x", t, 33, 64), w = in2("w", t, 64, 40), bias = in1("bias", t, 40);
    kf_value r = in2("r", t, 33, 40);
    kf_value mm = kf_matmul(g, x, w), y = mm;
    switch (c) {
      case 1:
        y = kf_add(g, mm, bias);
        break;
      case 2:
        y = kf_relu(g, kf_add(g, bias, mm));
        break;
      case 3:
        y = kf_gelu_tanh(g, kf_add(g, mm, bias));
        break;
      case 4:
        y = kf_mul(g, mm, kf_scalar(g, 0.5, t));
        break;
      case 5:
        y = kf_add(g, mm, r);
        break;
      case 6:
        y = kf_add(g, kf_mul(g, r, kf_scalar(g, 0.25, t)), mm);
        break;
      case 7:
        y = kf_cast(g, kf_gelu_tanh(g, mm), KF_F32);
        break;
      case 8:
        y = kf_relu(g, kf_add(g, kf_add(g, kf_mul(g, mm, kf_scalar(g, 2, t)), bias), r));
        break;
    }
    kf_set_output(g, y);
    fuse_plan *fp = plan_of(true);
    ck_assert_msg(fp->n_kernels == 1, "case %d: %d kernels", c, fp->n_kernels);
    const fuse_gemm *m = &library_kernel(fp)->gemm;
    ck_assert_int_eq(m->a, x);
    ck_assert_int_eq(m->b, w);
    ck_assert_int_eq(m->out, y);
    ck_assert_int_eq(m->m, 33);
    ck_assert_int_eq(m->n, 40);
    ck_assert_int_eq(m->k, 64);
    ck_assert_int_eq(m->batch, 1);
    ck_assert_int_eq(m->bias, c == 1 || c == 2 || c == 3 || c == 8 ? bias : -1);
    ck_assert_int_eq(m->c, c == 5 || c == 6 || c == 8 ? r : -1);
    ck_assert(m->beta == (c == 6 ? 0.25f : c == 5 || c == 8 ? 1.0f : 0.0f));
    ck_assert(m->alpha == (c == 4 ? 0.5f : c == 8 ? 2.0f : 1.0f));
    ck_assert_int_eq(m->act, c == 2 || c == 8   ? FUSE_GEMM_ACT_RELU
                             : c == 3 || c == 7 ? FUSE_GEMM_ACT_GELU_TANH
                                                : FUSE_GEMM_ACT_NONE);
    ck_assert_int_eq(m->d_type, c == 7 ? KF_F32 : t);
    ck_assert_int_eq(m->ab_type, t);
    fuse_plan_free(fp);
    close_graph();
  }
}
END_TEST

/* A transposed operand is read as a layout; a batch of products shares a
 * weight (stride 0); a weight with a batch of its own has its stride. */
START_TEST(layouts_and_batches_map) {
  open_graph();
  int64_t s3[3] = {8, 512, 768};
  kf_value x = kf_input(g, "x", KF_BF16, 3, s3);
  kf_value w = in2("w", KF_BF16, 1024, 768); /* PyTorch's [N, K] */
  int perm[2] = {1, 0};
  kf_value y = kf_matmul(g, x, kf_transpose(g, w, perm));
  kf_set_output(g, y);
  fuse_plan *fp = plan_of(true);
  ck_assert_int_eq(fp->n_kernels, 1);
  const fuse_gemm *m = &library_kernel(fp)->gemm;
  ck_assert(m->b_trans && !m->a_trans);
  ck_assert_int_eq(m->b, w);
  ck_assert_int_eq(m->batch, 8);
  ck_assert_int_eq(m->a_stride, 512 * 768);
  ck_assert_int_eq(m->b_stride, 0);
  ck_assert_int_eq(m->d_stride, 512 * 1024);
  ck_assert_int_eq(m->n, 1024);
  fuse_plan_free(fp);
  /* Without the library the transpose stays a kernel of its own. */
  fp = plan_of(false);
  ck_assert_int_eq(fp->n_library, 0);
  ck_assert_int_eq(fp->n_kernels, 2);
  fuse_plan_free(fp);
  close_graph();
  /* Batch axes broadcast in part ([4,1] against [1,3]) do not map. */
  open_graph();
  int64_t sa[4] = {4, 1, 8, 16}, sb[4] = {1, 3, 16, 8};
  kf_value a = kf_input(g, "a", KF_F32, 4, sa), b = kf_input(g, "b", KF_F32, 4, sb);
  kf_set_output(g, kf_matmul(g, a, b));
  fp = plan_of(true);
  ck_assert_int_eq(fp->n_library, 0);
  ck_assert_int_eq(fp->n_kernels, 1);
  fuse_plan_free(fp);
  close_graph();
}
END_TEST

/* What cuBLASLt cannot do runs in the next kernel: the library call takes
 * the product (and the prefix it can), a pointwise kernel the rest. */
START_TEST(the_rest_is_the_next_kernel) {
  for (int c = 0; c < 5; c++) {
    open_graph();
    kf_dtype t = KF_BF16;
    kf_value x = in2("x", t, 64, 32), w = in2("w", t, 32, 48), bias = in1("bias", t, 48);
    kf_value mm = kf_matmul(g, x, w), y, lib_out = mm;
    if (c == 0) y = kf_silu(g, mm);
    /* the erf form: its bias goes with it into the next kernel, which
     * reads the product anyway */
    if (c == 1) y = kf_gelu(g, kf_add(g, mm, bias));
    /* a 16-bit product rounds before any epilogue step: alpha too runs in
     * the next kernel */
    if (c == 2) {
      kf_value half = kf_scalar(g, 0.5, t), sc = kf_mul(g, mm, half), sb = kf_add(g, sc, bias);
      y = kf_gelu_tanh(g, sb);
      int32_t nodes[5] = {mm, half, sc, sb, y};
      uint8_t is_out[5] = {0, 0, 0, 0, 1};
      fuse_gemm gm;
      char why[160] = "";
      ck_assert(!fuse_gemm_match(g, nodes, is_out, 5, &gm, why, sizeof why));
      ck_assert_ptr_nonnull(strstr(why, "16-bit product"));
      is_out[4] = 0, is_out[2] = 1; /* nor does the scaled product alone */
      ck_assert(!fuse_gemm_match(g, nodes, is_out, 3, &gm, why, sizeof why));
    }
    if (c == 3) { /* two outputs: the product and its activation */
      y = kf_relu(g, mm);
      kf_set_output(g, mm);
    }
    if (c == 4) /* bias + tanh-GELU of a bf16 product: rounded first */
      y = kf_gelu_tanh(g, kf_add(g, mm, bias));
    kf_set_output(g, y);
    fuse_plan *fp = plan_of(true);
    ck_assert_msg(fp->n_kernels == 2, "case %d: %d kernels", c, fp->n_kernels);
    const fuse_kernel *k = library_kernel(fp);
    ck_assert_int_eq(k->gemm.out, lib_out);
    ck_assert_int_eq(k->n_outputs, 1);
    const fuse_kernel *next = &fp->kernels[k->id == 0 ? 1 : 0];
    ck_assert_int_eq(next->kind, FK_POINTWISE);
    ck_assert_int_eq(next->inputs[0] == lib_out || next->inputs[1] == lib_out, 1);
    ck_assert_int_eq(fp->n_launches, 2);
    /* the library's workspace after the values' */
    ck_assert_int_ge(fp->library_ws_offset, 0);
    ck_assert_int_eq(fp->workspace_bytes, fp->library_ws_offset + (1 << 20));
    bool logged = false;
    for (int i = 0; i < fp->n_decisions; i++)
      logged = logged || strcmp(fp->decisions[i].rule, "library-epilogue") == 0;
    ck_assert_msg(logged || c == 3, "case %d: no library-epilogue decision", c);
    fuse_plan_free(fp);
    close_graph();
  }
}
END_TEST

/* The SwiGLU example: three library calls, the gate's silu and the
 * product of the two projections in one pointwise kernel. */
START_TEST(mlp_silu_plans_onto_the_library) {
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  ck_assert_int_eq(kf_graph_load_yaml(ctx, KFUSE_SOURCE_DIR "/examples/graphs/mlp_silu.yaml", &g),
                   KF_OK);
  fuse_plan *fp = plan_of(true);
  ck_assert_int_eq(fp->n_library, 3);
  ck_assert_int_eq(fp->n_kernels, 4);
  int pw = 0;
  for (int i = 0; i < fp->n_kernels; i++) {
    pw += fp->kernels[i].kind == FK_POINTWISE;
    ck_assert(fp->kernels[i].kind != FK_MATMUL || fp->kernels[i].library);
  }
  ck_assert_int_eq(pw, 1);
  for (int i = 0; i < fp->n_launches; i++)
    ck_assert_int_eq(fp->launches[i].n_kernels, 1); /* library calls are never packed */
  char *text = fuse_plan_text(fp);
  ck_assert_ptr_nonnull(strstr(text, "a library call"));
  free(text);
  fuse_plan_free(fp);
  close_graph();
}
END_TEST

/* The fused description to the library's: every field carried over; TF32
 * only for f32 operands and only when asked. */
START_TEST(fuse_gemm_to_rt_gemm) {
  fuse_gemm f = {.mm = 3,
                 .a = 0,
                 .b = 1,
                 .a_trans = true,
                 .b_trans = false,
                 .bias = 2,
                 .c = 4,
                 .alpha = 2,
                 .beta = 0.5f,
                 .act = FUSE_GEMM_ACT_GELU_TANH,
                 .out = 5,
                 .ab_type = KF_F32,
                 .d_type = KF_F32,
                 .batch = 3,
                 .m = 7,
                 .n = 9,
                 .k = 11,
                 .a_stride = 77,
                 .b_stride = 0,
                 .d_stride = 63};
  rt_gemm r;
  rt_gemm_from_fuse(&f, true, &r);
  ck_assert(r.a_trans && !r.b_trans && r.bias && r.allow_tf32);
  ck_assert_int_eq(r.act, RT_GEMM_ACT_GELU_TANH);
  ck_assert(r.alpha == 2 && r.beta == 0.5f);
  ck_assert_int_eq(r.batch, 3);
  ck_assert_int_eq(r.a_stride, 77);
  ck_assert_int_eq(r.d_stride, 63);
  rt_gemm_from_fuse(&f, false, &r);
  ck_assert(!r.allow_tf32);
  f.ab_type = KF_BF16, f.c = -1, f.bias = -1, f.act = FUSE_GEMM_ACT_RELU;
  rt_gemm_from_fuse(&f, true, &r);
  ck_assert(!r.allow_tf32 && !r.bias && r.beta == 0);
  ck_assert_int_eq(r.act, RT_GEMM_ACT_RELU);
  rt_lt_map map;
  char why[128];
  ck_assert_int_eq(rt_gemm_lt_map(&r, &map, why, sizeof why), KF_OK);
  ck_assert_int_eq(map.epilogue, CUBLASLT_EPILOGUE_RELU);
}
END_TEST

/* ---- the launch path on the fake driver and the fake library ------------ */

#define DEV ((CUdeviceptr)0x300000000ull)
#define M 64
#define K 32
#define NN 48

static kf_plan *plan;
static kf_tensor tin[3], tout[1];

/* silu(x @ w + bias), f32: a library call (the product) and a pointwise
 * kernel (bias and silu: that kernel reads the product anyway). */
static void open_plan(kf_run_mode mode) {
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  rt_fake_add_device_range(DEV, 1 << 24);
  open_graph();
  kf_value x = in2("x", KF_F32, M, K), w = in2("w", KF_F32, K, NN), b = in1("bias", KF_F32, NN);
  kf_value y = kf_silu(g, kf_add(g, kf_matmul(g, x, w), b));
  kf_set_name(g, y, "y");
  kf_set_output(g, y);
  kf_options o;
  kf_options_init(&o);
  o.mode = mode;
  ck_assert_int_eq(kf_plan_create(ctx, g, &o, &plan), KF_OK);
  tin[0] = (kf_tensor){(void *)(uintptr_t)DEV, KF_F32, 2, {M, K}};
  tin[1] = (kf_tensor){(void *)(uintptr_t)(DEV + 0x10000), KF_F32, 2, {K, NN}};
  tin[2] = (kf_tensor){(void *)(uintptr_t)(DEV + 0x20000), KF_F32, 1, {NN}};
  tout[0] = (kf_tensor){(void *)(uintptr_t)(DEV + 0x30000), KF_F32, 2, {M, NN}};
}

static void close_plan(void) {
  kf_plan_destroy(plan);
  plan = NULL;
  close_graph();
  ck_assert_int_eq(flt.handles, 0);
  ck_assert_int_eq(flt.descs, 0);
  ck_assert_int_eq(flt.layouts, 0);
  ck_assert_int_eq(flt.prefs, 0);
  ck_assert_msg(rt_fake_live_objects() == 0, "%d fake objects leaked", rt_fake_live_objects());
  ck_assert_uint_eq(rt_fake_bytes_allocated(), 0);
  rt_driver_override(NULL);
  rt_blaslt_override(NULL);
  rt_fake_reset();
}

static kf_status run(void *stream) {
  return kf_plan_run(plan, tin, 3, tout, 1, stream);
}

/* The call's pointers: the caller's operands and bias, the product into
 * the workspace, the library's workspace after the values'. */
static void check_call(void) {
  const struct rt_plan *rp = plan->rt;
  ck_assert_ptr_eq(flt.a, tin[0].data);
  ck_assert_ptr_eq(flt.b, tin[1].data);
  ck_assert_ptr_null(flt.bias);
  ck_assert_uint_eq((uintptr_t)flt.ws, rp->ws + (CUdeviceptr)plan->fuse->library_ws_offset);
  ck_assert_uint_eq(flt.ws_size, RT_LIB_WS_BYTES);
  ck_assert_uint_ge((uintptr_t)flt.d, rp->ws);
  ck_assert_uint_lt((uintptr_t)flt.d, rp->ws + (CUdeviceptr)plan->fuse->library_ws_offset);
  ck_assert_uint_eq(flt.epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  ck_assert_int_eq(flt.compute, CUBLAS_COMPUTE_32F); /* f32 at full precision */
}

START_TEST(plain_and_streams_modes_call_the_library) {
  for (int mode = 0; mode < 2; mode++) {
    flt_install();
    open_plan(mode ? KF_MODE_STREAMS : KF_MODE_PLAIN);
    ck_assert_int_eq(plan->fuse->n_library, 1);
    ck_assert_int_eq(kf_plan_load(plan), KF_OK);
    int timed = flt.matmuls; /* the choice's timing at load (none when cached) */
    int base = rt_fake_count();
    ck_assert_int_eq(run((void *)0x77), KF_OK);
    ck_assert_int_eq(flt.matmuls, timed + 1);
    check_call();
    if (mode == 0) ck_assert_ptr_eq(flt.stream, (void *)0x77);
    /* then the silu kernel, after the call in the stream's order */
    ck_assert_int_ge(rt_fake_find(base, "LaunchKernel", "pointwise"), 0);
    ck_assert_int_eq(rt_fake_find(base, "LaunchKernel", "matmul"), -1);
    ck_assert_int_eq(run((void *)0x77), KF_OK);
    ck_assert_int_eq(flt.matmuls, timed + 2);
    close_plan();
  }
}
END_TEST

/* Graph mode: the call is captured on a side stream into a child graph
 * node; a replay with the same tensors captures nothing; new addresses
 * capture it again and replace the child in the instantiated graph, with
 * no new instantiation. */
START_TEST(graph_mode_captures_a_child_graph) {
  flt_install();
  open_plan(KF_MODE_GRAPH);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  int timed = flt.matmuls, base = rt_fake_count();
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_int_eq(flt.matmuls, timed + 1); /* during the capture */
  check_call();
  ck_assert_ptr_ne(flt.stream, NULL); /* the side stream, not the caller's */
  int begin = rt_fake_find(base, "StreamBeginCapture", "");
  ck_assert_int_ge(begin, 0);
  ck_assert_int_gt(rt_fake_find(begin, "StreamEndCapture", ""), begin);
  ck_assert_int_ge(rt_fake_find(base, "GraphAddChildGraphNode", ""), 0);
  ck_assert_int_ge(rt_fake_find(base, "GraphAddKernelNode", "deps=n"), 0); /* silu after it */
  ck_assert_int_eq(rt_fake_count_prefix("GraphLaunch"), 1);
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_int_eq(flt.matmuls, timed + 1);
  ck_assert_int_eq(rt_fake_count_prefix("StreamBeginCapture"), 1);
  ck_assert_int_eq(rt_fake_count_prefix("GraphLaunch"), 2);
  tin[0].data = (void *)(uintptr_t)(DEV + 0x40000);
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_int_eq(flt.matmuls, timed + 2);
  ck_assert_ptr_eq(flt.a, tin[0].data);
  ck_assert_int_eq(rt_fake_count_prefix("StreamBeginCapture"), 2);
  ck_assert_int_eq(rt_fake_count_prefix("GraphExecChildGraphNodeSetParams"), 1);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 1);
  ck_assert_int_eq(rt_fake_count_prefix("GraphLaunch"), 3);
  close_plan();
}
END_TEST

/* A child the driver will not take in place (cuBLASLt captured another
 * topology) rebuilds the whole graph, and the run still succeeds. */
START_TEST(graph_mode_rebuilds_when_the_child_is_refused) {
  flt_install();
  open_plan(KF_MODE_GRAPH);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  int timed = flt.matmuls;
  ck_assert_int_eq(run(NULL), KF_OK);
  rt_fake_fail("GraphExecChildGraphNodeSetParams", 1, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, false);
  tin[0].data = (void *)(uintptr_t)(DEV + 0x40000);
  ck_assert_int_eq(run(NULL), KF_OK);
  /* captured for the refused update, then again for the new graph */
  ck_assert_int_eq(flt.matmuls, timed + 3);
  ck_assert_ptr_eq(flt.a, tin[0].data);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 2);
  ck_assert_int_eq(rt_fake_count_prefix("GraphLaunch"), 2);
  close_plan();
}
END_TEST

/* No library, or one that takes no algorithm for the product: the load
 * plans the matmul as a template kernel, with one log line, and runs. */
START_TEST(fallback_to_the_template) {
  for (int c = 0; c < 2; c++) {
    flt_install();
    flt.refuse_create = c == 0;
    flt.refuse_heuristic = c == 1;
    open_plan(KF_MODE_PLAIN);
    ck_assert_int_eq(plan->fuse->n_library, 1);
    ck_assert_int_eq(kf_plan_compile(plan), KF_OK);
    kf_cache_stats a, b;
    ck_assert_int_eq(kf_ctx_cache_stats(ctx, &a), KF_OK);
    ck_assert_int_eq(kf_plan_load(plan), KF_OK);
    ck_assert_int_eq(plan->fuse->n_library, 0);
    /* the template plan compiled ahead is the one taken: nothing compiled
     * or looked up again */
    ck_assert_int_eq(kf_ctx_cache_stats(ctx, &b), KF_OK);
    ck_assert_uint_eq(b.misses, a.misses);
    ck_assert_uint_eq(b.mem_hits, a.mem_hits);
    ck_assert_int_eq(run(NULL), KF_OK);
    ck_assert_int_eq(flt.matmuls, 0);
    ck_assert_int_ge(rt_fake_find(0, "LaunchKernel", "matmul"), 0);
    close_plan();
  }
}
END_TEST

/* The template plan that replaces the library's (here its fallback; the
 * auto choice's template plan is built the same way, by variant) pairs
 * SwiGLU's two products of one A into one kernel (docs/matmul.md). */
static void describes(kf_format fmt, const char *want);

START_TEST(the_template_plan_pairs_swiglu) {
  flt_install();
  flt.refuse_create = true;
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  rt_fake_add_device_range(DEV, 1 << 24);
  open_graph();
  kf_value x = in2("x", KF_BF16, M, K);
  kf_value gate = kf_matmul(g, x, in2("wg", KF_BF16, K, NN));
  kf_value up = kf_matmul(g, x, in2("wu", KF_BF16, K, NN));
  kf_set_output(g, kf_mul(g, kf_silu(g, gate), up));
  kt_setenv("KFUSE_GEMM_PAIR", "1", 1); /* off by default until measured on a GPU */
  ck_assert_int_eq(kf_plan_create(ctx, g, NULL, &plan), KF_OK);
  ck_assert_int_eq(plan->fuse->n_library, 2);
  ck_assert(plan->fuse->options.gemm_pair); /* the fake device is an sm_90 */
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  ck_assert_int_eq(plan->fuse->n_library, 0);
  ck_assert_int_eq(plan->fuse->n_kernels, 1);
  ck_assert(plan->fuse->kernels[0].paired);
  describes(KF_FORMAT_TEXT, "paired product: ");
  close_plan();
}
END_TEST

/* cuBLASLt's heuristic assumes 256-byte aligned pointers unless told: a
 * view less aligned than that gets candidates asked for its real
 * alignments (the MIN_ALIGNMENT preferences; cuBLASLt's A is our w), once
 * per set of alignments, running the algorithm the load chose where the
 * new set has it; aligned runs keep the load's set. At most
 * RT_LIB_ALIGN_SETS sets are kept (the oldest replaced). */
START_TEST(misaligned_operands_ask_the_heuristic_again) {
  flt_install();
  open_plan(KF_MODE_PLAIN);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  for (int i = 0; i < 4; i++) ck_assert_uint_eq(flt.min_align[i], 0); /* the load's: default */
  ck_assert_int_eq(run(NULL), KF_OK);
  uint64_t chosen = flt.algo;
  int asked = flt.heuristics;
  /* x 4 bytes off */
  tin[0].data = (void *)(uintptr_t)(DEV + 4);
  ck_assert_msg(run(NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  ck_assert_int_eq(flt.heuristics, asked + 1);
  /* each told what its rows keep: w's pitch is 48 f32 (192 bytes), D's
   * too (C: D, in the workspace), x's 32 (128 bytes) */
  ck_assert_uint_eq(flt.min_align[0], 64); /* w */
  ck_assert_uint_eq(flt.min_align[1], 4);  /* x */
  ck_assert_uint_eq(flt.min_align[2], 64);
  ck_assert_uint_eq(flt.min_align[3], 64);
  ck_assert_ptr_eq(flt.a, tin[0].data);
  ck_assert_uint_eq(flt.algo, chosen); /* the same algorithm, found in the new set */
  /* again, and aligned: nothing asked */
  ck_assert_int_eq(run(NULL), KF_OK);
  tin[0].data = (void *)(uintptr_t)DEV;
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_int_eq(flt.heuristics, asked + 1);
  ck_assert_uint_eq(flt.algo, chosen);
  /* w 8 and 16 bytes off: a set each; then more sets than are kept */
  tin[1].data = (void *)(uintptr_t)(DEV + 0x10008);
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_uint_eq(flt.min_align[0], 8);
  ck_assert_uint_eq(flt.min_align[1], 128); /* x at 256, its rows at 128 */
  tin[1].data = (void *)(uintptr_t)(DEV + 0x10010);
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_uint_eq(flt.min_align[0], 16);
  ck_assert_int_eq(flt.heuristics, asked + 3);
  tin[1].data = (void *)(uintptr_t)(DEV + 0x10020);
  ck_assert_int_eq(run(NULL), KF_OK);
  tin[1].data = (void *)(uintptr_t)(DEV + 0x10040);
  ck_assert_int_eq(run(NULL), KF_OK); /* the fifth set: the x-off one replaced */
  ck_assert_int_eq(flt.heuristics, asked + 5);
  tin[1].data = (void *)(uintptr_t)(DEV + 0x10008);
  ck_assert_int_eq(run(NULL), KF_OK); /* still kept */
  ck_assert_int_eq(flt.heuristics, asked + 5);
  tin[1].data = (void *)(uintptr_t)(DEV + 0x10000);
  tin[0].data = (void *)(uintptr_t)(DEV + 4);
  ck_assert_int_eq(run(NULL), KF_OK); /* asked again */
  ck_assert_int_eq(flt.heuristics, asked + 6);
  ck_assert_uint_eq(flt.algo, chosen);
  tin[0].data = (void *)(uintptr_t)DEV;
  close_plan(); /* every set's descriptors released */
}
END_TEST

/* Graph mode: a binding that runs another candidate set than the child
 * graph was captured with (pointers off the load's alignment, or back)
 * builds the graph again instead of swapping the child in place (another
 * algorithm may launch kernels whose launch attributes an in-place update
 * need not carry over); new addresses in the same set still swap the
 * child. So does a candidate changed after the capture. */
START_TEST(graph_mode_rebuilds_for_another_candidate_set) {
  flt_install();
  open_plan(KF_MODE_GRAPH);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 1);
  /* x 4 bytes off: the new set's capture in a new graph */
  tin[0].data = (void *)(uintptr_t)(DEV + 4);
  ck_assert_msg(run(NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  ck_assert_ptr_eq(flt.a, tin[0].data);
  ck_assert_uint_eq(flt.min_align[1], 4); /* x, cuBLASLt's B */
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 2);
  ck_assert_int_eq(rt_fake_count_prefix("GraphExecChildGraphNodeSetParams"), 0);
  /* another x with the same alignments: the child swapped in place */
  tin[0].data = (void *)(uintptr_t)(DEV + 0x40004);
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_ptr_eq(flt.a, tin[0].data);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 2);
  ck_assert_int_eq(rt_fake_count_prefix("GraphExecChildGraphNodeSetParams"), 1);
  /* aligned again: the load's set, a new graph */
  tin[0].data = (void *)(uintptr_t)DEV;
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_ptr_eq(flt.a, tin[0].data);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 3);
  ck_assert_int_eq(rt_fake_count_prefix("GraphExecChildGraphNodeSetParams"), 1);
  /* the same tensors with another candidate: a new graph running it */
  int L = 0;
  while (!plan->rt->launches[L].lib) L++;
  uint64_t was = flt.algo;
  rt_lib_set_candidate(plan->rt, L, 1 - plan->rt->launches[L].lib->cand);
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 4);
  ck_assert_uint_ne(flt.algo, was);
  ck_assert_int_eq(rt_fake_count_prefix("GraphLaunch"), 5);
  close_plan();
}
END_TEST

/* Where cuBLASLt has no algorithm for a run's alignments, that run takes
 * the launch's template form (generated as kfuse's kernel, compiled and
 * loaded then, one warning); aligned runs keep the library. Plain and
 * graph mode (which rebuilds its graph when the launch changes form). */
START_TEST(no_algorithm_for_the_alignment_runs_the_template) {
  for (int mode = 0; mode < 2; mode++) {
    flt_install();
    flt.refuse_low = true;
    open_plan(mode ? KF_MODE_GRAPH : KF_MODE_PLAIN);
    ck_assert_int_eq(kf_plan_load(plan), KF_OK);
    ck_assert_int_eq(plan->fuse->n_library, 1);
    ck_assert_int_eq(run(NULL), KF_OK);
    int calls = flt.matmuls, base = rt_fake_count();
    const char *node = mode ? "GraphAddKernelNode" : "LaunchKernel";
    ck_assert_int_eq(rt_fake_find(base, node, "matmul"), -1);
    tin[0].data = (void *)(uintptr_t)(DEV + 4);
    ck_assert_msg(run(NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
    ck_assert_int_eq(flt.matmuls, calls); /* not the library */
    int i = rt_fake_find(base, node, "matmul");
    ck_assert_msg(i >= 0, "no template launch");
    ck_assert_msg(strstr(rt_fake_line(i), "0x300000004"), "%s", rt_fake_line(i));
    int asked = flt.heuristics; /* the refusal is remembered */
    tin[0].data = (void *)(uintptr_t)(DEV + 0x40004);
    ck_assert_int_eq(run(NULL), KF_OK);
    ck_assert_int_eq(flt.heuristics, asked);
    ck_assert_int_eq(flt.matmuls, calls);
    tin[0].data = (void *)(uintptr_t)DEV;
    ck_assert_int_eq(run(NULL), KF_OK);
    ck_assert_int_eq(flt.matmuls, calls + 1); /* the library again */
    close_plan();
  }
}
END_TEST

/* The choice is timed at the first load (each candidate, the library plan,
 * the template plan), logged with the times, and kept in the disk cache:
 * the same graph's next load times nothing. */
START_TEST(choice_is_timed_once_and_cached) {
  char dir[64] = "/tmp/kfuse-mmlib-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  kt_setenv("KFUSE_CACHE_DIR", dir, 1);
  for (int round = 0; round < 2; round++) {
    flt_install();
    open_plan(KF_MODE_PLAIN);
    ck_assert_int_eq(kf_plan_load(plan), KF_OK);
    ck_assert_int_eq(plan->fuse->n_library, 1); /* the fake's times tie: the library */
    char *text = kf_plan_describe(plan, KF_FORMAT_TEXT);
    ck_assert_ptr_nonnull(strstr(text, "matmul-choice"));
    ck_assert_msg(strstr(text, "; template 0.200 ms: library"), "%s", text); /* 1 ms / 5 runs */
    if (round == 0) {
      ck_assert_int_gt(flt.matmuls, 0);
      ck_assert_ptr_null(strstr(text, "(cached)"));
    } else {
      ck_assert_int_eq(flt.matmuls, 0);
      ck_assert_ptr_nonnull(strstr(text, "library (cached)"));
    }
    kf_free(text);
    text = kf_plan_describe(plan, KF_FORMAT_JSON);
    ck_assert_ptr_nonnull(strstr(text, "matmul-choice"));
    kf_free(text);
    close_plan();
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
  kt_unsetenv("KFUSE_CACHE_DIR");
}
END_TEST

/* A template plan whose products alone, at the template's stated ceiling,
 * take longer than the library plan measured is neither compiled nor
 * timed (docs/matmul.md): on one SM, 256^3 is at least 0.336 ms at 100
 * GFLOP/s, and the fake's library plan 0.2 ms. */
START_TEST(hopeless_template_is_not_timed) {
  char dir[64] = "/tmp/kfuse-mmlib-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  kt_setenv("KFUSE_CACHE_DIR", dir, 1); /* no choice on record */
  flt_install();
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  rt_fake_set_sm_count(1);
  rt_fake_add_device_range(DEV, 1 << 24);
  open_graph();
  kf_set_output(g, kf_matmul(g, in2("x", KF_F32, 256, 256), in2("w", KF_F32, 256, 256)));
  ck_assert_int_eq(kf_plan_create(ctx, g, NULL, &plan), KF_OK);
  ck_assert_msg(kf_plan_load(plan) == KF_OK, "%s", kf_plan_errmsg(plan));
  ck_assert_int_eq(plan->fuse->n_library, 1);
  char *text = kf_plan_describe(plan, KF_FORMAT_TEXT);
  ck_assert_msg(strstr(text,
                       "template cannot win: at least 0.336 ms (0.0336 GFLOP at 100 GFLOP/s "
                       "per SM x 1 SMs): library"),
                "%s", text);
  kf_free(text);
  ck_assert_int_lt(rt_fake_find(0, "LaunchKernel", "matmul"), 0); /* no template kernel ran */
  close_plan();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
  kt_unsetenv("KFUSE_CACHE_DIR");
}
END_TEST

/* ---- what the choice does and says (docs/matmul.md) ----------------------- */

static char cache_dir[64];

/* A fresh disk cache: no choice on record. */
static void cache_open(void) {
  snprintf(cache_dir, sizeof cache_dir, "/tmp/kfuse-mmlib-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(cache_dir));
  kt_setenv("KFUSE_CACHE_DIR", cache_dir, 1);
}

static void cache_close(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
  ck_assert_int_eq(system(cmd), 0);
  kt_unsetenv("KFUSE_CACHE_DIR");
}

/* The fake driver and library, a fresh graph, n chained f32 products
 * relu(x @ w_i) of size m x m x m. */
static void open_chain(int n, int m, int sms, float elapsed_ms) {
  flt_install();
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  rt_fake_set_sm_count(sms);
  rt_fake_set_elapsed_ms(elapsed_ms);
  rt_fake_add_device_range(DEV, 1 << 24);
  open_graph();
  kf_value x = in2("x", KF_F32, m, m);
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "w%d", i);
    x = kf_relu(g, kf_matmul(g, x, in2(name, KF_F32, m, m)));
  }
  kf_set_output(g, x);
  ck_assert_int_eq(kf_plan_create(ctx, g, NULL, &plan), KF_OK);
}

/* The plan's description (fmt) holds want. */
static void describes(kf_format fmt, const char *want) {
  char *text = kf_plan_describe(plan, fmt);
  ck_assert_ptr_nonnull(text);
  const char *tail = strstr(text, "decisions"); /* the part the choice writes */
  ck_assert_msg(strstr(text, want) != NULL, "no \"%s\" in:\n%.3000s", want, tail ? tail : text);
  kf_free(text);
}

/* Six library calls: the decision still ends with the template's time and
 * the verdict (its per-call list used to run past the decision's 223
 * characters and cut them off, so the torch profile counted no template
 * timed), and the JSON's counters say what was done: equal products are
 * timed once (the product's record), the other five read it back. */
START_TEST(a_long_choice_is_whole_and_counted) {
  cache_open();
  open_chain(6, 32, 0, 0);
  ck_assert_msg(kf_plan_load(plan) == KF_OK, "%s", kf_plan_errmsg(plan));
  ck_assert_int_eq(plan->fuse->n_library, 6);
  describes(KF_FORMAT_TEXT, "on record), ... 4 more]; template 0.200 ms: library");
  describes(KF_FORMAT_JSON,
            "\"matmul_choice\":{\"how\":\"timed\",\"choice\":\"library\","
            "\"template\":\"timed\",\"library_ms\":0.2000,\"template_ms\":0.2000");
  describes(KF_FORMAT_JSON, "\"calls\":6,\"calls_timed\":1,\"calls_known\":5");
  close_plan();
  cache_close();
}
END_TEST

/* A call whose heuristic's first takes under 0.02 ms is not timed with
 * its other candidates. */
START_TEST(a_fast_call_keeps_the_first_candidate) {
  cache_open();
  open_chain(1, 32, 0, 0.05f); /* 0.01 ms a run */
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  describes(KF_FORMAT_TEXT, "(candidate 0 of 2: first only)]; template 0.010 ms: library");
  describes(KF_FORMAT_JSON, "\"calls\":1,\"calls_timed\":0,\"calls_known\":0");
  close_plan();
  cache_open();
  open_chain(1, 32, 0, 0); /* 0.2 ms: both timed */
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  describes(KF_FORMAT_TEXT, "(candidate 0 of 2)]");
  describes(KF_FORMAT_JSON, "\"calls\":1,\"calls_timed\":1");
  close_plan();
  cache_close();
}
END_TEST

/* A template plan that could win less than 0.005 ms a call is neither
 * compiled nor timed: on one SM, 215^3 is at least 0.1988 ms at 100
 * GFLOP/s, the library plan takes 0.2 ms. */
START_TEST(a_template_that_cannot_pay_is_not_timed) {
  cache_open();
  open_chain(1, 215, 1, 0);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  ck_assert_int_eq(plan->fuse->n_library, 1);
  describes(KF_FORMAT_TEXT,
            "template cannot pay: at least 0.199 ms, under 0.005 ms to win a call: "
            "library");
  describes(KF_FORMAT_JSON,
            "\"template\":\"cannot pay\",\"library_ms\":0.2000,"
            "\"template_ms\":-1.0000,\"floor_ms\":0.1988");
  ck_assert_int_lt(rt_fake_find(0, "LaunchKernel", "matmul"), 0); /* no template kernel ran */
  close_plan();
  cache_close();
}
END_TEST

/* Without a disk cache the choice is still kept for the process: the same
 * graph's second plan in the context times nothing. */
START_TEST(choice_is_kept_in_memory) {
  kt_setenv("KFUSE_DISK_CACHE", "0", 1);
  open_chain(1, 32, 0, 0);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  ck_assert_int_gt(flt.matmuls, 0);
  kf_plan_destroy(plan);
  int before = flt.matmuls;
  ck_assert_int_eq(kf_plan_create(ctx, g, NULL, &plan), KF_OK);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  ck_assert_int_eq(flt.matmuls, before);
  describes(KF_FORMAT_TEXT, "library (cached): library 0.200 ms");
  describes(KF_FORMAT_JSON, "\"how\":\"cached\"");
  close_plan();
  kt_unsetenv("KFUSE_DISK_CACHE");
}
END_TEST

/* The compile also compiles the template plan (auto, a device, no choice
 * on record) and keeps it for the load's choice: the load compiles nothing
 * and plans nothing again (it used to compile the template plan by NVRTC
 * on the loading thread, then to plan and emit it again from the memory
 * cache). */
START_TEST(the_template_is_compiled_ahead) {
  for (int mode = 0; mode < 2; mode++) {
    cache_open();
    if (mode) kt_setenv("KFUSE_MATMUL", "library", 1);
    open_chain(1, 40, 0, 0);
    kf_cache_stats a, b;
    ck_assert_int_eq(kf_plan_compile(plan), KF_OK);
    ck_assert_int_eq(kf_ctx_cache_stats(ctx, &a), KF_OK);
    ck_assert_int_eq(kf_plan_load(plan), KF_OK);
    ck_assert_int_eq(kf_ctx_cache_stats(ctx, &b), KF_OK);
    ck_assert_uint_eq(b.misses, a.misses); /* nothing compiled at the load */
    /* nor looked up: the template plan compiled ahead is the one timed,
     * not planned and emitted again */
    ck_assert_uint_eq(b.mem_hits, a.mem_hits);
    /* auto: the template kernel was compiled (a miss) at the compile */
    ck_assert_uint_eq(a.misses, mode ? 0 : 1);
    describes(KF_FORMAT_TEXT, mode ? "template not timed: library" : "template 0.200 ms: library");
    close_plan();
    cache_close();
    kt_unsetenv("KFUSE_MATMUL");
  }
}
END_TEST

/* Kernels compiled by NVRTC in ctx so far. */
static uint64_t compiled(void) {
  kf_cache_stats cs;
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &cs), KF_OK);
  return cs.misses;
}

/* The kernels (not library calls) among the plan's launches. */
static int kernel_launches(const kf_plan *p) {
  int n = 0;
  for (int i = 0; i < p->code->n_launches; i++) n += !p->code->launches[i].src.library;
  return n;
}

/* A template plan compiles its launches and nothing else: the load used
 * to split each tensor-core matmul kernel from its epilogue for the
 * occupancy feedback and compile every part (the product alone, the
 * epilogue's kernels) only to find the product's part no more resident
 * than the fused kernel, since its template fixes its residency (8
 * products: 21 kernels compiled for 8 launches). Two bf16 products with
 * epilogues on the fake sm_90: one on the sm_90 template (1 block/SM of
 * 384 threads by design), one on the mma.sync template (N = 36: 2 blocks
 * of 256 by design). In auto mode the compile builds the library plan's
 * kernels and the template plan's ahead, and the load's choice times the
 * latter without compiling anything. */
START_TEST(a_template_plan_compiles_only_its_launches) {
  for (int mode = 0; mode < 2; mode++) {
    cache_open();
    kt_setenv("KFUSE_MATMUL", mode ? "auto" : "template", 1);
    flt_install();
    rt_fake_reset();
    rt_driver_override(rt_fake_driver());
    rt_fake_add_device_range(DEV, 1 << 24);
    open_graph();
    kf_value x = in2("x", KF_BF16, 128, 64), b1 = in1("b1", KF_BF16, 64);
    kf_value h = kf_gelu_tanh(g, kf_add(g, kf_matmul(g, x, in2("w1", KF_BF16, 64, 64)), b1));
    kf_set_output(g, kf_relu(g, kf_matmul(g, h, in2("w2", KF_BF16, 64, 36))));
    ck_assert_int_eq(kf_plan_create(ctx, g, NULL, &plan), KF_OK);
    ck_assert_msg(kf_plan_compile(plan) == KF_OK, "%s", kf_plan_errmsg(plan));
    uint64_t at_compile = compiled();
    if (mode == 0) {
      ck_assert_int_eq(plan->code->n_launches, 2);
      /* the sm_90 template, then the mma.sync one */
      ck_assert(plan->code->launches[0].src.arch_specific);
      ck_assert_int_eq(plan->code->launches[0].src.min_blocks, 1);
      ck_assert(!plan->code->launches[1].src.arch_specific);
      ck_assert_int_eq(plan->code->launches[1].src.min_blocks, 2);
      ck_assert_uint_eq(at_compile, 2);
    } else {
      ck_assert_int_eq(plan->fuse->n_library, 2);
      ck_assert_ptr_nonnull(plan->ahead);
      ck_assert_uint_eq(at_compile,
                        (uint64_t)(kernel_launches(plan) + kernel_launches(plan->ahead)));
    }
    ck_assert_msg(kf_plan_load(plan) == KF_OK, "%s", kf_plan_errmsg(plan));
    ck_assert_uint_eq(compiled(), at_compile); /* the load compiled nothing */
    /* template mode: the kernel measured, and kept fused */
    if (mode == 0)
      describes(KF_FORMAT_TEXT, "1 blocks/SM of 384: occupancy 19%, no spills");
    else
      describes(KF_FORMAT_TEXT, "; template 0.200 ms: library");
    close_plan();
    cache_close();
    kt_unsetenv("KFUSE_MATMUL");
  }
}
END_TEST

/* The compile sets up what the load needs next (the CUDA context and
 * cuBLASLt) beside its kernels' compiles. A warm start (a new context
 * over the same disk cache) compiles the template plan ahead again from
 * the disk cache, without NVRTC (the choice's record is not looked up
 * before: its name needs cuBLASLt's version), and the load reads the
 * choice back, frees the template plan unused and times nothing. */
START_TEST(a_warm_start_compiles_nothing) {
  cache_open();
  for (int round = 0; round < 2; round++) {
    open_chain(1, 40, 0, 0);
    ck_assert_int_eq(kf_plan_compile(plan), KF_OK);
    ck_assert_ptr_nonnull(ctx->rt); /* set up beside the compile */
    ck_assert_ptr_nonnull(ctx->rt->lt_handle);
    ck_assert_ptr_nonnull(plan->ahead);
    kf_cache_stats a;
    ck_assert_int_eq(kf_ctx_cache_stats(ctx, &a), KF_OK);
    ck_assert_uint_eq(a.misses, round ? 0 : 1); /* the template kernel, then from disk */
    ck_assert_uint_eq(a.disk_hits, round ? 1 : 0);
    ck_assert_int_eq(kf_plan_load(plan), KF_OK);
    ck_assert_ptr_null(plan->ahead); /* timed, or not needed: freed */
    ck_assert_uint_eq(compiled(), a.misses);
    ck_assert_int_eq(flt.matmuls > 0, round == 0); /* the second times nothing */
    describes(KF_FORMAT_TEXT,
              round ? "library (cached): library 0.200 ms" : "template 0.200 ms: library");
    close_plan();
  }
  cache_close();
}
END_TEST

/* KFUSE_MATMUL=template plans template kernels from the start. */
START_TEST(knob_forces_the_template) {
  kt_setenv("KFUSE_MATMUL", "template", 1);
  flt_install();
  open_plan(KF_MODE_PLAIN);
  ck_assert_int_eq(plan->fuse->n_library, 0);
  close_plan();
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("matmul_lib");
  TCase *tc = tcase_create("match");
  tcase_add_test(tc, each_epilogue_maps);
  tcase_add_test(tc, misaligned_operands_ask_the_heuristic_again);
  tcase_add_test(tc, no_algorithm_for_the_alignment_runs_the_template);
  tcase_add_test(tc, graph_mode_rebuilds_for_another_candidate_set);
  tcase_add_test(tc, layouts_and_batches_map);
  tcase_add_test(tc, the_rest_is_the_next_kernel);
  tcase_add_test(tc, mlp_silu_plans_onto_the_library);
  tcase_add_test(tc, fuse_gemm_to_rt_gemm);
  suite_add_tcase(s, tc);
  TCase *run_tc = tcase_create("launch");
  tcase_set_timeout(run_tc, 60); /* NVRTC compiles the pointwise kernels */
  tcase_add_test(run_tc, plain_and_streams_modes_call_the_library);
  tcase_add_test(run_tc, graph_mode_captures_a_child_graph);
  tcase_add_test(run_tc, graph_mode_rebuilds_when_the_child_is_refused);
  tcase_add_test(run_tc, fallback_to_the_template);
  tcase_add_test(run_tc, the_template_plan_pairs_swiglu);
  tcase_add_test(run_tc, choice_is_timed_once_and_cached);
  tcase_add_test(run_tc, knob_forces_the_template);
  tcase_add_test(run_tc, a_long_choice_is_whole_and_counted);
  tcase_add_test(run_tc, a_fast_call_keeps_the_first_candidate);
  tcase_add_test(run_tc, a_template_that_cannot_pay_is_not_timed);
  tcase_add_test(run_tc, choice_is_kept_in_memory);
  tcase_add_test(run_tc, the_template_is_compiled_ahead);
  tcase_add_test(run_tc, hopeless_template_is_not_timed);
  suite_add_tcase(s, run_tc);
  TCase *count_tc = tcase_create("compiles");
  tcase_set_timeout(count_tc, 120); /* NVRTC compiles two tensor-core products, twice */
  tcase_add_test(count_tc, a_template_plan_compiles_only_its_launches);
  tcase_add_test(count_tc, a_warm_start_compiles_nothing);
  suite_add_tcase(s, count_tc);
  return s;
}
