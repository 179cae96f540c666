/* fake_driver.c - a recording fake of the Driver API for CI tests without a
 * GPU: fake handles and addresses, every call logged as one line, failures
 * injected on demand (fake_driver.h). Installed through rt_driver_override;
 * built with the tests, not into libkfuse.
 * Not thread-safe: one test drives it at a time. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_driver.h"

/* Fake handles are small integers above a base, one range per kind, so a
 * log line can name them ("s2", "e5") and a stray handle is recognizable. */
enum { K_STREAM, K_EVENT, K_MODULE, K_FUNC, K_GRAPH, K_EXEC, K_NODE, K_CTX, K_COUNT };
static const char kind_prefix[K_COUNT] = {'s', 'e', 'm', 'f', 'g', 'x', 'n', 'c'};
#define HBASE ((uintptr_t)0xfa000000u)
#define MEMBASE ((CUdeviceptr)0x100000000ull)
#define MAX_FUNCS 32768 /* the OOM sweep (test_oom) loads a plan for every N */
#define MAX_ALLOCS 256
#define MAX_RULES 16

typedef struct fake_alloc {
  CUdeviceptr ptr;
  size_t bytes;
  bool live;
} fake_alloc;

typedef struct fake_rule {
  char substr[64];
  int regs, local, smem;
} fake_rule;

static struct {
  char **lines;
  int n_lines, cap_lines;
  int next_id[K_COUNT];
  int live[K_COUNT];
  char func_name[MAX_FUNCS][64];
  int func_module[MAX_FUNCS];
  int n_funcs;
  fake_alloc allocs[MAX_ALLOCS];
  int n_allocs;
  CUdeviceptr next_addr;
  fake_alloc ranges[MAX_ALLOCS];
  int n_ranges;
  fake_rule rules[MAX_RULES];
  int n_rules;
  char fail_entry[64];
  int fail_countdown; /* calls of fail_entry left before the failure */
  CUresult fail_result;
  bool fail_sticky, failing_all;
  int devices;
  int sm_count; /* 0: 132, an H200 */
  float elapsed_ms; /* 0: 1 ms */
  bool capturing;
  CUcontext ctx_stack[16];
  int ctx_depth;
  bool initialized;
  bool configured; /* devices set (the zeroed state means "not yet") */
} F;

static void *mk(int kind) {
  int id = ++F.next_id[kind];
  F.live[kind]++;
  return (void *)(HBASE + ((uintptr_t)kind << 16) + (uintptr_t)id);
}

static int hkind(const void *h) {
  uintptr_t v = (uintptr_t)h;
  if (v <= HBASE || v >= HBASE + ((uintptr_t)K_COUNT << 16)) return -1;
  return (int)((v - HBASE) >> 16);
}

static int hid(const void *h) { return (int)(((uintptr_t)h - HBASE) & 0xffff); }

/* A handle's log name: "s2", "0" for NULL, hex for a foreign value. */
static const char *hname(const void *h, char *buf, size_t size) {
  int k = hkind(h);
  if (!h)
    snprintf(buf, size, "0");
  else if (k < 0)
    snprintf(buf, size, "%#lx", (unsigned long)(uintptr_t)h);
  else
    snprintf(buf, size, "%c%d", kind_prefix[k], hid(h));
  return buf;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (F.n_lines == F.cap_lines) {
    int cap = F.cap_lines ? 2 * F.cap_lines : 64;
    char **l = realloc(F.lines, (size_t)cap * sizeof *l);
    if (!l) return;
    F.lines = l;
    F.cap_lines = cap;
  }
  F.lines[F.n_lines] = strdup(buf);
  if (F.lines[F.n_lines]) F.n_lines++;
}

/* The injected failure for this call of `entry`, or CUDA_SUCCESS. */
static CUresult injected(const char *entry) {
  if (F.failing_all) {
    logf_("%s FAILED %d", entry, (int)F.fail_result);
    return F.fail_result;
  }
  if (F.fail_countdown > 0 && strcmp(F.fail_entry, entry) == 0 && --F.fail_countdown == 0) {
    if (F.fail_sticky) F.failing_all = true;
    logf_("%s FAILED %d", entry, (int)F.fail_result);
    return F.fail_result;
  }
  return CUDA_SUCCESS;
}

#define INJECT(entry)                    \
  do {                                   \
    CUresult r_ = injected(entry);       \
    if (r_ != CUDA_SUCCESS) return r_;   \
  } while (0)

/* The comma-separated pointer arguments of a launch. Every kfuse kernel
 * parameter is a device pointer, and kfuse ends kernelParams with NULL
 * (the real driver ignores entries past the kernel's own count). */
static const char *args_str(void **params, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; params && params[i] && n + 24 < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%#llx", i ? "," : "",
                          (unsigned long long)*(CUdeviceptr *)params[i]);
  return buf;
}

static const char *fname(CUfunction f) {
  int k = hkind(f), id = hid(f);
  if (k != K_FUNC || id < 1 || id > F.n_funcs) return "?";
  return F.func_name[id - 1];
}

/* ---- device, context ------------------------------------------------------ */

static CUresult f_Init(unsigned int flags) {
  (void)flags;
  INJECT("Init");
  if (F.devices == 0) return CUDA_ERROR_NO_DEVICE;
  F.initialized = true;
  return CUDA_SUCCESS;
}

static CUresult f_DriverGetVersion(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}

static CUresult f_GetErrorName(CUresult r, const char **s) {
  switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    case CUDA_ERROR_LAUNCH_FAILED: *s = "CUDA_ERROR_LAUNCH_FAILED"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; break;
    default: *s = "CUDA_ERROR_FAKE"; break;
  }
  return CUDA_SUCCESS;
}

static CUresult f_GetErrorString(CUresult r, const char **s) {
  *s = r == CUDA_ERROR_OUT_OF_MEMORY ? "out of memory" : "fake driver error";
  return CUDA_SUCCESS;
}

static CUresult f_DeviceGetCount(int *n) {
  if (!F.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  *n = F.devices;
  return CUDA_SUCCESS;
}

static CUresult f_DeviceGet(CUdevice *d, int ordinal) {
  if (!F.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || ordinal >= F.devices) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}

static CUresult f_DeviceGetName(char *name, int len, CUdevice d) {
  snprintf(name, (size_t)len, "Fake H200 #%d", (int)d);
  return CUDA_SUCCESS;
}

static CUresult f_DeviceTotalMem(size_t *bytes, CUdevice d) {
  (void)d;
  *bytes = (size_t)150754820096ull;
  return CUDA_SUCCESS;
}

static CUresult f_DeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = F.sm_count ? F.sm_count : 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 52428800; break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}

static CUresult f_DevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  (void)d;
  INJECT("DevicePrimaryCtxRetain");
  *c = (CUcontext)(HBASE + ((uintptr_t)K_CTX << 16) + 1);
  F.live[K_CTX]++;
  logf_("DevicePrimaryCtxRetain c1");
  return CUDA_SUCCESS;
}

static CUresult f_DevicePrimaryCtxRelease(CUdevice d) {
  (void)d;
  F.live[K_CTX]--;
  logf_("DevicePrimaryCtxRelease");
  return CUDA_SUCCESS;
}

static CUresult f_CtxGetCurrent(CUcontext *c) {
  *c = F.ctx_depth ? F.ctx_stack[F.ctx_depth - 1] : NULL;
  return CUDA_SUCCESS;
}

static CUresult f_CtxPushCurrent(CUcontext c) {
  char b[32];
  if (F.ctx_depth == 16) return CUDA_ERROR_INVALID_VALUE;
  F.ctx_stack[F.ctx_depth++] = c;
  logf_("CtxPushCurrent %s", hname(c, b, sizeof b));
  return CUDA_SUCCESS;
}

static CUresult f_CtxPopCurrent(CUcontext *c) {
  if (F.ctx_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  F.ctx_depth--;
  if (c) *c = F.ctx_stack[F.ctx_depth];
  logf_("CtxPopCurrent");
  return CUDA_SUCCESS;
}

static CUresult f_CtxGetDevice(CUdevice *d) {
  if (!F.ctx_depth) return CUDA_ERROR_INVALID_CONTEXT;
  *d = 0;
  return CUDA_SUCCESS;
}

static CUresult f_CtxGetStreamPriorityRange(int *least, int *greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return CUDA_SUCCESS;
}

static CUresult f_CtxSynchronize(void) {
  INJECT("CtxSynchronize");
  logf_("CtxSynchronize");
  return CUDA_SUCCESS;
}

/* ---- modules, functions, occupancy ---------------------------------------- */

static CUresult f_ModuleLoadData(CUmodule *m, const void *image) {
  char b[32];
  INJECT("ModuleLoadData");
  if (!image) return CUDA_ERROR_INVALID_VALUE;
  *m = mk(K_MODULE);
  logf_("ModuleLoadData %s", hname(*m, b, sizeof b));
  return CUDA_SUCCESS;
}

/* Destroys a handle of `kind`: checked, counted, logged as "<call> <handle>". */
static CUresult drop(const void *h, int kind, const char *call) {
  char b[32];
  if (hkind(h) != kind) return CUDA_ERROR_INVALID_HANDLE;
  F.live[kind]--;
  logf_("%s %s", call, hname(h, b, sizeof b));
  return CUDA_SUCCESS;
}

static CUresult f_ModuleUnload(CUmodule m) { return drop(m, K_MODULE, "ModuleUnload"); }

static CUresult f_ModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  INJECT("ModuleGetFunction");
  if (hkind(m) != K_MODULE || F.n_funcs == MAX_FUNCS) return CUDA_ERROR_INVALID_HANDLE;
  snprintf(F.func_name[F.n_funcs], sizeof F.func_name[0], "%s", name);
  F.func_module[F.n_funcs] = hid(m);
  F.n_funcs++;
  *f = (CUfunction)(HBASE + ((uintptr_t)K_FUNC << 16) + (uintptr_t)F.n_funcs);
  logf_("ModuleGetFunction %s", name);
  return CUDA_SUCCESS;
}

static CUresult f_FuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  INJECT("FuncSetAttribute");
  logf_("FuncSetAttribute fn=%s attr=%d value=%d", fname(f), (int)a, v);
  return CUDA_SUCCESS;
}

/* 60 clusters at most, as on an H200 with 2-block clusters of large blocks. */
static CUresult f_OccupancyMaxActiveClusters(int *n, CUfunction f, const CUlaunchConfig *c) {
  INJECT("OccupancyMaxActiveClusters");
  *n = 60;
  logf_("OccupancyMaxActiveClusters fn=%s grid=%u block=%u smem=%u", fname(f), c->gridDimX,
        c->blockDimX, c->sharedMemBytes);
  return CUDA_SUCCESS;
}

/* Records the map's shape and writes the address into it, as the real
 * driver's opaque bytes hold it. */
static CUresult f_TensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                       void *addr, const cuuint64_t *dims,
                                       const cuuint64_t *strides, const cuuint32_t *box,
                                       const cuuint32_t *elem, CUtensorMapInterleave il,
                                       CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                                       CUtensorMapFloatOOBfill fill) {
  (void)elem, (void)il, (void)l2, (void)fill;
  INJECT("TensorMapEncodeTiled");
  if (rank < 2 || rank > 3 || (uintptr_t)addr % 16 || (uintptr_t)map % _Alignof(CUtensorMap))
    return CUDA_ERROR_INVALID_VALUE;
  memset(map, 0, sizeof *map);
  map->opaque[0] = (cuuint64_t)(uintptr_t)addr;
  if (rank == 2)
    logf_("TensorMapEncodeTiled type=%d addr=%#llx dims=%llux%llu stride=%llu box=%ux%u swizzle=%d",
          (int)type, (unsigned long long)(uintptr_t)addr, (unsigned long long)dims[0],
          (unsigned long long)dims[1], (unsigned long long)strides[0], box[0], box[1], (int)sw);
  else
    logf_(
        "TensorMapEncodeTiled type=%d addr=%#llx dims=%llux%llux%llu stride=%llux%llu "
        "box=%ux%ux%u swizzle=%d",
        (int)type, (unsigned long long)(uintptr_t)addr, (unsigned long long)dims[0],
        (unsigned long long)dims[1], (unsigned long long)dims[2], (unsigned long long)strides[0],
        (unsigned long long)strides[1], box[0], box[1], box[2], (int)sw);
  return CUDA_SUCCESS;
}

static const fake_rule *rule_for(CUfunction f) {
  static const fake_rule def = {"", 32, 0, 0};
  const char *n = fname(f);
  for (int i = 0; i < F.n_rules; i++)
    if (strstr(n, F.rules[i].substr)) return &F.rules[i];
  return &def;
}

static CUresult f_FuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) {
  const fake_rule *r = rule_for(f);
  switch (a) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = r->regs; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = r->local; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = r->smem; break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}

/* The sm_90 limits: 2048 threads, 64K registers, 32 blocks, 228 KB. */
static CUresult f_Occupancy(int *blocks, CUfunction f, int block, size_t dsmem) {
  const fake_rule *r = rule_for(f);
  if (block <= 0) return CUDA_ERROR_INVALID_VALUE;
  int by_threads = 2048 / block;
  int regs_per_block = ((r->regs * block + 255) / 256) * 256;
  int by_regs = regs_per_block ? 65536 / regs_per_block : 32;
  size_t smem = dsmem + (size_t)r->smem + 1024;
  int by_smem = (int)(233472 / smem);
  int n = by_threads < by_regs ? by_threads : by_regs;
  if (by_smem < n) n = by_smem;
  *blocks = n > 32 ? 32 : n;
  return CUDA_SUCCESS;
}

/* ---- memory -------------------------------------------------------------- */

static CUresult f_MemAlloc(CUdeviceptr *p, size_t bytes) {
  INJECT("MemAlloc");
  /* a freed entry is reused, so that a long sweep of runs (test_oom) does
   * not exhaust the table; addresses are never reused */
  int slot = 0;
  while (slot < F.n_allocs && F.allocs[slot].live) slot++;
  if (slot == MAX_ALLOCS) return CUDA_ERROR_OUT_OF_MEMORY;
  if (!F.next_addr) F.next_addr = MEMBASE;
  *p = F.next_addr;
  F.next_addr += (bytes + 511) / 512 * 512 + 512;
  F.allocs[slot] = (fake_alloc){*p, bytes, true};
  if (slot == F.n_allocs) F.n_allocs++;
  logf_("MemAlloc %#llx bytes=%zu", (unsigned long long)*p, bytes);
  return CUDA_SUCCESS;
}

static CUresult f_MemFree(CUdeviceptr p) {
  for (int i = 0; i < F.n_allocs; i++)
    if (F.allocs[i].live && F.allocs[i].ptr == p) {
      F.allocs[i].live = false;
      logf_("MemFree %#llx", (unsigned long long)p);
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}

/* Every module's globals at one fake address per module and name length. */
static CUresult f_ModuleGetGlobal(CUdeviceptr *p, size_t *bytes, CUmodule m, const char *name) {
  INJECT("ModuleGetGlobal");
  if (hkind(m) != K_MODULE || !name) return CUDA_ERROR_INVALID_HANDLE;
  if (strcmp(name, "kf_l2pf_rows")) return CUDA_ERROR_NOT_FOUND;
  if (p) *p = (CUdeviceptr)(0x7f0000000000ull + ((unsigned long long)hid(m) << 8));
  if (bytes) *bytes = sizeof(int);
  logf_("ModuleGetGlobal %s", name);
  return CUDA_SUCCESS;
}

static CUresult f_MemGetInfo(size_t *free_b, size_t *total) {
  *free_b = (size_t)140000000000ull;
  *total = (size_t)150754820096ull;
  return CUDA_SUCCESS;
}

static CUresult f_MemcpyHtoD(CUdeviceptr d, const void *h, size_t n) {
  int v = 0;
  if (h && n == sizeof v) memcpy(&v, h, sizeof v);
  if (n == sizeof v)
    logf_("MemcpyHtoD %#llx bytes=%zu int=%d", (unsigned long long)d, n, v);
  else
    logf_("MemcpyHtoD %#llx bytes=%zu", (unsigned long long)d, n);
  return CUDA_SUCCESS;
}

static CUresult f_MemcpyDtoH(void *h, CUdeviceptr d, size_t n) {
  memset(h, 0, n);
  logf_("MemcpyDtoH %#llx bytes=%zu", (unsigned long long)d, n);
  return CUDA_SUCCESS;
}

static CUresult f_MemsetD8(CUdeviceptr d, unsigned char v, size_t n) {
  logf_("MemsetD8 %#llx value=%u n=%zu", (unsigned long long)d, v, n);
  return CUDA_SUCCESS;
}

static CUresult f_MemsetD32(CUdeviceptr d, unsigned int v, size_t n) {
  logf_("MemsetD32 %#llx value=%#x n=%zu", (unsigned long long)d, v, n);
  return CUDA_SUCCESS;
}

static bool in_ranges(const fake_alloc *a, int n, CUdeviceptr p) {
  for (int i = 0; i < n; i++)
    if (a[i].live && p >= a[i].ptr && p < a[i].ptr + a[i].bytes) return true;
  return false;
}

static CUresult f_PointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p) {
  logf_("PointerGetAttribute attr=%d %#llx", (int)a, (unsigned long long)p);
  if (!in_ranges(F.allocs, F.n_allocs, p) && !in_ranges(F.ranges, F.n_ranges, p))
    return CUDA_ERROR_INVALID_VALUE; /* what the real driver says of host memory */
  if (a == CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
    *(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
  else if (a == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
    *(int *)data = 0;
  else
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* ---- streams, events ----------------------------------------------------- */

static CUresult f_StreamCreateWithPriority(CUstream *s, unsigned int flags, int prio) {
  char b[32];
  INJECT("StreamCreateWithPriority");
  *s = mk(K_STREAM);
  logf_("StreamCreateWithPriority %s flags=%u prio=%d", hname(*s, b, sizeof b), flags, prio);
  return CUDA_SUCCESS;
}

static CUresult f_StreamDestroy(CUstream s) { return drop(s, K_STREAM, "StreamDestroy"); }

static CUresult f_StreamSynchronize(CUstream s) {
  char b[32];
  INJECT("StreamSynchronize");
  logf_("StreamSynchronize %s", hname(s, b, sizeof b));
  return CUDA_SUCCESS;
}

static CUresult f_StreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
  char b[32], c[32];
  (void)flags;
  INJECT("StreamWaitEvent");
  logf_("StreamWaitEvent stream=%s event=%s", hname(s, b, sizeof b), hname(e, c, sizeof c));
  return CUDA_SUCCESS;
}

static CUresult f_StreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) {
  (void)s;
  *st = F.capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

static CUresult f_StreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  char b[32];
  INJECT("StreamBeginCapture");
  F.capturing = true;
  logf_("StreamBeginCapture %s mode=%d", hname(s, b, sizeof b), (int)mode);
  return CUDA_SUCCESS;
}

static CUresult f_StreamEndCapture(CUstream s, CUgraph *g) {
  char b[32];
  F.capturing = false;
  *g = mk(K_GRAPH);
  logf_("StreamEndCapture %s", hname(s, b, sizeof b));
  return CUDA_SUCCESS;
}

static CUresult f_EventCreate(CUevent *e, unsigned int flags) {
  char b[32];
  INJECT("EventCreate");
  *e = mk(K_EVENT);
  logf_("EventCreate %s flags=%u", hname(*e, b, sizeof b), flags);
  return CUDA_SUCCESS;
}

static CUresult f_EventDestroy(CUevent e) { return drop(e, K_EVENT, "EventDestroy"); }

static CUresult f_EventRecord(CUevent e, CUstream s) {
  char b[32], c[32];
  INJECT("EventRecord");
  logf_("EventRecord event=%s stream=%s", hname(e, b, sizeof b), hname(s, c, sizeof c));
  return CUDA_SUCCESS;
}

static CUresult f_EventSynchronize(CUevent e) {
  char b[32];
  INJECT("EventSynchronize");
  logf_("EventSynchronize %s", hname(e, b, sizeof b));
  return CUDA_SUCCESS;
}

static CUresult f_EventElapsedTime(float *ms, CUevent a, CUevent b) {
  (void)a;
  (void)b;
  *ms = F.elapsed_ms > 0 ? F.elapsed_ms : 1.0f;
  return CUDA_SUCCESS;
}

/* ---- launches, graphs ---------------------------------------------------- */

/* Both launch entries log one LaunchKernel line; " pdl" at its end when
 * the launch carries programmatic stream serialization (the only attribute
 * kfuse sets). Failures injected for "LaunchKernel" hit both. */
static CUresult launch(CUfunction f, unsigned gx, unsigned bx, unsigned smem, CUstream s,
                       void **params, bool pdl) {
  char b[32], a[512];
  INJECT("LaunchKernel");
  if (hkind(f) != K_FUNC) return CUDA_ERROR_INVALID_HANDLE;
  logf_("LaunchKernel fn=%s grid=%u block=%u smem=%u stream=%s args=%s%s", fname(f), gx, bx, smem,
        hname(s, b, sizeof b), args_str(params, a, sizeof a), pdl ? " pdl" : "");
  return CUDA_SUCCESS;
}

static CUresult f_LaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned smem, CUstream s,
                               void **params, void **extra) {
  (void)gy, (void)gz, (void)by, (void)bz, (void)extra;
  return launch(f, gx, bx, smem, s, params, false);
}

static CUresult f_LaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
                                 void **extra) {
  (void)extra;
  bool pdl = false;
  for (unsigned i = 0; i < c->numAttrs; i++)
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      pdl = c->attrs[i].value.programmaticStreamSerializationAllowed != 0;
  return launch(f, c->gridDimX, c->blockDimX, c->sharedMemBytes, c->hStream, params, pdl);
}

static CUresult f_GraphCreate(CUgraph *g, unsigned int flags) {
  char b[32];
  (void)flags;
  INJECT("GraphCreate");
  *g = mk(K_GRAPH);
  logf_("GraphCreate %s", hname(*g, b, sizeof b));
  return CUDA_SUCCESS;
}

static CUresult f_GraphAddKernelNode(CUgraphNode *n, CUgraph g, const CUgraphNode *deps,
                                     size_t ndeps, const CUDA_KERNEL_NODE_PARAMS_v2 *p) {
  char b[32], d[256] = "", a[512];
  size_t len = 0;
  INJECT("GraphAddKernelNode");
  if (hkind(g) != K_GRAPH) return CUDA_ERROR_INVALID_HANDLE;
  for (size_t i = 0; i < ndeps && len + 16 < sizeof d; i++)
    len += (size_t)snprintf(d + len, sizeof d - len, "%s%s", i ? "," : "",
                            hname(deps[i], b, sizeof b));
  *n = mk(K_NODE);
  F.live[K_NODE]--; /* nodes die with their graph */
  logf_("GraphAddKernelNode %s fn=%s grid=%u block=%u smem=%u deps=%s args=%s",
        hname(*n, b, sizeof b), fname(p->func), p->gridDimX, p->blockDimX, p->sharedMemBytes,
        d, args_str(p->kernelParams, a, sizeof a));
  return CUDA_SUCCESS;
}

/* A library call captured on a side stream goes in as a child graph. */
static CUresult f_GraphAddChildGraphNode(CUgraphNode *n, CUgraph g, const CUgraphNode *deps,
                                         size_t ndeps, CUgraph child) {
  char b[32], c[32];
  (void)deps;
  INJECT("GraphAddChildGraphNode");
  if (hkind(g) != K_GRAPH || hkind(child) != K_GRAPH) return CUDA_ERROR_INVALID_HANDLE;
  *n = mk(K_NODE);
  F.live[K_NODE]--; /* nodes die with their graph */
  logf_("GraphAddChildGraphNode %s child=%s deps=%zu", hname(*n, b, sizeof b),
        hname(child, c, sizeof c), ndeps);
  return CUDA_SUCCESS;
}

static CUresult f_GraphInstantiateWithFlags(CUgraphExec *x, CUgraph g, unsigned long long fl) {
  char b[32], c[32];
  (void)fl;
  INJECT("GraphInstantiateWithFlags");
  *x = mk(K_EXEC);
  logf_("GraphInstantiate %s from %s", hname(*x, b, sizeof b), hname(g, c, sizeof c));
  return CUDA_SUCCESS;
}

static CUresult f_GraphLaunch(CUgraphExec x, CUstream s) {
  char b[32], c[32];
  INJECT("GraphLaunch");
  logf_("GraphLaunch %s stream=%s", hname(x, b, sizeof b), hname(s, c, sizeof c));
  return CUDA_SUCCESS;
}

static CUresult f_GraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode n,
                                               const CUDA_KERNEL_NODE_PARAMS_v2 *p) {
  char b[32], c[32], a[512];
  INJECT("GraphExecKernelNodeSetParams");
  logf_("GraphExecKernelNodeSetParams %s node=%s args=%s", hname(x, b, sizeof b),
        hname(n, c, sizeof c), args_str(p->kernelParams, a, sizeof a));
  return CUDA_SUCCESS;
}

/* A library call captured again with new pointers replaces the child
 * graph in the exec (an injected failure stands for the driver's answer to
 * a child whose topology changed). */
static CUresult f_GraphExecChildGraphNodeSetParams(CUgraphExec x, CUgraphNode n, CUgraph child) {
  char b[32], c[32], e[32];
  INJECT("GraphExecChildGraphNodeSetParams");
  if (hkind(x) != K_EXEC || hkind(child) != K_GRAPH) return CUDA_ERROR_INVALID_HANDLE;
  logf_("GraphExecChildGraphNodeSetParams %s node=%s child=%s", hname(x, b, sizeof b),
        hname(n, c, sizeof c), hname(child, e, sizeof e));
  return CUDA_SUCCESS;
}

static CUresult f_GraphExecDestroy(CUgraphExec x) { return drop(x, K_EXEC, "GraphExecDestroy"); }

static CUresult f_GraphDestroy(CUgraph g) { return drop(g, K_GRAPH, "GraphDestroy"); }

/* ---- the table and the test controls ----------------------------------------- */

static const rt_driver fake_table = {
    .name = "fake",
    .Init = f_Init,
    .DriverGetVersion = f_DriverGetVersion,
    .GetErrorName = f_GetErrorName,
    .GetErrorString = f_GetErrorString,
    .DeviceGetCount = f_DeviceGetCount,
    .DeviceGet = f_DeviceGet,
    .DeviceGetName = f_DeviceGetName,
    .DeviceTotalMem = f_DeviceTotalMem,
    .DeviceGetAttribute = f_DeviceGetAttribute,
    .DevicePrimaryCtxRetain = f_DevicePrimaryCtxRetain,
    .DevicePrimaryCtxRelease = f_DevicePrimaryCtxRelease,
    .CtxGetCurrent = f_CtxGetCurrent,
    .CtxPushCurrent = f_CtxPushCurrent,
    .CtxPopCurrent = f_CtxPopCurrent,
    .CtxGetDevice = f_CtxGetDevice,
    .CtxGetStreamPriorityRange = f_CtxGetStreamPriorityRange,
    .CtxSynchronize = f_CtxSynchronize,
    .ModuleLoadData = f_ModuleLoadData,
    .ModuleUnload = f_ModuleUnload,
    .ModuleGetFunction = f_ModuleGetFunction,
    .FuncSetAttribute = f_FuncSetAttribute,
    .FuncGetAttribute = f_FuncGetAttribute,
    .OccupancyMaxActiveBlocksPerMultiprocessor = f_Occupancy,
    .OccupancyMaxActiveClusters = f_OccupancyMaxActiveClusters,
    .MemAlloc = f_MemAlloc,
    .MemFree = f_MemFree,
    .MemGetInfo = f_MemGetInfo,
    .MemcpyHtoD = f_MemcpyHtoD,
    .ModuleGetGlobal = f_ModuleGetGlobal,
    .MemcpyDtoH = f_MemcpyDtoH,
    .MemsetD8 = f_MemsetD8,
    .MemsetD32 = f_MemsetD32,
    .PointerGetAttribute = f_PointerGetAttribute,
    .StreamCreateWithPriority = f_StreamCreateWithPriority,
    .StreamDestroy = f_StreamDestroy,
    .StreamSynchronize = f_StreamSynchronize,
    .StreamWaitEvent = f_StreamWaitEvent,
    .StreamIsCapturing = f_StreamIsCapturing,
    .StreamBeginCapture = f_StreamBeginCapture,
    .StreamEndCapture = f_StreamEndCapture,
    .EventCreate = f_EventCreate,
    .EventDestroy = f_EventDestroy,
    .EventRecord = f_EventRecord,
    .EventSynchronize = f_EventSynchronize,
    .EventElapsedTime = f_EventElapsedTime,
    .LaunchKernel = f_LaunchKernel,
    .TensorMapEncodeTiled = f_TensorMapEncodeTiled,
    .LaunchKernelEx = f_LaunchKernelEx,
    .GraphCreate = f_GraphCreate,
    .GraphAddKernelNode = f_GraphAddKernelNode,
    .GraphAddChildGraphNode = f_GraphAddChildGraphNode,
    .GraphInstantiateWithFlags = f_GraphInstantiateWithFlags,
    .GraphLaunch = f_GraphLaunch,
    .GraphExecKernelNodeSetParams = f_GraphExecKernelNodeSetParams,
    .GraphExecChildGraphNodeSetParams = f_GraphExecChildGraphNodeSetParams,
    .GraphExecDestroy = f_GraphExecDestroy,
    .GraphDestroy = f_GraphDestroy,
};

const rt_driver *rt_fake_driver(void) {
  if (!F.configured) {
    F.configured = true;
    F.devices = 1;
  }
  return &fake_table;
}

void rt_fake_reset(void) {
  for (int i = 0; i < F.n_lines; i++) free(F.lines[i]);
  free(F.lines);
  memset(&F, 0, sizeof F);
  F.configured = true;
  F.devices = 1;
}

int rt_fake_count(void) { return F.n_lines; }
const char *rt_fake_line(int i) { return i >= 0 && i < F.n_lines ? F.lines[i] : NULL; }

int rt_fake_find(int from, const char *prefix, const char *needle) {
  for (int i = from < 0 ? 0 : from; i < F.n_lines; i++)
    if (strncmp(F.lines[i], prefix, strlen(prefix)) == 0 &&
        (!needle || strstr(F.lines[i], needle)))
      return i;
  return -1;
}

int rt_fake_count_prefix(const char *prefix) {
  int n = 0;
  for (int i = 0; i < F.n_lines; i++) n += strncmp(F.lines[i], prefix, strlen(prefix)) == 0;
  return n;
}

void rt_fake_fail(const char *entry, int nth, CUresult r, bool sticky) {
  snprintf(F.fail_entry, sizeof F.fail_entry, "%s", entry);
  F.fail_countdown = nth;
  F.fail_result = r;
  F.fail_sticky = sticky;
  F.failing_all = false;
}

void rt_fake_set_devices(int n) {
  F.configured = true;
  F.devices = n;
}
void rt_fake_set_capturing(bool on) { F.capturing = on; }
void rt_fake_set_sm_count(int n) { F.sm_count = n; }

void rt_fake_set_elapsed_ms(float ms) { F.elapsed_ms = ms; }

size_t rt_fake_bytes_allocated(void) {
  size_t n = 0;
  for (int i = 0; i < F.n_allocs; i++)
    if (F.allocs[i].live) n += F.allocs[i].bytes;
  return n;
}

int rt_fake_live_objects(void) {
  return F.live[K_MODULE] + F.live[K_STREAM] + F.live[K_EVENT] + F.live[K_GRAPH] +
         F.live[K_EXEC] + F.live[K_CTX];
}

void rt_fake_add_device_range(CUdeviceptr base, size_t bytes) {
  if (F.n_ranges < MAX_ALLOCS) F.ranges[F.n_ranges++] = (fake_alloc){base, bytes, true};
}

void rt_fake_set_kernel(const char *entry_substr, int regs, int local_bytes, int static_smem) {
  if (F.n_rules == MAX_RULES) return;
  fake_rule *r = &F.rules[F.n_rules++];
  snprintf(r->substr, sizeof r->substr, "%s", entry_substr);
  r->regs = regs;
  r->local = local_bytes;
  r->smem = static_smem;
}
