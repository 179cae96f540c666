/* gemm_sm80.h - the mma.sync matmul template (gemm_sm80.c): whether a
 * matmul kernel fits it on this target, its plan and its part function. */
#ifndef KF_CG_GEMM_SM80_H
#define KF_CG_GEMM_SM80_H

#include <stdbool.h>
#include <stddef.h>

#include "codegen/cg_internal.h"

/* Whether the matmul kernel fits the template on this target (else why
 * not, into why). It does not look at the sm_90 template: the caller asks
 * that one first. */
bool cg_gemm80_fits(const cg_emit_args *a, char *why, size_t size);
/* Chooses threads/blocks/shared memory (part->threads, ...) without
 * emitting. */
kf_status cg_plan_gemm80(cg_emit_args *a);
/* Emits the part function. */
kf_status cg_emit_gemm80(cg_emit_args *a);

#endif
