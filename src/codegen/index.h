/* index.h - the code of the index ops slice, concat, gather and iota
 * (index.c). */
#ifndef KF_CG_INDEX_H
#define KF_CG_INDEX_H

#include "codegen/cg_internal.h"

/* The index ops (slice, concat, gather, iota; index.c): their code at
 * context c, true; false for any other op. */
bool cg_gen_index(cg_gen *gen, const ir_node *n, const cg_ctx *c, char *name, size_t size);

#endif
