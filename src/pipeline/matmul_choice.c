/* matmul_choice.c - library calls or template kernels for a plan's matmuls: the
 * fallback when cuBLASLt is absent or refuses, and the choice by time
 * (each call's candidates, then the library plan against the template
 * plan), kept in the disk cache so that a warm start does not time again,
 * and written to the decision log. */
#include "pipeline/matmul_choice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "fuser/fuse.h"
#include "fuser/gemm_match.h"
#include "pipeline/run.h"
#include "pipeline/scratch_plan.h"
#include "runtime/lib_launch.h"
#include "runtime/lib_time.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

enum { REPS = 5, MAX_CAND = RT_GEMM_LT_MAX_CANDIDATES };

/* The template kernel's stated ceiling, GFLOP/s per SM (docs/matmul.md,
 * "A template that cannot win"): twice the best the 16x16 template
 * (templates/matmul.cu) measured on the H200, 6.4 TFLOP/s on 132 SMs
 * (4096^3 in 21.7 ms, 8192^3 in 173.7 ms). A faster template states its
 * own. */
enum { TEMPLATE_SM_GFLOPS = 100 };
/* The sm_90 template's (templates/gemm_sm90.cu, 16-bit products on sm_90):
 * the H200's dense bf16 peak per SM (989 TFLOP/s on 132 SMs), which no
 * kernel passes; it measured 681 TFLOP/s at 8192^3 (docs/matmul.md). */
enum { TEMPLATE90_SM_GFLOPS = 7500 };
/* The mma.sync template's (templates/gemm_sm80.cu, 16-bit products on
 * sm_80 to sm_89): the A100's dense bf16 peak per SM (312 TFLOP/s on 108
 * SMs), the highest of those GPUs. On sm_90 it takes what the sm_90
 * template does not, at most that template's ceiling. */
enum { TEMPLATE80_SM_GFLOPS = 2900 };

/* The least time the template plan can take, in ms: its products at their
 * ceilings, the other kernels free; 0 when the device is unknown. *rate:
 * the products' GFLOP/s per SM taken together. */
static double template_floor_ms(kf_plan *plan, double *gflop, int *sms, double *rate) {
  rt_state *rt = NULL;
  *gflop = 0;
  *sms = 0;
  *rate = TEMPLATE_SM_GFLOPS;
  if (rt_state_get(plan->ctx, &rt) != KF_OK || !rt || rt->info.sm_count <= 0) return 0;
  int cc = rt->info.cc_major * 10 + rt->info.cc_minor;
  bool on90 = cc == 90 && (plan->knobs->gemm90 != 0 || plan->knobs->gemm80 != 0);
  bool on80 = cc >= 80 && cc < 90 && plan->knobs->gemm80 != 0;
  double h16_rate = on90 ? TEMPLATE90_SM_GFLOPS : on80 ? TEMPLATE80_SM_GFLOPS : TEMPLATE_SM_GFLOPS;
  double sm_seconds = 0; /* the products' time on one SM at their ceilings */
  for (int i = 0; i < plan->fuse->n_kernels; i++) {
    const fuse_kernel *k = &plan->fuse->kernels[i];
    if (!k->library) continue;
    double g =
        2e-9 * (double)k->gemm.batch * (double)k->gemm.m * (double)k->gemm.n * (double)k->gemm.k;
    /* a 16-bit product may take a tensor-core template (cg_gemm90_fits and
     * cg_gemm80_fits decide; the higher ceiling only makes the floor
     * lower, never wrong) */
    bool h16 = k->gemm.ab_type == KF_BF16 || k->gemm.ab_type == KF_F16;
    *gflop += g;
    sm_seconds += g / (h16 ? h16_rate : TEMPLATE_SM_GFLOPS);
  }
  *sms = rt->info.sm_count;
  if (sm_seconds > 0) *rate = *gflop / sm_seconds;
  return sm_seconds / (double)*sms * 1e3;
}

/* The plan's graph planned with (or without) library calls and compiled
 * for the same arch into *out; on failure the status, with the message in
 * err. */
static kf_status variant(kf_plan *plan, bool library, kf_plan **out, char *err, size_t errsize) {
  *out = NULL;
  kf_plan *tmp = pl_scratch_new(plan);
  if (!tmp) {
    snprintf(err, errsize, "out of memory");
    return KF_ERR_OUT_OF_MEMORY;
  }
  fuse_options fo = plan->fuse->options;
  fo.matmul_library = library;
  kf_status st = fuse_plan_build(plan->graph, &fo, &tmp->fuse, err, errsize);
  if (st == KF_OK && (st = kf_plan_compile(tmp)) != KF_OK)
    snprintf(err, errsize, "%.400s", tmp->errmsg);
  if (st == KF_OK) {
    *out = tmp;
    return KF_OK;
  }
  pl_scratch_free(tmp);
  return st;
}

kf_status pl_matmul_fallback(kf_plan *plan) {
  char why[600], err[512] = "";
  snprintf(why, sizeof why, "%.500s", plan->errmsg);
  kf_plan *tmp = NULL;
  kf_status st = variant(plan, false, &tmp, err, sizeof err);
  if (st != KF_OK) return pl_plan_error(plan, st, "re-planning without cuBLASLt: %s", err);
  pl_scratch_adopt(plan, tmp);
  core_log(plan->ctx, plan->knobs->matmul == RT_MATMUL_LIBRARY ? KF_LOG_WARN : KF_LOG_INFO,
           LOG_RUNTIME, "matmul: cuBLASLt not used (%s): template kernels", why);
  char text[700];
  snprintf(text, sizeof text, "template kernels: cuBLASLt not used (%.500s)", why);
  fuse_gemm_note(plan->fuse, false, text);
  return KF_OK;
}

/* What a record is valid for: the graph, the device and library, the
 * options that change the product. */
static void record_what(kf_plan *plan, char *what, size_t size) {
  kf_hash128 h = kf_graph_hash(plan->graph);
  char ver[160];
  snprintf(what, size, "%016llx%016llx %s tf32 %d mode %d", (unsigned long long)h.hi,
           (unsigned long long)h.lo, rt_lib_version(pl_rt_plan(plan), ver, sizeof ver),
           (int)plan->options.allow_tf32, (int)plan->knobs->matmul);
}

/* Each library launch's fastest candidate; its time into *lib_ms's text. */
static kf_status time_candidates(kf_plan *plan, int *cand, char *text, size_t size) {
  size_t len = 0;
  rt_plan *rp = pl_rt_plan(plan);
  if (!rp) return KF_ERR_OUT_OF_MEMORY;
  for (int L = 0; L < rp->n_launches; L++) {
    cand[L] = 0;
    int n = rt_lib_candidates(rp, L);
    if (n == 0) continue;
    double ms[MAX_CAND];
    kf_status st = rt_lib_time(rp, L, REPS, ms, MAX_CAND);
    if (st != KF_OK) return st;
    for (int c = 1; c < n; c++)
      if (ms[c] < ms[cand[L]]) cand[L] = c;
    rt_lib_set_candidate(rp, L, cand[L]);
    plan->code->launches[L].lib_cand = cand[L];
    len += (size_t)snprintf(text + len, len < size ? size - len : 0,
                            "%s%s %.3f ms (candidate %d of %d)", len ? ", " : "",
                            rp->launches[L].entry, ms[cand[L]], cand[L], n);
  }
  return KF_OK;
}

/* The template plan's time, loaded on its own; < 0 when it cannot run. */
static kf_status time_template(kf_plan *plan, kf_plan **out, double *ms) {
  char err[512] = "";
  kf_plan *tmp = NULL;
  kf_status st = variant(plan, false, &tmp, err, sizeof err);
  *ms = -1;
  if (tmp && st == KF_OK) st = kf_plan_load(tmp);
  if (tmp && st == KF_OK) st = rt_lib_time(pl_rt_plan(tmp), -1, REPS, ms, 1);
  *out = tmp;
  if (st == KF_ERR_OUT_OF_MEMORY) { /* reported, not taken as "not timed" */
    snprintf(plan->errmsg, sizeof plan->errmsg, "out of memory timing the template plan: %.400s",
             tmp ? tmp->errmsg : err);
    return st;
  }
  if (st != KF_OK) *ms = -1;
  if (*ms < 0)
    core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME, "matmul: the template plan was not timed: %s",
             tmp ? tmp->errmsg : err);
  return KF_OK;
}

/* Reads "library|template cands c0 c1 ..." back; false when it does not fit. */
static bool apply_record(kf_plan *plan, const char *rec, bool *library) {
  char kind[16];
  int off = 0;
  if (sscanf(rec, "%15s%n", kind, &off) != 1) return false;
  *library = strcmp(kind, "library") == 0;
  if (!*library) return strcmp(kind, "template") == 0;
  const char *p = strstr(rec, " cands");
  if (!p) return false;
  p += 6;
  rt_plan *rp = pl_rt_plan(plan);
  for (int L = 0; rp && L < rp->n_launches; L++) {
    int c = 0, used = 0;
    if (sscanf(p, " %d%n", &c, &used) != 1) return false;
    p += used;
    rt_lib_set_candidate(rp, L, c);
    plan->code->launches[L].lib_cand = c;
  }
  return true;
}

static bool use_record(kf_plan *plan, const char *what) {
  char rec[2048];
  bool library = true;
  if (!rt_lib_record_get(plan->ctx, what, rec, sizeof rec) || !apply_record(plan, rec, &library))
    return false;
  const char *why = strchr(rec, '|');
  char text[2100];
  snprintf(text, sizeof text, "%s (cached): %s", library ? "library" : "template",
           why ? why + 1 : rec);
  if (library) {
    fuse_gemm_note(plan->fuse, true, text);
    return true;
  }
  char err[512];
  kf_plan *tmp = NULL;
  if (variant(plan, false, &tmp, err, sizeof err) != KF_OK) return false; /* time again */
  pl_scratch_adopt(plan, tmp);
  fuse_gemm_note(plan->fuse, false, text);
  return true;
}

kf_status pl_matmul_choose(kf_plan *plan, bool *reload) {
  *reload = false;
  char what[400], text[1400] = "", rec[2048];
  record_what(plan, what, sizeof what);
  bool had_library = plan->fuse->n_library > 0;
  if (use_record(plan, what)) {
    *reload = had_library && plan->fuse->n_library == 0;
    return KF_OK;
  }
  rt_plan *rp = pl_rt_plan(plan);
  if (!rp) return KF_OK;
  int *cand = core_calloc((size_t)rp->n_launches + 1, sizeof *cand);
  double lib_ms = -1, tmpl_ms = -1;
  kf_status st = cand ? time_candidates(plan, cand, text, sizeof text) : KF_ERR_OUT_OF_MEMORY;
  if (st == KF_OK) st = rt_lib_time(rp, -1, REPS, &lib_ms, 1);
  kf_plan *tmp = NULL;
  double floor_ms = 0, gflop = 0, rate = 0;
  int sms = 0;
  /* a template that cannot win is neither compiled nor timed */
  bool hopeless = st == KF_OK && plan->knobs->matmul == RT_MATMUL_AUTO &&
                  (floor_ms = template_floor_ms(plan, &gflop, &sms, &rate)) > 0 &&
                  lib_ms <= floor_ms;
  if (st == KF_OK && plan->knobs->matmul == RT_MATMUL_AUTO && !hopeless)
    st = time_template(plan, &tmp, &tmpl_ms);
  if (st == KF_ERR_OUT_OF_MEMORY) { /* an error to report, not a reason to guess */
    if (!plan->errmsg[0])
      snprintf(plan->errmsg, sizeof plan->errmsg, "out of memory timing the library calls");
    free(cand);
    pl_scratch_free(tmp);
    return st;
  }
  if (st != KF_OK) {
    core_log(plan->ctx, KF_LOG_WARN, LOG_RUNTIME,
             "matmul: the library calls were not timed (%.300s): the heuristic's first",
             plan->errmsg);
    free(cand);
    pl_scratch_free(tmp);
    return KF_OK;
  }
  bool library = tmpl_ms < 0 || lib_ms <= tmpl_ms;
  char summary[1600];
  if (tmpl_ms >= 0)
    snprintf(summary, sizeof summary, "library %.3f ms [%.1000s]; template %.3f ms: %s", lib_ms,
             text, tmpl_ms, library ? "library" : "template");
  else if (hopeless)
    snprintf(summary, sizeof summary,
             "library %.3f ms [%.1000s]; template cannot win: at least %.3f ms (%.3g GFLOP at %d "
             "GFLOP/s per SM x %d SMs): library",
             lib_ms, text, floor_ms, gflop, (int)(rate + 0.5), sms);
  else
    snprintf(summary, sizeof summary, "library %.3f ms [%.1000s]; template not timed: library",
             lib_ms, text);
  int len = snprintf(rec, sizeof rec, "%s cands", library ? "library" : "template");
  for (int L = 0; L < rp->n_launches && len < (int)sizeof rec - 16; L++)
    len += snprintf(rec + len, sizeof rec - (size_t)len, " %d", cand[L]);
  snprintf(rec + len, sizeof rec - (size_t)len, " |%.1600s", summary);
  rt_lib_record_put(plan->ctx, what, rec);
  core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME, "matmul: %s", summary);
  free(cand);
  if (library) {
    pl_scratch_free(tmp);
    fuse_gemm_note(plan->fuse, true, summary);
    return KF_OK;
  }
  pl_scratch_adopt(plan, tmp);
  fuse_gemm_note(plan->fuse, false, summary);
  *reload = true;
  return KF_OK;
}
