/* expr.h - the code of one element (expr.c): the generator (cg_gen,
 * cg_internal.h), the value of a node at an index context, types, literals
 * and names. */
#ifndef KF_CG_EXPR_H
#define KF_CG_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "codegen/cg_internal.h"

/* Storage type in memory ("kf_bf16", "float", ...) and compute type in
 * registers ("float" for f16/bf16/f32). */
const char *cg_storage_type(kf_dtype dt);
const char *cg_compute_type(kf_dtype dt);
/* A generator writing into code, for kernel k of g, index type idx; freed
 * with cg_gen_free. */
void cg_gen_init(cg_gen *gen, const kf_graph *g, const fuse_kernel *k, cg_buf *code,
                 const char *idx);
/* Forgets the computed values (a new scope of the generated code). */
void cg_gen_reset_memo(cg_gen *gen);
void cg_gen_free(cg_gen *gen);
/* Records the first failure: a kernel codegen cannot emit (UNSUPPORTED). */
void cg_gen_fail(cg_gen *gen, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records an allocation failure (KF_ERR_OUT_OF_MEMORY), so that it is not
 * reported as a kernel codegen cannot emit. */
void cg_gen_oom(cg_gen *gen);
/* Binds value v under context key (NULL: any context) to expr. */
void cg_gen_bind(cg_gen *gen, int32_t v, const char *key, const char *expr);
/* Emits a statement line at the current indentation. */
void cg_line(cg_gen *gen, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Generates the computation of value v at context c; returns the name of the
 * temporary (or bound variable) holding it, in v's compute type. */
const char *cg_gen_value(cg_gen *gen, int32_t v, const cg_ctx *c, char *name, size_t size);
/* The same, for a store of output v in v's dtype: where v was rounded to
 * its f16/bf16 dtype where computed, the value before that rounding (the
 * store rounds it the same way: one conversion instead of two). */
const char *cg_gen_stored(cg_gen *gen, int32_t v, const cg_ctx *c, char *name, size_t size);
/* A literal of dt's compute type holding v exactly ("1.5f", "(-3)"). */
void cg_literal(kf_dtype dt, double v, char *out, size_t size);
/* A parameter name for value v: "p<v>". */
void cg_param_name(int32_t v, char *out, size_t size);
/* Whether a node is computed inside the kernel (listed in k->nodes). */
bool cg_in_kernel(const fuse_kernel *k, int32_t v);
bool cg_is_input(const fuse_kernel *k, int32_t v);

#endif
