/* consumer.c - a program outside the project that uses only the installed
 * kfuse.h: builds a graph, loads one from YAML, runs both on the CPU
 * reference interpreter and checks the numbers; exit 0 when all is right. */
#include <kfuse.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "consumer: FAILED: %s\n", what);
    failures++;
  }
}

/* y = sum(relu(x * 2 - 3), axis 1) on a 2x3 input, checked by hand. */
static void check_builder(kf_ctx *ctx) {
  kf_graph *g = NULL;
  expect(kf_graph_create(ctx, &g) == KF_OK, "kf_graph_create");
  const int64_t shape[2] = {2, 3};
  const int axes[1] = {1};
  kf_value x = kf_input(g, "x", KF_F32, 2, shape);
  kf_value t = kf_relu(g, kf_sub(g, kf_mul(g, x, kf_scalar(g, 2.0, KF_F32)),
                                 kf_scalar(g, 3.0, KF_F32)));
  kf_set_output(g, kf_sum(g, t, 1, axes, false));
  expect(kf_graph_status(g) == KF_OK, kf_graph_errmsg(g));
  float in[6] = {0, 1, 2, 3, 4, 5}, out[2] = {-1, -1};
  kf_host_tensor xi = {in, KF_F32, 2, {2, 3}};
  kf_host_tensor yo = {out, KF_F32, 1, {2}};
  expect(kf_graph_run_reference(g, &xi, 1, &yo, 1) == KF_OK, "kf_graph_run_reference");
  /* rows: relu(-3,-1,1) = 1; relu(3,5,7) = 15 */
  expect(out[0] == 1.0f && out[1] == 15.0f, "builder graph results");
  kf_graph_destroy(g);
}

/* The YAML loader pulls libyaml in, which a static link must resolve. */
static void check_yaml(kf_ctx *ctx) {
  static const char text[] = "kfuse: 1\n"
                             "inputs:\n"
                             "  a: {dtype: f32, shape: [2]}\n"
                             "nodes:\n"
                             "  - {name: b, op: neg, args: [a]}\n"
                             "outputs: [b]\n";
  kf_graph *g = NULL;
  kf_status st = kf_graph_load_yaml_string(ctx, text, strlen(text), "consumer.yaml", &g);
  expect(st == KF_OK, kf_ctx_errmsg(ctx));
  if (st != KF_OK) return;
  float in[2] = {1.5f, -2.0f}, out[2] = {0, 0};
  kf_host_tensor ai = {in, KF_F32, 1, {2}};
  kf_host_tensor bo = {out, KF_F32, 1, {2}};
  expect(kf_graph_run_reference(g, &ai, 1, &bo, 1) == KF_OK, "yaml graph run");
  expect(out[0] == -1.5f && out[1] == 2.0f, "yaml graph results");
  kf_graph_destroy(g);
}

int main(void) {
  expect(strcmp(kf_version(), KFUSE_VERSION_STRING) == 0, "kf_version matches the header");
  expect(kf_version_number() == KFUSE_VERSION_NUMBER, "kf_version_number");
  expect(strcmp(kf_status_str(KF_OK), "success") == 0, "kf_status_str");
  int major = 0, minor = 0;
  /* NVRTC is linked (not dlopen'ed), so this must work without a GPU. */
  expect(kf_nvrtc_version(&major, &minor) == KF_OK && major > 0, "kf_nvrtc_version");
  kf_ctx *ctx = NULL;
  expect(kf_ctx_create(&ctx) == KF_OK, "kf_ctx_create");
  if (!ctx) return 1;
  check_builder(ctx);
  check_yaml(ctx);
  kf_ctx_destroy(ctx);
  if (failures) return 1;
  printf("consumer: kfuse %s, NVRTC %d.%d: OK\n", kf_version(), major, minor);
  return 0;
}
