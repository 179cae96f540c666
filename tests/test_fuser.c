/* test_fuser.c - the fusion pass: the done-when targets (softmax, layernorm,
 * residual rmsnorm, pointwise chains, many-tensor updates as one launch,
 * heterogeneous packing), switches, buffers, renderings, and golden plans
 * of the example graphs (tests/golden/plans; KFUSE_UPDATE_GOLDEN=1 rewrites). */
#include <math.h>

#include "check_main.h"
#include "fuser/fuse.h"
#include "fuser/render.h"
#include "fuser/text.h"
#include "fuser_util.h"

static int64_t S2[2] = {8192, 8192}, S1[1] = {8192};

static kf_graph *new_graph(void) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  return g;
}

/* Plans g, checks the invariants, returns the plan. */
static fuse_plan *plan_ok(kf_graph *g) {
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  fuse_plan *p = fz_plan(g);
  ck_assert_ptr_nonnull(p);
  char why[512];
  ck_assert_msg(fz_check_plan(g, p, why, sizeof why), "%s", why);
  return p;
}

static void one_kernel(kf_graph *g, fuse_kind kind) {
  fuse_plan *p = plan_ok(g);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->n_kernels, 1);
  ck_assert_str_eq(fuse_kind_name(p->kernels[0].kind), fuse_kind_name(kind));
  ck_assert_int_eq(p->workspace_bytes, 0);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}

START_TEST(softmax_one_row_kernel) {
  kf_dtype dts[3] = {KF_F32, KF_BF16, KF_F16};
  for (int i = 0; i < 3; i++) {
    kf_graph *g = new_graph();
    kf_set_output(g, kf_softmax(g, kf_input(g, "x", dts[i], 2, S2), -1));
    one_kernel(g, FK_ROW);
    g = new_graph();
    kf_set_output(g, kf_log_softmax(g, kf_input(g, "x", dts[i], 2, S2), -1));
    one_kernel(g, FK_ROW);
  }
}
END_TEST

START_TEST(softmax_by_hand_one_kernel) {
  /* Without keepdim: the reduced values are reshaped to broadcast. */
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, S2);
  int last = -1;
  int64_t col[2] = {8192, 1};
  kf_value m = kf_reshape(g, kf_max(g, x, 1, &last, false), 2, col);
  kf_value e = kf_exp(g, kf_sub(g, x, m));
  kf_value s = kf_broadcast_to(g, kf_sum(g, e, 1, &last, true), 2, S2);
  kf_set_output(g, kf_div(g, e, s));
  one_kernel(g, FK_ROW);
}
END_TEST

START_TEST(layernorm_one_row_kernel) {
  kf_dtype dts[2] = {KF_F32, KF_BF16};
  for (int i = 0; i < 2; i++) {
    kf_graph *g = new_graph();
    kf_value x = kf_input(g, "x", dts[i], 2, S2);
    kf_value w = kf_input(g, "w", dts[i], 1, S1), b = kf_input(g, "b", dts[i], 1, S1);
    kf_set_output(g, kf_layernorm(g, x, w, b, 1e-5));
    one_kernel(g, FK_ROW);
  }
}
END_TEST

START_TEST(residual_rmsnorm_one_kernel_two_outputs) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_BF16, 2, S2), r = kf_input(g, "r", KF_BF16, 2, S2);
  kf_value w = kf_input(g, "w", KF_BF16, 1, S1);
  kf_value h = kf_add(g, x, r);
  kf_value o = kf_rmsnorm(g, h, w, 1e-6);
  kf_set_output(g, h);
  kf_set_output(g, o);
  fuse_plan *p = plan_ok(g);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_eq(p->n_kernels, 1);
  const fuse_kernel *k = &p->kernels[0];
  ck_assert_int_eq(k->kind, FK_ROW);
  ck_assert_int_eq(k->rows, 8192);
  ck_assert_int_eq(k->cols, 8192);
  ck_assert_int_eq(k->n_outputs, 2);
  ck_assert_int_eq(k->outputs[0], h);
  ck_assert_int_eq(k->outputs[1], o);
  ck_assert_int_eq(k->n_inputs, 3);
  /* x, r read once; h, o written once; w once. */
  ck_assert_int_eq(k->bytes_read, 2 * 8192 * 8192 * 2 + 8192 * 2);
  ck_assert_int_eq(k->bytes_written, 2 * 8192 * 8192 * 2);
  ck_assert_int_lt(p->bytes_fused, p->bytes_unfused);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(pointwise_chain_one_kernel) {
  kf_graph *g = new_graph();
  int64_t n = 4096;
  kf_value x = kf_input(g, "x", KF_F32, 1, &n), y = kf_input(g, "y", KF_F32, 1, &n);
  kf_value v = x;
  for (int i = 0; i < 64; i++)
    v = i % 3 == 0   ? kf_add(g, v, y)
        : i % 3 == 1 ? kf_tanh(g, v)
                     : kf_mul(g, v, kf_scalar(g, 0.5, KF_F32));
  kf_set_output(g, v);
  one_kernel(g, FK_POINTWISE);
}
END_TEST

START_TEST(many_tensor_update_one_launch) {
  kf_graph *g = new_graph();
  int64_t one = 1;
  kf_value lr = kf_input(g, "lr", KF_F32, 1, &one);
  for (int i = 0; i < 300; i++) {
    char name[32];
    int64_t n = 1000 + 37 * i;
    snprintf(name, sizeof name, "p%d", i);
    kf_value p = kf_input(g, name, KF_F32, 1, &n);
    snprintf(name, sizeof name, "g%d", i);
    kf_value gr = kf_input(g, name, KF_F32, 1, &n);
    kf_set_output(g, kf_sub(g, p, kf_mul(g, lr, gr)));
  }
  fuse_plan *p = plan_ok(g);
  ck_assert_int_eq(p->n_kernels, 300);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert(p->launches[0].horizontal);
  ck_assert_int_le(p->launches[0].param_bytes, 32764);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(heterogeneous_packing) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, S2), y = kf_input(g, "y", KF_F32, 2, S2);
  int ax0 = 0;
  kf_set_output(g, kf_sum(g, x, 1, &ax0, false));
  kf_set_output(g, kf_softmax(g, y, -1));
  fuse_plan *p = plan_ok(g);
  ck_assert_int_eq(p->n_kernels, 2);
  ck_assert_int_eq(p->n_launches, 1);
  ck_assert_int_ne(p->kernels[0].kind, p->kernels[1].kind);
  bool logged = false;
  for (int i = 0; i < p->n_decisions; i++)
    logged |= p->decisions[i].accepted && strcmp(p->decisions[i].rule, "horizontal") == 0;
  ck_assert(logged);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(matmul_epilogue) {
  kf_graph *g = new_graph();
  int64_t sa[2] = {512, 256}, sb[2] = {256, 1024}, sc[1] = {1024};
  kf_value a = kf_input(g, "a", KF_F32, 2, sa), b = kf_input(g, "b", KF_F32, 2, sb);
  kf_value bias = kf_input(g, "bias", KF_F32, 1, sc);
  kf_set_output(g, kf_gelu(g, kf_add(g, kf_matmul(g, a, b), bias)));
  fuse_plan *p = plan_ok(g);
  ck_assert_int_eq(p->n_kernels, 1);
  const fuse_kernel *k = &p->kernels[0];
  ck_assert_int_eq(k->kind, FK_MATMUL);
  ck_assert_int_eq(k->n_epilogue, 2);
  ck_assert_int_eq(k->m, 512);
  ck_assert_int_eq(k->n, 1024);
  ck_assert_int_eq(k->k, 256);
  ck_assert_int_eq(k->batch, 1);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(column_softmax_splits_and_logs) {
  kf_graph *g = new_graph();
  kf_set_output(g, kf_softmax(g, kf_input(g, "x", KF_F32, 2, S2), 0));
  fuse_plan *p = plan_ok(g);
  ck_assert_int_gt(p->n_kernels, 1);
  bool refused = false;
  for (int i = 0; i < p->n_decisions; i++)
    refused |= !p->decisions[i].accepted && strcmp(p->decisions[i].rule, "reduce-epilogue") == 0;
  ck_assert(refused);
  ck_assert_int_gt(p->workspace_bytes, 0);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(workspace_reuse) {
  /* A chain of column reductions: each value dies two launches later. */
  kf_graph *g = new_graph();
  int64_t s[2] = {1024, 1024};
  kf_value v = kf_input(g, "x", KF_F32, 2, s);
  int ax0 = 0;
  for (int i = 0; i < 6; i++) v = kf_sub(g, v, kf_sum(g, v, 1, &ax0, true));
  kf_set_output(g, v);
  fuse_plan *p = plan_ok(g);
  int64_t total = 0;
  for (int i = 0; i < p->n_buffers; i++)
    if (p->buffers[i].home == HOME_WORKSPACE) total += p->buffers[i].bytes;
  ck_assert_int_gt(total, 0);
  ck_assert_int_lt(p->workspace_bytes, total);
  ck_assert_int_eq(p->peak_bytes, 2 * 1024 * 1024 * 4 + p->workspace_bytes);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(switches) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, S2);
  kf_set_output(g, kf_softmax(g, x, -1));
  kf_set_output(g, kf_relu(g, kf_input(g, "y", KF_F32, 1, S1)));
  fuse_options o;
  kt_setenv("KFUSE_NO_FUSION", "1", 1);
  kt_setenv("KFUSE_NO_HORIZONTAL", "1", 1);
  fuse_options_default(&o);
  kt_unsetenv("KFUSE_NO_FUSION");
  kt_unsetenv("KFUSE_NO_HORIZONTAL");
  ck_assert(!o.fusion && !o.horizontal);
  fuse_plan *p = fz_plan_opts(g, &o);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(p->n_kernels, 6); /* max sub exp sum div, relu */
  ck_assert_int_eq(p->n_launches, 6);
  ck_assert_str_eq(p->decisions[0].rule, "fusion-off");
  fuse_plan_free(p);
  fuse_options_default(&o);
  ck_assert(o.fusion && o.horizontal);
  o.horizontal = false;
  p = fz_plan_opts(g, &o);
  ck_assert_int_eq(p->n_kernels, 2);
  ck_assert_int_eq(p->n_launches, 2);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(renderings) {
  kf_graph *g = new_graph();
  kf_graph_set_name(g, "we\"ird\\name");
  kf_value x = kf_input(g, "x", KF_F32, 2, S2);
  kf_value y = kf_softmax(g, x, -1);
  kf_set_name(g, y, "y");
  kf_set_output(g, y);
  fuse_plan *p = plan_ok(g);
  char *j = fuse_plan_json(p), *d = fuse_plan_dot(p), *t = fuse_plan_text(p);
  ck_assert_ptr_nonnull(strstr(j, "{\"graph\":\"we\\\"ird\\\\name\","));
  ck_assert_ptr_nonnull(strstr(j, "\"launches\":1,"));
  ck_assert_ptr_nonnull(strstr(j, "\n{\"name\":\"k0_row\",\"kind\":\"row\""));
  ck_assert_ptr_nonnull(strstr(j, "\"outputs\":[\"y\"]"));
  ck_assert_ptr_nonnull(strstr(j, "\"bytes_unfused\":"));
  ck_assert_ptr_nonnull(strstr(j, "\"workspace_bytes\":0"));
  ck_assert_ptr_nonnull(strstr(j, "\"decisions\":[\n"));
  ck_assert_ptr_nonnull(strstr(j, "\n]}\n"));
  ck_assert_ptr_nonnull(strstr(d, "subgraph cluster_launch0"));
  ck_assert_ptr_nonnull(strstr(t, "k0_row"));
  free(j);
  free(d);
  free(t);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(bad_input) {
  kf_graph *g = new_graph();
  kf_input(g, "x", KF_F32, 2, S2);
  fuse_plan *p = (fuse_plan *)1;
  char err[128];
  ck_assert_int_eq(fuse_plan_build(g, NULL, &p, err, sizeof err), KF_ERR_INVALID_ARG);
  ck_assert_ptr_null(p);
  ck_assert_int_eq(fuse_plan_build(NULL, NULL, &p, err, sizeof err), KF_ERR_INVALID_ARG);
  fuse_options o;
  fuse_options_default(&o);
  o.max_nodes = 0;
  kf_set_output(g, kf_input(g, "z", KF_F32, 1, S1));
  ck_assert_int_eq(fuse_plan_build(g, &o, &p, err, sizeof err), KF_ERR_INVALID_ARG);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(public_api) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g;
  kf_graph_create(ctx, &g);
  kf_set_output(g, kf_rmsnorm(g, kf_input(g, "x", KF_F32, 2, S2), KF_NONE, 1e-6));
  kf_plan *plan;
  ck_assert_int_eq(kf_plan_create(ctx, g, NULL, &plan), KF_OK);
  ck_assert_int_eq(kf_plan_num_launches(plan), 1);
  ck_assert_int_eq(kf_plan_num_kernels(plan), 1);
  ck_assert_int_eq(kf_plan_workspace_size(plan), 0);
  char *j = kf_plan_describe(plan, KF_FORMAT_JSON);
  ck_assert_ptr_nonnull(j);
  kf_free(j);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- golden plans of the example graphs ---------------------------------- */

/* "launches N" then per kernel: "L<launch> <kind>: ops -> outputs". */
static char *summary(const fuse_plan *p) {
  size_t cap = 1 << 20, len = 0;
  char *s = malloc(cap);
  char b[64];
  len +=
      (size_t)snprintf(s + len, cap - len, "launches %d kernels %d\n", p->n_launches, p->n_kernels);
  for (int k = 0; k < p->n_kernels && len < cap - 256; k++) {
    const fuse_kernel *K = &p->kernels[k];
    len += (size_t)snprintf(s + len, cap - len, "L%d %s:", K->launch, fuse_kind_name(K->kind));
    for (int i = 0; i < K->n_nodes && len < cap - 128; i++)
      len += (size_t)snprintf(s + len, cap - len, " %s%s",
                              fuse_value_label(p->graph, K->nodes[i], b, sizeof b),
                              K->recomputed[i] ? "*" : "");
    len += (size_t)snprintf(s + len, cap - len, " ->");
    for (int i = 0; i < K->n_outputs && len < cap - 128; i++)
      len += (size_t)snprintf(s + len, cap - len, " %s",
                              fuse_value_label(p->graph, K->outputs[i], b, sizeof b));
    len += (size_t)snprintf(s + len, cap - len, "\n");
  }
  return s;
}

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = '\0';
  fclose(f);
  return s;
}

static const char *const examples[] = {
    "adam_step",        "add_rmsnorm", "attention",        "axpby_many",    "bias_gelu",
    "broadcast",        "casts_clamp", "column_stats",     "compare_where", "cross_entropy",
    "horizontal",       "integer_ops", "layernorm",        "mlp_silu",      "pointwise_chain",
    "rmsnorm_residual", "softmax",     "transpose_reshape"};

START_TEST(golden_plans) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  const char *update = getenv("KFUSE_UPDATE_GOLDEN");
  for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
    char path[512], gpath[512];
    snprintf(path, sizeof path, "%s/examples/graphs/%s.yaml", KFUSE_SOURCE_DIR, examples[i]);
    snprintf(gpath, sizeof gpath, "%s/tests/golden/plans/%s.txt", KFUSE_SOURCE_DIR, examples[i]);
    kf_graph *g = NULL;
    if (kf_graph_load_yaml(ctx, path, &g) != KF_OK) {
      fprintf(stderr, "skip %s: %s\n", examples[i], kf_ctx_errmsg(ctx));
      continue; /* the example moved or changed format: its owner's test says so */
    }
    fuse_plan *p = plan_ok(g);
    char *got = summary(p);
    if (update && strcmp(update, "1") == 0) {
      FILE *f = fopen(gpath, "wb");
      ck_assert_ptr_nonnull(f);
      fputs(got, f);
      fclose(f);
    } else {
      char *want = read_all(gpath);
      ck_assert_msg(want != NULL, "missing %s (KFUSE_UPDATE_GOLDEN=1 writes it)", gpath);
      ck_assert_msg(strcmp(got, want) == 0, "%s: plan changed:\n--- want\n%s--- got\n%s",
                    examples[i], want, got);
      free(want);
    }
    free(got);
    fuse_plan_free(p);
    kf_graph_destroy(g);
  }
  kf_ctx_destroy(ctx);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("fuser");
  TCase *tc = tcase_create("targets");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, softmax_one_row_kernel);
  tcase_add_test(tc, softmax_by_hand_one_kernel);
  tcase_add_test(tc, layernorm_one_row_kernel);
  tcase_add_test(tc, residual_rmsnorm_one_kernel_two_outputs);
  tcase_add_test(tc, pointwise_chain_one_kernel);
  tcase_add_test(tc, many_tensor_update_one_launch);
  tcase_add_test(tc, heterogeneous_packing);
  tcase_add_test(tc, matmul_epilogue);
  tcase_add_test(tc, column_softmax_splits_and_logs);
  tcase_add_test(tc, workspace_reuse);
  tcase_add_test(tc, switches);
  tcase_add_test(tc, renderings);
  tcase_add_test(tc, bad_input);
  tcase_add_test(tc, public_api);
  suite_add_tcase(s, tc);
  TCase *gold = tcase_create("golden");
  tcase_set_timeout(gold, 60);
  tcase_add_test(gold, golden_plans);
  suite_add_tcase(s, gold);
  return s;
}
