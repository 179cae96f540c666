/* occupancy.c - measuring occupancy: after a kernel is loaded, read back
 * its registers, spills, shared memory and resident blocks; measure the
 * parts of a re-planned copy; keep the measurements in the disk cache.
 * What to do with the numbers is the fuser's (fuser/occ_model.c), the
 * loop that re-plans is the pipeline's (pipeline/feedback.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "runtime/cache.h"
#include "runtime/rt.h"

static CUresult read_occ(const rt_driver *d, CUfunction fn, int block, unsigned smem,
                         int max_threads, fuse_occ *o) {
  memset(o, 0, sizeof *o);
  d->FuncGetAttribute(&o->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
  d->FuncGetAttribute(&o->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
  d->FuncGetAttribute(&o->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
  o->dyn_smem = (int)smem;
  o->block = block;
  CUresult r = CUDA_SUCCESS;
  if (block > 0)
    r = d->OccupancyMaxActiveBlocksPerMultiprocessor(&o->blocks_per_sm, fn, block, smem);
  o->occupancy = (double)o->blocks_per_sm * o->block / (max_threads > 0 ? max_threads : 2048);
  return r;
}

kf_status rt_occupancy_measure(kf_plan *plan, int i) {
  struct rt_plan *rp = plan->rt;
  rt_state *rt = rp->rt;
  rt_launch *l = &rp->launches[i];
  CUresult r =
      read_occ(rt->drv, l->fn, (int)l->block, l->smem, rt->info.max_threads_per_sm, &l->occ);
  return r == CUDA_SUCCESS ? KF_OK : rt_fail(plan->ctx, plan, rt, r, "cuOccupancyMaxActiveBlocks");
}

/* ---- the cached record --------------------------------------------------- */

static cache_key record_key(const char *source, const char *arch) {
  size_t ls = strlen(source), la = strlen(arch);
  char *buf = core_malloc(ls + la + 2);
  if (!buf) return (cache_key){0, 0};
  memcpy(buf, source, ls + 1);
  memcpy(buf + ls + 1, arch, la + 1);
  cache_key key = cache_key_blob("occupancy-v2", buf, ls + la + 2);
  free(buf);
  return key;
}

#define OCC_FMT "%d %d %d %d %d %d %lf"
#define OCC_ARGS(o)                                                                       \
  (o).regs, (o).local_bytes, (o).static_smem, (o).dyn_smem, (o).block, (o).blocks_per_sm, \
      (o).occupancy
#define OCC_PTRS(o)                                                                             \
  &(o).regs, &(o).local_bytes, &(o).static_smem, &(o).dyn_smem, &(o).block, &(o).blocks_per_sm, \
      &(o).occupancy

/* A cached record is bytes from a file: its numbers must be ones a
 * measurement can give, or the record is ignored (measured again). */
static bool occ_sane(const fuse_occ *o) {
  return o->regs >= 0 && o->regs <= 65536 && o->local_bytes >= 0 && o->static_smem >= 0 &&
         o->dyn_smem >= 0 && o->block >= 0 && o->block <= 1024 && o->blocks_per_sm >= 0 &&
         o->occupancy >= 0 && o->occupancy <= 1;
}

bool rt_occ_record_get(kf_ctx *ctx, const char *source, const char *arch, fuse_occ_record *rec) {
  void *data = NULL;
  size_t size = 0;
  if (!cache_blob_get(ctx, record_key(source, arch), &data, &size)) return false;
  char *text = core_realloc(data, size + 1);
  if (!text) {
    free(data);
    return false;
  }
  text[size] = 0;
  memset(rec, 0, sizeof *rec);
  bool ok = sscanf(text, "kfuse-occupancy 2 parts %d fused " OCC_FMT " lowest " OCC_FMT,
                   &rec->n_parts, OCC_PTRS(rec->fused), OCC_PTRS(rec->lowest)) == 15 &&
            rec->n_parts >= 0 && occ_sane(&rec->fused) && occ_sane(&rec->lowest);
  free(text);
  return ok;
}

void rt_occ_record_put(kf_ctx *ctx, const char *source, const char *arch,
                       const fuse_occ_record *rec) {
  char text[400];
  int n = snprintf(text, sizeof text,
                   "kfuse-occupancy 2 parts %d fused " OCC_FMT " lowest " OCC_FMT "\n",
                   rec->n_parts, OCC_ARGS(rec->fused), OCC_ARGS(rec->lowest));
  if (n > 0 && (size_t)n < sizeof text)
    cache_blob_put(ctx, record_key(source, arch), text, (size_t)n);
}

/* Loads one launch of a compiled copy just long enough to measure it. */
static bool measure_image(rt_state *rt, const cg_program_launch *pl, fuse_occ *o) {
  const rt_driver *d = rt->drv;
  CUmodule mod = NULL;
  CUfunction fn = NULL;
  bool ok = pl->image && d->ModuleLoadData(&mod, pl->image) == CUDA_SUCCESS;
  ok = ok && d->ModuleGetFunction(&fn, mod, pl->src.entry) == CUDA_SUCCESS;
  if (ok && pl->src.smem_bytes > 48 * 1024)
    ok = d->FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             (int)pl->src.smem_bytes) == CUDA_SUCCESS;
  ok = ok && read_occ(d, fn, (int)pl->src.block, pl->src.smem_bytes, rt->info.max_threads_per_sm,
                      o) == CUDA_SUCCESS;
  if (mod) d->ModuleUnload(mod);
  return ok;
}

void rt_occupancy_measure_parts(kf_ctx *ctx, rt_state *rt, const fuse_plan *fp,
                                const cg_program *code, fuse_occ_cand *c, int nc) {
  bool pushed;
  fuse_occ *occ = core_calloc((size_t)fp->n_launches + 1, sizeof *occ);
  int8_t *state = core_calloc((size_t)fp->n_launches + 1, 1); /* 0 new, 1 measured, 2 failed */
  if (!occ || !state || rt_enter(ctx, rt, &pushed) != KF_OK) {
    free(occ);
    free(state);
    return;
  }
  for (int i = 0; i < nc; i++) {
    if (c[i].known) continue;
    for (int32_t j = 0; j < c[i].k->n_nodes; j++) {
      if (c[i].k->recomputed[j]) continue;
      int32_t kid = fp->kernel_of[c[i].k->nodes[j]];
      if (kid < 0) continue;
      int L = fp->kernels[kid].launch;
      if (state[L] == 0) state[L] = measure_image(rt, &code->launches[L], &occ[L]) ? 1 : 2;
      if (state[L] != 1) continue;
      if (c[i].rec.n_parts == 0 || occ[L].occupancy < c[i].rec.lowest.occupancy)
        c[i].rec.lowest = occ[L];
      c[i].rec.n_parts++;
    }
  }
  rt_leave(rt, pushed);
  free(occ);
  free(state);
}
