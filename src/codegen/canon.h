/* canon.h - local names for generated code (canon.c): the numbered
 * identifiers codegen writes (p17, x17, red3, ...) renumbered from 0 in
 * order of appearance, so that two kernels alike up to the graph's node
 * numbering have one source, one cache key and one NVRTC compile. */
#ifndef KF_CG_CANON_H
#define KF_CG_CANON_H

#include <stdbool.h>
#include <stddef.h>

#include "core/strbuf.h"

/* Renames, in src->s from byte `from` on, every identifier made of one of
 * codegen's numbered stems (cg_canon_stem) and a number to the stem and
 * the rank of its first appearance; comments, string and character
 * literals and numbers are copied as they are. A consistent renaming among
 * names no code outside the range can refer to (the prelude has none of
 * these stems: tests/test_codegen_canon.c), so the program means the same
 * (its CUBIN is byte-identical). Appends to `legend` (may be NULL) the old
 * number of each renamed parameter: "p0 = %1, p1 = %17". False on out of
 * memory (src latches oom). */
bool cg_canon_names(core_str *src, size_t from, core_str *legend);

/* Whether an identifier of n bytes is a stem of the table and a number
 * (what cg_canon_names renames). */
bool cg_canon_stem(const char *id, size_t n);

#endif
