/* tmap.c - tensor-map parameters of a launch: set up at load, encoded from
 * the bound addresses at each bind (only those that changed). */
#include "runtime/tmap.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"

kf_status rt_tmap_setup(rt_plan *plan, rt_launch *l, const cg_launch_src *src) {
  l->n_tmaps = 0;
  if (src->n_tmaps <= 0) return KF_OK;
  if (src->n_tmaps > CG_MAX_TMAPS || src->packed_params)
    return rt_plan_error(plan, KF_ERR_INTERNAL, "%s: %d tensor maps", l->entry, src->n_tmaps);
  /* CUtensorMap's own alignment (128 bytes in CUDA 13's cuda.h; the
   * driver wants at least 64) */
  const size_t align = _Alignof(CUtensorMap) > 64 ? _Alignof(CUtensorMap) : 64;
  l->tmap_mem = core_malloc((size_t)src->n_tmaps * sizeof(CUtensorMap) + align);
  if (!l->tmap_mem)
    return rt_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "loading %s: out of memory", l->entry);
  l->tmaps = (CUtensorMap *)(((uintptr_t)l->tmap_mem + align - 1) & ~(uintptr_t)(align - 1));
  for (int i = 0; i < src->n_tmaps; i++) {
    int p = 0;
    while (p < src->n_params && src->params[p].value != src->tmaps[i].value) p++;
    if (p == src->n_params)
      return rt_plan_error(plan, KF_ERR_INTERNAL,
                           "%s: tensor map %d of a value (%%%d) that is "
                           "not a parameter",
                           l->entry, i, (int)src->tmaps[i].value);
    l->tmap_desc[i] = src->tmaps[i];
    l->tmap_param[i] = p;
    l->tmap_addr[i] = 0;
    l->argv[src->n_params + i] = &l->tmaps[i];
  }
  l->n_tmaps = src->n_tmaps;
  return KF_OK;
}

static CUtensorMapDataType map_type(kf_dtype dt) {
  return dt == KF_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
}

kf_status rt_tmap_encode(rt_plan *plan, const rt_driver *d, rt_launch *l) {
  for (int i = 0; i < l->n_tmaps; i++) {
    CUdeviceptr a = l->args[l->tmap_param[i]];
    if (a == l->tmap_addr[i] && a) continue;
    const cg_tmap *t = &l->tmap_desc[i];
    /* the bind takes the form without maps for these (fallback.c) */
    if (a % 16)
      return rt_plan_error(plan, KF_ERR_INTERNAL,
                           "%s: operand %%%d at %#llx is not 16-byte aligned, which the sm_90 "
                           "kernels' copy engine needs, and the run did not fall back",
                           l->entry, (int)t->value, (unsigned long long)a);
    cuuint64_t dims[3] = {t->dims[0], t->dims[1], t->dims[2]};
    cuuint64_t strides[2] = {t->strides[0], t->strides[1]};
    cuuint32_t box[3] = {t->box[0], t->box[1], t->box[2]}, elem[3] = {1, 1, 1};
    CUresult r = d->TensorMapEncodeTiled(
        &l->tmaps[i], map_type(t->dtype), (cuuint32_t)t->rank, (void *)a, dims, strides, box, elem,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      char buf[160];
      return rt_plan_error(plan, KF_ERR_CUDA, "%s: cuTensorMapEncodeTiled for %%%d: %s", l->entry,
                           (int)t->value, rt_cu_errstr(d, r, buf, sizeof buf));
    }
    l->tmap_addr[i] = a;
  }
  return KF_OK;
}

void rt_tmap_free(rt_launch *l) {
  free(l->tmap_mem);
  l->tmap_mem = NULL;
  l->tmaps = NULL;
  l->n_tmaps = 0;
}
