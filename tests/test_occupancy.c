/* test_occupancy.c - occupancy feedback on CI: the fuser's split
 * constraint, and the runtime measuring a fused kernel against its parts
 * through the recording fake driver (plans are really fused and compiled
 * with NVRTC for sm_90; nothing runs), splitting, caching the decision,
 * and applying it in a fresh context without measuring again. */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "check_main.h"
#include "fake_driver.h"
#include "fuser/fuse.h"
#include "fuser/legal.h"
#include "fuser_util.h"
#include "pipeline/pipeline.h"
#include "runtime/rt.h"

#define N 4096

static struct {
  char top[64];
  char log[16384];
  size_t log_len;
} T;

static void capture(void *user, kf_log_level level, const char *component, const char *msg) {
  (void)user, (void)level, (void)component;
  if (!strstr(msg, "occupancy")) return;
  if (getenv("KFUSE_TEST_ECHO")) fprintf(stderr, "%s\n", msg);
  int n = snprintf(T.log + T.log_len, sizeof T.log - T.log_len, "%s\n", msg);
  if (n > 0 && (size_t)n < sizeof T.log - T.log_len) T.log_len += (size_t)n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static void setup(void) {
  memset(&T, 0, sizeof T);
  snprintf(T.top, sizeof T.top, "/tmp/kfuse-test-occupancy-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(T.top));
  kt_setenv("KFUSE_CACHE_DIR", T.top, 1);
  kt_unsetenv("KFUSE_NO_OCCUPANCY_SPLIT");
  kt_unsetenv("KFUSE_NO_FUSION");
  kt_setenv("KFUSE_LOG", "runtime=info", 1); /* decisions are logged at info and warn */
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
}

static void teardown(void) {
  ck_assert_msg(rt_fake_live_objects() == 0, "%d fake objects leaked", rt_fake_live_objects());
  ck_assert_uint_eq(rt_fake_bytes_allocated(), 0);
  rt_driver_override(NULL);
  rt_fake_reset();
  nftw(T.top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* s = sum(y * y): one fused reduce kernel (kf_k0_reduce) whose unfused
 * parts are kf_k0_pointwise (the product) and kf_k1_reduce (the sum). */
static kf_graph *sum_of_squares(kf_ctx *ctx) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t shape[1] = {N};
  kf_value y = kf_input(g, "y", KF_F32, 1, shape);
  kf_value s = kf_sum(g, kf_mul(g, y, y), 0, NULL, false);
  kf_set_name(g, s, "s");
  kf_set_output(g, s);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

/* s = sum(exp(y) * y + 1): one fused reduce kernel of four home nodes. */
static kf_graph *prologue_sum(kf_ctx *ctx) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t shape[1] = {N};
  kf_value y = kf_input(g, "y", KF_F32, 1, shape);
  kf_value t = kf_add(g, kf_mul(g, kf_exp(g, y), y), kf_scalar(g, 1.0, KF_F32));
  kf_value s = kf_sum(g, t, 0, NULL, false);
  kf_set_name(g, s, "s");
  kf_set_output(g, s);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

typedef struct run {
  kf_ctx *ctx;
  kf_graph *g;
  kf_plan *plan;
  int compiled_launches; /* after kf_compile, before loading */
} run;

static run compile_and_load_graph(double drop, kf_graph *(*make)(kf_ctx *)) {
  run r;
  ck_assert_int_eq(kf_ctx_create(&r.ctx), KF_OK);
  kf_ctx_set_log(r.ctx, capture, NULL);
  r.g = make(r.ctx);
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  opt.occupancy_drop = drop;
  ck_assert_msg(kf_compile(r.ctx, r.g, &opt, &r.plan) == KF_OK, "%s", kf_ctx_errmsg(r.ctx));
  r.compiled_launches = kf_plan_num_launches(r.plan);
  ck_assert_msg(kf_plan_load(r.plan) == KF_OK, "%s", kf_plan_errmsg(r.plan));
  return r;
}

static run compile_and_load(double drop) {
  return compile_and_load_graph(drop, sum_of_squares);
}

static void run_free(run *r) {
  kf_plan_destroy(r->plan);
  kf_graph_destroy(r->g);
  kf_ctx_destroy(r->ctx);
}

static const fuse_decision *find_decision(const kf_plan *plan, const char *rule) {
  for (int i = 0; i < plan->fuse->n_decisions; i++)
    if (strcmp(plan->fuse->decisions[i].rule, rule) == 0 && plan->fuse->decisions[i].accepted)
      return &plan->fuse->decisions[i];
  return NULL;
}

/* ---- the fuser's constraint -------------------------------------------------------- */

START_TEST(fuser_split_constraint) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t shape[2] = {64, 1000};
  kf_value x = kf_input(g, "x", KF_F32, 2, shape);
  kf_set_output(g, kf_softmax(g, x, -1));
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  fuse_options fo;
  fuse_options_default(&fo);
  fuse_plan *fused, *split;
  char err[256] = "";
  ck_assert_int_eq(fuse_plan_build(g, &fo, &fused, err, sizeof err), KF_OK);
  ck_assert_int_eq(fused->n_kernels, 1);
  const fuse_kernel *k = &fused->kernels[0];
  fuse_split req = {k->nodes, k->n_nodes, "k0_row: occupancy 25% vs parts 50%, limit 20%", 0};
  fo.splits = &req;
  fo.n_splits = 1;
  ck_assert_int_eq(fuse_plan_build(g, &fo, &split, err, sizeof err), KF_OK);
  ck_assert_int_eq(split->n_kernels, k->n_nodes); /* no two of its nodes share a kernel */
  for (int i = 0; i < split->n_kernels; i++) {
    char why[256];
    ck_assert_msg(fuse_kernel_legal(split, i, why, sizeof why), "%s", why);
  }
  const fuse_decision *d = NULL;
  for (int i = 0; i < split->n_decisions && !d; i++)
    if (strcmp(split->decisions[i].rule, "occupancy-split") == 0 && split->decisions[i].accepted)
      d = &split->decisions[i];
  ck_assert_ptr_nonnull(d);
  ck_assert_ptr_nonnull(strstr(d->text, "occupancy 25% vs parts 50%, limit 20%; split into"));
  ck_assert_ptr_ne(split->options.splits, &req); /* the plan keeps its own copy */
  int32_t bad = 9999;
  fuse_split wrong = {&bad, 1, "", 0};
  fo.splits = &wrong;
  fuse_plan *none = NULL;
  ck_assert_int_eq(fuse_plan_build(g, &fo, &none, err, sizeof err), KF_ERR_INVALID_ARG);
  ck_assert_ptr_null(none);
  ck_assert_ptr_nonnull(strstr(err, "names node 9999"));
  /* In two: the nodes before the cut and those after never share a kernel,
   * those of one side still fuse (fewer kernels than nodes) */
  int32_t cut = k->n_nodes / 2;
  fuse_split half = {k->nodes, k->n_nodes, "k0_row: spills", cut};
  fo.splits = &half;
  fuse_plan *two = NULL;
  ck_assert_int_eq(fuse_plan_build(g, &fo, &two, err, sizeof err), KF_OK);
  ck_assert_int_ge(two->n_kernels, 2);
  ck_assert_int_lt(two->n_kernels, k->n_nodes);
  for (int i = 0; i < two->n_kernels; i++) {
    char why[256];
    ck_assert_msg(fuse_kernel_legal(two, i, why, sizeof why), "%s", why);
  }
  for (int32_t a = 0; a < cut; a++)
    for (int32_t b = cut; b < k->n_nodes; b++)
      ck_assert_int_ne(two->kernel_of[k->nodes[a]], two->kernel_of[k->nodes[b]]);
  d = NULL;
  for (int i = 0; i < two->n_decisions && !d; i++)
    if (strcmp(two->decisions[i].rule, "occupancy-split") == 0 && two->decisions[i].accepted)
      d = &two->decisions[i];
  ck_assert_ptr_nonnull(d);
  ck_assert_msg(strstr(d->text, "k0_row: spills; split in two before "), "%s", d->text);
  fuse_split outside = {k->nodes, k->n_nodes, "", k->n_nodes};
  fo.splits = &outside;
  ck_assert_int_eq(fuse_plan_build(g, &fo, &none, err, sizeof err), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(err, "cuts at"));
  fuse_plan_free(two);
  fuse_plan_free(fused);
  fuse_plan_free(split);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* Random graphs: split the largest kernel (and then, in a second round, the
 * largest of the result too), every node apart (halve false) or in two at
 * the middle (halve true); every plan keeps the fuser's invariants and no
 * two nodes of one split that must stay apart share a kernel. */
static void check_split_seed(uint64_t seed, bool halve) {
  kf_graph *g = fz_random_graph(seed, 6 + (int)(seed % 25));
  if (!g) return;
  fuse_options fo;
  fuse_options_default(&fo);
  fuse_split req[2];
  fuse_plan *plans[3] = {fz_plan_opts(g, &fo), NULL, NULL}; /* req borrows their nodes */
  ck_assert_ptr_nonnull(plans[0]);
  for (int round = 0; round < 2; round++) {
    const fuse_plan *prev = plans[round];
    int big = 0;
    for (int k = 1; k < prev->n_kernels; k++)
      if (prev->kernels[k].n_nodes > prev->kernels[big].n_nodes) big = k;
    if (prev->kernels[big].n_nodes < 2) break;
    int32_t n = prev->kernels[big].n_nodes;
    req[round] = (fuse_split){prev->kernels[big].nodes, n, "test", halve ? n / 2 : 0};
    fo.splits = req;
    fo.n_splits = round + 1;
    fuse_plan *p = plans[round + 1] = fz_plan_opts(g, &fo);
    ck_assert_msg(p != NULL, "seed %llu: planning with splits failed", (unsigned long long)seed);
    char why[512] = "";
    ck_assert_msg(fz_check_plan(g, p, why, sizeof why), "seed %llu round %d: %s",
                  (unsigned long long)seed, round, why);
    for (int s = 0; s <= round; s++) {
      const fuse_split *sp = &p->options.splits[s];
      for (int32_t a = 0; a < sp->n_nodes; a++)
        for (int32_t b = a + 1; b < sp->n_nodes; b++)
          ck_assert_msg(p->kernel_of[sp->nodes[a]] != p->kernel_of[sp->nodes[b]] ||
                            p->kernel_of[sp->nodes[a]] < 0 ||
                            (sp->cut > 0 && (a < sp->cut) == (b < sp->cut)),
                        "seed %llu: split %d nodes %d and %d share a kernel",
                        (unsigned long long)seed, s, sp->nodes[a], sp->nodes[b]);
    }
  }
  for (int i = 0; i < 3; i++) fuse_plan_free(plans[i]);
  kf_graph_destroy(g);
}

START_TEST(random_graphs_split) {
  for (uint64_t seed = 0; seed < 600; seed++) {
    check_split_seed(seed, false);
    check_split_seed(seed, true);
  }
}
END_TEST

/* ---- the runtime -------------------------------------------------------------------- */

START_TEST(low_occupancy_is_split_then_cached) {
  rt_fake_set_kernel("k0_reduce", 255, 0, 0); /* the fused kernel only */
  run r = compile_and_load(0.20);
  ck_assert_int_eq(r.compiled_launches, 1);
  ck_assert_int_eq(kf_plan_num_launches(r.plan), 2);
  ck_assert_int_ge(rt_fake_find(0, "ModuleGetFunction", "kf_k0_reduce"), 0);
  const fuse_decision *d = find_decision(r.plan, "occupancy-split");
  ck_assert_ptr_nonnull(d);
  ck_assert_msg(strstr(d->text, "kf_k0_reduce: occupancy ") && strstr(d->text, "255 regs") &&
                    strstr(d->text, "vs parts' lowest 100% (2 parts), limit 20%") &&
                    strstr(d->text, "split into 2 kernels"),
                "%s", d->text);
  ck_assert_msg(strstr(T.log, "more than 20% below its parts' lowest 100%"), "%s", T.log);
  /* The loaded launches are the parts. */
  ck_assert_int_eq(r.plan->rt->n_launches, 2);
  ck_assert_double_eq_tol(r.plan->rt->launches[0].occ.occupancy, 1.0, 1e-9);
  run_free(&r);

  /* A fresh context (and a fake that would no longer flag it) applies the
   * cached decision before compiling: the fused kernel is never loaded. */
  rt_fake_reset();
  T.log_len = 0;
  T.log[0] = 0;
  run again = compile_and_load(0.20);
  ck_assert_int_eq(again.compiled_launches, 2);
  ck_assert_int_eq(kf_plan_num_launches(again.plan), 2);
  ck_assert_int_lt(rt_fake_find(0, "ModuleGetFunction", "kf_k0_reduce"), 0);
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), 2);
  ck_assert_ptr_nonnull(find_decision(again.plan, "occupancy-split"));
  ck_assert_msg(strstr(T.log, "split (cached decision)"), "%s", T.log);
  run_free(&again);

  /* With the split turned off, the cached decision is ignored too. */
  rt_fake_reset();
  kt_setenv("KFUSE_NO_OCCUPANCY_SPLIT", "1", 1);
  run off = compile_and_load(0.20);
  ck_assert_int_eq(kf_plan_num_launches(off.plan), 1);
  run_free(&off);
}
END_TEST

/* Replaces the payload of every cached occupancy record with `text`,
 * keeping the entry valid (header, key, size and checksum): only the
 * numbers can tell it from a real record. Returns how many. */
static int rewrite_records(const char *text) {
  DIR *d = opendir(T.top);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  size_t len = strlen(text);
  for (struct dirent *e; (e = readdir(d));) {
    char path[600], old[64] = {0};
    snprintf(path, sizeof path, "%s/%s", T.top, e->d_name);
    int fd = open(path, O_RDWR);
    if (fd < 0) continue;
    unsigned char h[48];
    if (pread(fd, h, 48, 0) == 48 && pread(fd, old, 15, 48) == 15 &&
        strcmp(old, "kfuse-occupancy") == 0) {
      uint64_t sum = XXH3_64bits(text, len);
      for (int i = 0; i < 8; i++) h[32 + i] = (unsigned char)((uint64_t)len >> (8 * i));
      for (int i = 0; i < 8; i++) h[40 + i] = (unsigned char)(sum >> (8 * i));
      ck_assert_int_eq(ftruncate(fd, 0), 0);
      ck_assert_int_eq(pwrite(fd, h, 48, 0), 48);
      ck_assert_int_eq(pwrite(fd, text, len, 48), (ssize_t)len);
      n++;
    }
    close(fd);
  }
  closedir(d);
  return n;
}

/* A record with numbers no measurement gives (a negative occupancy that
 * would force a split) is ignored: the kernel is measured again, and kept
 * fused since this fake driver no longer flags it. */
START_TEST(insane_cached_record_is_measured_again) {
  rt_fake_set_kernel("k0_reduce", 255, 0, 0);
  run r = compile_and_load(0.20);
  ck_assert_int_eq(kf_plan_num_launches(r.plan), 2);
  run_free(&r);
  ck_assert_int_ge(rewrite_records("kfuse-occupancy 2 parts 2 fused -64 0 0 0 256 8 -3.0 "
                                   "lowest 32 0 0 0 256 8 1.0\n"),
                   1);
  rt_fake_reset();
  T.log_len = 0;
  T.log[0] = 0;
  run again = compile_and_load(0.20);
  ck_assert_msg(!strstr(T.log, "cached decision"), "%s", T.log);
  ck_assert_int_eq(kf_plan_num_launches(again.plan), 1);
  run_free(&again);
}
END_TEST

START_TEST(spills_are_split) {
  /* Full occupancy but 1 KiB spilled per thread: the model predicts the
   * split (3x the bytes) to be faster. */
  rt_fake_set_kernel("k0_reduce", 32, 1024, 0);
  run r = compile_and_load(0.20);
  ck_assert_int_eq(kf_plan_num_launches(r.plan), 2);
  const fuse_decision *d = find_decision(r.plan, "occupancy-split");
  ck_assert_ptr_nonnull(d);
  ck_assert_msg(strstr(d->text, "1024 B spills"), "%s", d->text);
  ck_assert_msg(strstr(T.log, "spills 1024 bytes per thread"), "%s", T.log);
  run_free(&r);
}
END_TEST

START_TEST(split_in_two_keeps_each_side_fused) {
  /* Four home nodes (exp, mul, add, sum) at 12.5% occupancy: the split is
   * in two where the fewest bytes cross (before the sum: one full-size
   * value), not four kernels; the pointwise side is at full occupancy, so
   * no further round splits it. */
  rt_fake_set_kernel("k0_reduce", 255, 0, 0);
  run r = compile_and_load_graph(0.20, prologue_sum);
  ck_assert_int_eq(r.compiled_launches, 1);
  ck_assert_int_eq(kf_plan_num_launches(r.plan), 2);
  const fuse_decision *d = find_decision(r.plan, "occupancy-split");
  ck_assert_ptr_nonnull(d);
  ck_assert_msg(strstr(d->text, "; split in two before %4 into 2 kernels: k0_pointwise, k1_reduce"),
                "%s", d->text);
  run_free(&r);
}
END_TEST

START_TEST(small_spills_kept_when_split_moves_more_bytes) {
  /* 16 bytes spilled cost less than tripling the bytes: kept, and the log
   * says why with the model's numbers; nothing else is compiled. */
  rt_fake_set_kernel("k0_reduce", 32, 16, 0);
  run r = compile_and_load(0.20);
  ck_assert_int_eq(kf_plan_num_launches(r.plan), 1);
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), 1);
  ck_assert_msg(strstr(T.log, "a split would move 3.00x the bytes"), "%s", T.log);
  ck_assert_ptr_null(find_decision(r.plan, "occupancy-split"));
  run_free(&r);
}
END_TEST

START_TEST(within_limit_is_kept_without_measuring) {
  run r = compile_and_load(0.20); /* every kernel 32 registers: 100% */
  ck_assert_int_eq(kf_plan_num_launches(r.plan), 1);
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), 1); /* no parts compiled */
  ck_assert_ptr_null(find_decision(r.plan, "occupancy-split"));
  run_free(&r);
}
END_TEST

START_TEST(suspicious_but_parts_no_better_is_kept_and_cached) {
  rt_fake_set_kernel("k0_reduce", 255, 0, 0); /* 12.5%: measured */
  rt_fake_set_kernel("k1_reduce", 255, 0, 0); /* the sum alone is no better */
  run r = compile_and_load(0.20);
  double fused = r.plan->rt->launches[0].occ.occupancy;
  ck_assert(fused < 0.8);
  ck_assert_int_eq(kf_plan_num_launches(r.plan), 1);
  ck_assert_msg(strstr(T.log, "kept fused"), "%s", T.log);
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), 3); /* fused + 2 parts */
  ck_assert_ptr_null(find_decision(r.plan, "occupancy-split"));
  run_free(&r);
  /* A fresh context reads the measurements instead of compiling the parts. */
  rt_fake_reset();
  rt_fake_set_kernel("k0_reduce", 255, 0, 0);
  T.log_len = 0;
  T.log[0] = 0;
  run again = compile_and_load(0.20);
  ck_assert_int_eq(kf_plan_num_launches(again.plan), 1);
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), 1);
  ck_assert_msg(strstr(T.log, "kept fused (cached measurements)"), "%s", T.log);
  run_free(&again);
}
END_TEST

/* gelu_tanh(x @ w + b) in bf16: one matmul kernel on the sm_90 template,
 * whose 216 KB of tiles leave room for 1 block of 384 threads an SM (19%),
 * as the template is designed (__launch_bounds__(384, 1)). */
static kf_graph *bf16_product(kf_ctx *ctx) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t xs[2] = {128, 64}, ws[2] = {64, 64}, bs[1] = {64};
  kf_value y = kf_matmul(g, kf_input(g, "x", KF_BF16, 2, xs), kf_input(g, "w", KF_BF16, 2, ws));
  kf_value out = kf_gelu_tanh(g, kf_add(g, y, kf_input(g, "b", KF_BF16, 1, bs)));
  kf_set_output(g, out);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

/* A tensor-core matmul kernel below the limit only because its template
 * keeps it so is not split, and its parts are not compiled: the product's
 * part would run the same template just as resident. One that spills is
 * measured against its parts as before. */
START_TEST(matmul_at_its_design_is_kept_without_measuring) {
  kt_setenv("KFUSE_MATMUL", "template", 1);
  run r = compile_and_load_graph(0.20, bf16_product);
  ck_assert_int_eq(kf_plan_num_launches(r.plan), 1);
  ck_assert(r.plan->rt->launches[0].occ.occupancy < 0.8);
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), 1); /* no parts compiled */
  ck_assert_msg(strstr(T.log, "1 blocks/SM of 384 as its template is designed (1), no spills"),
                "%s", T.log);
  run_free(&r);
  rt_fake_reset();
  rt_fake_set_kernel("k0_matmul", 168, 512, 0);
  T.log_len = 0;
  T.log[0] = 0;
  run spills = compile_and_load_graph(0.20, bf16_product);
  ck_assert_int_ge(rt_fake_count_prefix("ModuleLoadData"), 3); /* fused + its parts */
  ck_assert_msg(strstr(T.log, "parts' lowest"), "%s", T.log);
  run_free(&spills);
  kt_unsetenv("KFUSE_MATMUL");
}
END_TEST

START_TEST(zero_limit_disables) {
  rt_fake_set_kernel("k0_reduce", 255, 64, 0);
  run r = compile_and_load(0.0);
  ck_assert_int_eq(kf_plan_num_launches(r.plan), 1);
  ck_assert_int_eq(rt_fake_count_prefix("ModuleLoadData"), 1);
  run_free(&r);
}
END_TEST

START_TEST(callers_small_workspace_keeps_fused) {
  rt_fake_set_kernel("k0_reduce", 255, 0, 0);
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_ctx_set_log(ctx, capture, NULL);
  kf_graph *g = sum_of_squares(ctx);
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  kf_plan *plan;
  ck_assert_int_eq(kf_compile(ctx, g, &opt, &plan), KF_OK);
  ck_assert_int_eq(kf_plan_workspace_size(plan), 0);
  static char ws[256] __attribute__((aligned(256)));
  ck_assert_int_eq(kf_plan_set_workspace(plan, ws, 256), KF_OK);
  ck_assert_int_eq(kf_plan_load(plan), KF_OK);
  ck_assert_int_eq(kf_plan_num_launches(plan), 1); /* the parts need N*4 bytes between them */
  ck_assert_msg(strstr(T.log, "the caller's has 256"), "%s", T.log);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("occupancy");
  TCase *tc = tcase_create("occupancy");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, fuser_split_constraint);
  tcase_add_test(tc, random_graphs_split);
  tcase_add_test(tc, low_occupancy_is_split_then_cached);
  tcase_add_test(tc, insane_cached_record_is_measured_again);
  tcase_add_test(tc, spills_are_split);
  tcase_add_test(tc, split_in_two_keeps_each_side_fused);
  tcase_add_test(tc, small_spills_kept_when_split_moves_more_bytes);
  tcase_add_test(tc, matmul_at_its_design_is_kept_without_measuring);
  tcase_add_test(tc, within_limit_is_kept_without_measuring);
  tcase_add_test(tc, suspicious_but_parts_no_better_is_kept_and_cached);
  tcase_add_test(tc, zero_limit_disables);
  tcase_add_test(tc, callers_small_workspace_keeps_fused);
  suite_add_tcase(s, tc);
  return s;
}
