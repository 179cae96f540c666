/* nvrtc.c - one CUDA C translation unit to a CUBIN through NVRTC, with the
 * target arch checked against what this NVRTC supports. */
#include "runtime/nvrtc.h"

#include "core/knobs.h"

#include <dlfcn.h>
#include <limits.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "codegen/target.h"
#include "core/alloc.h"

kf_status kf_nvrtc_version(int *major, int *minor) {
  int ma = 0, mi = 0;
  if (nvrtcVersion(&ma, &mi) != NVRTC_SUCCESS) return KF_ERR_INTERNAL;
  if (major) *major = ma;
  if (minor) *minor = mi;
  return KF_OK;
}

static bool arch_supported(int num, char *err, size_t errsize) {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 256) return true;
  int archs[256];
  if (nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS) return true;
  for (int i = 0; i < n; i++)
    if (archs[i] == num) return true;
  snprintf(err, errsize, "arch sm_%d is not supported by this NVRTC (it supports sm_%d to sm_%d)",
           num, archs[0], archs[n - 1]);
  return false;
}

bool rt_nvrtc_arch(const char *name, char *out, size_t outsize, char *err, size_t errsize) {
  if (errsize) err[0] = 0;
  int num = 0;
  char suffix = 0;
  bool ok = false;
  if (!name || !*name) {
    snprintf(err, errsize, "empty arch name");
    return false;
  }
  ok = cg_arch_parse(name, &num, &suffix);
  if (!ok) {
    snprintf(err, errsize, "bad arch name '%.40s' (%s)", name, CG_ARCH_FORMS);
    return false;
  }
  if (!arch_supported(num, err, errsize)) return false;
  if (suffix)
    snprintf(out, outsize, "sm_%d%c", num, suffix);
  else
    snprintf(out, outsize, "sm_%d", num);
  return true;
}

static char include_dir[PATH_MAX];
static pthread_once_t include_once = PTHREAD_ONCE_INIT;

static bool try_include(const char *dir) {
  char probe[PATH_MAX + 32];
  struct stat st;
  if (!dir || !*dir || strlen(dir) >= sizeof include_dir) return false;
  snprintf(probe, sizeof probe, "%s/cuda_fp16.h", dir);
  if (stat(probe, &st) != 0) return false;
  snprintf(include_dir, sizeof include_dir, "%s", dir);
  return true;
}

static bool try_root(const char *root) {
  char dir[PATH_MAX];
  if (!root) return false;
  snprintf(dir, sizeof dir, "%s/include", root);
  return try_include(dir);
}

/* libnvrtc lives in <root>/lib64 or <root>/targets/<t>/lib; headers next to it. */
static bool try_beside_nvrtc(void) {
  Dl_info info;
  if (!dladdr((void *)nvrtcVersion, &info) || !info.dli_fname) return false;
  char lib[PATH_MAX], dir[PATH_MAX + 16];
  snprintf(lib, sizeof lib, "%s", info.dli_fname);
  char *slash = strrchr(lib, '/');
  if (!slash) return false;
  *slash = 0;
  snprintf(dir, sizeof dir, "%s/../include", lib);
  char real[PATH_MAX];
  return realpath(dir, real) && try_include(real);
}

static void find_include(void) {
  const core_knobs *k = core_knobs_quiet(); /* paths: nothing to warn about */
  if (try_root(k->cuda_path) || try_root(k->cuda_home)) return;
  if (try_include("/usr/local/cuda/include")) return;
  if (try_beside_nvrtc()) return;
  include_dir[0] = 0;
}

const char *rt_cuda_include_dir(void) {
  pthread_once(&include_once, find_include);
  return include_dir;
}

/* One option: `prefix` then `arg` (a literal format would need
 * -Wformat-nonliteral to be quiet about a table of formats). */
static void add_opt(rt_nvrtc_opts *o, size_t *used, const char *prefix, const char *arg) {
  if (o->argc >= RT_NVRTC_MAX_OPTS) return;
  int n = snprintf(o->text + *used, sizeof o->text - *used, "%s%s", prefix, arg);
  if (n < 0 || (size_t)n + 1 >= sizeof o->text - *used) return; /* no room: dropped */
  o->argv[o->argc++] = o->text + *used;
  *used += (size_t)n + 1; /* keep the NUL; joined with '\n' in the key */
}

void rt_nvrtc_options(const char *arch, const char *source, rt_nvrtc_opts *out) {
  memset(out, 0, sizeof *out);
  size_t used = 0;
  add_opt(out, &used, "--gpu-architecture=", arch);
  add_opt(out, &used, "", "-default-device");
  add_opt(out, &used, "", "--std=c++17");
  /* Leaves out texture/surface and device-runtime declarations that
   * generated kernels never use: about 10% less front-end time each. */
  add_opt(out, &used, "", "-minimal");
  /* No contraction of a*b+c into one FMA across ops: a fused kernel then
   * computes every value exactly as the unfused kernels do, so fusion never
   * changes a result (explicit fma() in the templates and libdevice's math
   * functions are unaffected). The kernels are memory-bound: no cost seen. */
  add_opt(out, &used, "", "--fmad=false");
  /* A body cut into segment functions (codegen/segment.c) is thousands of
   * calls long: ptxas's fast-compile level keeps its time linear in them
   * (2048 exp/tanh: 0.9 s -> 0.36 s of CPU). It changes instruction
   * scheduling only; every PTX instruction, rounding included, is kept, so
   * the results are the same bits. Other kernels keep the full level. */
  if (source && strstr(source, "\n#define KF_SEGMENTED\n"))
    add_opt(out, &used, "", "-Xptxas=-Ofc=max");
  const char *inc = rt_cuda_include_dir();
  if (source && strstr(source, "#include") && *inc) add_opt(out, &used, "-I", inc);
}

static char *program_log(nvrtcProgram prog) {
  size_t n = 0;
  if (nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0) return NULL;
  char *log = core_malloc(n + 1);
  if (!log) return NULL;
  if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = 0;
  log[n] = 0;
  return log;
}

kf_status rt_nvrtc_compile(const char *source, const char *name, const rt_nvrtc_opts *opts,
                           void **image, size_t *size, char **log) {
  *image = NULL;
  *size = 0;
  *log = NULL;
  nvrtcProgram prog;
  nvrtcResult r = nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) {
    *log = core_strdup(nvrtcGetErrorString(r));
    return r == NVRTC_ERROR_OUT_OF_MEMORY ? KF_ERR_OUT_OF_MEMORY : KF_ERR_INTERNAL;
  }
  r = nvrtcCompileProgram(prog, opts->argc, opts->argv);
  *log = program_log(prog);
  kf_status st = KF_OK;
  if (r != NVRTC_SUCCESS) {
    if (!*log || !**log) {
      free(*log);
      *log = core_strdup(nvrtcGetErrorString(r));
    }
    st = KF_ERR_COMPILE;
  } else if (nvrtcGetCUBINSize(prog, size) != NVRTC_SUCCESS || *size == 0) {
    st = KF_ERR_COMPILE;
  } else if (!(*image = core_malloc(*size))) {
    st = KF_ERR_OUT_OF_MEMORY;
  } else if (nvrtcGetCUBIN(prog, *image) != NVRTC_SUCCESS) {
    st = KF_ERR_INTERNAL;
  }
  if (st != KF_OK) {
    free(*image);
    *image = NULL;
    *size = 0;
  }
  nvrtcDestroyProgram(&prog);
  return st;
}

/* The first "(N): error" line number in an NVRTC log, or 0. */
static int first_error_line(const char *log) {
  for (const char *p = log ? strstr(log, "): error") : NULL; p;) {
    const char *q = p;
    while (q > log && q[-1] >= '0' && q[-1] <= '9') q--;
    if (q < p && q > log && q[-1] == '(') return atoi(q);
    p = strstr(p + 1, "): error");
  }
  return 0;
}

void rt_nvrtc_format_error(const char *what, const char *log, const char *source, char *out,
                           size_t outsize) {
  size_t used = 0;
#define PUT(...)                                                  \
  do {                                                            \
    if (used < outsize) {                                         \
      int n_ = snprintf(out + used, outsize - used, __VA_ARGS__); \
      used = n_ < 0 ? used : used + (size_t)n_;                   \
    }                                                             \
  } while (0)
  if (!outsize) return;
  out[0] = 0;
  const int max_log = 3000;
  int loglen = log ? (int)strlen(log) : 0;
  PUT("%s\nNVRTC log:\n%.*s%s", what, loglen > max_log ? max_log : loglen, log ? log : "",
      loglen > max_log ? "\n[log truncated]\n" : "");
  int err_line = first_error_line(log);
  int lo = err_line > 0 ? err_line - 8 : 1, hi = err_line > 0 ? err_line + 8 : 40;
  if (lo < 1) lo = 1;
  PUT("source (lines %d-%d):\n", lo, hi);
  int line = 1;
  for (const char *p = source; p && *p && line <= hi; line++) {
    const char *nl = strchr(p, '\n');
    int len = nl ? (int)(nl - p) : (int)strlen(p);
    if (line >= lo)
      PUT("%c%5d | %.*s\n", line == err_line ? '>' : ' ', line, len > 200 ? 200 : len, p);
    p = nl ? nl + 1 : p + len;
  }
#undef PUT
  if (used >= outsize && outsize > 20) strcpy(out + outsize - 20, "\n[truncated]\n");
}
