/* matmul.h - a matmul kernel's part (matmul.c): its plan and its part
 * function. */
#ifndef KF_CG_MATMUL_H
#define KF_CG_MATMUL_H

#include "codegen/cg_internal.h"

/* Chooses threads/blocks (part->threads, part->blocks) without emitting. */
kf_status cg_plan_matmul(cg_emit_args *a);
/* Emits the part function once part->launch_threads is known. */
kf_status cg_emit_matmul(cg_emit_args *a);

/* The matmul node of a matmul kernel (its id in *id), or NULL. */
const ir_node *cg_find_matmul(const cg_emit_args *a, int32_t *id);
/* A paired kernel's second product (fuse_kernel.paired: the matmul other
 * than `first`, its id in *id2), or NULL. */
const ir_node *cg_find_matmul2(const cg_emit_args *a, int32_t first, int32_t *id2);
/* The matmul kernel's epilogue into gen->code: the product bound to the
 * f32 variable `acc`, each output computed and stored at (bt, row, col),
 * lines indented by `indent`. */
void cg_matmul_epilogue(cg_gen *gen, const cg_emit_args *a, const ir_node *mm, int32_t id,
                        int indent);
/* The context of operand x ([..., R, C]) of product mm at row rv and
 * column cv, its batch coordinates broadcast from mm's (a batch axis of
 * extent 1 is one matrix for all); the flash kernel's operands too. */
void cg_matmul_operand_ctx(const ir_node *mm, const ir_node *x, const char *rv, const char *cv,
                           cg_ctx *c);

#endif
