/* hpack.h - a horizontal launch whose identical parts share generic bodies
 * (hpack.c). */
#ifndef KF_CG_HPACK_H
#define KF_CG_HPACK_H

#include "codegen/cg_internal.h"

/* hpack.c: the launch of n planned parts as shared generic bodies, when at
 * least two parts are identical pointwise kernels and every pointer fits in
 * one packed parameter; *done false otherwise (nothing emitted). Appends
 * the part functions to body, the parameter struct and tables to decls,
 * and fills the entry's params and route, and out's shape and params. */
kf_status cg_emit_packed(const kf_graph *g, const cg_target *t, cg_part *parts, int n, cg_buf *body,
                         cg_buf *decls, cg_buf *params, cg_buf *route, cg_launch_src *out,
                         bool *done, char *err, size_t errsize);

#endif
