/* row_emit_out.h - a row kernel's output phases (row_emit_out.c).
 * Failures go to re->gen (cg_gen_fail, cg_gen_oom). */
#ifndef KF_CG_ROW_EMIT_OUT_H
#define KF_CG_ROW_EMIT_OUT_H

#include "codegen/row_emit.h"

/* The final phase into re->body: the full-row outputs, W per store. */
void cg_row_emit_outputs(row_emit *re);

/* The per-row outputs (one value per row), stored by each group's first
 * lane. */
void cg_row_emit_row_outputs(row_emit *re);

#endif
