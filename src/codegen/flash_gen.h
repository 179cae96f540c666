/* flash_gen.h - generated pieces the attention kernels share (flash_gen.c):
 * operands' row addressing and the score modifier. */
#ifndef KF_CG_FLASH_GEN_H
#define KF_CG_FLASH_GEN_H

#include "codegen/cg_internal.h"

/* Appends "struct <fn>_<tag> { static long long row(bt, r) }" to out: the
 * element offset of row r (cols: column r, for k read through its
 * transpose) of operand v of product mm for the scores' batch entry bt,
 * through the kernel's layout ops. Returns the stored value it reads. */
int32_t cg_flash_row_struct(cg_gen *gen, const char *fn, const char *tag, const ir_node *mm,
                            int32_t v, bool cols, cg_buf *out);
/* Appends "float <fn>_mod(float kf_acc, bt, qi, ki, params)" to out: the
 * chain's value x at one score, the product bound to the f32 accumulator
 * rounded to the product's dtype. */
void cg_flash_modifier(cg_gen *gen, const cg_emit_args *a, const char *fn, cg_buf *out);

#endif
