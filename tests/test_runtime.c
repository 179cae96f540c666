/* test_runtime.c - the runtime's logic on CI, against the recording fake
 * driver: device queries, loading, validation before launch, plain /
 * streams / graph modes (event order, priorities, in-place graph updates),
 * out of memory, lost contexts, captures, occupancy, DLPack, the
 * address-only kf_plan_run_ptrs, no leaks. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check_main.h"
#include "fake_driver.h"
#include "pipeline/feedback.h"
#include "pipeline/pipeline.h"
#include "pipeline/run.h"
#include "runtime/device.h"
#include "runtime/dlpack_types.h"
#include "runtime/launch.h"
#include "runtime/nvrtc.h"
#include "runtime/rt.h"
#include "runtime/rt_plan.h"

/* The graph: x, y inputs; a = exp(x), b = exp(y), c = a + b (output 0),
 * d = relu(x) (output 1). One launch per kernel: L0 a (heavy), L1 b
 * (light), L2 c, L3 d. a and b live in the workspace. The critical path
 * is L0 -> L2. */
#define N 1024
#define DEV ((CUdeviceptr)0x200000000ull)
enum { L_A, L_B, L_C, L_D, NL };

typedef struct fixture {
  kf_ctx *ctx;
  kf_graph *g;
  kf_plan *plan;
  kf_value x, y, a, b, c, d;
  fuse_plan fp;
  fuse_kernel kernels[NL];
  fuse_launch launches[NL];
  int32_t launch_kernel[NL];
  int32_t kin[NL][2], kout[NL][1];
  fuse_buffer buffers[6];
  cg_param params[NL][3];
  cg_launch_src src[NL];
  rt_image img[NL];
  kf_tensor in[2], out[2];
} fixture;

static fixture F;

static void set_kernel(int k, int n_in, int32_t i0, int32_t i1, int32_t o, int64_t bytes,
                       const char *entry, uint32_t smem) {
  fuse_kernel *kn = &F.kernels[k];
  kn->id = k;
  kn->kind = FK_POINTWISE;
  snprintf(kn->name, sizeof kn->name, "%s", entry);
  F.kin[k][0] = i0;
  F.kin[k][1] = i1;
  F.kout[k][0] = o;
  kn->inputs = F.kin[k];
  kn->n_inputs = n_in;
  kn->outputs = F.kout[k];
  kn->n_outputs = 1;
  kn->bytes_read = bytes;
  kn->launch = k;
  F.launch_kernel[k] = k;
  memset(&F.launches[k], 0, sizeof F.launches[k]);
  F.launches[k].kernels = &F.launch_kernel[k];
  F.launches[k].n_kernels = 1;
  F.params[k][0] = (cg_param){i0, false};
  if (n_in == 2) F.params[k][1] = (cg_param){i1, false};
  F.params[k][n_in] = (cg_param){o, true};
  cg_launch_src *s = &F.src[k];
  snprintf(s->entry, sizeof s->entry, "%s", entry);
  s->params = F.params[k];
  s->n_params = n_in + 1;
  s->grid = 4;
  s->block = 256;
  s->smem_bytes = smem;
  s->grid_dep = true; /* as generated: every kernel starts with kf_grid_dep_sync */
  F.img[k] = (rt_image){s, "FAKE-CUBIN", 11, 0, NULL};
}

static void build(uint32_t smem_c) {
  ck_assert_int_eq(kf_ctx_create(&F.ctx), KF_OK);
  ck_assert_int_eq(kf_graph_create(F.ctx, &F.g), KF_OK);
  int64_t shape[1] = {N};
  F.x = kf_input(F.g, "x", KF_F32, 1, shape);
  F.y = kf_input(F.g, "y", KF_F32, 1, shape);
  F.a = kf_exp(F.g, F.x);
  F.b = kf_exp(F.g, F.y);
  F.c = kf_add(F.g, F.a, F.b);
  F.d = kf_relu(F.g, F.x);
  kf_set_name(F.g, F.c, "c");
  kf_set_name(F.g, F.d, "d");
  kf_set_output(F.g, F.c);
  kf_set_output(F.g, F.d);
  ck_assert_int_eq(kf_graph_status(F.g), KF_OK);
  set_kernel(L_A, 1, F.x, 0, F.a, 100000, "k0_exp_heavy", 0);
  set_kernel(L_B, 1, F.y, 0, F.b, 100, "k1_exp", 0);
  set_kernel(L_C, 2, F.a, F.b, F.c, 30000, "k2_add", smem_c);
  set_kernel(L_D, 1, F.x, 0, F.d, 500, "k3_relu", 0);
  F.buffers[0] = (fuse_buffer){.value = F.x,
                               .home = HOME_INPUT,
                               .index = 0,
                               .offset = 0,
                               .bytes = 4 * N,
                               .first_launch = -1,
                               .last_launch = 3};
  F.buffers[1] = (fuse_buffer){.value = F.y,
                               .home = HOME_INPUT,
                               .index = 1,
                               .offset = 0,
                               .bytes = 4 * N,
                               .first_launch = -1,
                               .last_launch = 1};
  F.buffers[2] = (fuse_buffer){.value = F.a,
                               .home = HOME_WORKSPACE,
                               .index = 0,
                               .offset = 0,
                               .bytes = 4 * N,
                               .first_launch = 0,
                               .last_launch = 2};
  F.buffers[3] = (fuse_buffer){.value = F.b,
                               .home = HOME_WORKSPACE,
                               .index = 0,
                               .offset = 4096,
                               .bytes = 4 * N,
                               .first_launch = 1,
                               .last_launch = 2};
  F.buffers[4] = (fuse_buffer){.value = F.c,
                               .home = HOME_OUTPUT,
                               .index = 0,
                               .offset = 0,
                               .bytes = 4 * N,
                               .first_launch = 2,
                               .last_launch = 2};
  F.buffers[5] = (fuse_buffer){.value = F.d,
                               .home = HOME_OUTPUT,
                               .index = 1,
                               .offset = 0,
                               .bytes = 4 * N,
                               .first_launch = 3,
                               .last_launch = 3};
  F.fp.graph = F.g;
  F.fp.kernels = F.kernels;
  F.fp.n_kernels = NL;
  F.fp.launches = F.launches;
  F.fp.n_launches = NL;
  F.fp.buffers = F.buffers;
  F.fp.n_buffers = 6;
  F.fp.workspace_bytes = 8192;
  F.plan = calloc(1, sizeof *F.plan);
  F.plan->ctx = F.ctx;
  F.plan->graph = F.g;
  F.plan->knobs = core_knobs_get(F.ctx);
  kf_options_init(&F.plan->options);
  F.plan->fuse = &F.fp;
  rt_fake_add_device_range(DEV, 1 << 20);
  for (int i = 0; i < 2; i++) {
    F.in[i] = (kf_tensor){(void *)(uintptr_t)(DEV + (CUdeviceptr)i * 4096), KF_F32, 1, {N}};
    F.out[i] =
        (kf_tensor){(void *)(uintptr_t)(DEV + 0x10000 + (CUdeviceptr)i * 4096), KF_F32, 1, {N}};
  }
}

static void setup(void) {
  memset(&F, 0, sizeof F);
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  build(0);
}

/* Releases everything and checks that nothing leaked on the fake. */
static void finish(void) {
  rt_plan_free(F.plan->rt);
  free(F.plan);
  kf_graph_destroy(F.g);
  kf_ctx_destroy(F.ctx);
  ck_assert_msg(rt_fake_live_objects() == 0, "%d fake objects leaked", rt_fake_live_objects());
  ck_assert_uint_eq(rt_fake_bytes_allocated(), 0);
  rt_driver_override(NULL);
  rt_fake_reset();
}

static kf_status load(void) {
  return rt_plan_load_images(pl_rt_plan(F.plan), F.img, NL);
}

static kf_status run(void *stream) {
  return kf_plan_run(F.plan, F.in, 2, F.out, 2, stream);
}

static void no_sync(void) {
  ck_assert_int_eq(rt_fake_count_prefix("CtxSynchronize"), 0);
  ck_assert_int_eq(rt_fake_count_prefix("StreamSynchronize"), 0);
  ck_assert_int_eq(rt_fake_count_prefix("EventSynchronize"), 0);
}

#define CALLER ((void *)0xca11)

/* ---- devices ----------------------------------------------------------------- */

START_TEST(no_driver_says_so) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib) return; /* a machine with a driver: nothing to check here */
  kf_ctx *ctx;
  int n = 5;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  ck_assert_int_eq(kf_device_count(ctx, &n), KF_ERR_NO_DEVICE);
  ck_assert_int_eq(n, 0);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(ctx), "libcuda.so.1 not found"));
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(ctx), "--arch sm_90"));
  kf_device_info info;
  ck_assert_int_eq(kf_device_query(ctx, 0, &info), KF_ERR_NO_DEVICE);
  int v;
  ck_assert_int_eq(kf_driver_version(ctx, &v), KF_ERR_NO_DEVICE);
  char arch[16];
  ck_assert_int_eq(rt_device_arch(ctx, arch, sizeof arch), KF_ERR_NO_DEVICE);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(fake_device_query) {
  kf_device_info info;
  int n = 0, v = 0;
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  ck_assert_int_eq(kf_device_count(ctx, &n), KF_OK);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(kf_driver_version(ctx, &v), KF_OK);
  ck_assert_int_eq(v, 13000);
  ck_assert_int_eq(kf_device_query(ctx, 0, &info), KF_OK);
  ck_assert_str_eq(info.name, "Fake H200 #0");
  ck_assert_int_eq(info.cc_major, 9);
  ck_assert_int_eq(info.cc_minor, 0);
  ck_assert_int_eq(info.sm_count, 132);
  ck_assert_int_eq(kf_device_query(ctx, 1, &info), KF_ERR_INVALID_ARG);
  char arch[16];
  ck_assert_int_eq(rt_device_arch(ctx, arch, sizeof arch), KF_OK);
  ck_assert_str_eq(arch, "sm_90");
  rt_fake_set_devices(0);
  ck_assert_int_eq(kf_device_count(ctx, &n), KF_ERR_NO_DEVICE);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(ctx), "no usable GPU"));
  kf_ctx_destroy(ctx);
  rt_driver_override(NULL);
  rt_fake_reset();
}
END_TEST

START_TEST(status_mapping) {
  ck_assert_int_eq(rt_cu_status(CUDA_SUCCESS), KF_OK);
  ck_assert_int_eq(rt_cu_status(CUDA_ERROR_OUT_OF_MEMORY), KF_ERR_OUT_OF_MEMORY);
  ck_assert_int_eq(rt_cu_status(CUDA_ERROR_ILLEGAL_ADDRESS), KF_ERR_CONTEXT_LOST);
  ck_assert_int_eq(rt_cu_status(CUDA_ERROR_LAUNCH_FAILED), KF_ERR_CONTEXT_LOST);
  ck_assert_int_eq(rt_cu_status(CUDA_ERROR_NO_DEVICE), KF_ERR_NO_DEVICE);
  ck_assert_int_eq(rt_cu_status(CUDA_ERROR_INVALID_VALUE), KF_ERR_CUDA);
  ck_assert(!rt_cu_is_sticky(CUDA_ERROR_OUT_OF_MEMORY));
}
END_TEST

/* ---- loading and plain mode --------------------------------------------------- */

START_TEST(load_and_run_plain) {
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), NL);
  ck_assert_int_eq(rt_fake_count_prefix("DevicePrimaryCtxRetain"), 1);
  ck_assert_int_ge(rt_fake_find(0, "MemAlloc", "bytes=8192"), 0);
  int before = rt_fake_count();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), NL);
  /* In order, on the caller's stream, with pointers resolved from the
   * buffers: inputs, workspace + offset, outputs. */
  const struct rt_plan *rp = F.plan->rt;
  char want[256];
  snprintf(want, sizeof want,
           "fn=k0_exp_heavy grid=4 block=256 smem=0 stream=0xca11 args=%#llx,%#llx",
           (unsigned long long)DEV, (unsigned long long)rp->ws);
  int i0 = rt_fake_find(before, "LaunchKernel", want);
  ck_assert_msg(i0 >= 0, "no launch '%s'", want);
  snprintf(want, sizeof want,
           "fn=k2_add grid=4 block=256 smem=0 stream=0xca11 args=%#llx,%#llx,%#llx",
           (unsigned long long)rp->ws, (unsigned long long)(rp->ws + 4096),
           (unsigned long long)(DEV + 0x10000));
  int i2 = rt_fake_find(before, "LaunchKernel", want);
  ck_assert_msg(i2 > i0, "no launch '%s' after k0", want);
  no_sync();
  finish();
}
END_TEST

/* Plain runs launch with programmatic dependent launch on sm_90 with a
 * CUDA 12.3+ driver (the fake's), each kernel that starts with
 * kf_grid_dep_sync (grid_dep; a kernel without it would race with the one
 * ahead), unless kf_options.pdl is false; the launches streams mode forks
 * never do (an event orders them, not the kernel ahead in their stream). */
START_TEST(programmatic_dependent_launch) {
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), NL);
  for (int i = rt_fake_find(0, "LaunchKernel", NULL); i >= 0;
       i = rt_fake_find(i + 1, "LaunchKernel", NULL)) {
    const char *line = rt_fake_line(i);
    size_t n = strlen(line);
    ck_assert_msg(n > 4 && !strcmp(line + n - 4, " pdl"), "not a PDL launch: %s", line);
  }
  F.src[1].grid_dep = false;
  ck_assert_int_eq(load(), KF_OK);
  int before = rt_fake_count();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), 2 * NL);
  ck_assert_int_ge(rt_fake_find(before, "LaunchKernel fn=k0_exp_heavy", " pdl"), 0);
  ck_assert_int_eq(rt_fake_find(before, "LaunchKernel fn=k1_exp", " pdl"), -1);
  ck_assert_int_ge(rt_fake_find(before, "LaunchKernel fn=k1_exp", NULL), 0);
  /* kf_options.pdl = false: plain launches, whatever the kernels */
  F.src[1].grid_dep = true;
  F.plan->options.pdl = false;
  ck_assert_int_eq(load(), KF_OK);
  before = rt_fake_count();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), 3 * NL);
  ck_assert_int_eq(rt_fake_find(before, "LaunchKernel", " pdl"), -1);
  /* its default: on, unless KFUSE_PDL=0 */
  kf_options o;
  kf_options_init(&o);
  ck_assert(o.pdl);
  kt_setenv("KFUSE_PDL", "0", 1);
  kf_options_init(&o);
  kt_unsetenv("KFUSE_PDL");
  ck_assert(!o.pdl);
  ck_assert_int_eq(kf_plan_set_mode(F.plan, KF_MODE_STREAMS), KF_OK);
  ck_assert_int_eq(load(), KF_OK);
  before = rt_fake_count();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_ge(rt_fake_find(before, "LaunchKernel", "stream=s1"), 0);
  ck_assert_int_eq(rt_fake_find(before, "LaunchKernel", " pdl"), -1);
  finish();
}
END_TEST

START_TEST(big_shared_memory_opt_in) {
  finish();
  memset(&F, 0, sizeof F);
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  build(100 * 1024);
  ck_assert_int_eq(load(), KF_OK);
  char want[64];
  snprintf(want, sizeof want, "attr=%d value=%d",
           (int)CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024);
  ck_assert_int_ge(rt_fake_find(0, "FuncSetAttribute fn=k2_add", want), 0);
  ck_assert_int_eq(rt_fake_count_prefix("FuncSetAttribute"), 1);
  ck_assert_int_eq(run(NULL), KF_OK);
  ck_assert_int_ge(rt_fake_find(0, "LaunchKernel fn=k2_add", "smem=102400"), 0);
  finish();
}
END_TEST

/* A new fake driver and plan whose first kernel takes 64 registers x 256
 * threads: 4 blocks per SM on the fake's 132 SMs, 528 resident. */
static void fresh_heavy_plan(void) {
  finish();
  memset(&F, 0, sizeof F);
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  build(0);
  rt_fake_set_kernel("k0_exp_heavy", 64, 0, 0);
}

/* A persistent launch (a kernel striding by gridDim.x: staged rows) gets
 * one block per resident slot, evened out: 64 registers x 256 threads is 4
 * blocks per SM, 528 slots on the fake's 132 SMs, so 8192 rows become 512
 * blocks of 16; KFUSE_PERSIST_WAVES=2 gives 1024 of 8; a grid already
 * within the slots stays; a launch not marked persistent keeps its grid. */
START_TEST(persistent_grid_fits_resident_blocks) {
  static const struct {
    uint32_t grid;
    const char *waves;
    bool persistent;
    uint32_t want;
  } cases[] = {{8192, NULL, true, 512},
               {8192, "2", true, 1024},
               {100, NULL, true, 100},
               {8192, NULL, false, 8192}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    /* before the plan: a plan keeps the knobs of its creation */
    if (cases[c].waves)
      kt_setenv("KFUSE_PERSIST_WAVES", cases[c].waves, 1);
    else
      kt_unsetenv("KFUSE_PERSIST_WAVES");
    fresh_heavy_plan();
    F.src[L_A].grid = cases[c].grid;
    F.src[L_A].persistent = cases[c].persistent;
    ck_assert_int_eq(load(), KF_OK);
    ck_assert_int_eq(run(NULL), KF_OK);
    char want[64];
    snprintf(want, sizeof want, "grid=%u block=256", cases[c].want);
    ck_assert_msg(rt_fake_find(0, "LaunchKernel fn=k0_exp_heavy", want) >= 0,
                  "case %zu: no launch with %s", c, want);
  }
  kt_unsetenv("KFUSE_PERSIST_WAVES");
  finish();
}
END_TEST

/* A kernel that prefetches rows into L2 (l2_prefetch) gets its distance
 * at load: 64 registers x 256 threads is 4 blocks per SM on the fake's 132
 * SMs, 528 resident, and a sixteenth more: 561. A kernel without it is not
 * touched; a global that cannot be found leaves the distance at 0 (no
 * prefetch) and the plan loads and runs. */
START_TEST(l2_prefetch_distance_set_at_load) {
  for (int c = 0; c < 3; c++) {
    fresh_heavy_plan();
    F.src[L_A].l2_prefetch = c != 1;
    if (c == 2) rt_fake_fail("ModuleGetGlobal", 1, CUDA_ERROR_NOT_FOUND, false);
    ck_assert_int_eq(load(), KF_OK);
    ck_assert_int_eq(run(NULL), KF_OK);
    int g = rt_fake_find(0, "ModuleGetGlobal", "kf_l2pf_rows");
    int m = rt_fake_find(0, "MemcpyHtoD", "int=561");
    if (c == 0) {
      ck_assert_int_ge(g, 0);
      ck_assert_int_gt(m, g);
    } else {
      ck_assert_int_lt(m, 0);
      if (c == 1) ck_assert_int_lt(g, 0);
    }
    rt_fake_fail("none", 0, CUDA_SUCCESS, false);
  }
  finish();
}
END_TEST

START_TEST(callers_context_is_used) {
  finish();
  memset(&F, 0, sizeof F);
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  CUcontext mine = (CUcontext)0x5eed;
  rt_fake_driver()->CtxPushCurrent(mine);
  build(0);
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("DevicePrimaryCtxRetain"), 0);
  ck_assert_ptr_eq(F.ctx->rt->cuctx, mine);
  /* Our context is current already: nothing pushed around the run. */
  ck_assert_int_eq(rt_fake_count_prefix("CtxPushCurrent"), 1);
  rt_fake_driver()->CtxPopCurrent(NULL);
  finish();
}
END_TEST

/* ---- validation --------------------------------------------------------------- */

/* Runs with one thing wrong; expects INVALID_ARG naming `needle`, and no
 * launch. */
static void expect_invalid(const kf_tensor *in, int n_in, const kf_tensor *out, int n_out,
                           const char *needle) {
  int launches = rt_fake_count_prefix("LaunchKernel");
  ck_assert_int_eq(kf_plan_run(F.plan, in, n_in, out, n_out, CALLER), KF_ERR_INVALID_ARG);
  ck_assert_msg(strstr(kf_plan_errmsg(F.plan), needle), "message '%s' lacks '%s'",
                kf_plan_errmsg(F.plan), needle);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), launches);
}

START_TEST(validation_before_launch) {
  ck_assert_int_eq(load(), KF_OK);
  kf_tensor in[2], out[2];
  expect_invalid(F.in, 1, F.out, 2, "1 inputs and 2 outputs given, the graph has 2 and 2");
  memcpy(in, F.in, sizeof in);
  in[1].dtype = KF_F16;
  expect_invalid(in, 2, F.out, 2, "inputs[1] (y): dtype f16, the plan expects f32");
  memcpy(in, F.in, sizeof in);
  in[0].shape[0] = 1000;
  expect_invalid(in, 2, F.out, 2, "inputs[0] (x): shape [1000], the plan expects [1024]");
  memcpy(out, F.out, sizeof out);
  out[1].rank = 2;
  out[1].shape[1] = 1;
  expect_invalid(F.in, 2, out, 2, "outputs[1] (d): shape [1024,1]");
  memcpy(out, F.out, sizeof out);
  out[0].data = NULL;
  expect_invalid(F.in, 2, out, 2, "outputs[0] (c): data is NULL");
  memcpy(in, F.in, sizeof in);
  in[0].data = (char *)in[0].data + 2;
  expect_invalid(in, 2, F.out, 2, "not aligned to its element size (4 bytes)");
  memcpy(in, F.in, sizeof in);
  static float host[N];
  in[1].data = host;
  expect_invalid(in, 2, F.out, 2, "is not CUDA memory");
  memcpy(out, F.out, sizeof out);
  out[1].data = (char *)F.in[0].data + 1024;
  expect_invalid(F.in, 2, out, 2, "outputs[1] (d) overlaps inputs[0] (x)");
  memcpy(out, F.out, sizeof out);
  out[1].data = (char *)out[0].data + 4;
  expect_invalid(F.in, 2, out, 2, "outputs[1] (d) overlaps outputs[0] (c)");
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), 0);
  /* and the plan still runs */
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), NL);
  finish();
}
END_TEST

START_TEST(pointer_check_cached) {
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK);
  int checks = rt_fake_count_prefix("PointerGetAttribute");
  ck_assert_int_eq(checks, 2 * 4);      /* memory type and ordinal, 4 tensors */
  ck_assert_int_eq(run(CALLER), KF_OK); /* same addresses: not asked again */
  ck_assert_int_eq(rt_fake_count_prefix("PointerGetAttribute"), checks);
  F.out[1].data = (char *)F.out[1].data + 0x8000; /* one new address */
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("PointerGetAttribute"), checks + 2);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), 3 * NL);
  finish();
}
END_TEST

/* ---- streams mode --------------------------------------------------------------- */

START_TEST(schedule_critical_path) {
  ck_assert_int_eq(load(), KF_OK);
  const struct rt_plan *rp = F.plan->rt;
  ck_assert(rp->launches[L_A].critical);
  ck_assert(rp->launches[L_C].critical);
  ck_assert(!rp->launches[L_B].critical);
  ck_assert(!rp->launches[L_D].critical);
  ck_assert_int_eq(rp->launches[L_A].stream, 0);
  ck_assert_int_eq(rp->launches[L_C].stream, 0);
  ck_assert_int_ne(rp->launches[L_B].stream, 0);
  ck_assert_int_ne(rp->launches[L_D].stream, 0);
  ck_assert_int_ne(rp->launches[L_B].stream, rp->launches[L_D].stream);
  ck_assert_int_eq(rp->launches[L_C].n_deps, 2);
  ck_assert_int_eq(rp->launches[L_D].n_deps, 0);
  finish();
}
END_TEST

START_TEST(streams_fork_join_order) {
  ck_assert_int_eq(kf_plan_set_mode(F.plan, KF_MODE_STREAMS), KF_OK);
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK);
  /* The pool: s1 with the greatest priority for the critical path. */
  ck_assert_int_ge(rt_fake_find(0, "StreamCreateWithPriority s1", "prio=-5"), 0);
  ck_assert_int_ge(rt_fake_find(0, "StreamCreateWithPriority s2", "prio=0"), 0);
  ck_assert_int_ge(rt_fake_find(0, "StreamCreateWithPriority s3", "prio=0"), 0);
  int fork = rt_fake_find(0, "EventRecord", "stream=0xca11");
  ck_assert_int_ge(fork, 0);
  for (int s = 1; s <= 3; s++) {
    char st[16];
    snprintf(st, sizeof st, "stream=s%d", s);
    int w = rt_fake_find(fork, "StreamWaitEvent", st);
    int l = rt_fake_find(fork, "LaunchKernel", st);
    ck_assert_msg(w > fork && w < l, "stream s%d does not wait for the fork first", s);
  }
  int la = rt_fake_find(fork, "LaunchKernel fn=k0_exp_heavy", "stream=s1");
  int lb = rt_fake_find(fork, "LaunchKernel fn=k1_exp", NULL);
  int lc = rt_fake_find(fork, "LaunchKernel fn=k2_add", "stream=s1");
  int ld = rt_fake_find(fork, "LaunchKernel fn=k3_relu", NULL);
  ck_assert(la > 0 && lb > 0 && lc > 0 && ld > 0);
  ck_assert(strstr(rt_fake_line(lb), "stream=s1") == NULL);
  /* k1's done event is recorded after it and waited for on s1 before k2;
   * k0 -> k2 needs none (same stream). */
  int rec = rt_fake_find(lb, "EventRecord", NULL);
  ck_assert(rec > lb && rec < lc);
  const char *ev = strstr(rt_fake_line(rec), "event=") + 6;
  char want[32];
  snprintf(want, sizeof want, "event=%.*s", (int)strcspn(ev, " "), ev);
  int wait = rt_fake_find(rec, "StreamWaitEvent stream=s1", want);
  ck_assert(wait > rec && wait < lc);
  /* The join: the caller's stream waits for every pool stream at the end. */
  int joins = 0;
  for (int i = lc; i < rt_fake_count(); i++)
    joins += strncmp(rt_fake_line(i), "StreamWaitEvent stream=0xca11", 29) == 0;
  ck_assert_int_eq(joins, 3);
  int last_launch = lc > ld ? lc : ld;
  ck_assert_int_gt(rt_fake_find(last_launch, "StreamWaitEvent stream=0xca11", NULL), last_launch);
  no_sync();
  /* A second run reuses streams and events. */
  int streams = rt_fake_count_prefix("StreamCreate"), events = rt_fake_count_prefix("EventCreate");
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("StreamCreate"), streams);
  ck_assert_int_eq(rt_fake_count_prefix("EventCreate"), events);
  finish();
}
END_TEST

START_TEST(workspace_reuse_orders_launches) {
  /* Suppose the fuser put d on a's workspace bytes: then k3 writes what k2
   * still reads (and k0 wrote), so k3 must follow both even though it
   * shares no value with them. */
  F.buffers[5] = (fuse_buffer){.value = F.d,
                               .home = HOME_WORKSPACE,
                               .index = 0,
                               .offset = 0,
                               .bytes = 4 * N,
                               .first_launch = 3,
                               .last_launch = 3};
  ck_assert_int_eq(load(), KF_OK);
  const rt_launch *l3 = &F.plan->rt->launches[L_D];
  ck_assert_int_eq(l3->n_deps, 2);
  ck_assert_int_eq(l3->deps[0], L_A);
  ck_assert_int_eq(l3->deps[1], L_C);
  /* b's bytes [4096, 8192) do not overlap: k1 is not a dependency */
  finish();
}
END_TEST

/* ---- graph mode ------------------------------------------------------------------ */

START_TEST(graph_build_once_update_in_place) {
  ck_assert_int_eq(kf_plan_set_mode(F.plan, KF_MODE_GRAPH), KF_OK);
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphCreate"), 1);
  ck_assert_int_eq(rt_fake_count_prefix("GraphAddKernelNode"), NL);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 1);
  ck_assert_int_ge(rt_fake_find(0, "GraphLaunch", "stream=0xca11"), 0);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), 0);
  /* k2 depends on the nodes of k0 and k1: the multi-stream structure. */
  int n2 = rt_fake_find(0, "GraphAddKernelNode", "fn=k2_add");
  ck_assert_ptr_nonnull(strstr(rt_fake_line(n2), "deps=n1,n2"));
  int n3 = rt_fake_find(0, "GraphAddKernelNode", "fn=k3_relu");
  ck_assert_int_ge(n3, 0);
  ck_assert_ptr_nonnull(strstr(rt_fake_line(n3), "deps= args="));
  /* Same addresses: replay only. */
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphLaunch"), 2);
  ck_assert_int_eq(rt_fake_count_prefix("GraphExecKernelNodeSetParams"), 0);
  /* A new address for output c: only k2's node is updated, in place. */
  F.out[0].data = (char *)F.out[0].data + 0x8000;
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphExecKernelNodeSetParams"), 1);
  char want[64];
  snprintf(want, sizeof want, "%#llx", (unsigned long long)(DEV + 0x18000));
  ck_assert_int_ge(rt_fake_find(0, "GraphExecKernelNodeSetParams", want), 0);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 1);
  ck_assert_int_eq(rt_fake_count_prefix("GraphLaunch"), 3);
  ck_assert_int_eq(F.plan->rt->graph_updates, 1);
  no_sync();
  finish();
}
END_TEST

/* ---- errors ---------------------------------------------------------------------- */

START_TEST(oom_on_load_then_usable) {
  rt_fake_fail("MemAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY, false);
  ck_assert_int_eq(load(), KF_ERR_OUT_OF_MEMORY);
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(F.plan), "still usable"));
  ck_assert_int_eq(rt_fake_live_objects() - 1, 0); /* only the primary context */
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK);
  finish();
}
END_TEST

START_TEST(oom_on_run_then_usable) {
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(kf_plan_set_workspace(F.plan, NULL, 0), KF_OK); /* drop ours */
  rt_fake_fail("MemAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY, false);
  ck_assert_int_eq(run(CALLER), KF_ERR_OUT_OF_MEMORY);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), 0);
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), NL);
  finish();
}
END_TEST

START_TEST(sticky_error_loses_context) {
  ck_assert_int_eq(load(), KF_OK);
  rt_fake_fail("LaunchKernel", 2, CUDA_ERROR_ILLEGAL_ADDRESS, true);
  ck_assert_int_eq(run(CALLER), KF_ERR_CONTEXT_LOST);
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(F.plan), "context is lost"));
  int launches = rt_fake_count_prefix("LaunchKernel");
  ck_assert_int_eq(run(CALLER), KF_ERR_CONTEXT_LOST);
  ck_assert_int_eq(kf_plan_load(F.plan), KF_ERR_CONTEXT_LOST);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), launches);
  /* the state is still released cleanly (the fake accepts frees) */
  rt_fake_fail("none", 0, CUDA_SUCCESS, false);
  finish();
}
END_TEST

START_TEST(capture_refuses_loading) {
  rt_fake_set_capturing(true);
  ck_assert_int_eq(run(CALLER), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(F.plan), "capturing"));
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), 0);
  ck_assert_int_eq(rt_fake_count_prefix("MemAlloc"), 0);
  rt_fake_set_capturing(false);
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(kf_plan_set_mode(F.plan, KF_MODE_GRAPH), KF_OK);
  rt_fake_set_capturing(true);
  ck_assert_int_eq(run(CALLER), KF_OK);
  /* inside the caller's capture: recorded as stream work, no own graph */
  ck_assert_int_eq(rt_fake_count_prefix("GraphCreate"), 0);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), NL);
  /* only stream work during a capture: no pointer queries */
  ck_assert_int_eq(rt_fake_count_prefix("PointerGetAttribute"), 0);
  finish();
}
END_TEST

START_TEST(caller_workspace) {
  ck_assert_int_eq(kf_plan_set_workspace(F.plan, (void *)(uintptr_t)(DEV + 0x40000), 100),
                   KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_plan_set_workspace(F.plan, (void *)(uintptr_t)(DEV + 0x40010), 8192),
                   KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_plan_set_workspace(F.plan, (void *)(uintptr_t)(DEV + 0x40000), 8192), KF_OK);
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("MemAlloc"), 0);
  char want[64];
  snprintf(want, sizeof want, "args=%#llx,%#llx", (unsigned long long)(DEV + 0x40000),
           (unsigned long long)(DEV + 0x40000 + 4096));
  ck_assert_int_ge(rt_fake_find(0, "LaunchKernel fn=k2_add", want), 0);
  finish();
}
END_TEST

/* ---- occupancy ------------------------------------------------------------------- */

START_TEST(occupancy_measured_and_decided) {
  rt_fake_set_kernel("k2_add", 255, 64, 0);
  ck_assert_int_eq(load(), KF_OK);
  const struct rt_plan *rp = F.plan->rt;
  ck_assert_int_eq(rp->launches[L_A].occ.regs, 32);
  ck_assert_int_eq(rp->launches[L_A].occ.blocks_per_sm, 8);
  ck_assert_double_eq_tol(rp->launches[L_A].occ.occupancy, 1.0, 1e-9);
  ck_assert_int_eq(rp->launches[L_C].occ.regs, 255);
  ck_assert_int_eq(rp->launches[L_C].occ.local_bytes, 64);
  /* the pipeline's step after a load: one decision per launch, in the
   * fuser's (the one) decision log */
  pl_feedback_note(F.plan);
  const fuse_plan *fp = F.plan->fuse;
  const fuse_decision *d[NL] = {0};
  int n = 0;
  for (int i = 0; i < fp->n_decisions; i++) {
    if (strcmp(fp->decisions[i].rule, "occupancy") != 0) continue;
    int launch = -1;
    ck_assert_int_eq(sscanf(fp->decisions[i].text, "launch %d", &launch), 1);
    ck_assert(launch >= 0 && launch < NL && !d[launch]);
    d[launch] = &fp->decisions[i];
    n++;
  }
  ck_assert_int_eq(n, NL);
  ck_assert(d[L_C]->accepted);
  ck_assert(!d[L_A]->accepted);
  ck_assert_ptr_nonnull(strstr(d[L_C]->text, "spills 64 bytes"));
  /* a second load replaces them, never adds */
  ck_assert_int_eq(load(), KF_OK);
  pl_feedback_note(F.plan);
  n = 0;
  for (int i = 0; i < F.plan->fuse->n_decisions; i++)
    n += strcmp(F.plan->fuse->decisions[i].rule, "occupancy") == 0;
  ck_assert_int_eq(n, NL);
  finish();
}
END_TEST

START_TEST(occupancy_rule) {
  rt_occ fused = {.regs = 128, .occupancy = 0.5};
  rt_occ parts[2] = {{.regs = 32, .occupancy = 1.0}, {.regs = 64, .occupancy = 0.75}};
  char why[200];
  ck_assert(fuse_occ_decide(&fused, parts, 2, 0.20, why, sizeof why));
  ck_assert_ptr_nonnull(strstr(why, "occupancy 50% is more than 20% below its parts' lowest 75%"));
  fused.occupancy = 0.625;
  ck_assert(!fuse_occ_decide(&fused, parts, 2, 0.20, why, sizeof why));
  fused.local_bytes = 8;
  ck_assert(fuse_occ_decide(&fused, parts, 2, 0.20, why, sizeof why));
  ck_assert(!fuse_occ_decide(&(rt_occ){.occupancy = 0.1}, NULL, 0, 0.2, why, sizeof why));
}
END_TEST

/* ---- DLPack ---------------------------------------------------------------------- */

static void dl_fill(DLManagedTensorVersioned *m, int64_t *shape, void *data) {
  memset(m, 0, sizeof *m);
  m->version = (DLPackVersion){1, 1};
  m->dl_tensor.data = data;
  m->dl_tensor.device = (DLDevice){kDLCUDA, 0};
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
  m->dl_tensor.shape = shape;
}

START_TEST(dlpack_versioned_and_legacy) {
  ck_assert_int_eq(load(), KF_OK);
  int64_t shape[1] = {N}, strides[1] = {1};
  DLManagedTensorVersioned t[4], *in[2] = {&t[0], &t[1]}, *out[2] = {&t[2], &t[3]};
  /* base pointer + byte_offset is honoured */
  dl_fill(&t[0], shape, (void *)(uintptr_t)(DEV - 64));
  t[0].dl_tensor.byte_offset = 64;
  dl_fill(&t[1], shape, F.in[1].data);
  t[1].dl_tensor.strides = strides;
  dl_fill(&t[2], shape, F.out[0].data);
  dl_fill(&t[3], shape, F.out[1].data);
  ck_assert_int_eq(kf_plan_run_dlpack(F.plan, in, 2, out, 2, CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), NL);
  t[3].flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  ck_assert_int_eq(kf_plan_run_dlpack(F.plan, in, 2, out, 2, CALLER), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(F.plan), "read-only"));
  t[3].flags = 0;
  t[0].dl_tensor.device.device_type = kDLCPU;
  ck_assert_int_eq(kf_plan_run_dlpack(F.plan, in, 2, out, 2, CALLER), KF_ERR_INVALID_ARG);
  t[0].dl_tensor.device.device_type = kDLCUDA;
  strides[0] = 2;
  ck_assert_int_eq(kf_plan_run_dlpack(F.plan, in, 2, out, 2, CALLER), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(F.plan), "strided"));
  strides[0] = 1;
  t[2].dl_tensor.dtype = (DLDataType){kDLFloat, 16, 1};
  ck_assert_int_eq(kf_plan_run_dlpack(F.plan, in, 2, out, 2, CALLER), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(F.plan), "dtype f16"));
  t[2].dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
  t[1].version.major = 2;
  ck_assert_int_eq(kf_plan_run_dlpack(F.plan, in, 2, out, 2, CALLER), KF_ERR_UNSUPPORTED);
  t[1].version.major = 1;
  /* legacy */
  DLManagedTensor l[4], *lin[2] = {&l[0], &l[1]}, *lout[2] = {&l[2], &l[3]};
  for (int i = 0; i < 4; i++) {
    memset(&l[i], 0, sizeof l[i]);
    l[i].dl_tensor = t[i].dl_tensor;
  }
  ck_assert_int_eq(kf_plan_run_dlpack_legacy(F.plan, lin, 2, lout, 2, CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), 2 * NL);
  finish();
}
END_TEST

START_TEST(dlpack_abi_layout) {
  /* Offsets fixed by the DLPack v1 ABI on LP64. */
  ck_assert_uint_eq(sizeof(DLDevice), 8);
  ck_assert_uint_eq(sizeof(DLDataType), 4);
  ck_assert_uint_eq(offsetof(DLTensor, ndim), 16);
  ck_assert_uint_eq(offsetof(DLTensor, dtype), 20);
  ck_assert_uint_eq(offsetof(DLTensor, shape), 24);
  ck_assert_uint_eq(offsetof(DLTensor, byte_offset), 40);
  ck_assert_uint_eq(sizeof(DLTensor), 48);
  ck_assert_uint_eq(offsetof(DLManagedTensorVersioned, flags), 24);
  ck_assert_uint_eq(offsetof(DLManagedTensorVersioned, dl_tensor), 32);
  ck_assert_uint_eq(offsetof(DLManagedTensor, deleter), 56);
}
END_TEST

/* ---- the per-run path: what a warm run asks of the driver ---------------------- */

/* The fake logs every call that does work; these wrappers count the ones
 * it does not log (queries), so a test can assert on every driver call a
 * run makes. */
static rt_driver counting;
static int n_unlogged, n_get_current, n_is_capturing;

#define FWD(field, params, args)         \
  static CUresult c_##field params {     \
    n_unlogged++;                        \
    return rt_fake_driver()->field args; \
  }
FWD(Init, (unsigned int f), (f))
FWD(DriverGetVersion, (int *v), (v))
FWD(GetErrorName, (CUresult r, const char **s), (r, s))
FWD(GetErrorString, (CUresult r, const char **s), (r, s))
FWD(DeviceGetCount, (int *n), (n))
FWD(DeviceGet, (CUdevice * d, int o), (d, o))
FWD(DeviceGetName, (char *s, int n, CUdevice d), (s, n, d))
FWD(DeviceTotalMem, (size_t * b, CUdevice d), (b, d))
FWD(DeviceGetAttribute, (int *v, CUdevice_attribute a, CUdevice d), (v, a, d))
FWD(CtxGetDevice, (CUdevice * d), (d))
FWD(CtxGetStreamPriorityRange, (int *l, int *g), (l, g))
FWD(FuncGetAttribute, (int *v, CUfunction_attribute a, CUfunction f), (v, a, f))
FWD(OccupancyMaxActiveBlocksPerMultiprocessor, (int *b, CUfunction f, int n, size_t s),
    (b, f, n, s))
FWD(MemGetInfo, (size_t * f, size_t *t), (f, t))
FWD(EventElapsedTime, (float *ms, CUevent a, CUevent b), (ms, a, b))
#undef FWD

static CUresult c_CtxGetCurrent(CUcontext *c) {
  n_unlogged++;
  n_get_current++;
  return rt_fake_driver()->CtxGetCurrent(c);
}

static CUresult c_StreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) {
  n_unlogged++;
  n_is_capturing++;
  return rt_fake_driver()->StreamIsCapturing(s, st);
}

/* Replaces the fixture's driver before anything was loaded. */
static void use_counting_driver(void) {
  counting = *rt_fake_driver();
#define SET(field) counting.field = c_##field;
  SET(Init)
  SET(DriverGetVersion) SET(GetErrorName) SET(GetErrorString) SET(DeviceGetCount) SET(DeviceGet)
      SET(DeviceGetName) SET(DeviceTotalMem) SET(DeviceGetAttribute) SET(CtxGetDevice)
          SET(CtxGetStreamPriorityRange) SET(FuncGetAttribute)
              SET(OccupancyMaxActiveBlocksPerMultiprocessor) SET(MemGetInfo) SET(EventElapsedTime)
                  SET(CtxGetCurrent) SET(StreamIsCapturing)
#undef SET
                      rt_driver_override(&counting);
}

/* What a CUDA runtime program has: the plan's context current on the
 * calling thread (else every run pushes and pops it). */
static void make_current(void) {
  rt_fake_driver()->CtxPushCurrent(F.ctx->rt->cuctx);
}

static void finish_current(void) {
  rt_fake_driver()->CtxPopCurrent(NULL);
  finish();
}

/* Driver calls of one run, logged (the fake's lines) and not. */
typedef struct calls {
  int lines, unlogged, get_current, is_capturing;
} calls;

static calls mark(void) {
  return (calls){rt_fake_count(), n_unlogged, n_get_current, n_is_capturing};
}

/* The lines logged since m, each expected to start with prefix. */
static int lines_since(calls m, const char *prefix) {
  for (int i = m.lines; i < rt_fake_count(); i++)
    ck_assert_msg(strncmp(rt_fake_line(i), prefix, strlen(prefix)) == 0,
                  "unexpected driver call on the per-run path: %s", rt_fake_line(i));
  return rt_fake_count() - m.lines;
}

START_TEST(warm_plain_run_is_launches_only) {
  use_counting_driver();
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK); /* the first run checks the pointers */
  /* no context current on this thread: pushed and popped around the run */
  calls m = mark();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count() - m.lines, NL + 2);
  ck_assert_int_eq(rt_fake_find(m.lines, "CtxPushCurrent", NULL), m.lines);
  ck_assert_int_eq(rt_fake_find(m.lines, "CtxPopCurrent", NULL), rt_fake_count() - 1);
  ck_assert_int_eq(n_unlogged - m.unlogged, 1);
  make_current();
  for (int rep = 0; rep < 3; rep++) {
    m = mark();
    ck_assert_int_eq(run(CALLER), KF_OK);
    /* exactly the launches, plus the one cuCtxGetCurrent that tells
     * whether the plan's context must be pushed */
    ck_assert_int_eq(lines_since(m, "LaunchKernel"), NL);
    ck_assert_int_eq(n_get_current - m.get_current, 1);
    ck_assert_int_eq(n_is_capturing - m.is_capturing, 0);
    ck_assert_int_eq(n_unlogged - m.unlogged, 1);
  }
  /* a new address: its two pointer queries, and the capture status that
   * decides whether the driver may be asked */
  F.out[1].data = (char *)F.out[1].data + 0x8000;
  m = mark();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("PointerGetAttribute"), 2 * 4 + 2);
  ck_assert_int_eq(rt_fake_count() - m.lines, NL + 2);
  ck_assert_int_eq(n_is_capturing - m.is_capturing, 1);
  ck_assert_int_eq(n_unlogged - m.unlogged, 2);
  /* and warm again */
  m = mark();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(lines_since(m, "LaunchKernel"), NL);
  ck_assert_int_eq(n_unlogged - m.unlogged, 1);
  no_sync();
  finish_current();
}
END_TEST

START_TEST(warm_graph_run_is_one_graph_launch) {
  use_counting_driver();
  ck_assert_int_eq(kf_plan_set_mode(F.plan, KF_MODE_GRAPH), KF_OK);
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK); /* builds and instantiates */
  make_current();
  for (int rep = 0; rep < 3; rep++) {
    calls m = mark();
    ck_assert_int_eq(run(CALLER), KF_OK);
    ck_assert_int_eq(lines_since(m, "GraphLaunch"), 1);
    /* cuCtxGetCurrent, and cuStreamIsCapturing: a graph cannot be
     * replayed into the caller's capture, so graph mode must know */
    ck_assert_int_eq(n_get_current - m.get_current, 1);
    ck_assert_int_eq(n_is_capturing - m.is_capturing, 1);
    ck_assert_int_eq(n_unlogged - m.unlogged, 2);
  }
  /* a new output address: one node updated in place, then the replay */
  F.out[1].data = (char *)F.out[1].data + 0x8000;
  calls m = mark();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphExecKernelNodeSetParams"), 1);
  ck_assert_int_eq(rt_fake_count() - m.lines, 2 + 1 + 1); /* 2 pointer queries */
  m = mark();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(lines_since(m, "GraphLaunch"), 1);
  ck_assert_int_eq(F.plan->rt->graph_updates, 1);
  finish_current();
}
END_TEST

START_TEST(swapped_buffers_are_not_queried_again) {
  use_counting_driver();
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK);
  make_current();
  int queries = rt_fake_count_prefix("PointerGetAttribute");
  /* ping-pong: x and c trade buffers every run (valid: no overlap) */
  for (int rep = 0; rep < 4; rep++) {
    void *t = F.in[0].data;
    F.in[0].data = F.out[0].data;
    F.out[0].data = t;
    calls m = mark();
    ck_assert_int_eq(run(CALLER), KF_OK);
    ck_assert_int_eq(lines_since(m, "LaunchKernel"), NL);
  }
  ck_assert_int_eq(rt_fake_count_prefix("PointerGetAttribute"), queries);
  /* the overlap check still runs on a new combination */
  void *keep = F.out[1].data;
  F.out[1].data = F.in[0].data;
  ck_assert_int_eq(run(CALLER), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(F.plan), "overlaps inputs[0] (x)"));
  F.out[1].data = keep;
  ck_assert_int_eq(run(CALLER), KF_OK);
  finish_current();
}
END_TEST

START_TEST(capture_after_warm_runs) {
  use_counting_driver();
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK);
  make_current();
  /* plain mode, known tensors: the same launches, captured by the caller */
  rt_fake_set_capturing(true);
  calls m = mark();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(lines_since(m, "LaunchKernel"), NL);
  /* a new address during a capture: not asked, and asked after it */
  F.out[0].data = (char *)F.out[0].data + 0x8000;
  m = mark();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(lines_since(m, "LaunchKernel"), NL);
  ck_assert_int_eq(n_is_capturing - m.is_capturing, 1);
  rt_fake_set_capturing(false);
  m = mark();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count() - m.lines, NL + 2);
  ck_assert_int_ge(rt_fake_find(m.lines, "PointerGetAttribute", NULL), 0);
  /* graph mode asks every run: inside a capture it records launches */
  ck_assert_int_eq(kf_plan_set_mode(F.plan, KF_MODE_GRAPH), KF_OK);
  ck_assert_int_eq(run(CALLER), KF_OK);
  rt_fake_set_capturing(true);
  m = mark();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(n_is_capturing - m.is_capturing, 1);
  ck_assert_int_eq(rt_fake_find(m.lines, "GraphLaunch", NULL), -1);
  ck_assert_int_ge(rt_fake_find(m.lines, "LaunchKernel", NULL), 0);
  rt_fake_set_capturing(false);
  finish_current();
}
END_TEST

/* ---- kf_plan_run_ptrs: addresses only, kf_plan_run's path -------------------- */

static void *P_in[2], *P_out[2];

/* The fixture's tensors as addresses. */
static void ptrs_from_fixture(void) {
  for (int i = 0; i < 2; i++) P_in[i] = F.in[i].data, P_out[i] = F.out[i].data;
}

static kf_status run_ptrs(void *stream) {
  ptrs_from_fixture();
  return kf_plan_run_ptrs(F.plan, P_in, 2, P_out, 2, stream);
}

/* The launch lines logged from index `from`, joined. */
static void launch_lines(int from, const char *prefix, char *buf, size_t cap) {
  buf[0] = 0;
  for (int i = from; i < rt_fake_count(); i++)
    if (strncmp(rt_fake_line(i), prefix, strlen(prefix)) == 0) {
      strncat(buf, rt_fake_line(i), cap - strlen(buf) - 2);
      strncat(buf, "\n", cap - strlen(buf) - 1);
    }
}

START_TEST(ptrs_run_like_tensors) {
  static char by_ptrs[4096], by_tensors[4096];
  ck_assert_int_eq(load(), KF_OK);
  int m = rt_fake_count();
  ck_assert_int_eq(run_ptrs(CALLER), KF_OK); /* cold: the same pointer queries */
  ck_assert_int_eq(rt_fake_count_prefix("PointerGetAttribute"), 2 * 4);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), NL);
  launch_lines(m, "LaunchKernel", by_ptrs, sizeof by_ptrs);
  m = rt_fake_count();
  ck_assert_int_eq(run(CALLER), KF_OK); /* the cache is shared: nothing asked */
  ck_assert_int_eq(rt_fake_count_prefix("PointerGetAttribute"), 2 * 4);
  launch_lines(m, "LaunchKernel", by_tensors, sizeof by_tensors);
  ck_assert_str_eq(by_ptrs, by_tensors);
  char want[128];
  snprintf(want, sizeof want, "fn=k3_relu grid=4 block=256 smem=0 stream=0xca11 args=%#llx,%#llx",
           (unsigned long long)DEV, (unsigned long long)(DEV + 0x11000));
  ck_assert_msg(strstr(by_ptrs, want), "'%s' lacks '%s'", by_ptrs, want);
  /* a new address through the pointer entry: asked once, then bound */
  F.out[1].data = (char *)F.out[1].data + 0x8000;
  m = rt_fake_count();
  ck_assert_int_eq(run_ptrs(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("PointerGetAttribute"), 2 * 4 + 2);
  snprintf(want, sizeof want, "args=%#llx,%#llx", (unsigned long long)DEV,
           (unsigned long long)(DEV + 0x19000));
  ck_assert_int_ge(rt_fake_find(m, "LaunchKernel fn=k3_relu", want), 0);
  no_sync();
  finish();
}
END_TEST

START_TEST(ptrs_graph_and_streams_modes) {
  ck_assert_int_eq(kf_plan_set_mode(F.plan, KF_MODE_GRAPH), KF_OK);
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run_ptrs(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphInstantiate"), 1);
  F.out[0].data = (char *)F.out[0].data + 0x8000;
  ck_assert_int_eq(run_ptrs(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("GraphExecKernelNodeSetParams"), 1);
  ck_assert_int_eq(rt_fake_count_prefix("GraphLaunch"), 2);
  ck_assert_int_eq(kf_plan_set_mode(F.plan, KF_MODE_STREAMS), KF_OK);
  int m = rt_fake_count();
  ck_assert_int_eq(run_ptrs(CALLER), KF_OK);
  ck_assert_int_ge(rt_fake_find(m, "LaunchKernel fn=k0_exp_heavy", NULL), 0);
  ck_assert_int_ge(rt_fake_find(m, "StreamWaitEvent", "stream=0xca11"), 0);
  no_sync();
  finish();
}
END_TEST

/* Runs addresses with one thing wrong; expects INVALID_ARG naming
 * `needle`, and no launch. */
static void expect_invalid_ptrs(void *const *in, int n_in, void *const *out, int n_out,
                                const char *needle) {
  int launches = rt_fake_count_prefix("LaunchKernel");
  ck_assert_int_eq(kf_plan_run_ptrs(F.plan, in, n_in, out, n_out, CALLER), KF_ERR_INVALID_ARG);
  ck_assert_msg(strstr(kf_plan_errmsg(F.plan), needle), "message '%s' lacks '%s'",
                kf_plan_errmsg(F.plan), needle);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), launches);
}

START_TEST(ptrs_validation_before_launch) {
  ck_assert_int_eq(load(), KF_OK);
  ptrs_from_fixture();
  void *in[2], *out[2];
  expect_invalid_ptrs(P_in, 2, P_out, 1,
                      "kf_plan_run_ptrs: 2 inputs and 1 outputs given, the graph has 2 and 2");
  expect_invalid_ptrs(P_in, 3, P_out, 2, "3 inputs and 2 outputs given");
  expect_invalid_ptrs(NULL, 2, P_out, 2, "kf_plan_run_ptrs: NULL pointer array");
  memcpy(out, P_out, sizeof out);
  out[0] = NULL;
  expect_invalid_ptrs(P_in, 2, out, 2, "outputs[0] (c): data is NULL");
  memcpy(in, P_in, sizeof in);
  in[1] = (char *)in[1] + 2;
  expect_invalid_ptrs(in, 2, P_out, 2, "inputs[1] (y): ");
  ck_assert_ptr_nonnull(
      strstr(kf_plan_errmsg(F.plan), "not aligned to its element size (4 bytes)"));
  memcpy(in, P_in, sizeof in);
  static float host[N];
  in[0] = host;
  expect_invalid_ptrs(in, 2, P_out, 2, "inputs[0] (x): ");
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(F.plan), "not CUDA memory"));
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(F.plan), "kf_plan_run_ptrs takes device pointers"));
  memcpy(out, P_out, sizeof out);
  out[1] = (char *)P_in[0] + 1024;
  expect_invalid_ptrs(P_in, 2, out, 2, "outputs[1] (d) overlaps inputs[0] (x)");
  memcpy(out, P_out, sizeof out);
  out[1] = (char *)out[0] + 4;
  expect_invalid_ptrs(P_in, 2, out, 2, "outputs[1] (d) overlaps outputs[0] (c)");
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), 0);
  /* a failed run does not vouch for its addresses: the same bad set again
   * is refused again */
  expect_invalid_ptrs(P_in, 2, out, 2, "outputs[1] (d) overlaps outputs[0] (c)");
  ck_assert_int_eq(run_ptrs(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count_prefix("LaunchKernel"), NL);
  ck_assert_int_eq(kf_plan_run_ptrs(NULL, P_in, 2, P_out, 2, CALLER), KF_ERR_INVALID_ARG);
  finish();
}
END_TEST

START_TEST(warm_ptrs_run_is_launches_only) {
  use_counting_driver();
  ck_assert_int_eq(load(), KF_OK);
  ck_assert_int_eq(run_ptrs(CALLER), KF_OK); /* the first run checks the pointers */
  make_current();
  for (int rep = 0; rep < 3; rep++) {
    calls m = mark();
    ck_assert_int_eq(run_ptrs(CALLER), KF_OK);
    ck_assert_int_eq(lines_since(m, "LaunchKernel"), NL);
    ck_assert_int_eq(n_get_current - m.get_current, 1);
    ck_assert_int_eq(n_is_capturing - m.is_capturing, 0);
    ck_assert_int_eq(n_unlogged - m.unlogged, 1);
  }
  /* alternating with kf_plan_run on the same addresses stays warm */
  calls m = mark();
  ck_assert_int_eq(run(CALLER), KF_OK);
  ck_assert_int_eq(lines_since(m, "LaunchKernel"), NL);
  ck_assert_int_eq(n_unlogged - m.unlogged, 1);
  /* a new address: its two pointer queries and the capture status */
  F.in[1].data = (char *)F.in[1].data + 0x4000;
  m = mark();
  ck_assert_int_eq(run_ptrs(CALLER), KF_OK);
  ck_assert_int_eq(rt_fake_count() - m.lines, NL + 2);
  ck_assert_int_eq(n_is_capturing - m.is_capturing, 1);
  m = mark();
  ck_assert_int_eq(run_ptrs(CALLER), KF_OK);
  ck_assert_int_eq(lines_since(m, "LaunchKernel"), NL);
  ck_assert_int_eq(n_unlogged - m.unlogged, 1);
  no_sync();
  finish_current();
}
END_TEST

/* The sorted overlap sweep (more than 16 tensors) against the pairwise
 * definition, on random placements: outputs may overlap nothing, inputs
 * may overlap each other. */
#define OV_N 12
START_TEST(overlap_sweep_matches_pairs) {
  kf_ctx *ctx;
  kf_graph *g;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t len[OV_N];
  for (int i = 0; i < OV_N; i++) {
    char name[16];
    snprintf(name, sizeof name, "x%d", i);
    len[i] = 1 + i % 5;
    kf_set_output(g, kf_relu(g, kf_input(g, name, KF_F32, 1, &len[i])));
  }
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  kf_plan *plan = calloc(1, sizeof *plan);
  plan->ctx = ctx;
  plan->knobs = core_knobs_get(ctx);
  plan->graph = g;
  ck_assert_ptr_nonnull(pl_rt_plan(plan));
  kf_tensor in[OV_N], out[OV_N];
  unsigned seed = 12345;
  int fails = 0;
  for (int trial = 0; trial < 2000; trial++) {
    for (int k = 0; k < 2 * OV_N; k++) {
      seed = seed * 1103515245u + 12345u;
      uintptr_t at = 0x10000 + 4 * (uintptr_t)((seed >> 8) % 400);
      kf_tensor *t = k < OV_N ? &in[k] : &out[k - OV_N];
      *t = (kf_tensor){(void *)at, KF_F32, 1, {len[k % OV_N]}};
    }
    bool want = false;
    for (int j = 0; j < OV_N; j++) {
      uintptr_t a = (uintptr_t)out[j].data, an = a + 4 * (uintptr_t)len[j];
      for (int k = 0; k < 2 * OV_N; k++) {
        const kf_tensor *t = k < OV_N ? &in[k] : &out[k - OV_N];
        if (t == &out[j]) continue;
        uintptr_t b = (uintptr_t)t->data, bn = b + 4 * (uintptr_t)len[k % OV_N];
        want = want || (a < bn && b < an);
      }
    }
    kf_status st = rt_validate_ex(plan->rt, NULL, in, OV_N, out, OV_N, false);
    ck_assert_msg((st != KF_OK) == want, "trial %d: status %d, overlap expected: %d", trial,
                  (int)st, want);
    if (st != KF_OK) {
      ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(plan), "overlaps"));
      fails++;
    }
  }
  ck_assert_int_gt(fails, 100); /* both outcomes exercised */
  ck_assert_int_lt(fails, 1900);
  rt_plan_free(plan->rt);
  free(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- kfuse info --------------------------------------------------------------- */

START_TEST(cli_info) {
  const char *cli = getenv("KFUSE_CLI");
  if (!cli) return; /* only under ctest, which says where the program is */
  char cmd[1024], out[8192];
  snprintf(cmd, sizeof cmd, "%s info 2>&1", cli);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  ck_assert_int_eq(pclose(p), 0);
  ck_assert_msg(strstr(out, "kfuse        " KFUSE_VERSION_STRING), "%s", out);
  ck_assert_msg(strstr(out, "nvrtc        1"), "%s", out);
  ck_assert_msg(strstr(out, "cache"), "%s", out);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib)
    ck_assert_msg(strstr(out, "driver       CUDA") && (strstr(out, "gpu 0") || strstr(out, "none")),
                  "%s", out);
  else
    ck_assert_msg(strstr(out,
                         "no NVIDIA driver found (libcuda.so.1): running needs a GPU; "
                         "compiling works with --arch sm_90"),
                  "%s", out);
  snprintf(cmd, sizeof cmd, "%s info extra >/dev/null 2>&1", cli);
  ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("runtime");
  TCase *dev = tcase_create("devices");
  tcase_add_test(dev, no_driver_says_so);
  tcase_add_test(dev, fake_device_query);
  tcase_add_test(dev, status_mapping);
  tcase_add_test(dev, occupancy_rule);
  tcase_add_test(dev, dlpack_abi_layout);
  tcase_add_test(dev, cli_info);
  tcase_add_test(dev, overlap_sweep_matches_pairs);
  suite_add_tcase(s, dev);
  TCase *tc = tcase_create("plans");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_add_test(tc, load_and_run_plain);
  tcase_add_test(tc, big_shared_memory_opt_in);
  tcase_add_test(tc, persistent_grid_fits_resident_blocks);
  tcase_add_test(tc, l2_prefetch_distance_set_at_load);
  tcase_add_test(tc, callers_context_is_used);
  tcase_add_test(tc, validation_before_launch);
  tcase_add_test(tc, pointer_check_cached);
  tcase_add_test(tc, schedule_critical_path);
  tcase_add_test(tc, streams_fork_join_order);
  tcase_add_test(tc, programmatic_dependent_launch);
  tcase_add_test(tc, workspace_reuse_orders_launches);
  tcase_add_test(tc, graph_build_once_update_in_place);
  tcase_add_test(tc, oom_on_load_then_usable);
  tcase_add_test(tc, oom_on_run_then_usable);
  tcase_add_test(tc, sticky_error_loses_context);
  tcase_add_test(tc, capture_refuses_loading);
  tcase_add_test(tc, caller_workspace);
  tcase_add_test(tc, occupancy_measured_and_decided);
  tcase_add_test(tc, dlpack_versioned_and_legacy);
  tcase_add_test(tc, warm_plain_run_is_launches_only);
  tcase_add_test(tc, warm_graph_run_is_one_graph_launch);
  tcase_add_test(tc, swapped_buffers_are_not_queried_again);
  tcase_add_test(tc, capture_after_warm_runs);
  tcase_add_test(tc, ptrs_run_like_tensors);
  tcase_add_test(tc, ptrs_graph_and_streams_modes);
  tcase_add_test(tc, ptrs_validation_before_launch);
  tcase_add_test(tc, warm_ptrs_run_is_launches_only);
  suite_add_tcase(s, tc);
  return s;
}
