/* yaml_scalar.h - strict readers for the typed values of a graph file, and
 * mapping keys (yaml_scalar.c). */
#ifndef KF_IR_YAML_SCALAR_H
#define KF_IR_YAML_SCALAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/yaml_load.h"

/* "a scalar", "a list", "a mapping". */
const char *ir_yl_kind(const ir_ynode *n);
/* A scalar's text as 'text' for messages: escaped, cut at 64 bytes. */
const char *ir_yl_show(const ir_yload *L, const ir_ynode *n, char *buf, size_t size);
/* Strict readers; each reports its own error (naming `what`). */
bool ir_yl_int(ir_yload *L, const ir_ynode *n, const char *what, int64_t lo, int64_t hi,
               int64_t *out);
bool ir_yl_number(ir_yload *L, const ir_ynode *n, const char *what, double *out);
bool ir_yl_bool(ir_yload *L, const ir_ynode *n, const char *what, bool *out);
bool ir_yl_dtype(ir_yload *L, const ir_ynode *n, const char *what, kf_dtype *out);
/* A list of at most KF_MAX_RANK integers in [lo, hi]. */
bool ir_yl_int_list(ir_yload *L, const ir_ynode *n, const char *what, int64_t lo, int64_t hi,
                    int64_t *out, int *count);
/* A tensor shape: positive dimensions (and at most one -1 when allow_infer),
 * rank <= KF_MAX_RANK, element count within int64. */
bool ir_yl_shape(ir_yload *L, const ir_ynode *n, const char *what, bool allow_infer, int64_t *out,
                 int *rank);
/* Literal checks without reporting: a number (plain decimal, .inf, .nan) or
 * plain true/false. */
bool ir_yl_is_number(const ir_yload *L, const ir_ynode *n, double *out);
/* For a literal n (already read as v) that becomes a constant of integer
 * dtype dt: beyond 2^53 a double skips integers, so such a literal must be
 * plain decimal digits whose value v holds exactly; otherwise a positioned
 * KF_ERR_PARSE. Other dtypes and smaller values pass (kf_scalar applies the
 * rest of the literal rule). */
bool ir_yl_exact_int(ir_yload *L, const ir_ynode *n, const char *what, double v, kf_dtype dt);
/* The rule ir_yl_exact_int applies, shared with the saver (which writes such
 * a value in plain digits): an integer dtype and a magnitude of 2^53 or more,
 * where a double no longer holds every integer. */
bool ir_yl_digits_only(double v, kf_dtype dt);
/* A plain scalar that starts like a number (digit, sign or dot): no name can. */
bool ir_yl_looks_numeric(const ir_yload *L, const ir_ynode *n);
/* A name's syntax and length; reports and returns false when bad. */
bool ir_yl_check_name(ir_yload *L, const ir_ynode *n, const char *what);
/* The value of key in a mapping, or NULL. */
const ir_ynode *ir_yl_get(const ir_yload *L, const ir_ynode *map, const char *key);
/* Every key a scalar, one of allowed, and none repeated; reports the first
 * offender, with a "did you mean" from prefer (the keys that fit best, such
 * as an op's own attributes) or else from allowed. */
bool ir_yl_keys(ir_yload *L, const ir_ynode *map, const char *const *allowed, int n_allowed,
                const char *const *prefer, int n_prefer);
/* "; did you mean 'x'?" into buf when a name of first (or, when none of
 * those is close, of then) is close to word (core/similar.h); false and ""
 * otherwise. */
bool ir_yl_hint(const char *word, const char *const *first, int n_first, const char *const *then,
                int n_then, char *buf, size_t size);

#endif /* KF_IR_YAML_SCALAR_H */
