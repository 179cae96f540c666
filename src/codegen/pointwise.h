/* pointwise.h - a pointwise kernel's part (pointwise.c): plain and generic
 * (shared by the identical parts of a horizontal launch). */
#ifndef KF_CG_POINTWISE_H
#define KF_CG_POINTWISE_H

#include "codegen/cg_internal.h"

/* Chooses threads/blocks (part->threads, part->blocks) without emitting. */
kf_status cg_plan_pointwise(cg_emit_args *a);
/* Emits the part function once part->launch_threads is known. */
kf_status cg_emit_pointwise(cg_emit_args *a);
/* A pointwise part as a generic body that identical parts of a horizontal
 * launch share (pointwise.c): planned with fixed 256-thread blocks of a few
 * vector iterations each; emitted with NUMEL and BLOCKS as run-time
 * arguments before the pointers ("unsigned bid, IDX kf_n, unsigned kf_nb,
 * p0, p1, ...") and every parameter name positional, so two parts' texts
 * are equal exactly when one function serves both. */
kf_status cg_plan_pointwise_generic(cg_emit_args *a);
kf_status cg_emit_pointwise_generic(cg_emit_args *a);
/* A key of a planned generic part's text, appended to key as raw bytes
 * (compare key.len and the bytes): parts with equal keys get equal generic
 * texts, so a horizontal launch emits one text per key (a 200-part launch:
 * one emission instead of 200). Only for parts whose every tensor and node
 * has the kernel's shape and no layout op (then shapes reach the text only
 * through the run-time element count); false (key unusable) otherwise. */
bool cg_pointwise_generic_key(const kf_graph *g, const cg_part *p, cg_buf *key);
/* Rough size of one element's code (sin, cos, pow 8; exp, log, tanh, ... 2;
 * other ops 1): how many inlined copies of a body are affordable. */
int cg_body_cost(const kf_graph *g, const fuse_kernel *k);
/* What cg_emit_pointwise_generic sets on a planned generic part besides
 * the text (decisions, vec_bytes), for a part whose text is reused. */
void cg_pointwise_generic_done(const kf_graph *g, cg_part *p);
/* A pointwise kernel's lanes per thread: 16 bytes of its smallest
 * full-size tensor, at most 8, fewer for heavy bodies (pointwise.c). */
int cg_pointwise_lanes(const kf_graph *g, const fuse_kernel *k);

#endif
