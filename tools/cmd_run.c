/* cmd_run.c - `kfuse run FILE`: seeded random inputs, the fused plan run on
 * the GPU (timed), optionally checked against an oracle: the CPU reference,
 * or where that would take too long the same graph with fusion off on the
 * GPU; without a GPU, compiles for sm_90 and runs the reference instead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

enum {
  RUN_CHECK,
  RUN_ITERS,
  RUN_MODE,
  RUN_SEED,
  RUN_JSON,
  RUN_TRACE,
  RUN_NO_FUSION,
  RUN_ARCH,
  RUN_RANGE,
  RUN_RTOL,
  RUN_ATOL,
  RUN_CHECK_LIMIT,
  RUN_N_OPTS
};
static const cli_opt run_opts[] = {
    [RUN_CHECK] = {"check", NULL, "compare the outputs with an oracle (exit 1 if they differ)"},
    [RUN_ITERS] = {"iters", "N", "timed runs on a GPU (default 20)"},
    [RUN_MODE] = {"mode", "MODE", "plain, streams or graph (default plain)"},
    [RUN_SEED] = {"seed", "S", "the inputs' random seed (default 1)"},
    [RUN_JSON] = {"json", NULL, "one JSON object: plan, timing, each output's errors"},
    [RUN_TRACE] = {"trace", "OUT.json", "write a Chrome/Perfetto trace of the run"},
    [RUN_NO_FUSION] = {"no-fusion", NULL, "one kernel per op"},
    [RUN_ARCH] = {"arch", "ARCH", "compile for this GPU (default: GPU 0's, or sm_90)"},
    [RUN_RANGE] = {"range", "LO,HI", "float inputs uniform in [LO, HI) (default -1,1)"},
    [RUN_RTOL] = {"rtol", "R", "relative tolerance of --check (default: per dtype)"},
    [RUN_ATOL] = {"atol", "A", "absolute tolerance of --check (default: per dtype)"},
    [RUN_CHECK_LIMIT] = {"check-limit", "N",
                         "most element operations the CPU reference may cost (default 2e9)"},
};
const cli_spec run_spec = {
    "run",
    "FILE",
    1,
    1,
    "run a graph file on random inputs (GPU, or the CPU reference without one)",
    "--check compares with the CPU reference, or where that would cost more than\n"
    "--check-limit with the same graph unfused on the GPU. Without a GPU, run compiles\n"
    "for sm_90 and runs the reference; --check then exits 4 when the reference is too\n"
    "costly to run (nothing could be compared).",
    run_opts,
    RUN_N_OPTS};

/* The CPU reference's default budget, in element operations (see
 * cli_reference_cost): about a minute of one core. Above it --check
 * compares with the unfused plan on the GPU instead. */
#define RUN_DEFAULT_CHECK_LIMIT 2e9

typedef struct run_args {
  const char *file, *trace, *arch;
  bool check, json, fusion;
  long long iters, seed;
  kf_run_mode mode;
  double lo, hi;      /* float inputs are uniform in [lo, hi) */
  double rtol, atol;  /* < 0: the default (0 on top of the reference's error bound; the
                         dtype's fixed tolerance against the unfused plan) */
  double check_limit; /* most element operations the CPU reference may cost */
} run_args;

/* What the outputs were compared with. */
typedef enum run_oracle { ORACLE_NONE, ORACLE_REFERENCE, ORACLE_UNFUSED } run_oracle;

/* What a run found, for the report. */
typedef struct run_state {
  kf_ctx *ctx;
  kf_graph *g;
  kf_plan *plan;
  kf_host_tensor *in, *got, *want; /* inputs; GPU outputs; reference outputs */
  double **bound;                  /* per output, the reference's error bound of each element */
  int n_in, n_out;
  bool gpu;
  char device[256], no_gpu[512];
  kf_compile_stats cs;
  kf_bench_result bench;
  cli_cmp *cmp;
  kf_profile prof;
  bool reported;       /* the report was printed (a failed check prints one) */
  double ref_cost;     /* the CPU reference's estimated element operations */
  bool ref_affordable; /* ref_cost <= --check-limit */
  bool ran_reference;  /* want holds the CPU reference's outputs */
  run_oracle oracle;   /* what want holds when comparing */
  kf_plan *unfused;    /* the oracle plan, fusion off */
  char why[512];       /* why this oracle, or why none */
} run_state;

static bool parse_range(const char *text, run_args *a) {
  const char *comma = text ? strchr(text, ',') : NULL;
  char lo[64], *end = NULL;
  bool ok = comma && (size_t)(comma - text) < sizeof lo;
  if (ok) {
    memcpy(lo, text, (size_t)(comma - text));
    lo[comma - text] = 0;
    a->lo = strtod(lo, &end);
    ok = *lo && !*end;
  }
  if (ok) {
    a->hi = strtod(comma + 1, &end);
    ok = comma[1] && !*end && isfinite(a->lo) && isfinite(a->hi) && a->lo < a->hi;
  }
  if (!ok)
    fprintf(stderr, "kfuse run: --range wants LO,HI with LO < HI, not '%s'\n", cli_show(text));
  return ok;
}

/* The option values; false after a message (a usage error). */
static bool read_values(const cli_args *p, run_args *a) {
  const char *const *v = p->val;
  if (p->set[RUN_ITERS] && !cli_int("run", "iters", v[RUN_ITERS], 1, 1000000, &a->iters))
    return false;
  if (p->set[RUN_SEED] && !cli_int("run", "seed", v[RUN_SEED], 0, INT64_MAX, &a->seed))
    return false;
  if (p->set[RUN_MODE] && !cli_mode("run", v[RUN_MODE], &a->mode)) return false;
  if (p->set[RUN_RANGE] && !parse_range(v[RUN_RANGE], a)) return false;
  if (p->set[RUN_RTOL] && !cli_double("run", "rtol", v[RUN_RTOL], 0, &a->rtol)) return false;
  if (p->set[RUN_ATOL] && !cli_double("run", "atol", v[RUN_ATOL], 0, &a->atol)) return false;
  return !p->set[RUN_CHECK_LIMIT] ||
         cli_double("run", "check-limit", v[RUN_CHECK_LIMIT], 0, &a->check_limit);
}

static int parse(int argc, char **argv, run_args *a) {
  *a = (run_args){.fusion = true,
                  .iters = 20,
                  .seed = 1,
                  .lo = -1,
                  .hi = 1,
                  .rtol = -1,
                  .atol = -1,
                  .check_limit = RUN_DEFAULT_CHECK_LIMIT};
  kf_options o;
  kf_options_init(&o);
  cli_args p;
  int rc = cli_parse(&run_spec, argc, argv, &p);
  if (rc) return rc;
  a->file = p.pos[0];
  a->check = p.set[RUN_CHECK];
  a->json = p.set[RUN_JSON];
  a->fusion = o.fusion && !p.set[RUN_NO_FUSION];
  a->trace = p.val[RUN_TRACE];
  a->arch = p.val[RUN_ARCH];
  return read_values(&p, a) ? CLI_OK : CLI_USAGE;
}

/* Whether a GPU is there; the reason in s->no_gpu when not. */
static void find_gpu(run_state *s) {
  s->gpu = cli_gpu(s->ctx, s->device, sizeof s->device);
  if (!s->gpu) snprintf(s->no_gpu, sizeof s->no_gpu, "%s", kf_ctx_errmsg(s->ctx));
}

/* The checked plan (fusion as asked) or the oracle plan (fusion off, plain
 * mode); compiled. */
static bool build_plan(run_state *s, const run_args *a, bool oracle, kf_plan **out) {
  kf_options opt;
  kf_options_init(&opt);
  opt.fusion = oracle ? false : a->fusion;
  opt.mode = oracle ? KF_MODE_PLAIN : a->mode;
  opt.arch = a->arch ? a->arch : (s->gpu ? NULL : "sm_90");
  kf_trace_push(oracle ? "plan (oracle, fusion off)" : "plan");
  kf_status st = kf_plan_create(s->ctx, s->g, &opt, out);
  kf_trace_pop();
  if (st == KF_OK) {
    kf_trace_push(oracle ? "compile (oracle, fusion off)" : "compile");
    st = kf_plan_compile(*out);
    kf_trace_pop();
  }
  if (st != KF_OK) {
    cli_fail("run", "%s%s", oracle ? "the unfused oracle plan: " : "", kf_ctx_errmsg(s->ctx));
    return false;
  }
  if (!oracle) kf_plan_compile_stats(*out, &s->cs);
  return true;
}

/* Device tensors like the host ones; NULL data where allocation failed. */
static kf_tensor *device_tensors(run_state *s, const kf_host_tensor *h, int n, bool upload) {
  kf_tensor *d = calloc((size_t)n + 1, sizeof *d);
  for (int i = 0; d && i < n; i++) {
    d[i].dtype = h[i].dtype, d[i].rank = h[i].rank;
    memcpy(d[i].shape, h[i].shape, sizeof d[i].shape);
    if (kf_device_alloc(s->ctx, cli_bytes(&h[i]), &d[i].data) != KF_OK) return d;
    /* Outputs are poisoned (NaN for floats) so an unwritten one shows. */
    kf_status st = upload ? kf_memcpy_to_device(s->ctx, d[i].data, h[i].data, cli_bytes(&h[i]))
                          : kf_memset_device(s->ctx, d[i].data, 0xff, cli_bytes(&h[i]));
    if (st != KF_OK) return d;
  }
  return d;
}

static void device_free(run_state *s, kf_tensor *d, int n) {
  for (int i = 0; d && i < n; i++) kf_device_free(s->ctx, d[i].data);
  free(d);
}

static bool all_allocated(const kf_tensor *d, int n) {
  for (int i = 0; d && i < n; i++)
    if (!d[i].data) return false;
  return d != NULL;
}

/* Runs plan p once on din into fresh poisoned outputs and reads them into
 * host; the device outputs go to *keep (the caller frees them) or are
 * freed. */
static bool run_once(run_state *s, kf_plan *p, const kf_tensor *din, kf_host_tensor *host,
                     kf_tensor **keep) {
  kf_tensor *dout = device_tensors(s, host, s->n_out, false);
  bool ok = all_allocated(dout, s->n_out);
  kf_status st = ok ? kf_plan_run(p, din, s->n_in, dout, s->n_out, NULL) : KF_OK;
  if (ok && st == KF_OK) st = kf_stream_synchronize(s->ctx, NULL);
  for (int j = 0; ok && j < s->n_out && st == KF_OK; j++)
    st = kf_memcpy_to_host(s->ctx, host[j].data, dout[j].data, cli_bytes(&host[j]));
  if (!ok) cli_fail("run", "%s", kf_ctx_errmsg(s->ctx));
  if (ok && st != KF_OK) {
    const char *m = kf_plan_errmsg(p);
    cli_fail("run", "%s", m && *m ? m : kf_ctx_errmsg(s->ctx));
  }
  if (keep && ok && st == KF_OK)
    *keep = dout;
  else
    device_free(s, dout, s->n_out);
  return ok && st == KF_OK;
}

/* The oracle run (when there is one), then the checked run, then timing. */
static bool run_gpu(run_state *s, const run_args *a) {
  kf_tensor *din = device_tensors(s, s->in, s->n_in, true), *dout = NULL;
  bool ok = all_allocated(din, s->n_in);
  if (!ok) cli_fail("run", "%s", kf_ctx_errmsg(s->ctx));
  if (ok && s->unfused) {
    kf_trace_push("oracle run (fusion off)");
    ok = run_once(s, s->unfused, din, s->want, NULL);
    kf_trace_pop();
    kf_plan_destroy(s->unfused); /* its buffers are not needed any more */
    s->unfused = NULL;
  }
  ok = ok && run_once(s, s->plan, din, s->got, &dout);
  kf_status st = KF_OK;
  kf_bench_options bo;
  kf_bench_options_init(&bo);
  bo.warmup = 1, bo.iters = (int)a->iters, bo.host_timing = false, bo.nvml = false;
  if (ok) st = kf_plan_benchmark(s->plan, din, s->n_in, dout, s->n_out, NULL, &bo, &s->bench);
  if (ok && st == KF_OK && a->trace)
    st = kf_plan_profile(s->plan, din, s->n_in, dout, s->n_out, NULL, &s->prof);
  if (ok && st != KF_OK) cli_fail("run", "%s", kf_plan_errmsg(s->plan));
  device_free(s, din, s->n_in);
  device_free(s, dout, s->n_out);
  return ok && st == KF_OK;
}

/* Outputs to compare with get their error bounds too (one more double per
 * element held). */
static bool run_reference(run_state *s) {
  bool bounded = s->oracle == ORACLE_REFERENCE;
  if (bounded && !(s->bound = calloc((size_t)s->n_out + 1, sizeof *s->bound))) {
    cli_fail("run", "out of host memory for the error bounds");
    return false;
  }
  for (int j = 0; bounded && j < s->n_out; j++)
    if (!(s->bound[j] = malloc(cli_numel(&s->want[j]) * sizeof(double) + 1))) {
      cli_fail("run", "out of host memory for the error bounds");
      return false;
    }
  kf_trace_push("cpu reference");
  kf_status st =
      bounded ? kf_graph_run_reference_bounded(s->g, s->in, s->n_in, s->want, s->bound, s->n_out)
              : kf_graph_run_reference(s->g, s->in, s->n_in, s->want, s->n_out);
  kf_trace_pop();
  if (st != KF_OK) cli_fail("run", "the CPU reference failed: %s", kf_graph_errmsg(s->g));
  s->ran_reference = st == KF_OK;
  return st == KF_OK;
}

/* Chooses what --check compares with, from the reference's cost; s->why
 * says why in words. */
static void choose_oracle(run_state *s, const run_args *a) {
  s->ref_cost = cli_reference_cost(s->g);
  s->ref_affordable = s->ref_cost >= 0 && s->ref_cost <= a->check_limit;
  char cost[96];
  snprintf(cost, sizeof cost, "%.3g element operations (--check-limit %.3g)", s->ref_cost,
           a->check_limit);
  if (!a->check && s->gpu) return;
  if (s->ref_affordable) {
    s->oracle = a->check && s->gpu ? ORACLE_REFERENCE : ORACLE_NONE;
    snprintf(s->why, sizeof s->why, "the CPU reference costs %s", cost);
  } else if (s->gpu) {
    s->oracle = ORACLE_UNFUSED;
    snprintf(s->why, sizeof s->why,
             "the CPU reference would cost %s, so the outputs are compared with the same graph "
             "planned with fusion off, run on the GPU%s",
             cost,
             a->fusion ? ""
                       : " (the checked plan has fusion off too: this only shows "
                         "that runs repeat)");
  } else {
    snprintf(s->why, sizeof s->why,
             "the CPU reference would cost %s: too costly, so it was not run and nothing was "
             "compared (raise --check-limit to run it anyway)",
             cost);
  }
}

static bool compare_all(run_state *s, const run_args *a) {
  bool ok = true;
  s->cmp = calloc((size_t)s->n_out + 1, sizeof *s->cmp);
  char *plan_json = kf_plan_describe(s->plan, KF_FORMAT_JSON);
  for (int j = 0; s->cmp && j < s->n_out; j++) {
    double rtol = 0, atol = 0, tol;
    if (s->oracle == ORACLE_UNFUSED) cli_tolerance(s->want[j].dtype, &rtol, &atol);
    /* a flash kernel's outputs: attention's contract on top (its softmax
     * is reordered, the one exception to fused = unfused) */
    char name[256];
    const char *oname = cli_value_name(s->g, kf_graph_output(s->g, j), name, sizeof name);
    if (cli_attention_tolerance(s->g, plan_json, oname, &tol))
      rtol = rtol > tol ? rtol : tol, atol = atol > tol ? atol : tol;
    if (a->rtol >= 0) rtol = a->rtol;
    if (a->atol >= 0) atol = a->atol;
    if (s->oracle == ORACLE_REFERENCE)
      cli_compare_bounded(&s->got[j], &s->want[j], s->bound[j], rtol, atol, &s->cmp[j]);
    else
      cli_compare(&s->got[j], &s->want[j], rtol, atol, &s->cmp[j]);
    ok = ok && s->cmp[j].ok;
  }
  kf_free(plan_json);
  return ok && s->cmp;
}

/* ---- reports ------------------------------------------------------------- */

/* One output's check: its largest error, and on a mismatch the worst
 * element with what was allowed there. */
static void report_check_text(const cli_cmp *c, const kf_host_tensor *want) {
  char extra[96] = "", at[KF_MAX_RANK * 21 + 3];
  if (c->rtol > 0 || c->atol > 0)
    snprintf(extra, sizeof extra, " + rtol %g, atol %g", c->rtol, c->atol);
  if (c->bounded)
    printf(" max abs err %.3g, %.3g of what is allowed: %s (error bound%s)\n", c->max_abs,
           c->max_ratio, c->ok ? "ok" : "MISMATCH", extra);
  else
    printf(" max abs err %.3g, max rel err %.3g: %s (rtol %g, atol %g)\n", c->max_abs, c->max_rel,
           c->ok ? "ok" : "MISMATCH", c->rtol, c->atol);
  if (c->bounded && c->unbounded)
    printf(
        "         %lld of %zu elements not checked: their bound is infinite (a divisor that "
        "may be 0, an overflow)\n",
        (long long)c->unbounded, cli_numel(want));
  if (c->ok || c->worst < 0) return;
  printf(
      "         %lld of %zu elements differ (%lld NaN/inf mismatches); worst at %s "
      "(element %lld): got %.9g, want %.9g, |diff| %.3g > allowed %.3g",
      (long long)c->bad, cli_numel(want), (long long)c->nan_mismatch,
      cli_index_str(want, c->worst, at, sizeof at), (long long)c->worst, c->worst_got,
      c->worst_want, fabs(c->worst_got - c->worst_want), c->worst_allowed);
  if (c->bounded) printf(" (bound %.3g)", c->worst_bound);
  printf("\n");
}

static void report_output_text(const run_state *s, int j) {
  char name[32], type[160];
  kf_value v = kf_graph_output(s->g, j);
  printf("output   %-10s %-22s", cli_show(cli_value_name(s->g, v, name, sizeof name)),
         cli_type_str(s->g, v, type, sizeof type));
  if (s->cmp) {
    report_check_text(&s->cmp[j], &s->want[j]);
    return;
  }
  if (!s->gpu && !s->ran_reference) {
    printf(" not computed (no GPU, and the CPU reference was not run)\n");
    return;
  }
  cli_stats st;
  cli_tensor_stats(s->gpu ? &s->got[j] : &s->want[j], &st);
  printf(" min %.4g, max %.4g, mean %.4g, %lld NaN, %lld inf\n", st.min, st.max, st.mean,
         (long long)st.nan, (long long)st.inf);
}

static const char *plural(int n) {
  return n == 1 ? "" : "s";
}

static const char *oracle_name(run_oracle o) {
  return o == ORACLE_REFERENCE ? "reference" : o == ORACLE_UNFUSED ? "unfused-gpu" : NULL;
}

static const char *oracle_words(run_oracle o) {
  return o == ORACLE_REFERENCE ? "the CPU reference" : "the unfused plan on the GPU";
}

static void report_text(const run_state *s, const run_args *a, bool ok) {
  const char *gname = kf_graph_name(s->g);
  printf("graph    %s (%s)\n", gname ? cli_show(gname) : "(unnamed)", cli_show(a->file));
  printf("inputs   %d, seed %lld, floats uniform in [%g, %g), integers in [-64, 64]\n", s->n_in,
         a->seed, a->lo, a->hi);
  int nl = kf_plan_num_launches(s->plan), nk = kf_plan_num_kernels(s->plan);
  printf("plan     %d launch%s, %d kernel%s, fusion %s, mode %s\n", nl, nl == 1 ? "" : "es", nk,
         plural(nk), a->fusion ? "on" : "off", cli_mode_name(a->mode));
  printf("compile  %d kernel%s for %s in %.1f ms (%d from cache)\n", s->cs.kernels,
         plural(s->cs.kernels), cli_show(s->cs.arch), s->cs.compile_ms, s->cs.cache_hits);
  if (s->gpu) {
    printf("device   %s\n", cli_show(s->device));
    printf("time     %.4f ms median of %d runs (min %.4f, max %.4f), %.1f GB/s\n",
           s->bench.ms_median, s->bench.iters, s->bench.ms_min, s->bench.ms_max, s->bench.gbps);
  } else {
    printf("device   none: %s\n", cli_show(s->no_gpu));
  }
  if (s->oracle != ORACLE_NONE) printf("oracle   %s: %s\n", oracle_name(s->oracle), s->why);
  for (int j = 0; j < s->n_out; j++) report_output_text(s, j);
  if (a->trace) printf("trace    %s\n", cli_show(a->trace));
  if (!s->gpu && s->ran_reference)
    printf("no GPU: compiled %d kernel%s for %s and ran the CPU reference\n", s->cs.kernels,
           plural(s->cs.kernels), cli_show(s->cs.arch));
  else if (!s->gpu)
    printf("no GPU: compiled %d kernel%s for %s; %s\n", s->cs.kernels, plural(s->cs.kernels),
           cli_show(s->cs.arch), s->why);
  else if (s->cmp)
    printf("check    %s %s\n", ok ? "passed: every output matches" : "FAILED: outputs differ from",
           oracle_words(s->oracle));
}

/* "worst": the element farthest outside what is allowed, on a mismatch. */
static void report_json_worst(cli_json *j, const cli_cmp *c, const kf_host_tensor *want) {
  if (c->ok || c->worst < 0) {
    cj_null(j, "worst");
    return;
  }
  cj_obj(j, "worst");
  cj_int(j, "element", c->worst);
  char at[KF_MAX_RANK * 21 + 3];
  cj_str(j, "index", cli_index_str(want, c->worst, at, sizeof at));
  cj_num(j, "got", c->worst_got);
  cj_num(j, "want", c->worst_want);
  cj_num(j, "allowed", c->worst_allowed);
  if (c->bounded) cj_num(j, "bound", c->worst_bound);
  cj_obj_end(j);
}

static void report_json_output(cli_json *j, const run_state *s, int k) {
  char name[32];
  kf_value v = kf_graph_output(s->g, k);
  cj_obj(j, NULL);
  cj_str(j, "name", cli_value_name(s->g, v, name, sizeof name));
  cj_str(j, "dtype", kf_dtype_name(kf_value_dtype(s->g, v)));
  cj_arr(j, "shape");
  for (int i = 0; i < kf_value_rank(s->g, v); i++) cj_int(j, NULL, kf_value_shape(s->g, v)[i]);
  cj_arr_end(j);
  if (s->cmp) {
    cj_num(j, "max_abs_err", s->cmp[k].max_abs);
    cj_num(j, "max_rel_err", s->cmp[k].max_rel);
    cj_int(j, "mismatches", s->cmp[k].bad);
    cj_int(j, "nan_mismatches", s->cmp[k].nan_mismatch);
    cj_num(j, "rtol", s->cmp[k].rtol);
    cj_num(j, "atol", s->cmp[k].atol);
    cj_bool(j, "error_bound", s->cmp[k].bounded);
    if (s->cmp[k].bounded) {
      cj_num(j, "max_ratio", s->cmp[k].max_ratio);
      cj_int(j, "unbounded", s->cmp[k].unbounded);
    }
    report_json_worst(j, &s->cmp[k], &s->want[k]);
    cj_bool(j, "ok", s->cmp[k].ok);
  } else {
    cj_null(j, "max_abs_err");
    cj_null(j, "max_rel_err");
  }
  cj_obj_end(j);
}

static void report_json(const run_state *s, const run_args *a, bool ok) {
  cli_json j;
  cj_init(&j, stdout);
  cj_obj(&j, NULL);
  cj_bool(&j, "ok", ok);
  cj_str(&j, "file", a->file);
  cj_str(&j, "graph", kf_graph_name(s->g));
  cj_str(&j, "device", s->gpu ? s->device : NULL);
  if (!s->gpu) cj_str(&j, "no_gpu", s->no_gpu);
  cj_str(&j, "arch", s->cs.arch);
  cj_bool(&j, "fusion", a->fusion);
  cj_str(&j, "mode", cli_mode_name(a->mode));
  cj_int(&j, "seed", a->seed);
  cj_int(&j, "launches", kf_plan_num_launches(s->plan));
  cj_int(&j, "kernels", kf_plan_num_kernels(s->plan));
  cj_num(&j, "compile_ms", s->cs.compile_ms);
  cj_int(&j, "cache_hits", s->cs.cache_hits);
  cj_bool(&j, "checked", s->cmp != NULL);
  cj_str(&j, "oracle", s->cmp ? oracle_name(s->oracle) : NULL);
  cj_str(&j, "oracle_reason", s->why[0] ? s->why : NULL);
  cj_num(&j, "reference_cost", s->ref_cost);
  cj_num(&j, "check_limit", a->check_limit);
  cj_bool(&j, "reference", s->ran_reference);
  cj_int(&j, "iters", s->gpu ? s->bench.iters : 0);
  cj_num(&j, "ms", s->gpu ? s->bench.ms_median : NAN);
  cj_num(&j, "ms_min", s->gpu ? s->bench.ms_min : NAN);
  cj_num(&j, "gbps", s->gpu ? s->bench.gbps : NAN);
  cj_arr(&j, "outputs");
  for (int k = 0; k < s->n_out; k++) report_json_output(&j, s, k);
  cj_arr_end(&j);
  if (a->trace) cj_str(&j, "trace", a->trace);
  cj_obj_end(&j);
  cj_done(&j);
}

/* ---- the command --------------------------------------------------------- */

/* Everything after loading; returns the exit status (cli_args.h). */
static int execute(run_state *s, const run_args *a) {
  s->n_in = kf_graph_num_inputs(s->g);
  s->n_out = kf_graph_num_outputs(s->g);
  s->in = cli_tensors(s->g, false, "run");
  if (!s->in) return CLI_FAILED;
  for (int i = 0; i < s->n_in; i++) cli_fill_random(&s->in[i], (uint64_t)a->seed, i, a->lo, a->hi);
  find_gpu(s);
  choose_oracle(s, a);
  if (!build_plan(s, a, false, &s->plan)) return CLI_FAILED;
  if (s->oracle == ORACLE_UNFUSED && !build_plan(s, a, true, &s->unfused)) return CLI_FAILED;
  bool need_want = s->oracle != ORACLE_NONE || (!s->gpu && s->ref_affordable);
  if (need_want && !(s->want = cli_tensors(s->g, true, "run"))) return CLI_FAILED;
  if (s->gpu && (!(s->got = cli_tensors(s->g, true, "run")) || !run_gpu(s, a))) return CLI_FAILED;
  if (need_want && s->oracle != ORACLE_UNFUSED && !run_reference(s)) return CLI_FAILED;
  bool ok = true, wrote = true;
  if (s->oracle != ORACLE_NONE) ok = compare_all(s, a);
  if (s->oracle != ORACLE_NONE && !s->cmp) {
    cli_fail("run", "out of host memory for the comparison");
    return CLI_FAILED;
  }
  if (a->trace && kf_trace_stop(s->ctx, a->trace) != KF_OK) {
    cli_fail("run", "%s", kf_ctx_errmsg(s->ctx));
    wrote = false;
  }
  /* --check asked for a comparison that could not be made: not a pass. */
  bool unchecked = a->check && !s->gpu && !s->ref_affordable;
  if (a->json)
    report_json(s, a, ok && wrote && !unchecked);
  else
    report_text(s, a, ok);
  s->reported = true;
  if (!wrote) return CLI_FAILED;
  if (ok && unchecked) {
    fprintf(stderr, "kfuse run: --check: no GPU, and %s\n", s->why);
    return CLI_NO_DEVICE;
  }
  return ok ? CLI_OK : CLI_MISMATCH;
}

int cmd_run(int argc, char **argv) {
  run_args a;
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  run_state s = {0};
  if (a.trace && kf_trace_start() != KF_OK) {
    cli_fail("run", "cannot start the trace (out of memory)");
    if (a.json) cli_json_failure(a.file, CLI_FAILED);
    return CLI_FAILED;
  }
  if (!(s.ctx = cli_ctx("run"))) {
    if (a.json) cli_json_failure(a.file, CLI_FAILED);
    return CLI_FAILED;
  }
  s.g = cli_load(s.ctx, "run", a.file, &rc);
  if (s.g) rc = execute(&s, &a);
  if (rc && a.json && !s.reported) cli_json_failure(a.file, rc);
  kf_profile_release(&s.prof);
  free(s.cmp);
  for (int j = 0; s.bound && j < s.n_out; j++) free(s.bound[j]);
  free(s.bound);
  cli_tensors_free(s.in, s.n_in);
  cli_tensors_free(s.got, s.n_out);
  cli_tensors_free(s.want, s.n_out);
  kf_plan_destroy(s.plan);
  kf_plan_destroy(s.unfused);
  kf_graph_destroy(s.g);
  kf_ctx_destroy(s.ctx);
  return rc;
}
