/* codegen_util.h - helpers shared by the codegen suites: hand-built plans
 * (one kernel per launch, or a horizontal pack), NVRTC compiles for sm_90,
 * golden-file comparison (KFUSE_UPDATE_GOLDEN=1 rewrites them). */
#ifndef KF_TEST_CODEGEN_UTIL_H
#define KF_TEST_CODEGEN_UTIL_H

#include <check.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/codegen.h"
#include "codegen/emit.h"
#include "codegen/target.h"
#include "fuser/plan.h"
#include "ir/ir.h"

#define TU_MAX_KERNELS 16

typedef struct tu_plan {
  fuse_plan plan;
  fuse_kernel kernels[TU_MAX_KERNELS];
  fuse_launch launches[TU_MAX_KERNELS];
  int32_t store[TU_MAX_KERNELS][3][64]; /* nodes, inputs, outputs */
  int32_t launch_ids[TU_MAX_KERNELS][TU_MAX_KERNELS];
} tu_plan;

static inline bool tu_in(const int32_t *a, int n, int32_t v) {
  for (int i = 0; i < n; i++)
    if (a[i] == v) return true;
  return false;
}

static inline int tu_cmp(const void *a, const void *b) {
  return *(const int32_t *)a - *(const int32_t *)b;
}

/* Adds a kernel computing nodes[0..n) (topological order) with the given
 * outputs; inputs are the operands computed elsewhere (constants folded).
 * Iteration-space fields come from the first output (pointwise), or must
 * be set by the caller afterwards. Returns the kernel. */
static inline fuse_kernel *tu_kernel(tu_plan *tp, const kf_graph *g, fuse_kind kind, const int32_t *nodes,
                              int n, const int32_t *outs, int n_outs) {
  int id = tp->plan.n_kernels++;
  fuse_kernel *k = &tp->kernels[id];
  memset(k, 0, sizeof *k);
  k->id = id;
  k->kind = kind;
  snprintf(k->name, sizeof k->name, "k%d_%s", id,
           kind == FK_POINTWISE ? "pointwise" : kind == FK_ROW ? "row"
                                              : kind == FK_REDUCE ? "reduce" : "matmul");
  k->nodes = tp->store[id][0];
  k->inputs = tp->store[id][1];
  k->outputs = tp->store[id][2];
  memcpy(k->nodes, nodes, (size_t)n * sizeof *nodes);
  k->n_nodes = n;
  for (int i = 0; i < n; i++) {
    const ir_node *nd = &g->nodes[nodes[i]];
    for (int j = 0; j < nd->nargs; j++) {
      int32_t a = nd->args[j];
      if (g->nodes[a].op == IR_OP_CONST || tu_in(nodes, n, a) || tu_in(k->inputs, k->n_inputs, a))
        continue;
      k->inputs[k->n_inputs++] = a;
    }
  }
  qsort(k->inputs, (size_t)k->n_inputs, sizeof *k->inputs, tu_cmp);
  memcpy(k->outputs, outs, (size_t)n_outs * sizeof *outs);
  k->n_outputs = n_outs;
  qsort(k->outputs, (size_t)k->n_outputs, sizeof *k->outputs, tu_cmp);
  const ir_node *o = &g->nodes[outs[0]];
  k->rank = o->rank;
  memcpy(k->shape, o->shape, sizeof k->shape);
  k->numel = 1;
  for (int d = 0; d < o->rank; d++) k->numel *= o->shape[d];
  /* a launch of its own */
  int L = tp->plan.n_launches++;
  tp->launches[L].kernels = tp->launch_ids[L];
  tp->launches[L].kernels[0] = id;
  tp->launches[L].n_kernels = 1;
  k->launch = L;
  tp->plan.kernels = tp->kernels;
  tp->plan.launches = tp->launches;
  tp->plan.graph = g;
  return k;
}

/* Packs the kernels' single launches [first, first+n) into one. */
static inline void tu_pack(tu_plan *tp, int first, int n) {
  fuse_launch *L = &tp->launches[first];
  for (int i = 1; i < n; i++) {
    L->kernels[L->n_kernels++] = tp->launches[first + i].kernels[0];
    tp->kernels[tp->launches[first + i].kernels[0]].launch = first;
  }
  L->horizontal = true;
  tp->plan.n_launches = first + 1;
}

/* All nodes between the inputs and v that are not inputs or constants. */
static inline int tu_collect(const kf_graph *g, int32_t from, int32_t to, int32_t *nodes) {
  int n = 0;
  for (int32_t v = from; v <= to; v++)
    if (g->nodes[v].op != IR_OP_INPUT && g->nodes[v].op != IR_OP_CONST) nodes[n++] = v;
  return n;
}

/* Compiles src with NVRTC for arch; on failure prints the log. Returns
 * milliseconds, or -1. */
static inline double tu_nvrtc_arch(const char *src, const char *name, const char *arch) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL) != NVRTC_SUCCESS) return -1;
  char ga[64];
  snprintf(ga, sizeof ga, "--gpu-architecture=%s", arch);
  const char *opts[] = {ga, "--std=c++17", "--include-path=/usr/local/cuda/include"};
  nvrtcResult r = nvrtcCompileProgram(prog, 3, opts);
  size_t logsize = 0;
  nvrtcGetProgramLogSize(prog, &logsize);
  if (r != NVRTC_SUCCESS || logsize > 1) {
    char *log = malloc(logsize + 1);
    nvrtcGetProgramLog(prog, log);
    if (r != NVRTC_SUCCESS) {
      fprintf(stderr, "NVRTC failed for %s:\n%s\n--- source ---\n", name, log);
      int line = 1;
      fprintf(stderr, "%4d ", line);
      for (const char *p = src; *p; p++) {
        fputc(*p, stderr);
        if (*p == '\n') fprintf(stderr, "%4d ", ++line);
      }
      fputc('\n', stderr);
    }
    free(log);
  }
  size_t cubin = 0;
  if (r == NVRTC_SUCCESS) nvrtcGetCUBINSize(prog, &cubin);
  nvrtcDestroyProgram(&prog);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (r != NVRTC_SUCCESS || cubin == 0) return -1;
  return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

/* The same for sm_90. */
static inline double tu_nvrtc(const char *src, const char *name) {
  return tu_nvrtc_arch(src, name, "sm_90");
}

/* Emits launch L of tp for `arch` into out; fails the test on error. */
static inline void tu_emit_arch(const kf_graph *g, tu_plan *tp, int L, const char *arch,
                                cg_launch_src *out) {
  cg_target t;
  ck_assert(cg_target_from_arch(arch, &t));
  kf_options o; /* as kf_compile's defaults would set it (KFUSE_PDL) */
  kf_options_init(&o);
  t.grid_dep = o.pdl;
  char err[512] = "";
  kf_status st = cg_emit_launch(g, &tp->plan, L, &t, out, err, sizeof err);
  ck_assert_msg(st == KF_OK, "cg_emit_launch: %s (%s)", kf_status_name(st), err);
  ck_assert_ptr_nonnull(out->source);
}

/* Emits launch L of tp for sm_90 into out; fails the test on error. */
static inline void tu_emit(const kf_graph *g, tu_plan *tp, int L, cg_launch_src *out) {
  tu_emit_arch(g, tp, L, "sm_90", out);
}

/* Emits and compiles every launch of tp. */
static inline void tu_emit_compile_all(const kf_graph *g, tu_plan *tp, const char *what) {
  for (int L = 0; L < tp->plan.n_launches; L++) {
    cg_launch_src src;
    tu_emit(g, tp, L, &src);
    double ms = tu_nvrtc_arch(src.source, what, src.arch_specific ? "sm_90a" : "sm_90");
    if (getenv("KFUSE_CODEGEN_VERBOSE")) {
      fprintf(stderr, "%s launch %d: %.0f ms NVRTC, grid %u block %u vec %d idx%s\n", what, L, ms,
              src.grid, src.block, src.vec_bytes, src.index64 ? "64" : "32");
      if (atoi(getenv("KFUSE_CODEGEN_VERBOSE")) > 1) fputs(src.source, stderr);
    }
    ck_assert_msg(ms >= 0, "%s launch %d does not compile", what, L);
    cg_launch_src_free(&src);
  }
}

/* The generated text with the embedded prelude (common.cuh as the build
 * generates it into build/templates, verbatim in every kernel) replaced by one marker line: golden files hold
 * what is particular to each kernel, and a prelude edit changes one file,
 * not every golden. The caller frees the result. */
static inline char *tu_strip_prelude(const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/templates/common.cuh", KFUSE_BINARY_DIR);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot read %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *prelude = calloc(1, (size_t)size + 1);
  size_t got = fread(prelude, 1, (size_t)size, f);
  fclose(f);
  prelude[got] = '\0';
  const char *marker = "// [templates/common.cuh: the prelude, not repeated in golden files]\n";
  const char *at = got ? strstr(text, prelude) : NULL;
  size_t n = strlen(text);
  char *out = malloc(n + strlen(marker) + 1);
  ck_assert(out != NULL);
  if (!at) {
    memcpy(out, text, n + 1);
  } else {
    size_t head = (size_t)(at - text);
    memcpy(out, text, head);
    strcpy(out + head, marker);
    strcat(out, at + got);
  }
  free(prelude);
  return out;
}

/* Compares text (less its prelude) with tests/golden/cuda/<name>;
 * KFUSE_UPDATE_GOLDEN=1 writes it. */
static inline void tu_golden(const char *name, const char *full_text) {
  char *text = tu_strip_prelude(full_text);
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/golden/cuda/%s", KFUSE_SOURCE_DIR, name);
  const char *upd = getenv("KFUSE_UPDATE_GOLDEN");
  if (upd && strcmp(upd, "1") == 0) {
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
    free(text);
    return;
  }
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "missing golden file %s (run with KFUSE_UPDATE_GOLDEN=1)", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *want = calloc(1, (size_t)size + 1);
  size_t got = fread(want, 1, (size_t)size, f);
  fclose(f);
  want[got] = '\0';
  int same = strcmp(want, text) == 0;
  if (!same) {
    size_t i = 0;
    int line = 1;
    while (want[i] && want[i] == text[i]) line += want[i++] == '\n';
    fprintf(stderr, "golden %s differs at line %d\n", name, line);
  }
  free(want);
  free(text);
  ck_assert_msg(same, "generated source differs from %s (KFUSE_UPDATE_GOLDEN=1 to accept)", path);
}

#endif
