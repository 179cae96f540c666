/* row_prefetch.h - a held row kernel's prefetches (row_prefetch.c). */
#ifndef KF_CG_ROW_PREFETCH_H
#define KF_CG_ROW_PREFETCH_H

#include "codegen/row_emit.h"

/* With KFUSE_ROW_PREFETCH=1: the per-column inputs into L1 (into re->body,
 * after the held loads). */
void cg_row_prefetch_columns(row_emit *re);

/* At the end of a held row's block: the row some rows ahead into L2 (sm_90;
 * sets re->a->part->l2_prefetch when the runtime sets the distance). */
void cg_row_prefetch_next_rows(row_emit *re);

#endif
