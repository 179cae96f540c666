/* test_gpu_runtime.c - the runtime on a real GPU: every example graph fused
 * against the CPU reference (or, when too big for it, against the same graph
 * unfused on the GPU), plain / streams / graph modes agreeing (graph
 * mode with new addresses updated in place), a caller's capture, plain runs
 * back to back and captured with programmatic dependent launch, DLPack,
 * a caller's workspace, and a tensor of more than 2^31 elements. Skips
 * (exit 77) without a GPU. */
#include <dirent.h>

#include "gpu_util.h"
#include "runtime/dlpack_types.h"

/* The CPU reference is the slow part: graphs with more input elements than
 * this are checked against their unfused plan instead (fusion off: one
 * kernel per op; kernels round like the reference, so fused and unfused
 * differ only by f32 evaluation order). KFUSE_EXAMPLE_MAX_ELEMS overrides. */
static int64_t example_budget(void) {
  const char *s = getenv("KFUSE_EXAMPLE_MAX_ELEMS");
  if (s) return atoll(s);
  return gpu_small() ? (1 << 20) : (int64_t)1 << 27;
}

static int64_t input_elems(kf_graph *g) {
  int64_t n = 0;
  for (int i = 0; i < kf_graph_num_inputs(g); i++) n += kf_value_numel(g, kf_graph_input(g, i));
  return n;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Compiles and runs g with opt on poisoned outputs, leaving the results in
 * io->hout. */
static void run_plan(kf_graph *g, const kf_options *opt, run_io *io, const char *what) {
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, opt, &plan) == KF_OK, "%s: compile failed: %s", what,
                kf_ctx_errmsg(G_ctx));
  io_poison(io);
  ck_assert_msg(kf_plan_run(plan, io->din, io->n_in, io->dout, io->n_out, NULL) == KF_OK,
                "%s: run failed: %s", what, kf_plan_errmsg(plan));
  io_fetch(io);
  kf_plan_destroy(plan);
}

/* How many outputs of io are bitwise equal to href. */
static int bitwise_equal(kf_graph *g, run_io *io) {
  int eq = 0;
  for (int j = 0; j < io->n_out; j++) {
    size_t bytes = (size_t)value_numel(g, kf_graph_output(g, j)) * kf_dtype_size(io->hout[j].dtype);
    eq += memcmp(io->hout[j].data, io->href[j].data, bytes) == 0;
  }
  return eq;
}

/* One example: fused against the reference, or against unfused on the GPU
 * when its inputs exceed the reference's budget. Returns 1 when bad. */
static int check_example(kf_graph *g, const char *name, uint64_t seed, int *by_ref) {
  kf_options opt;
  kf_options_init(&opt);
  run_io io;
  io_setup(g, &io, seed);
  int bad;
  const char *how;
  char extra[64] = "";
  if (input_elems(g) <= example_budget()) {
    bad = check_plan(g, &opt, &io, false, name);
    how = "fused vs CPU reference";
    (*by_ref)++;
  } else {
    kf_options unfused;
    kf_options_init(&unfused);
    unfused.fusion = false;
    unfused.horizontal = false;
    run_plan(g, &unfused, &io, name);
    io_keep_as_reference(&io);
    bad = check_plan(g, &opt, &io, true, name);
    snprintf(extra, sizeof extra, ", %d of %d outputs bitwise equal", bitwise_equal(g, &io), io.n_out);
    how = "fused vs unfused GPU (too big for the reference)";
  }
  printf("example %-24s %s: %s (%lld input elements, %d inputs, %d outputs%s)\n", name,
         bad ? "FAILED" : "ok", how, (long long)input_elems(g), io.n_in, io.n_out, extra);
  io_free(&io);
  return bad != 0;
}

/* Tensors one element off their 16-byte alignment: every kernel shape
 * takes its scalar fallback (row kernels' looped variant, strided
 * reductions' width-1 loop, pointwise scalar path), full and partial rows. */
static kf_graph *unaligned_graph(int which) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  kf_dtype dt = which % 2 ? KF_BF16 : KF_F32;
  int64_t rows = 64, cols = which < 2 ? 8192 : 1000;
  int64_t shape[2] = {rows, cols}, wshape[1] = {cols};
  kf_value x = kf_input(g, "x", dt, 2, shape);
  kf_value w = kf_input(g, "w", dt, 1, wshape);
  kf_value b = kf_input(g, "b", dt, 1, wshape);
  kf_set_output(g, kf_softmax(g, x, -1));
  kf_set_output(g, kf_layernorm(g, x, w, b, 1e-5));
  int ax0 = 0;
  kf_set_output(g, kf_sum(g, kf_mul(g, x, x), 1, &ax0, false)); /* column reduction */
  kf_set_output(g, kf_gelu(g, kf_add(g, x, w)));                /* pointwise, broadcast */
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

START_TEST(unaligned_tensors) {
  int failed = 0;
  for (int which = 0; which < 4; which++) {
    kf_graph *g = unaligned_graph(which);
    kf_options opt;
    kf_options_init(&opt);
    G_offset = kf_dtype_size(kf_value_dtype(g, kf_graph_input(g, 0)));
    run_io io;
    io_setup(g, &io, 77 + (uint64_t)which);
    char what[64];
    snprintf(what, sizeof what, "unaligned graph %d", which);
    int bad = check_plan(g, &opt, &io, false, what);
    printf("unaligned %d (%s, %lld cols, offset %zu bytes): %s\n", which,
           kf_dtype_name(kf_value_dtype(g, kf_graph_input(g, 0))),
           (long long)kf_value_shape(g, kf_graph_input(g, 0))[1], G_offset, bad ? "FAILED" : "ok");
    failed += bad != 0;
    io_free(&io);
    G_offset = 0;
    kf_graph_destroy(g);
  }
  ck_assert_int_eq(failed, 0);
}
END_TEST

START_TEST(example_graphs_fused_vs_reference) {
  const char *dir = KFUSE_SOURCE_DIR "/examples/graphs";
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  char **names = NULL;
  int n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".yaml")) {
      if (n == cap) {
        cap = cap ? 2 * cap : 64;
        names = realloc(names, (size_t)cap * sizeof *names);
        ck_assert(names != NULL);
      }
      names[n++] = strdup(e->d_name);
    }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  int by_ref = 0, failed = 0, skipped = 0;
  for (int i = 0; i < n; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    kf_graph *g = NULL;
    ck_assert_msg(kf_graph_load_yaml(G_ctx, path, &g) == KF_OK, "%s: %s", path,
                  kf_ctx_errmsg(G_ctx));
    /* Small sizes are for the sanitizers, which run ~100x slower: the
     * full-size examples are checked by the plain run. */
    if (gpu_small() && input_elems(g) > 16 * example_budget()) {
      printf("example %-24s skipped in small mode (%lld input elements)\n", names[i],
             (long long)input_elems(g));
      skipped++;
      kf_graph_destroy(g);
      free(names[i]);
      continue;
    }
    failed += check_example(g, names[i], (uint64_t)i + 1, &by_ref);
    kf_graph_destroy(g);
    free(names[i]);
  }
  free(names);
  printf("examples: %d checked (%d against the CPU reference, %d against unfused), %d failed\n",
         n - skipped, by_ref, n - skipped - by_ref, failed);
  print_worst("examples");
  ck_assert_int_eq(failed, 0);
  /* In small mode (sanitizers) the reference budget is too small for any
   * example; the plain run must check some against the reference. */
  if (!gpu_small()) ck_assert_int_gt(by_ref, 0);
}
END_TEST

/* Independent branches of different weights joined at the end: streams
 * and graph mode have real concurrency to get wrong. */
static kf_graph *branches_graph(int64_t rows, int64_t cols) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  int64_t shape[2] = {rows, cols};
  kf_value x = kf_input(g, "x", KF_F32, 2, shape);
  kf_value y = kf_input(g, "y", KF_F32, 2, shape);
  kf_value a = kf_softmax(g, x, -1);
  int ax = 1;
  kf_value b = kf_sum(g, kf_mul(g, y, y), 1, &ax, true);
  kf_value c = kf_tanh(g, kf_add(g, x, y));
  kf_value out = kf_add(g, kf_mul(g, a, b), c);
  kf_set_output(g, out);
  kf_set_output(g, b);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

START_TEST(modes_agree) {
  int64_t rows = gpu_small() ? 64 : 2048, cols = gpu_small() ? 256 : 1024;
  kf_graph *g = branches_graph(rows, cols);
  kf_options opt;
  kf_options_init(&opt);
  opt.fusion = false; /* several launches, so there is something to overlap */
  kf_plan *plan;
  ck_assert_int_eq(kf_compile(G_ctx, g, &opt, &plan), KF_OK);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  run_io io;
  io_setup(g, &io, 7);
  ck_assert_int_eq(kf_graph_run_reference(g, io.hin, io.n_in, io.href, io.n_out), KF_OK);
  size_t bytes0 = (size_t)(rows * cols) * 4, bytes1 = (size_t)rows * 4;
  void *first0 = malloc(bytes0), *first1 = malloc(bytes1);
  kf_run_mode modes[3] = {KF_MODE_PLAIN, KF_MODE_STREAMS, KF_MODE_GRAPH};
  for (int m = 0; m < 3; m++) {
    ck_assert_int_eq(kf_plan_set_mode(plan, modes[m]), KF_OK);
    for (int rep = 0; rep < 2; rep++) {
      io_poison(&io);
      ck_assert_msg(kf_plan_run(plan, io.din, io.n_in, io.dout, io.n_out, NULL) == KF_OK, "%s",
                    kf_plan_errmsg(plan));
      io_fetch(&io);
      ck_assert_int_eq(io_check(g, &io, "modes"), 0);
      if (m == 0 && rep == 0) {
        memcpy(first0, io.hout[0].data, bytes0);
        memcpy(first1, io.hout[1].data, bytes1);
      } else {
        ck_assert_msg(memcmp(first0, io.hout[0].data, bytes0) == 0, "mode %d differs from plain", m);
        ck_assert_msg(memcmp(first1, io.hout[1].data, bytes1) == 0, "mode %d differs from plain", m);
      }
    }
  }
  /* Graph mode with new output addresses: nodes updated in place. */
  CUdeviceptr old = (CUdeviceptr)(uintptr_t)io.dout[0].data;
  io.dout[0].data = (void *)(uintptr_t)dev_alloc(bytes0);
  int updates = plan->rt->graph_updates;
  io_poison(&io);
  ck_assert_int_eq(kf_plan_run(plan, io.din, io.n_in, io.dout, io.n_out, NULL), KF_OK);
  io_fetch(&io);
  ck_assert_int_gt(plan->rt->graph_updates, updates);
  ck_assert_msg(memcmp(first0, io.hout[0].data, bytes0) == 0, "graph mode after update differs");
  dev_free(old);
  printf("modes: plain, streams and graph agree bitwise on %d launches (%d streams); graph updated "
         "%d nodes in place\n",
         kf_plan_num_launches(plan), plan->rt->n_streams, plan->rt->graph_updates);
  free(first0);
  free(first1);
  io_free(&io);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(capture_into_callers_graph) {
  kf_graph *g = branches_graph(64, 512);
  kf_plan *plan;
  ck_assert_int_eq(kf_compile(G_ctx, g, NULL, &plan), KF_OK);
  run_io io;
  io_setup(g, &io, 11);
  ck_assert_int_eq(kf_graph_run_reference(g, io.hin, io.n_in, io.href, io.n_out), KF_OK);
  CUstream s;
  ck_assert_int_eq(G_drv->StreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
  /* Not loaded yet: refused during a capture, with a clear message. */
  ck_assert_int_eq(G_drv->StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  ck_assert_int_eq(kf_plan_run(plan, io.din, io.n_in, io.dout, io.n_out, s), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_plan_errmsg(plan), "capturing"));
  CUgraph cg = NULL;
  G_drv->StreamEndCapture(s, &cg);
  if (cg) G_drv->GraphDestroy(cg);
  /* Loaded first: captured, then replayed twice. */
  ck_assert_int_eq(kf_plan_set_mode(plan, KF_MODE_GRAPH), KF_OK);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  ck_assert_int_eq(G_drv->StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  ck_assert_msg(kf_plan_run(plan, io.din, io.n_in, io.dout, io.n_out, s) == KF_OK, "%s",
                kf_plan_errmsg(plan));
  ck_assert_int_eq(G_drv->StreamEndCapture(s, &cg), CUDA_SUCCESS);
  CUgraphExec x;
  ck_assert_int_eq(G_drv->GraphInstantiateWithFlags(&x, cg, 0), CUDA_SUCCESS);
  for (int rep = 0; rep < 2; rep++) {
    io_poison(&io);
    ck_assert_int_eq(G_drv->GraphLaunch(x, s), CUDA_SUCCESS);
    io_fetch(&io);
    ck_assert_int_eq(io_check(g, &io, "captured"), 0);
  }
  G_drv->GraphExecDestroy(x);
  G_drv->GraphDestroy(cg);
  G_drv->StreamDestroy(s);
  io_free(&io);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}
END_TEST

/* Plain mode launches with programmatic dependent launch on sm_90: each
 * kernel may launch while the one ahead of it drains, and waits for it in
 * kf_grid_dep_sync. Two input sets run alternately, back to back with no
 * sync between, through one shared workspace: a kernel that read or wrote
 * before the one ahead of it was done (in its own run or the run before)
 * would show in the outputs of the last two runs. Then the same plain runs
 * are captured into the caller's graph (there PDL launches become
 * programmatic edges) and replayed. */
START_TEST(pdl_back_to_back_and_captured) {
  int64_t rows = gpu_small() ? 64 : 1024, cols = gpu_small() ? 256 : 1024;
  kf_graph *g = branches_graph(rows, cols);
  kf_options opt;
  kf_options_init(&opt);
  opt.fusion = false; /* a chain of launches through the workspace */
  kf_plan *plan;
  ck_assert_int_eq(kf_compile(G_ctx, g, &opt, &plan), KF_OK);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  run_io io[2];
  for (int k = 0; k < 2; k++) {
    io_setup(g, &io[k], 21 + (uint64_t)k);
    ck_assert_int_eq(kf_graph_run_reference(g, io[k].hin, io[k].n_in, io[k].href, io[k].n_out),
                     KF_OK);
    io_poison(&io[k]);
  }
  for (int rep = 0; rep < 40; rep++) {
    run_io *r = &io[rep % 2];
    ck_assert_msg(kf_plan_run(plan, r->din, r->n_in, r->dout, r->n_out, NULL) == KF_OK, "%s",
                  kf_plan_errmsg(plan));
  }
  for (int k = 0; k < 2; k++) {
    io_fetch(&io[k]);
    ck_assert_int_eq(io_check(g, &io[k], "back to back"), 0);
  }
  CUstream s;
  ck_assert_int_eq(G_drv->StreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
  ck_assert_int_eq(G_drv->StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  for (int k = 0; k < 2; k++)
    ck_assert_msg(kf_plan_run(plan, io[k].din, io[k].n_in, io[k].dout, io[k].n_out, s) == KF_OK,
                  "%s", kf_plan_errmsg(plan));
  CUgraph cg = NULL;
  ck_assert_int_eq(G_drv->StreamEndCapture(s, &cg), CUDA_SUCCESS);
  CUgraphExec x;
  ck_assert_int_eq(G_drv->GraphInstantiateWithFlags(&x, cg, 0), CUDA_SUCCESS);
  for (int k = 0; k < 2; k++) io_poison(&io[k]);
  for (int rep = 0; rep < 3; rep++) ck_assert_int_eq(G_drv->GraphLaunch(x, s), CUDA_SUCCESS);
  for (int k = 0; k < 2; k++) {
    io_fetch(&io[k]);
    ck_assert_int_eq(io_check(g, &io[k], "captured"), 0);
  }
  printf("pdl: %d launches per run with %s; 40 alternating runs back to back and a captured "
         "pair agree with the reference\n",
         kf_plan_num_launches(plan),
         plan->rt->launches[0].pdl ? "programmatic dependent launch"
                                   : "plain launches (no PDL here)");
  G_drv->GraphExecDestroy(x);
  G_drv->GraphDestroy(cg);
  G_drv->StreamDestroy(s);
  for (int k = 0; k < 2; k++) io_free(&io[k]);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(dlpack_and_callers_workspace) {
  kf_graph *g = branches_graph(32, 256);
  kf_options opt;
  kf_options_init(&opt);
  opt.fusion = false; /* intermediates in the workspace */
  kf_plan *plan;
  ck_assert_int_eq(kf_compile(G_ctx, g, &opt, &plan), KF_OK);
  int64_t ws = kf_plan_workspace_size(plan);
  CUdeviceptr wsp = dev_alloc((size_t)ws + 256);
  ck_assert_int_eq(kf_plan_set_workspace(plan, (void *)(uintptr_t)wsp, (size_t)ws + 256), KF_OK);
  run_io io;
  io_setup(g, &io, 3);
  ck_assert_int_eq(kf_graph_run_reference(g, io.hin, io.n_in, io.href, io.n_out), KF_OK);
  DLManagedTensorVersioned t[4], *in[2] = {&t[0], &t[1]}, *out[2] = {&t[2], &t[3]};
  kf_tensor *all[4] = {&io.din[0], &io.din[1], &io.dout[0], &io.dout[1]};
  for (int i = 0; i < 4; i++) {
    memset(&t[i], 0, sizeof t[i]);
    t[i].version = (DLPackVersion){1, 0};
    t[i].dl_tensor.data = all[i]->data;
    t[i].dl_tensor.device = (DLDevice){kDLCUDA, (int32_t)G_ctx->rt->dev};
    t[i].dl_tensor.ndim = all[i]->rank;
    t[i].dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
    t[i].dl_tensor.shape = all[i]->shape;
  }
  io_poison(&io);
  ck_assert_msg(kf_plan_run_dlpack(plan, in, 2, out, 2, NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  io_fetch(&io);
  ck_assert_int_eq(io_check(g, &io, "dlpack"), 0);
  ck_assert(!plan->rt->ws_owned);
  ck_assert_uint_eq(plan->rt->ws, wsp);
  kf_plan_destroy(plan);
  dev_free(wsp);
  io_free(&io);
  kf_graph_destroy(g);
}
END_TEST

/* y = x * 2 + 1 over 2^31 + 4097 f32 elements: every index past 2^31 must
 * land where it belongs (64-bit index arithmetic). */
START_TEST(more_than_2_31_elements) {
  if (gpu_small()) {
    printf("big tensor: skipped with KFUSE_TEST_SMALL=1\n");
    return;
  }
  int64_t n = ((int64_t)1 << 31) + 4097;
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  kf_value x = kf_input(g, "x", KF_F32, 1, &n);
  kf_value y = kf_add(g, kf_mul(g, x, kf_scalar(g, 2.0, KF_F32)), kf_scalar(g, 1.0, KF_F32));
  kf_set_output(g, y);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  kf_plan *plan;
  ck_assert_msg(kf_compile(G_ctx, g, NULL, &plan) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
  size_t bytes = (size_t)n * 4;
  float *h = malloc(bytes);
  ck_assert_ptr_nonnull(h);
  for (int64_t i = 0; i < n; i++) h[i] = (float)(i % 1021) * 0.25f;
  kf_tensor tx = {(void *)(uintptr_t)dev_alloc(bytes), KF_F32, 1, {n}};
  kf_tensor ty = {(void *)(uintptr_t)dev_alloc(bytes), KF_F32, 1, {n}};
  G_drv->MemcpyHtoD((CUdeviceptr)(uintptr_t)tx.data, h, bytes);
  G_drv->MemsetD8((CUdeviceptr)(uintptr_t)ty.data, 0xff, bytes);
  ck_assert_msg(kf_plan_run(plan, &tx, 1, &ty, 1, NULL) == KF_OK, "%s", kf_plan_errmsg(plan));
  dev_sync();
  G_drv->MemcpyDtoH(h, (CUdeviceptr)(uintptr_t)ty.data, bytes);
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if (h[i] != (float)(i % 1021) * 0.5f + 1.0f && bad++ == 0) first = i;
  ck_assert_msg(bad == 0, "%lld of %lld wrong, first at %lld: %g", (long long)bad, (long long)n,
                (long long)first, first >= 0 ? (double)h[first] : 0.0);
  printf("big tensor: %lld f32 elements correct\n", (long long)n);
  free(h);
  dev_free((CUdeviceptr)(uintptr_t)tx.data);
  dev_free((CUdeviceptr)(uintptr_t)ty.data);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_runtime");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, example_graphs_fused_vs_reference);
  tcase_add_test(tc, unaligned_tensors);
  tcase_add_test(tc, modes_agree);
  tcase_add_test(tc, capture_into_callers_graph);
  tcase_add_test(tc, pdl_back_to_back_and_captured);
  tcase_add_test(tc, dlpack_and_callers_workspace);
  tcase_add_test(tc, more_than_2_31_elements);
  suite_add_tcase(s, tc);
  return s;
}
