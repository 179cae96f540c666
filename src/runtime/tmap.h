/* tmap.h - tensor-map parameters of a launch (the TMA operands of the
 * Hopper matmul and attention kernels, 2-D or 3-D): set up at load,
 * encoded with cuTensorMapEncodeTiled from the bound addresses at each
 * bind. */
#ifndef KF_RUNTIME_TMAP_H
#define KF_RUNTIME_TMAP_H

#include "runtime/rt.h"

/* Copies src's tensor-map descriptions into l and points argv past the
 * pointers at the maps (aligned as CUtensorMap); after l->argv is allocated with
 * room for them. KF_ERR_OUT_OF_MEMORY or KF_ERR_INTERNAL (a map of a value
 * that is not a parameter) with the message on the plan. */
kf_status rt_tmap_setup(rt_plan *plan, rt_launch *l, const cg_launch_src *src);
/* Encodes each map of l whose address changed since it was last encoded.
 * An address the copy engine cannot take (not 16-byte aligned) never gets
 * here: the bind runs the launch's form without maps for it
 * (fallback.c); should one, it is KF_ERR_INTERNAL with the reason. */
kf_status rt_tmap_encode(rt_plan *plan, const rt_driver *d, rt_launch *l);
/* Frees what rt_tmap_setup allocated; tolerates a launch without maps. */
void rt_tmap_free(rt_launch *l);

#endif
