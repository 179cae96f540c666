/* plan.h - what the fusion pass produces and code generation consumes: the
 * kernels (groups of nodes computed in one pass over memory), how they are
 * packed into launches, where intermediate values live, and why. */
#ifndef KF_FUSER_PLAN_H
#define KF_FUSER_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "fuser/attention.h"
#include "fuser/gemm_match.h"
#include "ir/ir.h"

typedef enum fuse_kind {
  FK_POINTWISE, /* one iteration space; layout ops by index arithmetic */
  FK_ROW,       /* persistent reduction(s) over the innermost axis */
  FK_REDUCE,    /* reduction over other axes or all, prologue + epilogue */
  FK_MATMUL,    /* a GEMM with an optional pointwise epilogue */
  FK_ATTENTION  /* softmax(modified q kt) v in one flash kernel (attention.h) */
} fuse_kind;

/* One kernel: a group of nodes computed together. Values in `inputs` are
 * read from device memory (graph inputs or outputs of earlier kernels);
 * values in `outputs` are written to device memory (graph outputs, or
 * values that a later kernel reads: those live in the workspace). Constants
 * are folded into the code and are never inputs. */
typedef struct fuse_kernel {
  int id;
  fuse_kind kind;
  char name[48];  /* "k3_row", unique in the plan */
  int32_t *nodes; /* computed here, topological order (no inputs) */
  int32_t n_nodes;
  int32_t *inputs; /* value indices, ascending */
  int32_t n_inputs;
  int32_t *outputs; /* value indices, ascending */
  int32_t n_outputs;
  /* The iteration space. POINTWISE: the shape every output has (outputs
   * share one element count). ROW: rows x cols, cols = the reduced innermost
   * extent. REDUCE: outer x reduced x inner after merging adjacent axes of
   * the reduction's input (inner == 1 means contiguous, e.g. a full sum).
   * MATMUL: batch x m x n x k. */
  int rank;
  int64_t shape[KF_MAX_RANK];
  int64_t numel;             /* elements of the iteration space */
  int64_t rows, cols;        /* ROW */
  int64_t outer, red, inner; /* REDUCE */
  int64_t batch, m, n, k;    /* MATMUL */
  /* Cost, counted as the fewest bytes this kernel must move. */
  int64_t bytes_read, bytes_written, flops;
  int launch; /* index into fuse_plan.launches */
  int depth;  /* longest path from a graph input, in kernels */
  /* Extensions (fuser). roles[i] and recomputed[i] describe nodes[i]. */
  uint8_t *roles;      /* fuse_role of each node */
  uint8_t *recomputed; /* 1: a cheap copy of a node whose home kernel is
                          kernel_of[node]; this kernel recomputes it from
                          graph inputs instead of reading it from memory */
  uint8_t red_axes;    /* ROW/REDUCE: reduced axes of `shape` (bit i = axis i) */
  bool red_strided;    /* REDUCE: the reduced axes are not adjacent; outer is
                          the kept extent before the first reduced axis,
                          inner the kept extent after it */
  int32_t n_epilogue;  /* MATMUL: pointwise nodes fused after the GEMM */
  bool paired;         /* MATMUL: two products of one A (fuse_options.gemm_pair):
                          the first and second matmul of nodes, m n k each's */
  int64_t blocks;      /* estimated thread blocks, to judge horizontal packing */
  /* MATMUL in a plan built with fuse_options.matmul_library: the kernel is
   * one library call, described by gemm (fuse_gemm_match); it has a launch
   * of its own and no generated code. */
  bool library;
  fuse_gemm gemm;
  /* ATTENTION: the match (fuse_attn_match); batch, m (Sq), n (Dv) and k
   * (Sk) above are its extents. */
  fuse_attn attn;
} fuse_kernel;

/* One launch: one kernel, or several independent ones packed horizontally
 * (their block ranges routed to each part). */
typedef struct fuse_launch {
  int32_t *kernels; /* kernel ids */
  int32_t n_kernels;
  bool horizontal;     /* n_kernels > 1 */
  int32_t param_bytes; /* 8 per distinct device pointer of its parts */
} fuse_launch;

/* Where a value that lives in device memory is kept. Graph inputs and
 * outputs are the caller's tensors; every other memory value lives in the
 * workspace at `offset` (256-byte aligned). */
typedef enum fuse_home { HOME_INPUT, HOME_OUTPUT, HOME_WORKSPACE } fuse_home;

typedef struct fuse_buffer {
  int32_t value;
  fuse_home home;
  int index;      /* HOME_INPUT / HOME_OUTPUT: position in the graph's list */
  int64_t offset; /* HOME_WORKSPACE */
  int64_t bytes;
  int first_launch; /* written by */
  int last_launch;  /* last read by */
} fuse_buffer;

/* A merge that was considered, taken or refused, with the rule that
 * decided it and the numbers behind it. */
typedef struct fuse_decision {
  bool accepted;
  char rule[32];  /* "pointwise-chain", "use-count", "size-limit", ... */
  char text[224]; /* "k2 into k5: ... (bytes 4.0 MB -> 2.0 MB)" */
} fuse_decision;

/* A kernel that occupancy feedback split (src/fuser/split.c). With cut 0
 * its home nodes may no longer share a kernel (nor a recomputed copy), so
 * each runs in a part of its own or joins other work. With 0 < cut <
 * n_nodes the split is in two: nodes[0..cut) and nodes[cut..n_nodes) (in
 * the kernel's order, which is the graph's, so the first side only feeds
 * the second) may not share a kernel, while the nodes of one side still
 * fuse. `why` carries the runtime's measurements for the decision log. */
typedef struct fuse_split {
  int32_t *nodes;
  int32_t n_nodes;
  char why[160];
  int32_t cut;
} fuse_split;

typedef struct fuse_options {
  bool fusion;         /* false: every op its own kernel (KFUSE_NO_FUSION=1) */
  bool horizontal;     /* false: no horizontal packing (KFUSE_NO_HORIZONTAL=1) */
  int sm_count;        /* to judge "too small to fill the GPU"; 132 by default */
  int max_parts;       /* most kernels in one horizontal launch */
  int max_param_bytes; /* most kernel-parameter bytes in one launch */
  /* Extensions (fuser). */
  int max_nodes;     /* most nodes in one kernel (size limit) */
  int max_pw_nodes;  /* most in one of elementwise ops only (codegen cuts a
                        long body into segments: codegen/segment.c) */
  int max_inputs;    /* most distinct tensors one kernel reads */
  int max_epilogue;  /* most pointwise nodes fused after a matmul */
  int max_recompute; /* a row kernel's passes compute at most this many
                        values per element per node, in all (recompute.c) */
  int blocks_per_sm; /* a kernel with fewer blocks than sm_count * this is
                        "too small to fill the GPU" */
  bool recompute;    /* allow recomputing cheap producers in several kernels */
  /* Occupancy splits (the runtime's feedback). fuse_plan_build copies
   * them: plan->options.splits is then the plan's own. */
  const fuse_split *splits;
  int32_t n_splits;
  /* Matmul kernels are library calls (docs/matmul.md): a matmul kernel
   * holds only what fuse_gemm_match accepts (the rest of its epilogue is
   * the next kernel), may read a transposed operand as a layout, and is
   * never packed with others. The plan's workspace gets library_ws_bytes
   * more for the library, at fuse_plan.library_ws_offset. */
  bool matmul_library;
  int64_t library_ws_bytes;
  /* Paired products (docs/matmul.md): two template products that read the
   * same A and feed one pointwise epilogue become one kernel for the sm_90
   * template. The pipeline sets it from the target and the knobs
   * (KFUSE_GEMM_PAIR, KFUSE_GEMM90); gemm_pair_off says why it is off, for
   * the decision log. */
  bool gemm_pair;
  char gemm_pair_off[64];
} fuse_options;

/* What the load's matmul choice did (src/pipeline/matmul_choice.c), for
 * kf_plan_describe's JSON ("matmul_choice"): counters a profile can read
 * without parsing the decision's text. how == NULL: no choice made. The
 * strings are static. */
typedef struct fuse_mm_choice {
  const char *how;  /* "timed", "cached" (the plan's record, memory or disk) */
  const char *tmpl; /* the template plan: "timed", "cannot win", "cannot pay",
                       "off" (KFUSE_MATMUL=library), "failed", "cached" */
  bool library;     /* the library calls were kept */
  double library_ms, template_ms, floor_ms; /* -1: not measured */
  int calls;                                /* library calls in the plan */
  int calls_timed;                          /* of which every candidate was timed */
  int calls_known;          /* of which the candidate came from a product's record */
  double choose_ms;         /* wall time of the whole choice */
  double template_ms_spent; /* of which compiling, loading, timing the template */
  double template_ahead_ms; /* the template plan compiled ahead, at the compile */
} fuse_mm_choice;

typedef struct fuse_plan {
  const kf_graph *graph;
  fuse_options options;
  fuse_kernel *kernels;
  int32_t n_kernels;
  fuse_launch *launches;
  int32_t n_launches;
  int32_t *kernel_of; /* node index -> kernel id, -1 for inputs/constants */
  fuse_buffer *buffers;
  int32_t n_buffers;
  int64_t workspace_bytes;
  int64_t peak_bytes;    /* inputs + outputs + workspace */
  int64_t bytes_fused;   /* sum of kernels' bytes */
  int64_t bytes_unfused; /* the same with every op its own kernel */
  fuse_decision *decisions;
  int32_t n_decisions, cap_decisions;
  /* Extensions (fuser). */
  int32_t n_dead;            /* nodes with no path to an output: not computed */
  int32_t n_recomputed;      /* node copies recomputed outside their home kernel */
  bool log_decisions;        /* each decision also goes to the log (fuse=debug) */
  int32_t n_library;         /* kernels that are library calls */
  int64_t library_ws_offset; /* their workspace (options.library_ws_bytes) */
  fuse_mm_choice mm_choice;  /* set by the load (how NULL before) */
} fuse_plan;

/* ---- extensions (fuser) ------------------------------------------------- */

/* What a node of a kernel computes, in terms of the iteration space. */
typedef enum fuse_role {
  FUSE_ROLE_FREE = 0,   /* a pointwise/layout function of the kernel's inputs
                           only: evaluate it at whatever index a consumer needs
                           (broadcasting and layout by index arithmetic) */
  FUSE_ROLE_FULL = 1,   /* ROW: one value per element of rows x cols that needs
                           a reduction of this kernel first (e.g. x - max);
                           MATMUL: the product and its epilogue */
  FUSE_ROLE_REDUCED = 2 /* ROW: one value per row; REDUCE: one per reduced
                           element: the reductions and pointwise work on
                           their results */
} fuse_role;

#endif
