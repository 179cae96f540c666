/* test_oom.c - the allocation-failure sweep (issue 18, part 5): every
 * allocation kfuse makes while loading, building, saving, planning, emitting
 * and compiling a graph is made to fail in turn, and each call must then
 * report KF_ERR_OUT_OF_MEMORY with a message naming it, or (where a path
 * has a fallback) give exactly what the clean run gave. Never a crash, never
 * a success with different output; leaks are caught by `make test-asan`.
 *
 * How: src/core/alloc.c counts allocations; a clean run of a stage counts
 * them (C), then for every N in 1..C the stage runs again with only the
 * Nth failing (core_alloc_fail(N, false): the later ones succeed, which is
 * the harder case, since a latched failure must not be covered up).
 *
 * Stages, per graph of examples/graphs/ and bench/graphs/: load (YAML),
 * save (kf_graph_to_yaml, kf_graph_save_yaml), plan (kf_plan_create and
 * kf_plan_describe, kf_graph_dump), emit (kf_plan_source of every launch),
 * compile, and run (kf_plan_run on the recording fake driver: module
 * loading, occupancy, workspace, launches; matmuls as template kernels,
 * and again, for the examples with one, as cuBLASLt calls on the fake
 * library, compile included: run_library).
 * NVRTC takes 60-90 ms per kernel here, so compile is swept in two ways:
 * warm (every example; the context's memory cache holds the kernels from a
 * clean compile, so only kfuse's own code runs: codegen again, cache
 * lookups, the program's bookkeeping) and cold (one small example, a fresh
 * context per N, so the thread pool, the cache's insertion and NVRTC's
 * wrapper are swept too). The disk cache is off (KFUSE_DISK_CACHE=0) so
 * that runs do not depend on what an earlier one left. Graph building
 * through the C builders (the composites) is swept on one graph as well.
 * Each case is its own Check case (CK_RUN_CASE=emit); docs/building.md
 * has the table and how to debug one point. */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "codegen/program.h"
#include "core/alloc.h"
#include "core/strbuf.h"
#include "fake_blaslt.h"
#include "fake_driver.h"
#include "ir/ir.h"
#include "kfuse.h"
#include "pipeline/pipeline.h"
#include "runtime/driver.h"

#define MAX_FILES 64
static char *files[MAX_FILES];
static int n_files;

static void find_files(void) {
  const char *pats[] = {KFUSE_SOURCE_DIR "/examples/graphs/*.yaml",
                        KFUSE_SOURCE_DIR "/bench/graphs/*.yaml"};
  for (int p = 0; p < 2; p++) {
    glob_t gl;
    if (glob(pats[p], 0, NULL, &gl) != 0) continue;
    for (size_t i = 0; i < gl.gl_pathc && n_files < MAX_FILES; i++)
      files[n_files++] = strdup(gl.gl_pathv[i]);
    globfree(&gl);
  }
}

/* What one run of a stage gave: its status, the text to compare with the
 * clean run (owned) and the message it left. */
typedef struct outcome {
  kf_status st;
  char *text;
  char msg[8192];
} outcome;

/* One stage: runs the call under test with allocation n failing (n = 0:
 * none) and returns how many allocations the call made. */
typedef long (*stage_fn)(int file, long n, outcome *o);

/* KFUSE_OOM_STICKY=1: allocation N and every later one fail (a harsher
 * variant, for runs by hand). */
static void arm(long n) {
  const char *e = getenv("KFUSE_OOM_STICKY");
  core_alloc_fail(n, e && *e == '1');
}

static long disarm(void) {
  long c = core_alloc_count();
  core_alloc_fail(0, false);
  return c;
}

static kf_ctx *new_ctx(void) {
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  return ctx;
}

static kf_graph *load(kf_ctx *ctx, int file) {
  kf_graph *g = NULL;
  kf_status st = kf_graph_load_yaml(ctx, files[file], &g);
  ck_assert_msg(st == KF_OK, "%s: %s", files[file], kf_ctx_errmsg(ctx));
  return g;
}

static kf_options options(void) {
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  return opt;
}

static char *hash_text(const kf_graph *g) {
  kf_hash128 h = kf_graph_hash(g);
  char *s = malloc(40);
  snprintf(s, 40, "%016llx%016llx", (unsigned long long)h.hi, (unsigned long long)h.lo);
  return s;
}

/* Appends b (owned, may be NULL) to *a. */
static void cat(char **a, char *b) {
  if (!b) return;
  size_t la = *a ? strlen(*a) : 0, lb = strlen(b);
  *a = realloc(*a, la + lb + 2);
  memcpy(*a + la, b, lb);
  (*a)[la + lb] = '\n';
  (*a)[la + lb + 1] = 0;
  free(b);
}

static kf_plan *make_plan(kf_ctx *ctx, const kf_graph *g) {
  kf_options opt = options();
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(ctx, g, &opt, &plan), KF_OK);
  return plan;
}

/* What the stages of one file share, made once outside the sweep (loading
 * the file for every N would cost more than the stage swept). */
static struct fixture {
  int file;
  kf_ctx *ctx;
  kf_graph *g;
  kf_plan *plan;
} fx = {-1, NULL, NULL, NULL};

static struct fixture *fixture(int file) {
  if (fx.file != file) {
    fx.ctx = new_ctx();
    fx.g = load(fx.ctx, file);
    fx.plan = make_plan(fx.ctx, fx.g);
    fx.file = file;
  }
  return &fx;
}

static void fixture_free(void) {
  kf_plan_destroy(fx.plan);
  kf_graph_destroy(fx.g);
  kf_ctx_destroy(fx.ctx);
  fx = (struct fixture){-1, NULL, NULL, NULL};
}

static long stage_load(int file, long n, outcome *o) {
  kf_ctx *ctx = new_ctx();
  kf_graph *g = NULL;
  arm(n);
  o->st = kf_graph_load_yaml(ctx, files[file], &g);
  long c = disarm();
  snprintf(o->msg, sizeof o->msg, "%s", kf_ctx_errmsg(ctx));
  if (o->st == KF_OK) {
    o->text = hash_text(g);
    cat(&o->text, kf_graph_to_yaml(g));
  }
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return c;
}

static long stage_save(int file, long n, outcome *o) {
  kf_graph *g = fixture(file)->g;
  char path[] = "/tmp/kfuse-oom-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  g->errmsg[0] = 0;
  arm(n);
  char *yaml = kf_graph_to_yaml(g);
  long c = core_alloc_count();
  o->st = yaml ? KF_OK : KF_ERR_OUT_OF_MEMORY;
  if (!yaml) snprintf(o->msg, sizeof o->msg, "%s", kf_graph_errmsg(g));
  g->errmsg[0] = 0;
  arm(n > c ? n - c : n > 0 ? -1 : 0); /* the same sweep continues into the save */
  kf_status st = kf_graph_save_yaml(g, path);
  c += disarm();
  if (o->st == KF_OK && st != KF_OK) {
    o->st = st;
    snprintf(o->msg, sizeof o->msg, "%s", kf_graph_errmsg(g));
  }
  if (o->st == KF_OK) {
    o->text = yaml;
    yaml = NULL;
    FILE *f = fopen(path, "r");
    char buf[1 << 16];
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = 0;
    cat(&o->text, strdup(buf));
  }
  free(yaml);
  unlink(path);
  return c;
}

static long stage_plan(int file, long n, outcome *o) {
  kf_ctx *ctx = fixture(file)->ctx;
  const kf_graph *g = fx.g;
  kf_options opt = options();
  kf_plan *plan = NULL;
  ctx->errmsg[0] = 0;
  arm(n);
  o->st = kf_plan_create(ctx, g, &opt, &plan);
  char *json = plan ? kf_plan_describe(plan, KF_FORMAT_JSON) : NULL;
  char *text = plan ? kf_plan_describe(plan, KF_FORMAT_TEXT) : NULL;
  char *dot = plan ? kf_plan_describe(plan, KF_FORMAT_DOT) : NULL;
  char *dump = plan ? kf_graph_dump(g) : NULL;
  long c = disarm();
  snprintf(o->msg, sizeof o->msg, "%s", kf_ctx_errmsg(ctx));
  /* The renderings' NULL is their out of memory (they have no handle to
   * hold a message). */
  if (o->st == KF_OK && (!json || !text || !dot || !dump)) {
    o->st = KF_ERR_OUT_OF_MEMORY;
    snprintf(o->msg, sizeof o->msg, "kf_plan_describe / kf_graph_dump: NULL (out of memory)");
  }
  if (o->st == KF_OK) {
    cat(&o->text, json);
    cat(&o->text, text);
    cat(&o->text, dot);
    cat(&o->text, dump);
    json = text = dot = dump = NULL;
  }
  free(json);
  free(text);
  free(dot);
  free(dump);
  kf_plan_destroy(plan);
  return c;
}

/* kf_plan_source leaves the plan as it was (but its message): one plan. */
static long stage_emit(int file, long n, outcome *o) {
  kf_plan *plan = fixture(file)->plan;
  int nl = kf_plan_num_launches(plan);
  o->st = KF_OK;
  long c = 0;
  for (int i = 0; i < nl && o->st == KF_OK; i++) {
    plan->errmsg[0] = 0;
    arm(n > c ? n - c : n > 0 ? -1 : 0);
    char *src = kf_plan_source(plan, i, "sm_90");
    c += disarm();
    if (!src) {
      o->st = KF_ERR_OUT_OF_MEMORY; /* to be confirmed by the message */
      snprintf(o->msg, sizeof o->msg, "%s", kf_plan_errmsg(plan));
    }
    cat(&o->text, src);
  }
  if (o->st != KF_OK) {
    free(o->text);
    o->text = NULL;
  }
  return c;
}

/* The compiled program as text: each launch's source, entry, grid and the
 * size and first bytes' checksum of its CUBIN. */
static char *program_text(const kf_plan *plan) {
  const cg_program *p = plan->code;
  char *t = NULL;
  for (int i = 0; i < p->n_launches; i++) {
    const cg_program_launch *l = &p->launches[i];
    unsigned sum = 0;
    for (size_t b = 0; b < l->image_size; b++)
      sum = sum * 31 + ((const unsigned char *)l->image)[b];
    char *head = malloc(160);
    snprintf(head, 160, "launch %d %s grid %u block %u smem %u image %zu %08x", i, l->src.entry,
             l->src.grid, l->src.block, l->src.smem_bytes, l->image_size, sum);
    cat(&t, head);
    cat(&t, strdup(l->src.source));
  }
  return t;
}

static long compile_with(kf_ctx *ctx, const kf_graph *g, long n, outcome *o) {
  kf_plan *plan = make_plan(ctx, g);
  plan->errmsg[0] = 0;
  arm(n);
  o->st = kf_plan_compile(plan);
  long c = disarm();
  snprintf(o->msg, sizeof o->msg, "%s", kf_plan_errmsg(plan));
  if (o->st == KF_OK) o->text = program_text(plan);
  kf_plan_destroy(plan);
  return c;
}

/* The memory cache is filled by a clean compile when the fixture is made;
 * each N compiles a fresh plan (a compile replaces the plan's code). */
static long stage_compile_warm(int file, long n, outcome *o) {
  if (fx.file != file) {
    fixture(file);
    outcome first = {0};
    compile_with(fx.ctx, fx.g, 0, &first);
    ck_assert_msg(first.st == KF_OK, "%s: %s", files[file], first.msg);
    free(first.text);
  }
  return compile_with(fx.ctx, fx.g, n, o);
}

static long stage_compile_cold(int file, long n, outcome *o) {
  kf_ctx *ctx = new_ctx();
  kf_graph *g = load(ctx, file);
  long c = compile_with(ctx, g, n, o);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return c;
}

/* Device tensors for g's inputs and outputs, at addresses the fake driver
 * accepts (one range for all, 256-byte aligned). */
#define FAKE_BASE ((CUdeviceptr)0x200000000ull)
static int fake_tensors(const kf_graph *g, kf_tensor *in, kf_tensor *out) {
  CUdeviceptr at = FAKE_BASE;
  int ni = kf_graph_num_inputs(g), no = kf_graph_num_outputs(g);
  for (int i = 0; i < ni + no; i++) {
    kf_value v = i < ni ? kf_graph_input(g, i) : kf_graph_output(g, i - ni);
    kf_tensor *t = i < ni ? &in[i] : &out[i - ni];
    t->data = (void *)(uintptr_t)at;
    t->dtype = kf_value_dtype(g, v);
    t->rank = kf_value_rank(g, v);
    memcpy(t->shape, kf_value_shape(g, v), sizeof t->shape);
    at += ((CUdeviceptr)kf_value_numel(g, v) * kf_dtype_size(t->dtype) + 255) / 256 * 256;
  }
  rt_fake_add_device_range(FAKE_BASE, (size_t)(at - FAKE_BASE));
  return ni;
}

/* The launches a run made, from the fake's log: each line's call and
 * kernel, without handles (those differ from run to run). */
static char *launch_text(int from) {
  char *t = NULL;
  for (int i = from; i < rt_fake_count(); i++) {
    const char *l = rt_fake_line(i);
    if (strncmp(l, "LaunchKernel", 12) != 0) continue;
    char *s = strdup(l);
    char *sp = strchr(s, ' ');
    if (sp) sp = strchr(sp + 1, ' '); /* the call and the function's name */
    if (sp) *sp = 0;
    cat(&t, s);
  }
  return t ? t : strdup("");
}

/* The matrix-product path the run sweep plans: "template" (kernels) or
 * "library" (cuBLASLt calls, forced: a choice by time on the fake driver
 * would depend on which allocation failed). */
static const char *run_matmul = "template";

/* kf_plan_run on the recording fake driver: loading the modules, the
 * occupancy feedback, the workspace and the launches (and, with
 * run_matmul "library", the cuBLASLt calls on the fake library: handle,
 * descriptors, layouts, algorithm choice). Each N compiles a fresh plan
 * first (memory cache warm), outside the sweep. */

/* One plan of the fixture's graph compiled and run, unswept. */
static void warm_choice(void) {
  static kf_tensor in[1024], out[1024];
  kf_options opt = options();
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_compile(fx.ctx, fx.g, &opt, &plan), KF_OK);
  int ni = fake_tensors(fx.g, in, out);
  ck_assert_int_eq(kf_plan_run(plan, in, ni, out, kf_graph_num_outputs(fx.g), NULL), KF_OK);
  kf_plan_destroy(plan);
}

static long stage_run(int file, long n, outcome *o) {
  if (fx.file != file) {
    rt_fake_reset();
    rt_driver_override(rt_fake_driver());
    /* the fake driver's matrix products go to the fake cuBLASLt: the real
     * library on a fake context is no configuration a user has */
    flt_install();
    kt_setenv("KFUSE_MATMUL", run_matmul, 1);
    fixture(file);
    /* the context keeps the matmul choice once made (docs/matmul.md):
     * made here, unswept, so that the clean run reads it back as every
     * swept one does (this stage sweeps the compile and the run after it) */
    if (!strcmp(run_matmul, "library")) warm_choice();
  }
  kf_plan *plan = NULL;
  kf_options opt = options();
  /* library: the compile is swept too (kernels from the memory cache; the
   * library calls planned, their descriptors and algorithms set up) */
  bool library = !strcmp(run_matmul, "library");
  if (library) arm(n);
  kf_status st = kf_compile(fx.ctx, fx.g, &opt, &plan);
  if (library && st != KF_OK) {
    o->st = st;
    snprintf(o->msg, sizeof o->msg, "%s", kf_ctx_errmsg(fx.ctx));
    return disarm();
  }
  ck_assert_int_eq(st, KF_OK);
  static kf_tensor in[1024], out[1024];
  ck_assert_int_le(kf_graph_num_inputs(fx.g) + kf_graph_num_outputs(fx.g), 1024);
  int ni = fake_tensors(fx.g, in, out);
  int from = rt_fake_count(), matmuls = flt.matmuls;
  plan->errmsg[0] = 0;
  if (!library) arm(n);
  o->st = kf_plan_run(plan, in, ni, out, kf_graph_num_outputs(fx.g), NULL);
  long c = disarm();
  snprintf(o->msg, sizeof o->msg, "%s", kf_plan_errmsg(plan));
  if (o->st == KF_OK) {
    o->text = launch_text(from);
    char lib[64]; /* a library call skipped would leave the kernels alike */
    snprintf(lib, sizeof lib, "library matmuls %d", flt.matmuls - matmuls);
    cat(&o->text, strdup(lib));
  }
  kf_plan_destroy(plan);
  return c;
}

/* Builds a graph of every composite through the C builders. */
static kf_status build_composites(kf_ctx *ctx, kf_graph **made) {
  kf_graph *g = NULL;
  kf_status st = kf_graph_create(ctx, &g);
  *made = g;
  if (st != KF_OK) return st;
  int64_t xs[2] = {8, 64}, ws[1] = {64}, bs[2] = {64, 32};
  kf_value x = kf_input(g, "x", KF_F32, 2, xs);
  kf_value w = kf_input(g, "w", KF_F32, 1, ws);
  kf_value b = kf_input(g, "b", KF_F32, 1, ws);
  kf_value m = kf_input(g, "m", KF_F32, 2, bs);
  kf_value s = kf_softmax(g, x, 1);
  kf_value ls = kf_log_softmax(g, x, 1);
  kf_value ln = kf_layernorm(g, kf_add(g, s, ls), w, b, 1e-5);
  kf_value rn = kf_rmsnorm(g, ln, w, 1e-6);
  kf_value mm = kf_matmul(g, rn, m);
  int ax[1] = {1};
  kf_value mean = kf_mean(g, mm, 1, ax, true);
  kf_value out = kf_gelu_tanh(g, kf_sub(g, mm, mean));
  st = kf_set_name(g, out, "out"); /* not sticky: its status is the caller's */
  if (st != KF_OK) return kf_graph_status(g) != KF_OK ? kf_graph_status(g) : st;
  kf_set_output(g, out);
  int perm[2] = {1, 0};
  int64_t rs[1] = {8 * 32};
  kf_value t = kf_reshape(g, kf_transpose(g, out, perm), 1, rs);
  kf_set_output(g, kf_cast(g, t, KF_BF16));
  return kf_graph_status(g);
}

static long stage_build(int file, long n, outcome *o) {
  (void)file;
  kf_ctx *ctx = new_ctx();
  arm(n);
  kf_graph *g = NULL;
  o->st = build_composites(ctx, &g);
  long c = disarm();
  snprintf(o->msg, sizeof o->msg, "%s", g ? kf_graph_errmsg(g) : kf_ctx_errmsg(ctx));
  if (o->st == KF_OK) {
    o->text = hash_text(g);
    cat(&o->text, kf_graph_to_yaml(g));
  }
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return c;
}

/* The sweep: the clean count, then every N. Returns the count. */
static long sweep(const char *stage, stage_fn fn, int file) {
  const char *only = getenv("KFUSE_OOM_FILE"); /* to debug one graph: a part of its path */
  if (only && !strstr(files[file], only)) return 0;
  outcome clean = {0};
  long count = fn(file, 0, &clean);
  ck_assert_msg(clean.st == KF_OK, "%s %s: clean run failed: %s", stage, files[file], clean.msg);
  ck_assert_ptr_nonnull(clean.text);
  for (long n = 1; n <= count; n++) {
    outcome o = {0};
    fn(file, n, &o);
    if (o.st == KF_OK && getenv("KFUSE_OOM_DIFF") && (!o.text || strcmp(o.text, clean.text))) {
      FILE *f = fopen("/tmp/kfuse-oom-clean.txt", "w");
      fputs(clean.text, f);
      fclose(f);
      f = fopen("/tmp/kfuse-oom-fail.txt", "w");
      fputs(o.text ? o.text : "(null)", f);
      fclose(f);
    }
    if (o.st == KF_OK) {
      ck_assert_msg(o.text && strcmp(o.text, clean.text) == 0,
                    "%s %s: allocation %ld of %ld failed, the call succeeded with other output",
                    stage, files[file], n, count);
    } else {
      ck_assert_msg(o.st == KF_ERR_OUT_OF_MEMORY,
                    "%s %s: allocation %ld of %ld failed, reported as %s: %s", stage, files[file],
                    n, count, kf_status_name(o.st), o.msg);
      ck_assert_msg(strstr(o.msg, "out of memory") != NULL,
                    "%s %s: allocation %ld of %ld failed, message does not say so: '%s'", stage,
                    files[file], n, count, o.msg);
    }
    free(o.text);
  }
  free(clean.text);
  fixture_free();
  fprintf(stderr, "test_oom: %-13s %-60s %6ld allocations swept\n", stage, files[file], count);
  return count;
}

static void setup(void) {
  setenv("KFUSE_DISK_CACHE", "0", 1);
  setenv("KFUSE_LOG", "off", 1);
}

START_TEST(sweep_load) {
  sweep("load", stage_load, _i);
}
END_TEST
START_TEST(sweep_save) {
  sweep("save", stage_save, _i);
}
END_TEST
START_TEST(sweep_plan) {
  sweep("plan", stage_plan, _i);
}
END_TEST
START_TEST(sweep_emit) {
  sweep("emit", stage_emit, _i);
}
END_TEST
START_TEST(sweep_compile_warm) {
  sweep("compile-warm", stage_compile_warm, _i);
}
END_TEST

/* One small example (a single kernel) cold: every N pays NVRTC once. */
START_TEST(sweep_compile_cold) {
  int file = -1;
  for (int i = 0; i < n_files; i++)
    if (strstr(files[i], "/bias_gelu.yaml")) file = i;
  ck_assert_int_ge(file, 0);
  sweep("compile-cold", stage_compile_cold, file);
}
END_TEST

static void run_sweep(const char *stage, int file) {
  sweep(stage, stage_run, file);
  ck_assert_int_eq(rt_fake_live_objects(), 0);
  ck_assert_uint_eq(rt_fake_bytes_allocated(), 0);
  ck_assert_int_eq(flt.handles + flt.descs + flt.layouts + flt.prefs, 0);
  rt_driver_override(NULL);
  rt_blaslt_override(NULL);
  kt_unsetenv("KFUSE_MATMUL");
  rt_fake_reset();
}

START_TEST(sweep_run) {
  run_matmul = "template";
  run_sweep("run", _i);
}
END_TEST

/* The examples with matrix products again, through cuBLASLt calls. */
START_TEST(sweep_run_library) {
  FILE *f = fopen(files[_i], "r");
  ck_assert_ptr_nonnull(f);
  char text[65536];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  if (!strstr(text, "op: matmul")) return;
  /* attention.yaml's and attention_lse.yaml's two products are one
   * flash-attention kernel now (docs/attention.md): no product of them
   * reaches cuBLASLt, and the template sweep (sweep_run) already covers
   * that kernel */
  if (strstr(files[_i], "/attention.yaml") || strstr(files[_i], "/attention_lse.yaml")) return;
  run_matmul = "library";
  run_sweep("run-library", _i);
  ck_assert_int_gt(flt.matmuls, 0); /* the calls were made: not a template plan */
}
END_TEST

START_TEST(sweep_build) {
  sweep("build", stage_build, 0);
}
END_TEST

/* A string builder's failure is sticky and travels: a NULL text (a failed
 * take upstream) and a failed sub-buffer read through core_str_use both
 * latch the buffer written to (the crash of core_str_puts(NULL) and the
 * "mean whose sum is missing" of issue 18 came from these). */
START_TEST(strbuf_failure_travels) {
  core_str sub = {0}, out = {0};
  core_alloc_fail(1, false);
  core_str_puts(&sub, "kf_red_max");
  ck_assert(sub.oom);
  core_str_printf(&out, "  acc = %s;\n", core_str_use(&out, &sub));
  ck_assert(out.oom);
  ck_assert_ptr_null(core_str_take(&out));
  ck_assert_ptr_null(core_str_take(&sub));
  core_str_puts(&out, NULL);
  ck_assert(out.oom);
  core_str_free(&out);
  core_str_puts(&out, "ok");
  ck_assert_str_eq(core_str_use(&sub, &out), "ok");
  ck_assert(!sub.oom);
  core_str_free(&out);
}
END_TEST

/* kf_ctx_create and kf_graph_create: OOM and no handle, or a handle. */
START_TEST(create_calls) {
  core_alloc_fail(0, false);
  kf_ctx *ctx = new_ctx();
  long count = core_alloc_count();
  kf_ctx_destroy(ctx);
  for (long n = 1; n <= count; n++) {
    kf_ctx *c = (kf_ctx *)1;
    core_alloc_fail(n, false);
    kf_status st = kf_ctx_create(&c);
    core_alloc_fail(0, false);
    ck_assert(st == KF_OK ? c != NULL : st == KF_ERR_OUT_OF_MEMORY && c == NULL);
    kf_ctx_destroy(c);
  }
  ctx = new_ctx();
  kf_graph *g = (kf_graph *)1;
  core_alloc_fail(1, false);
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_ERR_OUT_OF_MEMORY);
  core_alloc_fail(0, false);
  ck_assert_ptr_null(g);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(ctx), "out of memory"));
  kf_ctx_destroy(ctx);
}
END_TEST

/* The injector itself: the Nth fails, and with sticky every later one. */
START_TEST(injector_counts) {
  core_alloc_fail(3, false);
  void *a = core_malloc(1), *b = core_calloc(1, 1), *c = core_strdup("x"), *d = core_malloc(1);
  ck_assert(a && b && !c && d && core_alloc_failed());
  ck_assert_int_eq(core_alloc_count(), 4);
  free(a);
  free(b);
  free(d);
  core_alloc_fail(2, true);
  a = core_malloc(1);
  b = core_realloc(NULL, 1);
  c = core_strndup("xyz", 2);
  ck_assert(a && !b && !c);
  free(a);
  core_alloc_fail(0, false);
  c = core_strndup("xyz", 2);
  ck_assert_str_eq(c, "xy");
  ck_assert(!core_alloc_failed());
  free(c);
}
END_TEST

static Suite *make_suite(void) {
  find_files();
  Suite *s = suite_create("oom");
  /* One case per stage, so that CK_RUN_CASE=emit runs one sweep. */
  const char *names[] = {"injector", "build",        "load",         "save", "plan",
                         "emit",     "compile_warm", "compile_cold", "run",  "run_library"};
  TCase *tc[10];
  for (int i = 0; i < 10; i++) {
    tc[i] = tcase_create(names[i]);
    tcase_add_checked_fixture(tc[i], setup, NULL);
    tcase_set_timeout(tc[i], 600);
    /* The three longest run as CTest tests of their own (tests/CMakeLists.txt),
     * so that ctest -j spreads the sweep; the rest are tagged "quick". */
    bool own =
        !strcmp(names[i], "load") || !strcmp(names[i], "compile_warm") || !strcmp(names[i], "run");
    tcase_set_tags(tc[i], own ? "long" : "quick");
    suite_add_tcase(s, tc[i]);
  }
  tcase_add_test(tc[0], injector_counts);
  tcase_add_test(tc[0], strbuf_failure_travels);
  tcase_add_test(tc[0], create_calls);
  tcase_add_test(tc[1], sweep_build);
  tcase_add_loop_test(tc[2], sweep_load, 0, n_files);
  tcase_add_loop_test(tc[3], sweep_save, 0, n_files);
  tcase_add_loop_test(tc[4], sweep_plan, 0, n_files);
  tcase_add_loop_test(tc[5], sweep_emit, 0, n_files);
  tcase_add_loop_test(tc[6], sweep_compile_warm, 0, n_files);
  tcase_add_test(tc[7], sweep_compile_cold);
  tcase_add_loop_test(tc[8], sweep_run, 0, n_files);
  tcase_add_loop_test(tc[9], sweep_run_library, 0, n_files);
  return s;
}
