/* row_emit_phase.h - a row kernel's reduction phases (row_emit_phase.c).
 * Failures go to re->gen (cg_gen_fail, cg_gen_oom). */
#ifndef KF_CG_ROW_EMIT_PHASE_H
#define KF_CG_ROW_EMIT_PHASE_H

#include "codegen/row_emit.h"

/* One phase into re->body: the reduction of node v over the row, bound to
 * red<v> for what follows. */
void cg_row_emit_phase(row_emit *re, int32_t v);

/* Reductions first and second in one pass (online softmax or Welford). */
void cg_row_emit_online(row_emit *re, int32_t first, int32_t second, row_online_kind kind);

#endif
