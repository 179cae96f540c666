/* occupancy.c - measuring occupancy: after a kernel is loaded, read back
 * its registers, spills, shared memory and resident blocks; measure the
 * parts of a re-planned copy. The records kept in the disk cache are
 * occ_record.c's; what to do with the numbers is the fuser's
 * (fuser/occ_model.c), the loop that re-plans the pipeline's
 * (pipeline/feedback.c). */
#include "runtime/occupancy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

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

kf_status rt_occupancy_measure(rt_plan *plan, rt_launch *l) {
  rt_state *rt = plan->state;
  CUresult r =
      read_occ(rt->drv, l->fn, (int)l->block, l->smem, rt->info.max_threads_per_sm, &l->occ);
  return r == CUDA_SUCCESS ? KF_OK : rt_fail(plan->ctx, plan, rt, r, "cuOccupancyMaxActiveBlocks");
}

/* Loads one launch of a compiled copy just long enough to measure it. */
static bool measure_image(rt_state *rt, const cg_program_launch *pl, fuse_occ *o) {
  const rt_driver *d = rt->drv;
  CUmodule mod = NULL;
  CUfunction fn = NULL;
  bool ok = pl->image && d->ModuleLoadData(&mod, pl->image) == CUDA_SUCCESS;
  ok = ok &&
       d->ModuleGetFunction(&fn, mod, pl->symbol[0] ? pl->symbol : pl->src.entry) == CUDA_SUCCESS;
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
