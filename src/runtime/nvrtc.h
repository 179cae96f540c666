/* nvrtc.h - compiling one CUDA C translation unit to a CUBIN with NVRTC:
 * target arch names, the option list, the include path, error text. */
#ifndef KF_RUNTIME_NVRTC_H
#define KF_RUNTIME_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

#include "kfuse.h"

/* Most options rt_nvrtc_options produces. */
#define RT_NVRTC_MAX_OPTS 8

/* The option list for one compile. `text` holds them joined by newlines:
 * it is what the cache key covers. */
typedef struct rt_nvrtc_opts {
  const char *argv[RT_NVRTC_MAX_OPTS];
  int argc;
  char text[1024];
} rt_nvrtc_opts;

/* Normalizes an arch name: "sm_90", "sm_90a", "90", "9.0" and
 * "compute_90" give "sm_90" (or "sm_90a"). false on anything else, or an
 * arch this NVRTC cannot target (the message in err says which it can). */
bool rt_nvrtc_arch(const char *name, char *out, size_t outsize, char *err, size_t errsize);

/* Builds the options for `source` on `arch` (already normalized):
 * --gpu-architecture, -default-device, --std=c++17, -minimal, and
 * -I<CUDA headers> when the source #includes anything. */
void rt_nvrtc_options(const char *arch, const char *source, rt_nvrtc_opts *out);

/* The CUDA headers folder: $CUDA_PATH/include, $CUDA_HOME/include,
 * /usr/local/cuda/include, else next to libnvrtc; "" when none exists.
 * Computed once; thread-safe. */
const char *rt_cuda_include_dir(void);

/* Compiles `source` (named `name` in messages) to a CUBIN. On success
 * *image (malloc'd, the caller's) and *size are set. On failure returns
 * KF_ERR_COMPILE (or KF_ERR_OUT_OF_MEMORY / KF_ERR_INTERNAL) and *log holds
 * NVRTC's log (malloc'd, the caller's, may be NULL). Thread-safe. */
kf_status rt_nvrtc_compile(const char *source, const char *name, const rt_nvrtc_opts *opts,
                           void **image, size_t *size, char **log);

/* Formats a failed compile for an error message: the log (truncated) and
 * the source with line numbers, around the first line the log names.
 * Writes at most outsize bytes, NUL-terminated. */
void rt_nvrtc_format_error(const char *what, const char *log, const char *source, char *out,
                           size_t outsize);

#endif
