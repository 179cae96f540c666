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
/* For a causal match, appends "<fn>_modv", the same chain with the
 * visibility condition bound to its visible value: for tiles whose every
 * score is visible (key <= query + off throughout), where the comparison
 * is known; false (nothing written) when the match is not causal. */
bool cg_flash_modifier_visible(cg_gen *gen, const cg_emit_args *a, const char *fn, cg_buf *out);

/* The parameter and row-struct names of an attention part's operands. */
typedef struct cg_flash_names {
  char q[16], k[16], v[16], o[16], qr[112], kr[112], vr[112];
} cg_flash_names;
/* The helpers both attention kernels call, into pre: <fn>_QR, <fn>_KR,
 * <fn>_VR (row(bt, r): the element offset of row r of head bt of q, k, v
 * in the stored tensor) and <fn>_mod (the modifier chain at one score);
 * stored[0..2]: the stored values of q, k and v (kernel parameters). */
void cg_flash_helpers(cg_gen *gen, const cg_emit_args *a, cg_buf *pre, int32_t stored[3]);
/* The names of q, k, v (the stored values the row structs read), the
 * output and the row structs of part p. */
void cg_flash_names_of(const cg_part *p, const fuse_attn *at, const int32_t stored[3],
                       cg_flash_names *n);
/* The logsumexp output of part a (a->k->attn.lse >= 0): appends to pre
 * "<fn>_lse(row, m, l, out)", which stores m + log(l) (a max of +-inf:
 * itself when the graph guards it, as kf_logsumexp does, else NaN) as
 * element `row` of the output, and writes to call the text of the
 * templates' `lse` hole: a statement that calls it when C expression cond
 * holds, for row `row`, the row's max m and sum l (expressions of the
 * template). Without a logsumexp both stay empty, so the default sources
 * are as they were. */
void cg_flash_lse(const cg_emit_args *a, cg_buf *pre, const char *cond, const char *row,
                  const char *m, const char *l, char *call, size_t callsize);
/* KF_OK when the target and the part can take an attention kernel (sm_80
 * or later, alone in its launch); else the error, its message in a->err. */
kf_status cg_flash_part_check(cg_emit_args *a);

#endif
