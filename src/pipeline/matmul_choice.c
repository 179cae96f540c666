/* matmul_choice.c - library calls or template kernels for a plan's matmuls: the
 * fallback when cuBLASLt is absent or refuses, and the choice by time
 * (each call's candidates, then the library plan against the template
 * plan), kept in the disk cache so that a warm start does not time again,
 * and written to the decision log. */
#include "pipeline/matmul_choice.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "core/ctx.h"
#include "fuser/fuse.h"
#include "fuser/gemm_match.h"
#include "pipeline/matmul_floor.h"
#include "pipeline/run.h"
#include "pipeline/scratch_plan.h"
#include "runtime/device.h"
#include "runtime/lib_launch.h"
#include "runtime/lib_time.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

enum { REPS = 5, MAX_CAND = RT_GEMM_LT_MAX_CANDIDATES };
/* The decision's text holds at most this much (fuse_decision.text, less
 * the "template (cached): " a warm start puts in front). */
enum { TEXT_MAX = sizeof(((fuse_decision *)0)->text) - 20 };

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The choice's counters on the plan's fusion (kf_plan_describe's JSON),
 * with the wall time since t0. */
static void set_result(kf_plan *plan, fuse_mm_choice r, double t0) {
  r.choose_ms = now_ms() - t0;
  r.template_ahead_ms = plan->ahead_ms;
  plan->fuse->mm_choice = r;
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

/* The template plan compiled ahead (NULL if none), now the caller's. */
static kf_plan *take_ahead(kf_plan *plan) {
  kf_plan *tmp = plan->ahead;
  plan->ahead = NULL;
  return tmp;
}

kf_status pl_matmul_fallback(kf_plan *plan) {
  char why[600], err[512] = "";
  snprintf(why, sizeof why, "%.500s", plan->errmsg);
  kf_plan *tmp = take_ahead(plan); /* the template plan compiled ahead is this one */
  kf_status st = tmp ? KF_OK : variant(plan, false, &tmp, err, sizeof err);
  if (st != KF_OK) return pl_plan_error(plan, st, "re-planning without cuBLASLt: %s", err);
  pl_scratch_adopt(plan, tmp);
  core_log(plan->ctx, plan->knobs->matmul == RT_MATMUL_LIBRARY ? KF_LOG_WARN : KF_LOG_INFO,
           LOG_RUNTIME, "matmul: cuBLASLt not used (%s): template kernels", why);
  char text[700];
  snprintf(text, sizeof text, "template kernels: cuBLASLt not used (%.500s)", why);
  fuse_gemm_note(plan->fuse, false, text);
  plan->fuse->mm_choice = (fuse_mm_choice){
      .how = "fallback", .tmpl = "fallback", .library_ms = -1, .template_ms = -1, .floor_ms = -1};
  return KF_OK;
}

/* What a plan's record is valid for: the graph, the device and library,
 * the options that change the product. */
static void record_what_of(kf_plan *plan, const rt_state *rt, char *what, size_t size) {
  kf_hash128 h = kf_graph_hash(plan->graph);
  char ver[300];
  /* the template plan's pairs change what it runs (KFUSE_GEMM_PAIR A/B) */
  snprintf(what, size, "%016llx%016llx %s tf32 %d mode %d%s", (unsigned long long)h.hi,
           (unsigned long long)h.lo, rt_lib_version_of(rt, ver, sizeof ver),
           (int)plan->options.allow_tf32, (int)plan->knobs->matmul,
           plan->fuse && plan->fuse->options.gemm_pair ? " pair" : "");
}

static void record_what(kf_plan *plan, char *what, size_t size) {
  rt_plan *rp = pl_rt_plan(plan);
  record_what_of(plan, rp ? rp->state : NULL, what, size);
}

kf_plan *pl_matmul_ahead_plan(kf_plan *plan) {
  plan->ahead_ms = 0;
  pl_scratch_free(take_ahead(plan)); /* an earlier compile's */
  if (!plan->fuse || plan->fuse->n_library == 0 || plan->knobs->matmul != RT_MATMUL_AUTO ||
      !rt_device_present(plan->ctx))
    return NULL;
  char err[512] = "";
  kf_plan *tmp = pl_scratch_new(plan);
  fuse_options fo = plan->fuse->options;
  fo.matmul_library = false;
  kf_status st =
      tmp ? fuse_plan_build(plan->graph, &fo, &tmp->fuse, err, sizeof err) : KF_ERR_OUT_OF_MEMORY;
  if (st == KF_OK) return tmp;
  core_log(plan->ctx, KF_LOG_DEBUG, LOG_RUNTIME,
           "matmul: the template plan was not compiled ahead: %s", tmp ? err : "out of memory");
  pl_scratch_free(tmp);
  return NULL;
}

void pl_matmul_ahead_setup(void *arg) {
  kf_plan *plan = arg;
  rt_state *rt = NULL;
  char err[512];
  /* Once per context: partitions compiling at once (the torch backend)
   * would each hold a compile worker waiting on the lock the first one
   * loads cuBLASLt under. */
  if (atomic_exchange(&plan->ctx->setup_claimed, true)) return;
  /* a failure here is the load's to report, where it needs them */
  if (rt_state_get(plan->ctx, &rt) == KF_OK && rt) rt_lib_handle(plan->ctx, rt, err, sizeof err);
}

static void set_candidate(kf_plan *plan, rt_plan *rp, int L, int c) {
  rt_lib_set_candidate(rp, L, c);
  plan->code->launches[L].lib_cand = c;
}

/* Launch L's candidate from its product's record ("cand C ms T"): true
 * with *ms its time. */
static bool known_candidate(kf_plan *plan, rt_plan *rp, int L, double *ms) {
  char what[512], rec[128];
  int c = 0;
  if (!rt_lib_call_what(rp, L, what, sizeof what) ||
      !rt_lib_record_get(plan->ctx, what, rec, sizeof rec) ||
      sscanf(rec, "cand %d ms %lf", &c, ms) != 2 || c < 0 || c >= rt_lib_candidates(rp, L))
    return false;
  set_candidate(plan, rp, L, c);
  return true;
}

/* Launch L's candidate by time: the heuristic's first is timed; the
 * others only when it takes at least PL_CAND_MIN_MS (below, the best of
 * them could save a fraction of a microsecond a call: docs/matmul.md).
 * The result becomes the product's record. */
static kf_status timed_candidate(kf_plan *plan, rt_plan *rp, int L, int *cand, double *best,
                                 bool *all) {
  double ms[MAX_CAND];
  int n = rt_lib_candidates(rp, L);
  kf_status st = rt_lib_time(rp, L, REPS, ms, 1);
  *cand = 0, *all = false;
  if (st == KF_OK && n > 1 && ms[0] >= PL_CAND_MIN_MS) {
    st = rt_lib_time(rp, L, REPS, ms, MAX_CAND);
    *all = true;
    for (int c = 1; c < n && st == KF_OK; c++)
      if (ms[c] < ms[*cand]) *cand = c;
  }
  if (st != KF_OK) return st;
  *best = ms[*cand];
  set_candidate(plan, rp, L, *cand);
  char what[512], rec[128];
  if (rt_lib_call_what(rp, L, what, sizeof what)) {
    snprintf(rec, sizeof rec, "cand %d ms %.6f", *cand, *best);
    rt_lib_record_put(plan->ctx, what, rec);
  }
  return KF_OK;
}

/* Each library launch's candidate (a product's record, or timed), one
 * item of text per launch ("k0 0.010 ms (candidate 2 of 8)"). */
static kf_status choose_candidates(kf_plan *plan, rt_plan *rp, fuse_mm_choice *r, char *text,
                                   size_t size) {
  size_t len = 0;
  text[0] = 0;
  for (int L = 0; L < rp->n_launches; L++) {
    int n = rt_lib_candidates(rp, L), cand = 0;
    if (n == 0) continue;
    double ms = 0;
    bool all = false, known = known_candidate(plan, rp, L, &ms);
    r->calls++;
    if (known) {
      r->calls_known++;
      cand = rp->launches[L].lib->cand;
    } else {
      kf_status st = timed_candidate(plan, rp, L, &cand, &ms, &all);
      if (st != KF_OK) return st;
      r->calls_timed += all;
    }
    /* no ", " inside an item: fit_list cuts between them */
    len += (size_t)snprintf(text + len, len < size ? size - len : 0,
                            "%s%s %.3f ms (candidate %d of %d%s)", len ? ", " : "",
                            rp->launches[L].entry, ms, cand, n,
                            known ? ": on record"
                            : all ? ""
                                  : ": first only");
  }
  return KF_OK;
}

/* The per-launch list cut at an item so that head + list + tail fits in
 * the decision (an elided rest says how many items it held). */
static void fit_list(const char *list, size_t room, char *out, size_t size) {
  size_t n = strlen(list);
  if (n <= room && n < size) {
    memcpy(out, list, n + 1);
    return;
  }
  int items = 1, kept = 0;
  for (const char *p = list; (p = strstr(p, ", ")) != NULL; p += 2) items++;
  size_t cut = 0;
  for (const char *p = list; (p = strstr(p, ", ")) != NULL; p += 2) {
    if ((size_t)(p - list) + 16 > room) break;
    cut = (size_t)(p - list);
    kept++;
  }
  snprintf(out, size, "%.*s%s... %d more", (int)cut, list, cut ? ", " : "", items - kept);
}

/* The template plan's time, loaded on its own; < 0 when it cannot run. */
static kf_status time_template(kf_plan *plan, kf_plan **out, double *ms) {
  char err[512] = "";
  kf_plan *tmp = take_ahead(plan); /* compiled ahead at the plan's compile, if it was */
  kf_status st = tmp ? KF_OK : variant(plan, false, &tmp, err, sizeof err);
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

/* A plan's record ("library|template |summary") applied: the candidates
 * come from the products' records, so a record that finds one missing
 * does not apply (the choice is made again). */
static bool use_record(kf_plan *plan, const char *what, fuse_mm_choice *r) {
  char rec[2048];
  if (!rt_lib_record_get(plan->ctx, what, rec, sizeof rec)) return false;
  bool library = strncmp(rec, "library |", 9) == 0;
  if (!library && strncmp(rec, "template |", 10) != 0) return false;
  rt_plan *rp = pl_rt_plan(plan);
  for (int L = 0; library && rp && L < rp->n_launches; L++) {
    double ms;
    if (rt_lib_candidates(rp, L) == 0) continue;
    r->calls++;
    if (!known_candidate(plan, rp, L, &ms)) return false;
    r->calls_known++;
  }
  char text[2100];
  snprintf(text, sizeof text, "%s (cached): %s", library ? "library" : "template",
           strchr(rec, '|') + 1);
  r->how = "cached", r->tmpl = "cached", r->library = library;
  if (library) {
    fuse_gemm_note(plan->fuse, true, text);
    return true;
  }
  char err[512];
  kf_plan *tmp = take_ahead(plan); /* a record written since the compile: its plan is ready */
  if (!tmp) { /* compiled here, and counted as compiled ahead */
    double t0 = now_ms();
    kf_status st = variant(plan, false, &tmp, err, sizeof err);
    plan->ahead_ms = now_ms() - t0;
    if (st != KF_OK) return false; /* time again */
  }
  pl_scratch_adopt(plan, tmp);
  fuse_gemm_note(plan->fuse, false, text);
  return true;
}

/* Whether the template plan is tried, and if not why (r->tmpl and the
 * decision's words in why): KFUSE_MATMUL=library; its floor no faster than
 * the library plan ("cannot win"); or less than PL_TEMPLATE_MIN_GAIN_MS a
 * call to win, which would not pay for its compile ("cannot pay"). */
static bool try_template(kf_plan *plan, double lib_ms, fuse_mm_choice *r, char *why, size_t size) {
  why[0] = 0;
  if (plan->knobs->matmul != RT_MATMUL_AUTO) {
    r->tmpl = "off";
    snprintf(why, size, "template not timed");
    return false;
  }
  pl_mm_floor f;
  if (!pl_template_floor(plan, &f) || f.ms <= 0) return true;
  r->floor_ms = f.ms;
  if (lib_ms <= f.ms) {
    r->tmpl = "cannot win";
    snprintf(why, size,
             "template cannot win: at least %.3f ms (%.3g GFLOP at %d GFLOP/s per SM x %d SMs)",
             f.ms, f.gflop, (int)(f.rate + 0.5), f.sms);
    return false;
  }
  if (lib_ms - f.ms < PL_TEMPLATE_MIN_GAIN_MS) {
    r->tmpl = "cannot pay";
    snprintf(why, size, "template cannot pay: at least %.3f ms, under %.3f ms to win a call", f.ms,
             PL_TEMPLATE_MIN_GAIN_MS);
    return false;
  }
  return true;
}

/* Measures and decides; the record and the decision written. */
static kf_status choose(kf_plan *plan, rt_plan *rp, const char *what, fuse_mm_choice *r,
                        bool *reload) {
  char list[4096], why[300], summary[1600], fitted[TEXT_MAX + 1];
  kf_status st = choose_candidates(plan, rp, r, list, sizeof list);
  double lib_ms = -1, tmpl_ms = -1;
  if (st == KF_OK) st = rt_lib_time(rp, -1, REPS, &lib_ms, 1);
  kf_plan *tmp = NULL;
  bool tried = st == KF_OK && try_template(plan, lib_ms, r, why, sizeof why);
  if (tried) {
    double t0 = now_ms();
    st = time_template(plan, &tmp, &tmpl_ms);
    r->template_ms_spent = now_ms() - t0;
    r->tmpl = tmpl_ms >= 0 ? "timed" : "failed";
    snprintf(why, sizeof why, tmpl_ms >= 0 ? "template %.3f ms" : "template not timed", tmpl_ms);
  }
  if (st == KF_ERR_OUT_OF_MEMORY) { /* an error to report, not a reason to guess */
    if (!plan->errmsg[0])
      snprintf(plan->errmsg, sizeof plan->errmsg, "out of memory timing the library calls");
    pl_scratch_free(tmp);
    return st;
  }
  if (st != KF_OK) {
    core_log(plan->ctx, KF_LOG_WARN, LOG_RUNTIME,
             "matmul: the library calls were not timed (%.300s): the heuristic's first",
             plan->errmsg);
    for (int L = 0; L < rp->n_launches; L++) set_candidate(plan, rp, L, 0);
    r->how = "failed";
    pl_scratch_free(tmp);
    return KF_OK;
  }
  bool library = tmpl_ms < 0 || lib_ms <= tmpl_ms;
  r->library = library, r->library_ms = lib_ms, r->template_ms = tmpl_ms;
  const char *verdict = library ? "library" : "template";
  int fixed = snprintf(NULL, 0, "library %.3f ms []; %s: %s", lib_ms, why, verdict);
  fit_list(list, fixed < TEXT_MAX ? (size_t)(TEXT_MAX - fixed) : 0, fitted, sizeof fitted);
  snprintf(summary, sizeof summary, "library %.3f ms [%s]; %s: %s", lib_ms, fitted, why, verdict);
  char rec[1700];
  snprintf(rec, sizeof rec, "%s |%s", verdict, summary);
  rt_lib_record_put(plan->ctx, what, rec);
  core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME, "matmul: library %.3f ms [%s]; %s: %s", lib_ms,
           list, why, verdict);
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

kf_status pl_matmul_choose(kf_plan *plan, bool *reload) {
  *reload = false;
  double t0 = now_ms();
  fuse_mm_choice r = {.how = "timed",
                      .tmpl = "timed",
                      .library = true,
                      .library_ms = -1,
                      .template_ms = -1,
                      .floor_ms = -1};
  char what[400];
  record_what(plan, what, sizeof what);
  bool had_library = plan->fuse->n_library > 0;
  fuse_mm_choice cached = r;
  kf_status st = KF_OK;
  rt_plan *rp;
  if (use_record(plan, what, &cached)) {
    *reload = had_library && plan->fuse->n_library == 0;
    set_result(plan, cached, t0);
  } else if ((rp = pl_rt_plan(plan)) != NULL) {
    st = choose(plan, rp, what, &r, reload);
    if (st == KF_OK) set_result(plan, r, t0);
  }
  /* not timed (on record, "cannot win", "cannot pay"): not needed */
  pl_scratch_free(take_ahead(plan));
  return st;
}

void pl_matmul_keep(const kf_plan *plan, pl_matmul_kept *k) {
  memset(k, 0, sizeof *k);
  k->fuse = plan->fuse;
  k->r = plan->fuse->mm_choice;
  for (int i = 0; i < plan->fuse->n_decisions; i++)
    if (strcmp(plan->fuse->decisions[i].rule, "matmul-choice") == 0) {
      k->accepted = plan->fuse->decisions[i].accepted;
      snprintf(k->text, sizeof k->text, "%s", plan->fuse->decisions[i].text);
    }
}

void pl_matmul_restore(kf_plan *plan, const pl_matmul_kept *k) {
  if (plan->fuse == k->fuse || !k->r.how) return; /* not re-planned, or no choice */
  rt_plan *rp = plan->rt;
  for (int L = 0; rp && rp->loaded && L < rp->n_launches; L++) {
    double ms;
    if (rt_lib_candidates(rp, L) > 0 && !known_candidate(plan, rp, L, &ms))
      set_candidate(plan, rp, L, 0); /* not timed in this plan's form: the first */
  }
  plan->fuse->mm_choice = k->r;
  if (k->text[0]) fuse_gemm_note(plan->fuse, k->accepted, k->text);
}
