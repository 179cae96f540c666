/* cg_internal.h - the types the files of src/codegen share: the
 * generator's state (cg_gen), index contexts (cg_ctx) and a part (cg_part,
 * cg_emit_args). Each file's functions are declared in its own header. */
#ifndef KF_CG_INTERNAL_H
#define KF_CG_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/buf.h"
#include "codegen/codegen.h"

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
   * base % W == 0 (CONTIG), the same for every lane (SPLAT), the same
   * within each aligned run of S lanes (VC_SUB | S, S = 2 or 4: a broadcast
   * whose repeat count is a multiple of S but not of W), or neither. */
  int vclass;
  /* an expression fit neither its field nor a local (no generator to bind
   * it): cg_gen_value fails cleanly on such a context */
  bool overflow;
  bool oom; /* building an expression ran out of memory */
} cg_ctx;

enum { VC_GATHER = 0, VC_CONTIG = 1, VC_SPLAT = 2, VC_SUB = 16 };
/* S of a VC_SUB class (0 for the others) */
static inline int cg_vc_sub(int vclass) {
  return vclass & VC_SUB ? vclass & (VC_SUB - 1) : 0;
}

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
  /* VC_SUB contexts allowed: the lane loop's groups start at a multiple of
   * W and the pre block can load at e = i + s * S (pointwise bodies) */
  bool sub_splat;
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
  /* the attention modifier's fast form (KFUSE_ATTN_FAST_TANH): 16-bit tanh
   * as tanh.approx, and a 16-bit division by a constant as a product where
   * cg_div_const_exact says every input rounds the same */
  bool fast16;
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
  bool gemm80;         /* a matmul part on the mma.sync template */
  bool flash90;        /* an attention part on the Hopper kernel (takes tmaps too) */
  bool flash_decode;   /* an attention part on the split-key decode kernel */
  cg_tmap tmaps[CG_MAX_TMAPS];
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

#endif
