/* cg_internal.h - what the files of src/codegen share: a growable string,
 * template filling, the value-expression generator and the per-kind
 * emitters that each write one "part" function. */
#ifndef KF_CG_INTERNAL_H
#define KF_CG_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/codegen.h"
#include "core/strbuf.h"

/* ---- growable strings ------------------------------------------------------ */

/* Generated source is written into the library's growing string
 * (src/core/strbuf.h); these are its names in codegen. */
typedef core_str cg_buf;
#define cg_puts core_str_puts
#define cg_putn core_str_putn
#define cg_printf core_str_printf
#define cg_vprintf core_str_vprintf
#define cg_buf_free core_str_free
#define cg_buf_take core_str_take
#define cg_use core_str_use
/* The guard an `align` buffer of " && kf_aligned(...)" terms gives (its
 * text past the first " && ", or "true" when empty), through cg_use. */
const char *cg_use_aligned(cg_buf *into, const cg_buf *align);

/* ---- templates ----------------------------------------------------------------- */

/* The text of templates/<name>: from KFUSE_TEMPLATE_DIR when set (read
 * each call, for development), else the embedded copy. malloc'd; NULL when
 * missing (err says why). */
char *cg_template_text(const char *name, char *err, size_t errsize);

/* One named hole and its replacement. */
typedef struct cg_hole {
  const char *name;
  const char *text;
} cg_hole;

/* Appends template `name` to out with every "{{hole}}" replaced. An unknown
 * hole in the template, or a missing template, is an error (false, err). */
bool cg_fill(cg_buf *out, const char *name, const cg_hole *holes, int n_holes, char *err,
             size_t errsize);

/* ---- types --------------------------------------------------------------------- */

/* Storage type in memory ("kf_bf16", "float", ...) and compute type in
 * registers ("float" for f16/bf16/f32). */
const char *cg_storage_type(kf_dtype dt);
const char *cg_compute_type(kf_dtype dt);

/* ---- the per-launch generation state -------------------------------------------- */

/* A pointer parameter of a part function: one graph value. */
typedef struct cg_pparam {
  int32_t value;
  bool written;
} cg_pparam;

/* How a value's index is known while generating an element's code: a
 * linear (row-major) index expression over `shape`, and/or coordinate
 * expressions. Either may be missing and is derived from the other. An
 * expression too long for its field is bound to a local index variable
 * ("ixN", cg_ctx_put) and the field holds its name, so that expressions
 * stay bounded however many layout ops a value is reached through. */
enum { CG_LIN_CAP = 256, CG_COORD_CAP = 192 };
typedef struct cg_ctx {
  int rank;
  int64_t shape[KF_MAX_RANK];
  char lin[CG_LIN_CAP];                  /* "" when unknown */
  char coord[KF_MAX_RANK][CG_COORD_CAP]; /* "" when unknown */
  /* Vector analysis: within a group of W consecutive iteration elements
   * (the first W-aligned), this value's linear index is base + lane with
   * base % W == 0 (CONTIG), the same for every lane (SPLAT), or neither. */
  int vclass;
  /* an expression fit neither its field nor a local (no generator to bind
   * it): cg_gen_value fails cleanly on such a context */
  bool overflow;
  bool oom; /* building an expression ran out of memory */
} cg_ctx;

enum { VC_GATHER = 0, VC_CONTIG = 1, VC_SPLAT = 2 };

/* What an element's code may read instead of evaluating a node. */
typedef struct cg_bind {
  int32_t value;
  char key[512]; /* the context it holds for ("" = any) */
  char expr[64]; /* a variable or register element */
} cg_bind;

/* One element body being generated: statements go to `code`, computed
 * values are remembered (by value and context) so each is computed once. */
typedef struct cg_gen {
  const kf_graph *g;
  const fuse_kernel *k;
  cg_buf *code;
  int indent;
  int tmp;         /* next temporary number */
  const char *idx; /* index type name: "int" or "long long" */
  int vec;         /* W of the body being generated (1: scalar) */
  /* memo of computed (value, context) -> temporary */
  /* raw: the value before its final rounding to the node's dtype, for a
   * store that rounds anyway (NULL: none) */
  /* cost: the ops a later pass would spend computing it again from what is
   * bound (held and cached registers, per-row values), counted as a tree
   * and saturated (cg_gen_value sets last_cost to the value's) */
  struct cg_memo {
    int32_t value;
    char *key;
    int tmp;
    char *raw;
    int cost;
  } * memo;
  int n_memo, cap_memo;
  int last_cost;
  /* how a division by a per-row value is emitted: kf_div_rcp with its
   * per-element fallback (PLAIN); kf_div_rcpf, flagging a NaN quotient in
   * kf_bad instead (FLAG); or for the flagged chunk's second computation,
   * kf_div_rcp of kf_fresh(x) (REDO) */
  enum { CG_DIV_PLAIN, CG_DIV_FLAG, CG_DIV_REDO } div_mode;
  /* values bound to variables (reduction results, preloaded registers) */
  cg_bind *binds;
  int n_binds, cap_binds;
  /* vector-loaded inputs needed before the lane loop */
  cg_buf *pre;      /* NULL: no vector preloads (every load scalar) */
  cg_buf *pre_decl; /* declarations of the preloaded registers */
  cg_buf *align;    /* " && kf_aligned(p3, 16)" for each vector access */
  int n_pre;
  /* index expressions bound to locals ("long long ixN; ixN = ...;",
   * cg_ctx_put), by text: reset with the memo, whose scope they share */
  struct cg_ixb {
    char *expr;
    int tmp;
  } * ixb;
  int n_ixb, cap_ixb;
  bool failed;
  kf_status status; /* of the failure: KF_ERR_UNSUPPORTED, or out of memory */
  char err[256];
} cg_gen;

void cg_gen_init(cg_gen *gen, const kf_graph *g, const fuse_kernel *k, cg_buf *code,
                 const char *idx);
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

/* Contexts. */
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
 * rows and columns, or outer, reduced and inner. */
void cg_ctx_groups(cg_ctx *c, int rank, const int64_t *shape, int ngroups, const int *bounds,
                   const char *const *vars, int vclass);
/* A context over shape whose dims each belong to one of the vars
 * (group[d] indexes vars), in any order: var g is a row-major index over
 * the dims of group g. A reduction over axes that do not merge (sum over
 * axes 0 and 2 of [A,B,C]): outer, reduced and inner interleave. */
void cg_ctx_assign(cg_ctx *c, int rank, const int64_t *shape, const int *group,
                   const char *const *vars, int vclass);

/* Generates the computation of value v at context c; returns the name of the
 * temporary (or bound variable) holding it, in v's compute type. */
const char *cg_gen_value(cg_gen *gen, int32_t v, const cg_ctx *c, char *name, size_t size);
/* The index ops (slice, concat, gather, iota; index.c): their code at
 * context c, true; false for any other op. */
bool cg_gen_index(cg_gen *gen, const ir_node *n, const cg_ctx *c, char *name, size_t size);
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

/* ---- part emitters ------------------------------------------------------------ */

/* The result of emitting one kernel as a part: the device function
 * "<fn>(int bid, params...)" appended to `out`, how many blocks and threads
 * it wants, its shared memory, its index decisions. */
typedef struct cg_part {
  const fuse_kernel *k;
  char fn[96];
  cg_pparam *params;
  int n_params;
  uint32_t blocks, threads, smem;
  uint32_t max_blocks; /* most blocks the part may take: its share of the
                          launch's cg_target.max_grid (set before planning) */
  int64_t vblocks;     /* blocks of work the body is written for; more than
                          blocks: each block runs bid, bid + blocks, ...
                          (cg_part_call) */
  int launch_threads;  /* the launch's block size, for barriers */
  int64_t max_offset;
  bool index64;
  int vec_bytes;       /* widest access, bytes */
  int lanes;           /* elements per thread and group (pointwise W) */
  int min_blocks;      /* > 0: resident blocks per SM asked of ptxas
                          (__launch_bounds__ second argument; one-part launches) */
  bool alone;          /* the only part of its launch (set before planning) */
  int cluster;         /* > 1: blocks per thread block cluster (a split row,
                          one-part launches: __cluster_dims__ on the entry) */
  bool persistent;     /* strides by gridDim.x: see cg_launch_src.persistent */
  bool l2_prefetch;    /* reads kf_l2pf_rows: see cg_launch_src.l2_prefetch */
  bool tiled;          /* a pointwise part planned as a tiled transpose */
  bool gemm90;         /* a matmul part on the Hopper template: takes the
                          tensor maps tmaps (cg_launch_src.tmaps) */
  cg_tmap tmaps[2];
  int n_tmaps;
  char decisions[512]; /* for the header comment */
} cg_part;

typedef struct cg_emit_args {
  const kf_graph *g;
  const fuse_kernel *k;
  const cg_target *t;
  cg_part *part;
  cg_buf *out;
  char *err;
  size_t errsize;
} cg_emit_args;

/* Chooses threads/blocks (part->threads, part->blocks) without emitting. */
kf_status cg_plan_pointwise(cg_emit_args *a);
kf_status cg_plan_row(cg_emit_args *a);
kf_status cg_plan_reduce(cg_emit_args *a);
kf_status cg_plan_matmul(cg_emit_args *a);
/* Emits the part function once part->launch_threads is known. */
kf_status cg_emit_pointwise(cg_emit_args *a);
kf_status cg_emit_row(cg_emit_args *a);
kf_status cg_emit_reduce(cg_emit_args *a);
kf_status cg_emit_matmul(cg_emit_args *a);
/* The matmul node of a matmul kernel (its id in *id), or NULL. */
const ir_node *cg_find_matmul(const cg_emit_args *a, int32_t *id);
/* The matmul kernel's epilogue into gen->code: the product bound to the
 * f32 variable `acc`, each output computed and stored at (bt, row, col),
 * lines indented by `indent`. */
void cg_matmul_epilogue(cg_gen *gen, const cg_emit_args *a, const ir_node *mm, int32_t id,
                        int indent);
/* The Hopper template (gemm_sm90.c): whether the matmul kernel fits it on
 * this target (else why not, into why), planning, emitting. */
bool cg_gemm90_fits(const cg_emit_args *a, char *why, size_t size);
kf_status cg_plan_gemm90(cg_emit_args *a);
kf_status cg_emit_gemm90(cg_emit_args *a);
/* A pointwise part as a generic body that identical parts of a horizontal
 * launch share (pointwise.c): planned with fixed 256-thread blocks of a few
 * vector iterations each; emitted with NUMEL and BLOCKS as run-time
 * arguments before the pointers ("unsigned bid, IDX kf_n, unsigned kf_nb,
 * p0, p1, ...") and every parameter name positional, so two parts' texts
 * are equal exactly when one function serves both. */
kf_status cg_plan_pointwise_generic(cg_emit_args *a);
kf_status cg_emit_pointwise_generic(cg_emit_args *a);
/* A key of a planned generic part's text, appended to key as raw bytes
 * (compare key.len and the bytes): parts with equal keys get equal generic
 * texts, so a horizontal launch emits one text per key (a 200-part launch:
 * one emission instead of 200). Only for parts whose every tensor and node
 * has the kernel's shape and no layout op (then shapes reach the text only
 * through the run-time element count); false (key unusable) otherwise. */
bool cg_pointwise_generic_key(const kf_graph *g, const cg_part *p, cg_buf *key);
/* Rough size of one element's code (sin, cos, pow 8; exp, log, tanh, ... 2;
 * other ops 1): how many inlined copies of a body are affordable. */
int cg_body_cost(const kf_graph *g, const fuse_kernel *k);
/* What cg_emit_pointwise_generic sets on a planned generic part besides
 * the text (decisions, vec_bytes), for a part whose text is reused. */
void cg_pointwise_generic_done(const kf_graph *g, cg_part *p);
/* A pointwise kernel's lanes per thread: 16 bytes of its smallest
 * full-size tensor, at most 8, fewer for heavy bodies (pointwise.c). */
int cg_pointwise_lanes(const kf_graph *g, const fuse_kernel *k);
/* Tiled transposes (transpose.c): whether pointwise kernel k is one
 * (fuser/tile.h's rule), and its plan and part function. */
bool cg_transpose_tiled(const kf_graph *g, const fuse_kernel *k);
kf_status cg_plan_transpose(cg_emit_args *a);
kf_status cg_emit_transpose(cg_emit_args *a);
/* Emits one part of any kind (emit.c). */
kf_status cg_emit_part(cg_emit_args *a);
/* hpack.c: the launch of n planned parts as shared generic bodies, when at
 * least two parts are identical pointwise kernels and every pointer fits in
 * one packed parameter; *done false otherwise (nothing emitted). Appends
 * the part functions to body, the parameter struct and tables to decls,
 * and fills the entry's params and route, and out's shape and params. */
kf_status cg_emit_packed(const kf_graph *g, const cg_target *t, cg_part *parts, int n, cg_buf *body,
                         cg_buf *decls, cg_buf *params, cg_buf *route, cg_launch_src *out,
                         bool *done, char *err, size_t errsize);

/* The part's pointer parameters: inputs then outputs, in ascending value
 * order (malloc'd into part). false on OOM. */
bool cg_part_params(cg_part *part);
/* "const float *__restrict__ p3, kf_bf16 *__restrict__ p7" into out. */
void cg_param_decls(const kf_graph *g, const cg_part *part, cg_buf *out);
/* "p3, p7": the part's parameter names, for calls. */
void cg_param_args(const cg_part *part, cg_buf *out);
/* Whether two shapes (rank, dims) are the same. */
bool cg_same_shape(int ra, const int64_t *a, int rb, const int64_t *b);
/* Index type decision: 64-bit when max_offset does not fit in int32. */
const char *cg_index_type(int64_t max_offset, bool *index64);
/* A part whose body takes one block per unit of work (reduce, matmul):
 * vblocks = want, blocks = want clamped to max_blocks. */
void cg_part_grid(cg_part *p, int64_t want);
/* A part whose body strides over its work by its own block count
 * (pointwise, row): blocks = want clamped to max_blocks, no loop. */
void cg_part_grid_stride(cg_part *p, int64_t want);
/* The type of a part function's block parameter: "unsigned", or "long
 * long" when the part loops (so generated code for shapes that fit one
 * grid stays as it was). */
const char *cg_part_bid_type(const cg_part *p);
/* Appends the call of part p for block expression bid ("blockIdx.x - 4u")
 * with arguments args: "fn(bid, args);", or, when p->vblocks > p->blocks,
 * a loop over bid, bid + blocks, ... below vblocks with a barrier between
 * rounds (the body reuses its shared memory). indent prefixes the lines of
 * the loop after its first. */
void cg_part_call(cg_buf *out, const cg_part *p, const char *bid, const char *args,
                  const char *indent);

int64_t cg_min64(int64_t a, int64_t b);
int64_t cg_ceil_div(int64_t a, int64_t b);

#endif
