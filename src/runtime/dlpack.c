/* dlpack.c - kf_plan_run for DLPack tensors (DLManagedTensorVersioned and
 * the legacy DLManagedTensor): each is checked and turned into a kf_tensor,
 * then the plain entry point runs. kfuse borrows them; deleters are the
 * caller's to call. */
#include "runtime/dlpack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "runtime/dlpack_types.h"
#include "runtime/launch.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

static bool map_dtype(DLDataType t, kf_dtype *out) {
  if (t.lanes != 1) return false;
  static const struct {
    uint8_t code, bits;
    kf_dtype dt;
  } map[] = {{kDLFloat, 16, KF_F16}, {kDLBfloat, 16, KF_BF16}, {kDLFloat, 32, KF_F32},
             {kDLFloat, 64, KF_F64}, {kDLInt, 32, KF_I32},     {kDLInt, 64, KF_I64},
             {kDLBool, 8, KF_BOOL}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (map[i].code == t.code && map[i].bits == t.bits) {
      *out = map[i].dt;
      return true;
    }
  return false;
}

/* Strides must describe a compact row-major layout (size-1 axes may have
 * any stride, as frameworks emit for them). */
static bool compact(const DLTensor *t) {
  if (!t->strides) return true;
  int64_t want = 1;
  for (int k = t->ndim - 1; k >= 0; k--) {
    if (t->shape[k] != 1 && t->strides[k] != want) return false;
    want *= t->shape[k];
  }
  return true;
}

static kf_status convert(rt_plan *plan, int dev, const char *what, int i, const DLTensor *t,
                         kf_tensor *out) {
  kf_status bad = KF_ERR_INVALID_ARG;
  if (t->device.device_type != kDLCUDA && t->device.device_type != kDLCUDAManaged)
    return rt_plan_error(plan, bad, "%s[%d]: DLPack device type %d is not a CUDA device", what, i,
                         (int)t->device.device_type);
  if (t->device.device_id != dev)
    return rt_plan_error(plan, bad, "%s[%d]: on CUDA device %d, the plan runs on %d", what, i,
                         (int)t->device.device_id, dev);
  if (!map_dtype(t->dtype, &out->dtype))
    return rt_plan_error(plan, bad,
                         "%s[%d]: DLPack dtype (code %u, %u bits, %u lanes) has no "
                         "kfuse dtype",
                         what, i, t->dtype.code, t->dtype.bits, t->dtype.lanes);
  if (t->ndim < 0 || t->ndim > KF_MAX_RANK || (t->ndim > 0 && !t->shape))
    return rt_plan_error(plan, bad, "%s[%d]: DLPack ndim %d (kfuse takes 0 to %d)", what, i,
                         (int)t->ndim, KF_MAX_RANK);
  if (!compact(t))
    return rt_plan_error(plan, bad,
                         "%s[%d]: strided DLPack tensor; kfuse needs compact "
                         "row-major tensors (make it contiguous first)",
                         what, i);
  out->rank = t->ndim;
  memset(out->shape, 0, sizeof out->shape);
  for (int k = 0; k < t->ndim; k++) out->shape[k] = t->shape[k];
  out->data = t->data ? (char *)t->data + t->byte_offset : NULL;
  return KF_OK;
}

/* The device kfuse runs on, to compare with the tensors' device ids. */
static kf_status plan_device(rt_plan *plan, int *dev) {
  rt_state *rt;
  if (!plan) return KF_ERR_INVALID_ARG;
  kf_status st = rt_state_get(plan->ctx, &rt);
  if (st != KF_OK) return rt_plan_error(plan, st, "%s", kf_ctx_errmsg(plan->ctx));
  *dev = (int)rt->dev;
  return KF_OK;
}

/* Gets tensor i of a DLPack array (versioned or legacy). */
typedef const DLTensor *(*dl_get_fn)(const void *array, int i, uint64_t *flags, bool *bad_version);

static const DLTensor *get_versioned(const void *array, int i, uint64_t *flags, bool *bad) {
  const DLManagedTensorVersioned *m = ((DLManagedTensorVersioned *const *)array)[i];
  if (!m) return NULL;
  *bad = m->version.major != KF_DLPACK_MAJOR_VERSION;
  *flags = m->flags;
  return &m->dl_tensor;
}

static const DLTensor *get_legacy(const void *array, int i, uint64_t *flags, bool *bad) {
  const DLManagedTensor *m = ((DLManagedTensor *const *)array)[i];
  *flags = 0;
  *bad = false;
  return m ? &m->dl_tensor : NULL;
}

static kf_status convert_all(rt_plan *plan, int dev, const char *what, const void *array, int n,
                             dl_get_fn get, kf_tensor *out) {
  for (int i = 0; i < n; i++) {
    uint64_t flags = 0;
    bool bad_version = false;
    const DLTensor *t = get(array, i, &flags, &bad_version);
    if (!t) return rt_plan_error(plan, KF_ERR_INVALID_ARG, "%s[%d]: NULL DLPack tensor", what, i);
    if (bad_version)
      return rt_plan_error(plan, KF_ERR_UNSUPPORTED, "%s[%d]: DLPack major version is not %d", what,
                           i, KF_DLPACK_MAJOR_VERSION);
    if ((flags & DLPACK_FLAG_BITMASK_READ_ONLY) && strcmp(what, "outputs") == 0)
      return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                           "outputs[%d]: the DLPack tensor is "
                           "read-only",
                           i);
    kf_status st = convert(plan, dev, what, i, t, &out[i]);
    if (st != KF_OK) return st;
  }
  return KF_OK;
}

static kf_status run_dl(rt_plan *plan, const void *in, int n_in, const void *out, int n_out,
                        void *stream, dl_get_fn get) {
  int dev = 0;
  kf_status st = plan_device(plan, &dev);
  if (st != KF_OK) return st;
  if (n_in < 0 || n_out < 0 || (n_in && !in) || (n_out && !out))
    return rt_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_run_dlpack: bad tensor arrays");
  kf_tensor *t = core_calloc((size_t)(n_in + n_out) + 1, sizeof *t);
  if (!t) return rt_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "out of memory");
  st = convert_all(plan, dev, "inputs", in, n_in, get, t);
  if (st == KF_OK) st = convert_all(plan, dev, "outputs", out, n_out, get, t + n_in);
  if (st == KF_OK) st = rt_plan_run(plan, t, n_in, t + n_in, n_out, stream);
  free(t);
  return st;
}

kf_status rt_plan_run_dlpack(rt_plan *plan, struct DLManagedTensorVersioned *const *inputs,
                             int n_inputs, struct DLManagedTensorVersioned *const *outputs,
                             int n_outputs, void *stream) {
  return run_dl(plan, inputs, n_inputs, outputs, n_outputs, stream, get_versioned);
}

kf_status rt_plan_run_dlpack_legacy(rt_plan *plan, struct DLManagedTensor *const *inputs,
                                    int n_inputs, struct DLManagedTensor *const *outputs,
                                    int n_outputs, void *stream) {
  return run_dl(plan, inputs, n_inputs, outputs, n_outputs, stream, get_legacy);
}
