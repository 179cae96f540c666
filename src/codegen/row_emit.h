/* row_emit.h - the state of a row kernel's emitter and the loops every
 * phase writes (row_emit.c). Not thread-safe per row_emit; no errors of
 * their own: out of memory shows in the buffers' oom flags. */
#ifndef KF_CG_ROW_EMIT_H
#define KF_CG_ROW_EMIT_H

#include "codegen/row_plan.h"

typedef struct row_emit {
  cg_emit_args *a;
  row_info ri;
  cg_gen gen;
  cg_buf body, align;
  int64_t cols;
  /* block reductions of one row: how many, and the next one's index (they
   * alternate two halves of the shared scratch: see cg_row_red_call) */
  int n_red, i_red;
} row_emit;

/* The buffers of one pass over the row (cg_row_chunk_open/cg_row_chunk_close). */
typedef struct row_pass {
  cg_buf decl, pre, elems, after;
  cg_buf *saved; /* gen's code buffer before the pass */
} row_pass;

/* Opens a pass that reads value x over the row: element code then goes
 * into ps->elems, with x's context in c. */
void cg_row_pass_open(row_emit *re, row_pass *ps, const ir_node *x, cg_ctx *c);
/* Closes it, placing the pass's code into re->body. */
void cg_row_pass_close(row_emit *re, row_pass *ps);

/* Opens the chunk loop; element code then goes into gen at indent 4. */
void cg_row_chunk_open(row_emit *re, cg_buf *decl, cg_buf *pre);
/* Closes it into re->body and frees the four buffers. */
void cg_row_chunk_close(row_emit *re, cg_buf *decl, cg_buf *pre, cg_buf *elems, cg_buf *after);

/* The reduction struct of n's op (kf_red_max, kf_red_min, kf_red_sum). */
const char *cg_row_red_struct(const ir_node *n);
/* The letter of dt's shared scratch (kf_sm<f|d|i|l>). */
char cg_row_sm_letter(kf_dtype dt);
/* Whether a row's reductions alternate two halves of their scratch. */
bool cg_row_one_barrier(const core_knobs *k);

/* Appends to b the call that reduces `acc` over the row group (and the
 * cluster), of reduction r<t>, through shared scratch sm, into dst. */
void cg_row_red_call(row_emit *re, cg_buf *b, const char *dst, const char *r, const char *t,
                     const char *acc, const char *sm);

/* How element j of chunk kk of held input v is read (into out). */
void cg_row_held_read(int32_t v, bool fresh, char *out, size_t size);

/* Whether value v is bound (held or cached) at context key already. */
bool cg_row_bound(const cg_gen *gen, int32_t v, const char *key);

#endif
