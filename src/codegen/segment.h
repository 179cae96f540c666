/* segment.h - a long pointwise body cut into out-of-line segment functions,
 * so that NVRTC's time stays linear in the body's length. */
#ifndef KF_CG_SEGMENT_H
#define KF_CG_SEGMENT_H

#include <stdbool.h>

#include "codegen/cg_internal.h"

/* Bodies of fewer definitions than this are left whole (every graph of
 * ordinary size: its source does not change). */
#define CG_SEGMENT_MIN 256
/* Definitions per segment function. */
#define CG_SEGMENT_LEN 64

/* When body (the lines of one element's code: "const T tN = expr;" and
 * others) holds at least CG_SEGMENT_MIN definitions, and every definition
 * names only temporaries defined before it in body, the element index e,
 * the part's pointers and kf_ functions, cuts each run of consecutive
 * definitions into __noinline__ functions of at most CG_SEGMENT_LEN (named
 * fn_s0, fn_s1, ...; appended to out with the KF_SEGMENTED marker) and
 * replaces the run with their calls. The values and the operations are
 * the same; only where they are computed changes. true when cut; false
 * leaves body as it was. An allocation failure latches out->oom. */
bool cg_segment_body(const kf_graph *g, const cg_part *p, const char *fn, const char *idx,
                     cg_buf *body, cg_buf *out);

#endif
