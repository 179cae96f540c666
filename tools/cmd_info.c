/* cmd_info.c - `kfuse info`: versions of kfuse, NVRTC and the driver, each
 * GPU's facts, and the kernel cache folder; says plainly when there is no
 * GPU. Exit status 0 either way: having no GPU is a fact, not an error. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "kfuse.h"

static void print_size(const char *label, uint64_t bytes) {
  const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, u++;
  printf("%-12s %.*f %s\n", label, u ? 1 : 0, v, unit[u]);
}

static void print_devices(kf_ctx *ctx) {
  int version = 0, n = 0;
  if (kf_driver_version(ctx, &version) != KF_OK) {
    printf("driver       no NVIDIA driver found (libcuda.so.1): running needs a GPU; "
           "compiling works with --arch sm_90\n");
    return;
  }
  printf("driver       CUDA %d.%d\n", version / 1000, version % 1000 / 10);
  if (kf_device_count(ctx, &n) != KF_OK) {
    printf("gpus         none: %s\n", kf_ctx_errmsg(ctx));
    return;
  }
  printf("gpus         %d\n", n);
  for (int i = 0; i < n; i++) {
    kf_device_info d;
    if (kf_device_query(ctx, i, &d) != KF_OK) {
      printf("gpu %-8d %s\n", i, kf_ctx_errmsg(ctx));
      continue;
    }
    printf("gpu %-8d %s, sm_%d%d (compute capability %d.%d), %d SMs, %.1f GiB, "
           "%d KiB shared/block, %d MiB L2\n",
           i, d.name, d.cc_major, d.cc_minor, d.cc_major, d.cc_minor, d.sm_count,
           (double)d.total_mem / (1024.0 * 1024 * 1024), d.max_smem_per_block / 1024,
           d.l2_bytes / (1024 * 1024));
  }
}

static void print_cache(kf_ctx *ctx) {
  const char *dir = kf_cache_dir(ctx);
  kf_cache_stats st;
  if (!dir || !*dir) {
    printf("cache        off (no folder: set KFUSE_CACHE_DIR)\n");
    return;
  }
  printf("cache        %s\n", dir);
  if (kf_ctx_cache_stats(ctx, &st) == KF_OK && st.disk_enabled) {
    char label[32];
    snprintf(label, sizeof label, "cache size");
    print_size(label, st.disk_bytes);
    printf("cache files  %llu (bound %llu MiB)\n", (unsigned long long)st.disk_entries,
           (unsigned long long)(st.disk_max_bytes / (1024 * 1024)));
  }
}

int cmd_info(int argc, char **argv) {
  (void)argv;
  if (argc > 0) {
    fprintf(stderr, "usage: kfuse info\n");
    return 2;
  }
  kf_ctx *ctx = NULL;
  if (kf_ctx_create(&ctx) != KF_OK) {
    fprintf(stderr, "kfuse: cannot create a context (out of memory)\n");
    return 1;
  }
  int major = 0, minor = 0;
  printf("kfuse        %s\n", kf_version());
  if (kf_nvrtc_version(&major, &minor) == KF_OK)
    printf("nvrtc        %d.%d\n", major, minor);
  else
    printf("nvrtc        unavailable\n");
  print_devices(ctx);
  print_cache(ctx);
  kf_ctx_destroy(ctx);
  return 0;
}
