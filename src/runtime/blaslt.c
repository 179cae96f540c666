/* blaslt.c - loads libcublasLt once with dlopen and fills the rt_blaslt
 * table; a missing library or entry is a reason, never a crash. */
#include "runtime/blaslt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static rt_blaslt real_table;
static kf_status real_status = KF_ERR_UNSUPPORTED;
static char real_err[256];
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static const rt_blaslt *_Atomic override_table;

/* The sonames of the CUDA releases whose cuBLASLt ABI kfuse's calls match
 * (the matmul API is unchanged from 12 to 13), through the loader's path,
 * then in the toolkit's usual folder, which is often not on that path. */
static const char *const sonames[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                                      "/usr/local/cuda/lib64/libcublasLt.so.13",
                                      "/usr/local/cuda/lib64/libcublasLt.so.12", "libcublasLt.so"};

static void load_real(void) {
  void *lib = NULL;
  const char *name = NULL;
  for (size_t i = 0; i < sizeof sonames / sizeof sonames[0] && !lib; i++) {
    lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
    name = sonames[i];
  }
  if (!lib) {
    snprintf(real_err, sizeof real_err,
             "libcublasLt not found (tried libcublasLt.so.13 and .so.12, also in "
             "/usr/local/cuda/lib64)");
    return;
  }
#define RT_BLASLT_LOOKUP_(field, sym)                               \
  *(void **)&real_table.field = dlsym(lib, #sym);                   \
  if (!real_table.field) {                                          \
    snprintf(real_err, sizeof real_err, "%s lacks %s", name, #sym); \
    return;                                                         \
  }
  RT_BLASLT_ENTRIES(RT_BLASLT_LOOKUP_)
#undef RT_BLASLT_LOOKUP_
  real_table.name = name;
  real_status = KF_OK;
}

kf_status rt_blaslt_get(const rt_blaslt **out, char *err, size_t errsize) {
  const rt_blaslt *fake = override_table;
  if (fake) {
    *out = fake;
    return KF_OK;
  }
  pthread_once(&real_once, load_real);
  if (real_status != KF_OK) {
    *out = NULL;
    if (err && errsize) snprintf(err, errsize, "%s", real_err);
    return real_status;
  }
  *out = &real_table;
  return KF_OK;
}

void rt_blaslt_override(const rt_blaslt *table) {
  override_table = table;
}
