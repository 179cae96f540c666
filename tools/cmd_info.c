/* cmd_info.c - `kfuse info`: versions of kfuse, NVRTC and the driver, each
 * GPU's facts, and the kernel cache folder; says plainly when there is no
 * GPU. Exit status 0 either way: having no GPU is a fact, not an error. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

enum { INFO_JSON };
static const cli_opt info_opts[] = {
    [INFO_JSON] = {"json", NULL, "one JSON object: versions, GPUs, cache"},
};
const cli_spec info_spec = {"info",
                            "",
                            0,
                            0,
                            "versions of kfuse and NVRTC; the driver, GPUs and cache folder",
                            "Exit code 0 also without a GPU: that is a fact, not an error.",
                            info_opts,
                            1};

/* What info found, for either report. */
typedef struct info_facts {
  int nvrtc_major, nvrtc_minor, driver, n_gpus;
  bool have_nvrtc, have_driver, have_gpus;
  char no_gpus[512];
  kf_device_info gpu[16];
  bool gpu_ok[16];
  char gpu_err[16][256];
  const char *cache_dir;
  bool have_cache;
  kf_cache_stats cache;
} info_facts;

static void gather(kf_ctx *ctx, info_facts *f) {
  memset(f, 0, sizeof *f);
  f->have_nvrtc = kf_nvrtc_version(&f->nvrtc_major, &f->nvrtc_minor) == KF_OK;
  f->have_driver = kf_driver_version(ctx, &f->driver) == KF_OK;
  if (f->have_driver) f->have_gpus = kf_device_count(ctx, &f->n_gpus) == KF_OK;
  if (f->have_driver && !f->have_gpus)
    snprintf(f->no_gpus, sizeof f->no_gpus, "%s", kf_ctx_errmsg(ctx));
  if (f->n_gpus > 16) f->n_gpus = 16;
  for (int i = 0; f->have_gpus && i < f->n_gpus; i++) {
    f->gpu_ok[i] = kf_device_query(ctx, i, &f->gpu[i]) == KF_OK;
    if (!f->gpu_ok[i]) snprintf(f->gpu_err[i], sizeof f->gpu_err[i], "%s", kf_ctx_errmsg(ctx));
  }
  f->cache_dir = kf_cache_dir(ctx);
  f->have_cache = f->cache_dir && *f->cache_dir && kf_ctx_cache_stats(ctx, &f->cache) == KF_OK &&
                  f->cache.disk_enabled;
}

static void print_size(const char *label, uint64_t bytes) {
  const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, u++;
  printf("%-12s %.*f %s\n", label, u ? 1 : 0, v, unit[u]);
}

static void report_text(const info_facts *f) {
  printf("kfuse        %s\n", kf_version());
  if (f->have_nvrtc)
    printf("nvrtc        %d.%d\n", f->nvrtc_major, f->nvrtc_minor);
  else
    printf("nvrtc        unavailable\n");
  if (!f->have_driver) {
    printf(
        "driver       no NVIDIA driver found (libcuda.so.1): running needs a GPU; "
        "compiling works with --arch sm_90\n");
  } else {
    printf("driver       CUDA %d.%d\n", f->driver / 1000, f->driver % 1000 / 10);
    if (!f->have_gpus) printf("gpus         none: %s\n", cli_show(f->no_gpus));
    if (f->have_gpus) printf("gpus         %d\n", f->n_gpus);
  }
  for (int i = 0; f->have_gpus && i < f->n_gpus; i++) {
    const kf_device_info *d = &f->gpu[i];
    if (!f->gpu_ok[i]) {
      printf("gpu %-8d %s\n", i, cli_show(f->gpu_err[i]));
      continue;
    }
    printf(
        "gpu %-8d %s, sm_%d%d (compute capability %d.%d), %d SMs, %.1f GiB, "
        "%d KiB shared/block, %d MiB L2\n",
        i, cli_show(d->name), d->cc_major, d->cc_minor, d->cc_major, d->cc_minor, d->sm_count,
        (double)d->total_mem / (1024.0 * 1024 * 1024), d->max_smem_per_block / 1024,
        d->l2_bytes / (1024 * 1024));
  }
  if (!f->cache_dir || !*f->cache_dir) {
    printf("cache        off (no folder: set KFUSE_CACHE_DIR)\n");
    return;
  }
  printf("cache        %s\n", cli_show(f->cache_dir));
  if (f->have_cache) {
    print_size("cache size", f->cache.disk_bytes);
    printf("cache files  %llu (bound %llu MiB)\n", (unsigned long long)f->cache.disk_entries,
           (unsigned long long)(f->cache.disk_max_bytes / (1024 * 1024)));
  }
}

static void report_gpu_json(cli_json *j, const info_facts *f, int i) {
  const kf_device_info *d = &f->gpu[i];
  cj_obj(j, NULL);
  cj_int(j, "index", i);
  if (!f->gpu_ok[i]) {
    cj_str(j, "error", f->gpu_err[i]);
  } else {
    char sm[16];
    snprintf(sm, sizeof sm, "sm_%d%d", d->cc_major, d->cc_minor);
    cj_str(j, "name", d->name);
    cj_str(j, "arch", sm);
    cj_int(j, "sm_count", d->sm_count);
    cj_int(j, "total_mem", (long long)d->total_mem);
    cj_int(j, "max_smem_per_block", d->max_smem_per_block);
    cj_int(j, "l2_bytes", d->l2_bytes);
  }
  cj_obj_end(j);
}

static void report_json(const info_facts *f) {
  cli_json j;
  char v[32];
  cj_init(&j, stdout);
  cj_obj(&j, NULL);
  cj_bool(&j, "ok", true);
  cj_str(&j, "kfuse", kf_version());
  snprintf(v, sizeof v, "%d.%d", f->nvrtc_major, f->nvrtc_minor);
  cj_str(&j, "nvrtc", f->have_nvrtc ? v : NULL);
  snprintf(v, sizeof v, "%d.%d", f->driver / 1000, f->driver % 1000 / 10);
  cj_str(&j, "driver", f->have_driver ? v : NULL);
  if (f->have_driver && !f->have_gpus) cj_str(&j, "no_gpus", f->no_gpus);
  cj_arr(&j, "gpus");
  for (int i = 0; f->have_gpus && i < f->n_gpus; i++) report_gpu_json(&j, f, i);
  cj_arr_end(&j);
  cj_obj(&j, "cache");
  cj_str(&j, "dir", f->cache_dir && *f->cache_dir ? f->cache_dir : NULL);
  cj_bool(&j, "enabled", f->have_cache);
  cj_int(&j, "entries", f->have_cache ? (long long)f->cache.disk_entries : 0);
  cj_int(&j, "bytes", f->have_cache ? (long long)f->cache.disk_bytes : 0);
  cj_int(&j, "max_bytes", f->have_cache ? (long long)f->cache.disk_max_bytes : 0);
  cj_obj_end(&j);
  cj_obj_end(&j);
  cj_done(&j);
}

int cmd_info(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(&info_spec, argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  kf_ctx *ctx = cli_ctx("info");
  if (!ctx) {
    if (a.set[INFO_JSON]) cli_json_failure(NULL, CLI_FAILED);
    return CLI_FAILED;
  }
  info_facts f;
  gather(ctx, &f);
  if (a.set[INFO_JSON])
    report_json(&f);
  else
    report_text(&f);
  kf_ctx_destroy(ctx);
  return CLI_OK;
}
