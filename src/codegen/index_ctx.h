/* index_ctx.h - index contexts (index_ctx.c): building them and reading
 * their linear index, coordinates and memo key. */
#ifndef KF_CG_INDEX_CTX_H
#define KF_CG_INDEX_CTX_H

#include "codegen/cg_internal.h"

/* A context over shape from its linear index expression lin. */
void cg_ctx_linear(cg_ctx *c, int rank, const int64_t *shape, const char *lin, int vclass);
/* Stores expr into c as its linear index (d < 0) or coordinate d. When it
 * does not fit the field, gen binds it to a local emitted at the current
 * point ("long long ixN; ixN = expr;", one per text and memo scope) and
 * the field holds the name, and c's loads become scalar (a vector preload
 * runs before the lane loop, where no local of the loop exists). Without a
 * generator (gen NULL) the field is left unknown when the other form is
 * complete (it is derived when needed), else c->overflow is set. */
void cg_ctx_put(cg_gen *gen, cg_ctx *c, int d, const char *expr);
/* The memo key of context c, appended to key (no length limit). */
void cg_ctx_key_s(const cg_ctx *c, cg_buf *key);
/* The same into a fixed buffer, without allocating: false (and key "?",
 * which matches no context) when it did not fit. */
bool cg_ctx_key(const cg_ctx *c, char *key, size_t size);
/* The linear index expression (derived from coordinates when needed),
 * appended to out. */
void cg_ctx_lin_s(const cg_ctx *c, cg_buf *out);
/* The same into a fixed buffer, without allocating: false when it did not
 * fit. */
bool cg_ctx_lin(const cg_ctx *c, char *out, size_t size);
/* Coordinate d (derived from the linear index when needed), appended. */
void cg_ctx_coord(const cg_ctx *c, int d, cg_buf *out);
/* The context of an operand of shape (rank, shape) broadcast into c. */
void cg_ctx_broadcast(cg_gen *gen, const cg_ctx *c, int rank, const int64_t *shape, cg_ctx *out);
/* The context of a transpose's operand (shape in_shape) from the result's. */
void cg_ctx_transpose(cg_gen *gen, const cg_ctx *c, int rank, const int64_t *in_shape,
                      const int8_t *perm, cg_ctx *out);
/* A context over shape whose dims split into ngroups consecutive groups
 * (bounds[0] = 0 .. bounds[ngroups] = rank), group g indexed by vars[g]:
 * rows and columns, or outer, reduced and inner. Dims from
 * bounds[ngroups] on, when it is below rank, get no coordinate and add
 * nothing to the linear index (a matmul's batch: element (bt, 0, 0)). */
void cg_ctx_groups(cg_ctx *c, int rank, const int64_t *shape, int ngroups, const int *bounds,
                   const char *const *vars, int vclass);
/* A context over shape whose dims each belong to one of the vars
 * (group[d] indexes vars), in any order: var g is a row-major index over
 * the dims of group g. A reduction over axes that do not merge (sum over
 * axes 0 and 2 of [A,B,C]): outer, reduced and inner interleave. */
void cg_ctx_assign(cg_ctx *c, int rank, const int64_t *shape, const int *group,
                   const char *const *vars, int vclass);

#endif
