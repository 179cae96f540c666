/* fallback.h - a launch's fallback form, for operands its own path cannot
 * take (fallback.c): which launches need it on a binding, loading it,
 * running it in place of the sm_90 kernel or the library call. */
#ifndef KF_RUNTIME_FALLBACK_H
#define KF_RUNTIME_FALLBACK_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/rt.h"

/* Whether launch l's bound operands (l->args) include one that a tensor
 * map cannot address: not 16-byte aligned. The strides are the shape's
 * and were checked when the kernel was chosen (cg_gemm90_fits,
 * cg_flash90_fits). */
bool rt_fallback_needed(const rt_launch *l);
/* Why l's bound operands need the fallback (rt_fallback_needed): the
 * first misaligned tensor-map operand, for messages. */
void rt_fallback_why_maps(const rt_launch *l, char *why, size_t size);
/* Makes launch L of plan run its fallback form for this binding (`why`:
 * what its own path cannot take, for messages): loads it first when it
 * is not (plan->fallback: generated and compiled by the pipeline; one
 * warning), unless stream is capturing (nothing is compiled or loaded
 * during a capture: KF_ERR_INVALID_ARG saying to run once with such
 * addresses before capturing). Errors are on the plan. */
kf_status rt_fallback_take(rt_plan *plan, int L, CUstream stream, const char *why);
/* Loads img (the form of launch L without tensor maps, which the pipeline
 * generated) as L's alternate; called back from plan->fallback. Errors
 * on the plan. */
kf_status rt_fallback_load(rt_plan *plan, int L, const rt_image *img);
/* The launch whose kernel a run of l launches: l->alt while on_alt, else
 * l itself. */
const rt_launch *rt_fallback_kernel(const rt_launch *l);
/* Unloads and frees l's alternate, if any (d NULL: the memory only). */
void rt_fallback_free(const rt_driver *d, rt_launch *l);

#endif
