/* fallback.c - a launch's fallback form: the sm_90 matmul and attention
 * kernels read their operands through the copy engine (TMA), which needs
 * 16-byte aligned addresses, and cuBLASLt may have no algorithm for some
 * alignments; a run that brings such a view runs the same launch
 * generated for the mma.sync (or simple) kernels instead, which check
 * alignment themselves, loaded at the first such run and kept while the
 * plan stays loaded. Other runs keep the launch's own kernel. */
#include "runtime/fallback.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/log.h"
#include "runtime/rt_plan.h"
#include "runtime/tmap.h"

bool rt_fallback_needed(const rt_launch *l) {
  for (int i = 0; i < l->n_tmaps; i++)
    if (l->args[l->tmap_param[i]] % 16) return true;
  return false;
}

const rt_launch *rt_fallback_kernel(const rt_launch *l) {
  return l->on_alt && l->alt ? l->alt : l;
}

void rt_fallback_why_maps(const rt_launch *l, char *why, size_t size) {
  int i = 0;
  while (i < l->n_tmaps - 1 && l->args[l->tmap_param[i]] % 16 == 0) i++;
  snprintf(why, size,
           "operand %%%d at %#llx is not 16-byte aligned, which the sm_90 kernel's copy engine "
           "(TMA) needs",
           (int)l->tmap_desc[i].value, (unsigned long long)l->args[l->tmap_param[i]]);
}

/* Whether stream is capturing a CUDA Graph (asked only when something
 * would be loaded; an error counts as capturing, as in launch.c). */
static bool capturing(const rt_plan *plan, CUstream stream) {
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = plan->state->drv->StreamIsCapturing(stream, &cs);
  return r != CUDA_SUCCESS || cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

kf_status rt_fallback_take(rt_plan *plan, int L, CUstream stream, const char *why) {
  rt_launch *l = &plan->launches[L];
  if (!l->alt) {
    bool cap = plan->fallback && capturing(plan, stream);
    if (cap || !plan->fallback)
      return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                           "%s: %s, and its fallback form is not loaded%s", l->entry, why,
                           cap ? "; nothing is compiled or loaded during a capture: run "
                                 "the plan once with such addresses before capturing"
                               : "");
    kf_status st = plan->fallback(plan->owner, L);
    if (st != KF_OK) return st;
    if (!l->alt)
      return rt_plan_error(plan, KF_ERR_INTERNAL, "%s: the fallback kernel was not loaded",
                           l->entry);
    core_log(plan->ctx, KF_LOG_WARN, LOG_RUNTIME,
             "%s: %s: runs with such addresses take its fallback form (the kernel "
             "KFUSE_GEMM90=0, KFUSE_ATTN90=0 and KFUSE_MATMUL=template plan, compiled and loaded "
             "now); the others keep the launch's own kernel",
             l->entry, why);
  }
  l->on_alt = true;
  return KF_OK;
}

kf_status rt_fallback_load(rt_plan *plan, int L, const rt_image *img) {
  rt_launch *l = &plan->launches[L];
  if (img->src->n_tmaps > 0 || img->src->library)
    return rt_plan_error(plan, KF_ERR_INTERNAL,
                         "%s: its fallback still reads tensor maps or calls a library", l->entry);
  rt_launch *alt = core_calloc(1, sizeof *alt);
  if (!alt) return rt_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "%s: out of memory", l->entry);
  kf_status st = rt_plan_load_launch(plan, plan->state, alt, img);
  if (st != KF_OK) {
    l->alt = alt; /* freed at once: a later run tries again */
    rt_fallback_free(plan->state->drv, l);
    return st;
  }
  l->alt = alt;
  return KF_OK;
}

void rt_fallback_free(const rt_driver *d, rt_launch *l) {
  rt_launch *alt = l->alt;
  if (!alt) return;
  if (d && alt->mod) d->ModuleUnload(alt->mod);
  free(alt->binds);
  free(alt->args);
  free(alt->argv);
  rt_tmap_free(alt);
  free(alt);
  l->alt = NULL;
  l->on_alt = false;
  l->graph_alt = false;
}
