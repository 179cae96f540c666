/* cmd_bench.c - `kfuse bench FILE`: the fused plan against the same graph
 * with fusion off, by CUDA event medians, as GB/s of the plan's minimum
 * bytes and as a percentage of a device-to-device copy measured in the same
 * run, plus host time per kf_plan_run. Needs a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

enum {
  BENCH_JSON,
  BENCH_ITERS,
  BENCH_WARMUP,
  BENCH_MODE,
  BENCH_SEED,
  BENCH_COPY_MB,
  BENCH_NO_NVML
};
static const cli_opt bench_opts[] = {
    [BENCH_JSON] = {"json", NULL, "one JSON object: fused_ms, unfused_ms, speedup, GB/s"},
    [BENCH_ITERS] = {"iters", "N", "timed runs of each plan (default 50)"},
    [BENCH_WARMUP] = {"warmup", "N", "untimed runs first (default 5)"},
    [BENCH_MODE] = {"mode", "MODE", "plain, streams or graph (default plain)"},
    [BENCH_SEED] = {"seed", "S", "the inputs' random seed (default 1)"},
    [BENCH_COPY_MB] = {"copy-mb", "M", "MiB of the device-to-device copy measured (default 1024)"},
    [BENCH_NO_NVML] = {"no-nvml", NULL, "do not sample GPU utilization through NVML"},
};
const cli_spec bench_spec = {"bench",
                             "FILE",
                             1,
                             1,
                             "time the fused plan against fusion off and a device-to-device copy",
                             "Needs a GPU (exit 4 without one); `kfuse run FILE` works without.",
                             bench_opts,
                             7};

typedef struct bench_args {
  const char *file;
  bool json, nvml;
  long long iters, warmup, seed, copy_mb;
  kf_run_mode mode;
} bench_args;

typedef struct bench_side {
  kf_plan *plan;
  kf_bench_result r;
} bench_side;

typedef struct bench_state {
  kf_ctx *ctx;
  kf_graph *g;
  char device[256];
  bench_side fused, unfused;
  double copy_gbps;
  size_t copy_bytes;
  kf_tensor *din, *dout;
  int n_in, n_out;
} bench_state;

static int parse(int argc, char **argv, bench_args *a) {
  *a = (bench_args){.nvml = true, .iters = 50, .warmup = 5, .seed = 1, .copy_mb = 1024};
  cli_args p;
  int rc = cli_parse(&bench_spec, argc, argv, &p);
  if (rc) return rc;
  const char *const *v = p.val;
  a->file = p.pos[0];
  a->json = p.set[BENCH_JSON];
  a->nvml = !p.set[BENCH_NO_NVML];
  bool ok =
      (!p.set[BENCH_ITERS] || cli_int("bench", "iters", v[BENCH_ITERS], 1, 1000000, &a->iters)) &&
      (!p.set[BENCH_WARMUP] ||
       cli_int("bench", "warmup", v[BENCH_WARMUP], 0, 1000000, &a->warmup)) &&
      (!p.set[BENCH_SEED] || cli_int("bench", "seed", v[BENCH_SEED], 0, INT64_MAX, &a->seed)) &&
      (!p.set[BENCH_COPY_MB] ||
       cli_int("bench", "copy-mb", v[BENCH_COPY_MB], 1, 1 << 20, &a->copy_mb)) &&
      (!p.set[BENCH_MODE] || cli_mode("bench", v[BENCH_MODE], &a->mode));
  return ok ? CLI_OK : CLI_USAGE;
}

static bool need_gpu(bench_state *s) {
  if (cli_gpu(s->ctx, s->device, sizeof s->device)) return true;
  cli_fail("bench", "no GPU: %s", kf_ctx_errmsg(s->ctx));
  fprintf(stderr,
          "kfuse bench needs a GPU to time kernels; `kfuse run FILE` works without one (it "
          "compiles for sm_90 and runs the CPU reference)\n");
  return false;
}

static bool make_plan(bench_state *s, const bench_args *a, bool fusion, kf_plan **out) {
  kf_options opt;
  kf_options_init(&opt);
  opt.fusion = fusion;
  opt.mode = a->mode;
  kf_status st = kf_plan_create(s->ctx, s->g, &opt, out);
  if (st == KF_OK) st = kf_plan_compile(*out);
  if (st != KF_OK)
    cli_fail("bench", "%s plan: %s", fusion ? "fused" : "unfused", kf_ctx_errmsg(s->ctx));
  return st == KF_OK;
}

/* Device inputs filled from seeded host tensors; outputs left as they are. */
static bool make_tensors(bench_state *s, const bench_args *a) {
  kf_host_tensor *hin = cli_tensors(s->g, false, "bench");
  kf_host_tensor *hout = cli_tensors(s->g, true, "bench");
  s->din = calloc((size_t)s->n_in + 1, sizeof *s->din);
  s->dout = calloc((size_t)s->n_out + 1, sizeof *s->dout);
  bool ok = hin && hout && s->din && s->dout;
  for (int i = 0; ok && i < s->n_in + s->n_out; i++) {
    bool in = i < s->n_in;
    kf_host_tensor *h = in ? &hin[i] : &hout[i - s->n_in];
    kf_tensor *d = in ? &s->din[i] : &s->dout[i - s->n_in];
    d->dtype = h->dtype, d->rank = h->rank;
    memcpy(d->shape, h->shape, sizeof d->shape);
    if (in) cli_fill_random(h, (uint64_t)a->seed, i, -1, 1);
    ok = kf_device_alloc(s->ctx, cli_bytes(h), &d->data) == KF_OK &&
         (!in || kf_memcpy_to_device(s->ctx, d->data, h->data, cli_bytes(h)) == KF_OK);
  }
  if (!ok && s->din && s->dout) cli_fail("bench", "%s", kf_ctx_errmsg(s->ctx));
  cli_tensors_free(hin, s->n_in);
  cli_tensors_free(hout, s->n_out);
  return ok;
}

static bool time_plan(bench_state *s, const bench_args *a, bench_side *side, bool extras) {
  kf_bench_options bo;
  kf_bench_options_init(&bo);
  bo.iters = (int)a->iters, bo.warmup = (int)a->warmup;
  bo.host_timing = extras, bo.nvml = extras && a->nvml;
  kf_status st =
      kf_plan_benchmark(side->plan, s->din, s->n_in, s->dout, s->n_out, NULL, &bo, &side->r);
  if (st != KF_OK) cli_fail("bench", "%s", kf_plan_errmsg(side->plan));
  return st == KF_OK;
}

/* The copy ceiling; a smaller buffer when the large one does not fit. */
static bool time_copy(bench_state *s, const bench_args *a) {
  size_t bytes = (size_t)a->copy_mb << 20;
  kf_status st;
  while ((st = kf_device_copy_bandwidth(s->ctx, bytes, 20, &s->copy_gbps)) ==
             KF_ERR_OUT_OF_MEMORY &&
         bytes > (64u << 20))
    bytes /= 2;
  s->copy_bytes = bytes;
  if (st != KF_OK) cli_fail("bench", "copy bandwidth: %s", kf_ctx_errmsg(s->ctx));
  return st == KF_OK;
}

static double pct(double x, double of) {
  return of > 0 ? 100.0 * x / of : NAN;
}

static double speedup(const bench_state *s) {
  return s->fused.r.ms_median > 0 ? s->unfused.r.ms_median / s->fused.r.ms_median : NAN;
}

/* Effective GB/s of the unfused plan: the same minimum bytes over its time. */
static double unfused_gbps(const bench_state *s) {
  double ms = s->unfused.r.ms_median;
  return ms > 0 ? (double)s->fused.r.bytes / (ms * 1e6) : NAN;
}

static void report_text(const bench_state *s, const bench_args *a) {
  const kf_bench_result *f = &s->fused.r, *u = &s->unfused.r;
  const char *gname = kf_graph_name(s->g);
  printf("graph     %s (%s)\n", gname ? cli_show(gname) : "(unnamed)", cli_show(a->file));
  printf("device    %s\n", cli_show(s->device));
  printf("runs      %d timed after %lld warm-up, mode %s, medians of CUDA events\n", f->iters,
         a->warmup, cli_mode_name(a->mode));
  printf("fused     %3d launches %10.4f ms %8.1f GB/s %5.1f%% of copy\n",
         kf_plan_num_launches(s->fused.plan), f->ms_median, f->gbps, pct(f->gbps, s->copy_gbps));
  printf("unfused   %3d launches %10.4f ms %8.1f GB/s %5.1f%% of copy\n",
         kf_plan_num_launches(s->unfused.plan), u->ms_median, unfused_gbps(s),
         pct(unfused_gbps(s), s->copy_gbps));
  printf("speedup   %.2fx\n", speedup(s));
  printf("bytes     %lld minimum (what GB/s counts); %lld moved with fusion off\n",
         (long long)f->bytes, (long long)u->bytes);
  printf("copy      %.1f GB/s (cuMemcpyDtoDAsync of %zu MiB, read + written)\n", s->copy_gbps,
         s->copy_bytes >> 20);
  printf("host      %.2f us per kf_plan_run in plain mode, %.2f us in graph mode\n",
         f->host_us_plain, f->host_us_graph);
  if (f->nvml_samples > 0)
    printf("gpu util  %.0f%% busy, %.0f%% memory (NVML, %d samples)\n", f->gpu_util, f->mem_util,
           f->nvml_samples);
}

static void report_json(const bench_state *s, const bench_args *a) {
  const kf_bench_result *f = &s->fused.r, *u = &s->unfused.r;
  cli_json j;
  cj_init(&j, stdout);
  cj_obj(&j, NULL);
  cj_bool(&j, "ok", true);
  cj_str(&j, "file", a->file);
  cj_str(&j, "graph", kf_graph_name(s->g));
  cj_str(&j, "device", s->device);
  cj_str(&j, "mode", cli_mode_name(a->mode));
  cj_int(&j, "iters", f->iters);
  cj_int(&j, "fused_launches", kf_plan_num_launches(s->fused.plan));
  cj_int(&j, "unfused_launches", kf_plan_num_launches(s->unfused.plan));
  cj_num(&j, "fused_ms", f->ms_median);
  cj_num(&j, "unfused_ms", u->ms_median);
  cj_num(&j, "speedup", speedup(s));
  cj_int(&j, "bytes", f->bytes);
  cj_int(&j, "unfused_bytes", u->bytes);
  cj_num(&j, "gbps", f->gbps);
  cj_num(&j, "unfused_gbps", unfused_gbps(s));
  cj_num(&j, "copy_gbps", s->copy_gbps);
  cj_num(&j, "pct_of_copy", pct(f->gbps, s->copy_gbps));
  cj_obj(&j, "host_us");
  cj_num(&j, "plain", f->host_us_plain);
  cj_num(&j, "graph", f->host_us_graph);
  cj_obj_end(&j);
  cj_obj(&j, "nvml");
  cj_int(&j, "samples", f->nvml_samples);
  cj_num(&j, "gpu_util", f->nvml_samples ? f->gpu_util : NAN);
  cj_num(&j, "mem_util", f->nvml_samples ? f->mem_util : NAN);
  cj_obj_end(&j);
  cj_obj_end(&j);
  cj_done(&j);
}

static int execute(bench_state *s, const bench_args *a) {
  s->n_in = kf_graph_num_inputs(s->g);
  s->n_out = kf_graph_num_outputs(s->g);
  if (!need_gpu(s)) return CLI_NO_DEVICE;
  if (!make_plan(s, a, true, &s->fused.plan) || !make_plan(s, a, false, &s->unfused.plan))
    return CLI_FAILED;
  if (!make_tensors(s, a)) return CLI_FAILED;
  if (!time_plan(s, a, &s->unfused, false) || !time_plan(s, a, &s->fused, true)) return CLI_FAILED;
  if (!time_copy(s, a)) return CLI_FAILED;
  if (a->json)
    report_json(s, a);
  else
    report_text(s, a);
  return 0;
}

static void free_device(bench_state *s) {
  for (int i = 0; s->din && i < s->n_in; i++) kf_device_free(s->ctx, s->din[i].data);
  for (int i = 0; s->dout && i < s->n_out; i++) kf_device_free(s->ctx, s->dout[i].data);
  free(s->din);
  free(s->dout);
}

int cmd_bench(int argc, char **argv) {
  bench_args a;
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  bench_state s = {0};
  rc = CLI_FAILED;
  if ((s.ctx = cli_ctx("bench"))) s.g = cli_load(s.ctx, "bench", a.file, &rc);
  if (s.g) rc = execute(&s, &a);
  if (rc && a.json) cli_json_failure(a.file, rc);
  free_device(&s);
  kf_plan_destroy(s.fused.plan);
  kf_plan_destroy(s.unfused.plan);
  kf_graph_destroy(s.g);
  kf_ctx_destroy(s.ctx);
  return rc;
}
