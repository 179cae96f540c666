/* test_gpu_check.c - the checker (kf_graph_run_reference_bounded +
 * kf_compare, what `kfuse run --check` uses) on a real GPU: it passes
 * correct kernels and fails planted wrong ones.
 *  - planted: a copy of templates/ with one small bug (read through
 *    KFUSE_TEMPLATE_DIR): exp 2e-4 too large, a column sum missing row 0, a
 *    row sum missing one element, a warp reduction skipping its last
 *    exchange, the per-row division 5e-4 off, a matmul dropping one product
 *    in 16. Each runs a graph whose kernel contains the bug (asserted on its
 *    source) and must be reported as a mismatch; the same graphs on an
 *    unpatched copy must pass;
 *  - every example graph (examples/graphs/) on the embedded templates, on
 *    random inputs, within the bound (or, when the reference would cost
 *    more than KFUSE_CHECK_LIMIT element operations, default 4e9, against
 *    the unfused plan with the fixed tolerance, as kfuse run --check does);
 *  - the two graphs a fixed tolerance failed on the H200: x / sum(x, 0) of
 *    1024 x 4096 f32 and a bf16 matmul cast to f32 and used further.
 * Skips (exit 77) without a GPU. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu_util.h"
#include "ir/ir.h"

/* ---- a patched copy of templates/ ------------------------------------------ */

static char G_dir[256];

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot read %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  ck_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
  s[n] = 0;
  fclose(f);
  return s;
}

static void spit(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  ck_assert_msg(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

/* Every occurrence of from in s replaced by to (at least one). */
static char *replace_all(const char *s, const char *from, const char *to) {
  size_t nf = strlen(from), nt = strlen(to), count = 0;
  for (const char *p = strstr(s, from); p; p = strstr(p + nf, from)) count++;
  ck_assert_msg(count > 0, "the template lacks '%s'", from);
  char *out = malloc(strlen(s) + count * nt + 1), *o = out;
  ck_assert(out != NULL);
  const char *p = s;
  for (const char *q; (q = strstr(p, from)); p = q + nf) {
    memcpy(o, p, (size_t)(q - p)), o += q - p;
    memcpy(o, to, nt), o += nt;
  }
  strcpy(o, p);
  return out;
}

/* A fresh copy of templates/ in G_dir, file `name` patched (NULL: none),
 * and KFUSE_TEMPLATE_DIR pointing at it. */
static void templates_copy(const char *name, const char *from, const char *to) {
  snprintf(G_dir, sizeof G_dir, "/tmp/kfuse-planted-%d", (int)getpid());
  mkdir(G_dir, 0700);
  DIR *d = opendir(KFUSE_SOURCE_DIR "/templates");
  ck_assert(d != NULL);
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char src[512], dst[512];
    snprintf(src, sizeof src, "%s/templates/%s", KFUSE_SOURCE_DIR, e->d_name);
    snprintf(dst, sizeof dst, "%s/%s", G_dir, e->d_name);
    char *text = slurp(src);
    if (name && !strcmp(name, e->d_name)) {
      char *p = replace_all(text, from, to);
      free(text);
      text = p;
    }
    spit(dst, text);
    free(text);
  }
  closedir(d);
  setenv("KFUSE_TEMPLATE_DIR", G_dir, 1);
}

static void templates_done(void) {
  unsetenv("KFUSE_TEMPLATE_DIR");
  DIR *d = opendir(G_dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", G_dir, e->d_name);
    if (e->d_name[0] != '.') unlink(p);
  }
  if (d) closedir(d);
  rmdir(G_dir);
}

/* ---- graphs -------------------------------------------------------------------------- */

static kf_graph *new_graph(void) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  return g;
}

static kf_graph *finish(kf_graph *g, kf_value out) {
  ck_assert_msg(out != KF_NONE && kf_set_output(g, out) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

static kf_graph *g_exp_pointwise(void) { /* exp(x) * x + x */
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){4096, 256});
  return finish(g, kf_add(g, kf_mul(g, kf_exp(g, x), x), x));
}

static kf_graph *g_x_over_colsum(void) { /* the H200 finding */
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){1024, 4096});
  return finish(g, kf_div(g, x, kf_sum(g, x, 1, (int[]){0}, true)));
}

static kf_graph *g_colsum(void) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){1024, 4096});
  return finish(g, kf_sum(g, x, 1, (int[]){0}, false));
}

static kf_graph *g_total_sum(void) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 1, (int64_t[]){1 << 20});
  return finish(g, kf_sum(g, x, 1, (int[]){0}, false));
}

static kf_graph *g_rowsum(void) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){64, 65536});
  return finish(g, kf_sum(g, x, 1, (int[]){1}, false));
}

static kf_graph *g_softmax(void) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){512, 4096});
  return finish(g, kf_softmax(g, x, -1));
}

static kf_graph *g_softmax_long(void) {
  kf_graph *g = new_graph();
  kf_value x = kf_input(g, "x", KF_F32, 2, (int64_t[]){64, 65536});
  return finish(g, kf_softmax(g, x, -1));
}

static kf_graph *g_bf16_matmul(void) { /* the other H200 finding */
  kf_graph *g = new_graph();
  kf_value a = kf_input(g, "a", KF_BF16, 2, (int64_t[]){256, 512});
  kf_value b = kf_input(g, "b", KF_BF16, 2, (int64_t[]){512, 256});
  kf_value c = kf_cast(g, kf_matmul(g, a, b), KF_F32);
  return finish(g, kf_add(g, kf_mul(g, c, kf_scalar(g, 3.0, KF_F32)), kf_scalar(g, 1.0, KF_F32)));
}

typedef kf_graph *graph_fn(void);

/* ---- checking ----------------------------------------------------------------------------- */

/* Whether some launch of the compiled plan contains marker. */
static bool plan_has(kf_plan *plan, const char *marker) {
  bool found = false;
  for (int l = 0; l < kf_plan_num_launches(plan) && !found; l++) {
    char *src = kf_plan_source(plan, l, NULL);
    found = src && strstr(src, marker);
    kf_free(src);
  }
  return found;
}

/* Runs g once (fusion on) and checks it within the bound: the number of bad
 * outputs, or -1 when no kernel of g contains marker (marker NULL: any). */
static int run_checked(kf_graph *g, const char *marker, const char *what) {
  kf_options opt;
  kf_options_init(&opt);
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &opt, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
  bool has = !marker || plan_has(plan, marker);
  kf_plan_destroy(plan);
  if (!has) return -1;
  run_io io;
  io_setup(g, &io, 4242);
  ck_assert_msg(io_bound(g, &io), "%s: no error bound", what);
  int bad = check_plan(g, &opt, &io, true, what);
  io_free(&io);
  return bad;
}

typedef struct planted {
  const char *what, *file, *from, *to;
  graph_fn *graphs[3]; /* the first whose kernels contain the bug is used */
} planted;

#define MARK "/*PLANTED*/"
static const planted G_planted[] = {
    {"exp 2e-4 too large",
     "common.cuh",
     "KF_INLINE float kf_exp(float x) { return expf(x); }",
     "KF_INLINE float kf_exp(float x) { return expf(x) * 1.0002f; " MARK " }",
     {g_exp_pointwise}},
    {"column sum without row 0",
     "reduce_cols.cu",
     "k = k0 + ty; k < k1; k += TY",
     "k = k0 + ty + (k0 == 0 && ty == 0) " MARK "; k < k1; k += TY",
     {g_x_over_colsum, g_colsum}},
    /* one term among 65536 is within an f32 sum's bound: thread 0's share */
    {"row sum without thread 0's terms",
     "reduce_rows.cu",
     "k = k0 + threadIdx.x; k < k1; k += {{THREADS}}",
     "k = k0 + threadIdx.x + (threadIdx.x == 0 ? k1 : 0) " MARK "; k < k1; k += {{THREADS}}",
     {g_total_sum, g_rowsum}},
    {"warp reduction without its last exchange",
     "common.cuh",
     "for (int o = 16; o > 0; o >>= 1) v = R::op(v, kf_shfl_xor(v, o));",
     "for (int o = 16; o > 1; o >>= 1) v = R::op(v, kf_shfl_xor(v, o)); " MARK,
     {g_softmax, g_softmax_long, g_rowsum}},
    /* kf_div_rcp and kf_div_rcpf (the row kernels' output phase) */
    {"per-row division 5e-4 off",
     "common.cuh",
     "const float q1 = __fmaf_rn(-e, r, q0);",
     "const float q1 = __fmaf_rn(-e, r, q0) * 1.0005f; " MARK,
     {g_softmax, g_x_over_colsum}},
    {"matmul without one product in 16",
     "matmul.cu",
     "for (int i = 0; i < 16; i++) acc =",
     "for (int i = 1 " MARK "; i < 16; i++) acc =",
     {g_bf16_matmul}},
};

START_TEST(planted_wrong_kernels_fail) {
  int caught = 0, n = (int)(sizeof G_planted / sizeof G_planted[0]);
  for (int p = 0; p < n; p++) {
    const planted *pl = &G_planted[p];
    templates_copy(pl->file, pl->from, pl->to);
    int bad = -1;
    for (int k = 0; k < 3 && pl->graphs[k] && bad < 0; k++) {
      kf_graph *g = pl->graphs[k]();
      bad = run_checked(g, MARK, pl->what);
      kf_graph_destroy(g);
    }
    templates_done();
    printf("planted: %s: %s\n", pl->what,
           bad < 0 ? "NOT IN ANY KERNEL"
           : bad   ? "caught"
                   : "NOT CAUGHT");
    ck_assert_msg(bad >= 0, "%s: no graph's kernel contains the planted bug", pl->what);
    caught += bad > 0;
  }
  ck_assert_int_eq(caught, n);
}
END_TEST

/* The same graphs on an unpatched copy of the templates, through the same
 * path (KFUSE_TEMPLATE_DIR): all pass. */
START_TEST(unpatched_kernels_pass) {
  graph_fn *all[] = {g_exp_pointwise, g_x_over_colsum, g_colsum,       g_total_sum,
                     g_rowsum,        g_softmax,       g_softmax_long, g_bf16_matmul};
  templates_copy(NULL, NULL, NULL);
  int bad = 0;
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
    kf_graph *g = all[k]();
    bad += run_checked(g, NULL, "unpatched");
    kf_graph_destroy(g);
  }
  templates_done();
  print_worst("unpatched");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* ---- every example ------------------------------------------------------------------------ */

/* The reference's work in element operations: each value's elements and its
 * operands', and a matmul's multiply-adds (as kfuse run --check counts). */
static double reference_cost(const kf_graph *g) {
  double cost = 0;
  for (int32_t v = 0; v < g->n_nodes; v++) {
    const ir_node *n = &g->nodes[v];
    double out = (double)kf_value_numel(g, v);
    cost += out;
    for (int j = 0; j < n->nargs; j++) cost += (double)kf_value_numel(g, n->args[j]);
    if (n->op == IR_OP_MATMUL) {
      const ir_node *a = &g->nodes[n->args[0]];
      cost += out * (double)a->shape[a->rank - 1];
    }
  }
  return cost;
}

/* Compiles and runs g once into io's outputs (poisoned first). */
static void run_only(kf_graph *g, const kf_options *opt, run_io *io, const char *what) {
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, opt, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
  io_poison(io);
  ck_assert_msg(kf_plan_run(plan, io->din, io->n_in, io->dout, io->n_out, NULL) == KF_OK, "%s: %s",
                what, kf_plan_errmsg(plan));
  io_fetch(io);
  kf_plan_destroy(plan);
}

static int check_example(const char *path, double limit) {
  kf_graph *g = NULL;
  ck_assert_msg(kf_graph_load_yaml(G_ctx, path, &g) == KF_OK, "%s", kf_ctx_errmsg(G_ctx));
  double cost = reference_cost(g);
  kf_options opt, unfused;
  kf_options_init(&opt);
  kf_options_init(&unfused);
  unfused.fusion = false;
  run_io io;
  io_setup(g, &io, 7);
  int bad;
  if (cost <= limit) {
    ck_assert_msg(io_bound(g, &io), "%s: no error bound", path);
    bad = check_plan(g, &opt, &io, true, path);
  } else { /* as kfuse run --check: the unfused plan is the oracle */
    run_only(g, &unfused, &io, path);
    io_keep_as_reference(&io);
    bad = check_plan(g, &opt, &io, true, path);
  }
  printf("example %s: %s (reference cost %.3g)\n", path,
         bad             ? "MISMATCH"
         : cost <= limit ? "ok within the error bound"
                         : "ok against unfused",
         cost);
  io_free(&io);
  kf_graph_destroy(g);
  return bad;
}

START_TEST(every_example_passes) {
  const char *e = getenv("KFUSE_CHECK_LIMIT");
  double limit = e && *e ? atof(e) : 4e9;
  DIR *d = opendir(KFUSE_SOURCE_DIR "/examples/graphs");
  ck_assert(d != NULL);
  int bad = 0, n = 0;
  for (struct dirent *ent; (ent = readdir(d));) {
    size_t len = strlen(ent->d_name);
    if (len < 5 || strcmp(ent->d_name + len - 5, ".yaml")) continue;
    char path[512];
    snprintf(path, sizeof path, "%s/examples/graphs/%s", KFUSE_SOURCE_DIR, ent->d_name);
    bad += check_example(path, limit) != 0;
    n++;
  }
  closedir(d);
  print_worst("examples");
  ck_assert(n > 0);
  ck_assert_msg(bad == 0, "%d of %d examples mismatch", bad, n);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_check");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 1800);
  tcase_add_test(tc, planted_wrong_kernels_fail);
  tcase_add_test(tc, unpatched_kernels_pass);
  tcase_add_test(tc, every_example_passes);
  suite_add_tcase(s, tc);
  return s;
}
