/* test_compile.c - compiling programs and plans (no GPU needed): parallel
 * NVRTC through the memory and disk caches, compile errors with logs and
 * line numbers, source dumps, faults that must not fail a compile, threads
 * sharing a context, and the example graphs end to end for sm_90. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "codegen/program.h"
#include "runtime/cache.h"
#include "runtime/cache_disk.h"
#include "runtime/compile.h"

static char dir[300], top[256];
static int warnings;
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

static void count_log(void *user, kf_log_level level, const char *component, const char *msg) {
  (void)user, (void)component, (void)msg;
  pthread_mutex_lock(&warn_lock);
  if (level <= KF_LOG_WARN) warnings++;
  pthread_mutex_unlock(&warn_lock);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static void setup(void) {
  snprintf(top, sizeof top, "/tmp/kfuse-test-compile-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(top));
  snprintf(dir, sizeof dir, "%s/cache", top);
  kt_setenv("KFUSE_CACHE_DIR", dir, 1);
  kt_unsetenv("KFUSE_DUMP_DIR");
  rt_cache_disk_inject_fault(0, 0);
  rt_cache_disk_inject_fault(1, 0);
  warnings = 0;
}

static void teardown(void) {
  nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static kf_ctx *new_ctx(void) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_ctx_set_log(ctx, count_log, NULL);
  return ctx;
}

/* Kernel i of a family: distinct sources, so distinct keys. */
static char *kernel_src(int i, char *entry, size_t size) {
  snprintf(entry, size, "k%d", i);
  char *s = malloc(512);
  snprintf(
      s, 512,
      "extern \"C\" __global__ void k%d(const float* __restrict__ a, float* b, int n) {\n"
      "  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)\n"
      "    b[j] = tanhf(a[j]) * %d.0f + expf(a[j]);\n"
      "}\n",
      i, i + 1);
  return s;
}

static const char *bad_src =
    "extern \"C\" __global__ void bad_k(float* b) {\n"
    "  int i = threadIdx.x;\n"
    "  b[i] = 1.0f;\n"
    "  b[i] += not_declared(i);\n"
    "}\n";

/* A program of n kernels; kernel `bad` (if >= 0) does not compile. */
static cg_program *make_prog(int n, int first, int bad) {
  cg_program *p = cg_program_new(n);
  ck_assert_ptr_nonnull(p);
  snprintf(p->arch, sizeof p->arch, "sm_90");
  for (int i = 0; i < n; i++) {
    cg_launch_src *s = &p->launches[i].src;
    if (i == bad) {
      s->source = strdup(bad_src);
      snprintf(s->entry, sizeof s->entry, "bad_k");
    } else {
      s->source = kernel_src(first + i, s->entry, sizeof s->entry);
    }
  }
  return p;
}

static void compile_expect(kf_ctx *ctx, int n, int compiled, int mem, int disk) {
  cg_program *p = make_prog(n, 0, -1);
  char err[8192];
  kf_status st = rt_compile_program(ctx, p, err, sizeof err);
  ck_assert_msg(st == KF_OK, "%s", err);
  ck_assert_int_eq(p->stats.kernels, n);
  ck_assert_int_eq(p->stats.compiled, compiled);
  ck_assert_int_eq(p->stats.mem_hits, mem);
  ck_assert_int_eq(p->stats.disk_hits, disk);
  ck_assert_int_eq(p->stats.cache_hits, mem + disk);
  ck_assert_str_eq(p->stats.arch, "sm_90");
  for (int i = 0; i < n; i++) {
    ck_assert_ptr_nonnull(p->launches[i].image);
    ck_assert_int_eq(memcmp(p->launches[i].image,
                            "\x7f"
                            "ELF",
                            4),
                     0);
    ck_assert_int_eq(p->launches[i].cache_hit, p->launches[i].origin != CG_COMPILED);
  }
  cg_program_free(p);
}

START_TEST(compile_then_memory_then_disk) {
  kf_ctx *ctx = new_ctx();
  compile_expect(ctx, 5, 5, 0, 0);
  compile_expect(ctx, 5, 0, 5, 0); /* same context: memory */
  kf_ctx *fresh = new_ctx();
  compile_expect(fresh, 5, 0, 0, 5); /* fresh context: disk */
  compile_expect(fresh, 5, 0, 5, 0);
  kf_cache_stats s;
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &s), KF_OK);
  ck_assert_uint_eq(s.misses, 5);
  ck_assert_uint_eq(s.mem_hits, 5);
  ck_assert_uint_eq(s.disk_entries, 5);
  ck_assert_uint_eq(s.mem_entries, 5);
  ck_assert_int_eq(kf_ctx_cache_stats(fresh, &s), KF_OK);
  ck_assert_uint_eq(s.disk_hits, 5);
  ck_assert_uint_eq(s.misses, 0);
  ck_assert_int_eq(warnings, 0);
  kf_ctx_destroy(fresh);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(compile_error_has_log_source_and_dump) {
  char dump[300];
  snprintf(dump, sizeof dump, "%s/dump", top);
  kt_setenv("KFUSE_DUMP_DIR", dump, 1);
  kf_ctx *ctx = new_ctx();
  cg_program *p = make_prog(3, 0, 2);
  char err[8192];
  ck_assert_int_eq(rt_compile_program(ctx, p, err, sizeof err), KF_ERR_COMPILE);
  ck_assert_msg(strstr(err, "kernel bad_k (launch 2 of 3) failed to compile for sm_90"), "%s", err);
  ck_assert_msg(strstr(err, "not_declared"), "no NVRTC log: %s", err);
  ck_assert_msg(strstr(err, ">    4 |   b[i] += not_declared(i);"), "no numbered source: %s", err);
  ck_assert_msg(strstr(err, "source written to"), "%s", err);
  ck_assert_ptr_nonnull(p->launches[2].log);
  cg_program_free(p);
  char path[400];
  snprintf(path, sizeof path, "%s/bad_k.cu", dump);
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "no dump at %s", path);
  char buf[1024] = "";
  ck_assert_uint_gt(fread(buf, 1, sizeof buf - 1, f), 0);
  fclose(f);
  ck_assert_str_eq(buf, bad_src);
  /* the good kernels were cached; the bad one is not, and fails again */
  compile_expect(ctx, 2, 0, 2, 0);
  p = make_prog(3, 0, 2);
  ck_assert_int_eq(rt_compile_program(ctx, p, err, sizeof err), KF_ERR_COMPILE);
  cg_program_free(p);
  kf_ctx_destroy(ctx);
}
END_TEST

static kf_ctx *shared_ctx;

static void *compile_in_thread(void *arg) {
  cg_program *p = make_prog(3, 0, -1);
  char err[8192];
  *(kf_status *)arg = rt_compile_program(shared_ctx, p, err, sizeof err);
  cg_program_free(p);
  return NULL;
}

START_TEST(threads_share_one_compile) {
  shared_ctx = new_ctx();
  enum { N = 8 };
  pthread_t t[N];
  kf_status st[N];
  for (int i = 0; i < N; i++) pthread_create(&t[i], NULL, compile_in_thread, &st[i]);
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(st[i], KF_OK);
  }
  kf_cache_stats s;
  kf_ctx_cache_stats(shared_ctx, &s);
  ck_assert_uint_eq(s.misses, 3); /* each kernel compiled once */
  ck_assert_uint_eq(s.mem_hits, 3 * (N - 1));
  kf_ctx_destroy(shared_ctx);
}
END_TEST

START_TEST(full_disk_compiles_without_cache) {
  rt_cache_disk_inject_fault(1, ENOSPC);
  kf_ctx *ctx = new_ctx();
  compile_expect(ctx, 3, 3, 0, 0);
  kf_cache_stats s;
  kf_ctx_cache_stats(ctx, &s);
  ck_assert_uint_eq(s.disk_errors, 3);
  ck_assert_uint_eq(s.disk_entries, 0);
  ck_assert_int_eq(warnings, 1);
  kf_ctx_destroy(ctx);
  rt_cache_disk_inject_fault(1, 0);
  ctx = new_ctx();
  compile_expect(ctx, 3, 3, 0, 0); /* nothing was stored */
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(unusable_folder_compiles_without_cache) {
  FILE *f = fopen(dir, "w"); /* a file where the folder should be: works as root too */
  fclose(f);
  kf_ctx *ctx = new_ctx();
  compile_expect(ctx, 2, 2, 0, 0);
  compile_expect(ctx, 2, 0, 2, 0); /* memory still works */
  kf_cache_stats s;
  kf_ctx_cache_stats(ctx, &s);
  ck_assert(!s.disk_enabled);
  ck_assert_int_eq(warnings, 1);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(corrupt_entry_recompiled) {
  kf_ctx *ctx = new_ctx();
  compile_expect(ctx, 1, 1, 0, 0);
  kf_ctx_destroy(ctx);
  DIR *d = opendir(dir);
  struct dirent *de;
  char path[600] = "";
  while ((de = readdir(d)))
    if (strstr(de->d_name, ".kfc")) snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
  closedir(d);
  ck_assert_int_eq(truncate(path, 100), 0);
  ctx = new_ctx();
  compile_expect(ctx, 1, 1, 0, 0);
  ck_assert_int_eq(warnings, 1);
  kf_ctx_destroy(ctx);
  ctx = new_ctx();
  compile_expect(ctx, 1, 0, 0, 1); /* rewritten, valid again */
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- plans --------------------------------------------------------------- */

static void count_side(void *arg) {
  (*(int *)arg)++;
}

/* Two programs in one batch with a side job: each program gets its own
 * result and stats, one that fails leaves the other compiled, the side
 * job runs once, and a kernel both programs hold compiles once. */
START_TEST(programs_compile_in_one_batch) {
  kf_ctx *ctx = new_ctx();
  for (int round = 0; round < 2; round++) {
    cg_program *a = make_prog(3, 0, -1), *b = make_prog(2, 2, round ? 0 : -1);
    cg_program *progs[2] = {a, b};
    kf_status st[2];
    char e0[8192], e1[8192], *errs[2] = {e0, e1};
    int side = 0;
    rt_compile_programs(ctx, progs, 2, st, errs, sizeof e0, count_side, &side);
    ck_assert_int_eq(side, 1);
    ck_assert_msg(st[0] == KF_OK, "%s", e0);
    ck_assert_int_eq(a->stats.kernels, 3);
    for (int i = 0; i < 3; i++) ck_assert_ptr_nonnull(a->launches[i].image);
    if (round == 0) {
      ck_assert_msg(st[1] == KF_OK, "%s", e1);
      ck_assert_int_eq(b->stats.kernels, 2);
      /* k2 is in both: compiled by one, waited for or found by the other */
      ck_assert_int_eq(a->stats.compiled + b->stats.compiled, 4);
      ck_assert_ptr_nonnull(b->launches[1].image);
    } else {
      ck_assert_int_eq(st[1], KF_ERR_COMPILE);
      ck_assert_msg(strstr(e1, "bad_k") != NULL, "%s", e1);
      ck_assert_int_eq(a->stats.compiled, 0); /* from memory this time */
    }
    cg_program_free(a);
    cg_program_free(b);
  }
  kf_ctx_destroy(ctx);
}
END_TEST

static kf_graph *small_graph(kf_ctx *ctx) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t shape[2] = {256, 1024};
  kf_value x = kf_input(g, "x", KF_F32, 2, shape);
  kf_value y = kf_add(g, kf_exp(g, x), x);
  kf_set_output(g, y);
  kf_set_output(g, kf_softmax(g, x, -1));
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

START_TEST(plan_compiles_for_sm90) {
  kf_ctx *ctx = new_ctx();
  kf_graph *g = small_graph(ctx);
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  kf_plan *plan;
  kf_status st = kf_compile(ctx, g, &opt, &plan);
  ck_assert_msg(st == KF_OK, "%s", kf_ctx_errmsg(ctx));
  kf_compile_stats s;
  ck_assert_int_eq(kf_plan_compile_stats(plan, &s), KF_OK);
  ck_assert_int_eq(s.kernels, kf_plan_num_launches(plan));
  ck_assert_int_ge(s.kernels, 1);
  ck_assert_int_eq(s.compiled, s.kernels);
  ck_assert_str_eq(s.arch, "sm_90");
  ck_assert(s.compile_ms > 0);
  /* again: every kernel from memory */
  ck_assert_int_eq(kf_plan_compile(plan), KF_OK);
  kf_plan_compile_stats(plan, &s);
  ck_assert_int_eq(s.compiled, 0);
  ck_assert_int_eq(s.mem_hits, s.kernels);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* kf_plan_launch_compile: per launch, where its code came from, its
 * codegen and compile times, its source size and its cache key (equal for
 * identical kernels: a second plan of the same graph has the same keys). */
START_TEST(launch_compile_profile) {
  kf_ctx *ctx = new_ctx();
  kf_graph *g = small_graph(ctx);
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  kf_plan *plan, *again;
  ck_assert_int_eq(kf_plan_create(ctx, g, &opt, &plan), KF_OK);
  kf_launch_compile lc;
  ck_assert_int_eq(kf_plan_launch_compile(plan, 0, &lc), KF_ERR_UNSUPPORTED);
  ck_assert_msg(kf_plan_compile(plan) == KF_OK, "%s", kf_plan_errmsg(plan));
  int n = kf_plan_num_launches(plan);
  ck_assert_int_ge(n, 1);
  ck_assert_int_eq(kf_plan_launch_compile(plan, n, &lc), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_plan_launch_compile(plan, -1, &lc), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_plan_launch_compile(plan, 0, NULL), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_plan_launch_compile(NULL, 0, &lc), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_compile(ctx, g, &opt, &again), KF_OK);
  for (int i = 0; i < n; i++) {
    kf_launch_compile a, b;
    ck_assert_int_eq(kf_plan_launch_compile(plan, i, &a), KF_OK);
    ck_assert_int_eq(kf_plan_launch_compile(again, i, &b), KF_OK);
    ck_assert_int_eq(a.origin, KF_ORIGIN_COMPILED);
    ck_assert_int_eq(b.origin, KF_ORIGIN_MEM_HIT);
    ck_assert(a.emit_ms >= 0 && a.compile_ms > 0);
    char *src = kf_plan_source(plan, i, NULL);
    ck_assert_ptr_nonnull(src);
    ck_assert_int_eq(a.source_bytes, (int64_t)strlen(src));
    kf_free(src);
    ck_assert(a.key_hi || a.key_lo);
    ck_assert(a.key_hi == b.key_hi && a.key_lo == b.key_lo);
    for (int j = 0; j < i; j++) { /* distinct launches, distinct kernels */
      kf_launch_compile c;
      kf_plan_launch_compile(plan, j, &c);
      ck_assert(c.key_hi != a.key_hi || c.key_lo != a.key_lo);
    }
  }
  kf_plan_destroy(again);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* The plan keeps its own copy of options.arch: the caller's string may be
 * gone (here: overwritten) before kf_plan_compile. */
START_TEST(plan_copies_the_arch_string) {
  kf_ctx *ctx = new_ctx();
  kf_graph *g = small_graph(ctx);
  kf_options opt;
  kf_options_init(&opt);
  char arch[16] = "sm_90";
  opt.arch = arch;
  kf_plan *plan;
  ck_assert_int_eq(kf_plan_create(ctx, g, &opt, &plan), KF_OK);
  strcpy(arch, "garbage");
  ck_assert_msg(kf_plan_compile(plan) == KF_OK, "%s", kf_plan_errmsg(plan));
  kf_compile_stats s;
  kf_plan_compile_stats(plan, &s);
  ck_assert_str_eq(s.arch, "sm_90");
  kf_plan_destroy(plan);
  char long_arch[64];
  memset(long_arch, 'x', sizeof long_arch - 1);
  long_arch[sizeof long_arch - 1] = 0;
  opt.arch = long_arch;
  plan = (kf_plan *)1;
  ck_assert_int_eq(kf_plan_create(ctx, g, &opt, &plan), KF_ERR_INVALID_ARG);
  ck_assert_ptr_null(plan);
  ck_assert_msg(strstr(kf_ctx_errmsg(ctx), "too long"), "%s", kf_ctx_errmsg(ctx));
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(plan_arch_errors_and_default) {
  kf_ctx *ctx = new_ctx();
  kf_graph *g = small_graph(ctx);
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_1";
  kf_plan *plan = (kf_plan *)1;
  ck_assert_int_eq(kf_compile(ctx, g, &opt, &plan), KF_ERR_INVALID_ARG);
  ck_assert_ptr_null(plan);
  ck_assert_msg(strstr(kf_ctx_errmsg(ctx), "arch"), "%s", kf_ctx_errmsg(ctx));
  ck_assert_int_eq(kf_plan_create(ctx, g, NULL, &plan), KF_OK);
  kf_compile_stats s;
  ck_assert_int_eq(kf_plan_compile_stats(plan, &s), KF_ERR_UNSUPPORTED);
  int n = 0;
  bool gpu = kf_device_count(ctx, &n) == KF_OK && n > 0;
  warnings = 0;
  ck_assert_int_eq(kf_plan_compile(plan), KF_OK); /* arch from the device, or sm_90 */
  kf_plan_compile_stats(plan, &s);
  if (!gpu) {
    ck_assert_str_eq(s.arch, "sm_90");
    ck_assert_int_eq(warnings, 1);
  }
  ck_assert_msg(strstr(kf_ctx_errmsg(ctx), "arch"), "a successful compile changed the message: %s",
                kf_ctx_errmsg(ctx));
  kf_plan_destroy(plan);
  ck_assert_int_eq(kf_plan_compile(NULL), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_plan_compile_stats(NULL, &s), KF_ERR_INVALID_ARG);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(example_graphs_compile_for_sm90) {
  char gdir[512];
  snprintf(gdir, sizeof gdir, "%s/examples/graphs", KFUSE_SOURCE_DIR);
  DIR *d = opendir(gdir);
  if (!d) return; /* no examples in this checkout */
  kf_ctx *ctx = new_ctx();
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  int n = 0;
  for (struct dirent *de; (de = readdir(d));) {
    if (!strstr(de->d_name, ".yaml")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", gdir, de->d_name);
    kf_graph *g;
    ck_assert_msg(kf_graph_load_yaml(ctx, path, &g) == KF_OK, "%s: %s", path, kf_ctx_errmsg(ctx));
    kf_plan *plan;
    kf_status st = kf_compile(ctx, g, &opt, &plan);
    ck_assert_msg(st == KF_OK, "%s: %s: %s", de->d_name, kf_status_name(st), kf_ctx_errmsg(ctx));
    kf_compile_stats s;
    kf_plan_compile_stats(plan, &s);
    ck_assert_int_eq(s.kernels, kf_plan_num_launches(plan));
    kf_plan_destroy(plan);
    kf_graph_destroy(g);
    n++;
  }
  closedir(d);
  ck_assert_int_gt(n, 0);
  kf_ctx_destroy(ctx);
}
END_TEST

/* The residual ladder plans row kernels that are the same code under other
 * names: each distinct one compiles once, the others take a copy of its
 * image and name its function (runtime/compile_alike.c). Before, every
 * layer paid NVRTC: a 1e5-node ladder compiled 2,778 kernels. */
START_TEST(alike_launches_compile_once) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/check_graphs/ladder_alike.yaml", KFUSE_SOURCE_DIR);
  kf_ctx *ctx = new_ctx();
  kf_graph *g;
  ck_assert_msg(kf_graph_load_yaml(ctx, path, &g) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  kf_plan *plan;
  ck_assert_msg(kf_compile(ctx, g, &opt, &plan) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  kf_compile_stats s;
  ck_assert_int_eq(kf_plan_compile_stats(plan, &s), KF_OK);
  ck_assert_int_ge(s.kernels, 3);
  ck_assert_int_lt(s.compiled, s.kernels);
  ck_assert_int_eq(s.compiled + s.mem_hits, s.kernels);
  /* an adopted launch keeps its own name and source, and shares the key */
  int adopted = 0;
  for (int i = 0; i < s.kernels; i++) {
    kf_launch_compile a;
    ck_assert_int_eq(kf_plan_launch_compile(plan, i, &a), KF_OK);
    if (a.origin != KF_ORIGIN_MEM_HIT) continue;
    adopted++;
    char name[32];
    snprintf(name, sizeof name, "kf_k%d_row(", i);
    char *src = kf_plan_source(plan, i, NULL);
    ck_assert_ptr_nonnull(strstr(src, name));
    kf_free(src);
    bool shared = false;
    for (int j = 0; j < i; j++) {
      kf_launch_compile b;
      kf_plan_launch_compile(plan, j, &b);
      shared |= b.origin == KF_ORIGIN_COMPILED && b.key_hi == a.key_hi && b.key_lo == a.key_lo;
    }
    ck_assert_msg(shared, "launch %d shares no compiled launch's key", i);
  }
  ck_assert_int_gt(adopted, 0);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- the kfuse program ---------------------------------------------------- */

/* Runs `$KFUSE_CLI args` and returns its stdout (static) and exit status. */
static const char *cli(const char *args, int *status) {
  static char out[4096];
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", getenv("KFUSE_CLI"), args);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  *status = pclose(p);
  return out;
}

START_TEST(cli_compile_and_cache) {
  if (!getenv("KFUSE_CLI")) return; /* run outside CTest */
  int st;
  char args[512];
  snprintf(args, sizeof args, "compile %s/examples/graphs/softmax.yaml --arch sm_90 --json",
           KFUSE_SOURCE_DIR);
  const char *out = cli(args, &st);
  ck_assert_msg(st == 0, "status %d: %s", st, out);
  ck_assert_msg(strstr(out, "\"kernels\":1,\"compiled\":1,\"cache_hits\":0"), "%s", out);
  ck_assert_msg(strstr(out, "\"compile_ms\":"), "%s", out);
  out = cli(args, &st); /* a fresh process: from the disk */
  ck_assert_msg(strstr(out, "\"compiled\":0,\"cache_hits\":1,\"mem_hits\":0,\"disk_hits\":1"), "%s",
                out);
  out = cli("cache path", &st);
  ck_assert_int_eq(st, 0);
  ck_assert_int_eq(strncmp(out, dir, strlen(dir)), 0);
  out = cli("cache stats --json", &st);
  ck_assert_msg(strstr(out, "\"enabled\":true,\"entries\":1,"), "%s", out);
  out = cli("cache clear", &st);
  ck_assert_int_eq(st, 0);
  out = cli("cache stats --json", &st);
  ck_assert_msg(strstr(out, "\"entries\":0,"), "%s", out);
  cli("cache frobnicate", &st);
  ck_assert_int_ne(st, 0);
  snprintf(args, sizeof args, "compile %s/examples/graphs/softmax.yaml --arch sm_2",
           KFUSE_SOURCE_DIR);
  cli(args, &st);
  ck_assert_int_ne(st, 0);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("compile");
  TCase *tc = tcase_create("compile");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, compile_then_memory_then_disk);
  tcase_add_test(tc, alike_launches_compile_once);
  tcase_add_test(tc, programs_compile_in_one_batch);
  tcase_add_test(tc, compile_error_has_log_source_and_dump);
  tcase_add_test(tc, threads_share_one_compile);
  tcase_add_test(tc, full_disk_compiles_without_cache);
  tcase_add_test(tc, unusable_folder_compiles_without_cache);
  tcase_add_test(tc, corrupt_entry_recompiled);
  tcase_add_test(tc, plan_compiles_for_sm90);
  tcase_add_test(tc, launch_compile_profile);
  tcase_add_test(tc, plan_arch_errors_and_default);
  tcase_add_test(tc, plan_copies_the_arch_string);
  tcase_add_test(tc, cli_compile_and_cache);
  suite_add_tcase(s, tc);
  TCase *ex = tcase_create("examples");
  tcase_add_checked_fixture(ex, setup, teardown);
  tcase_set_timeout(ex, 300);
  tcase_add_test(ex, example_graphs_compile_for_sm90);
  suite_add_tcase(s, ex);
  return s;
}
