/* occupancy.h - reading back a loaded kernel's occupancy (occupancy.c). */
#ifndef KF_RUNTIME_OCCUPANCY_H
#define KF_RUNTIME_OCCUPANCY_H

#include "runtime/rt.h"

/* Reads launch l's function attributes and occupancy into its occ (l:
 * one of the plan's launches, or one's fallback form). */
kf_status rt_occupancy_measure(rt_plan *plan, rt_launch *l);
/* Each candidate's parts: loads, measures and unloads the launches of
 * (fp, code), a re-planned and compiled copy, that compute its home nodes;
 * keeps the part with the least occupancy in c->rec.lowest (rec.n_parts
 * counts them). Candidates already known are skipped. */
void rt_occupancy_measure_parts(kf_ctx *ctx, rt_state *rt, const fuse_plan *fp,
                                const struct cg_program *code, fuse_occ_cand *c, int nc);

#endif
