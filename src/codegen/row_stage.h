/* row_stage.h - staged rows (row_stage.c, templates/row_staged.cu): a held
 * row kernel on a persistent grid whose blocks copy their next row into
 * shared memory while they work on the current one. Off by default: it
 * measured slower on the H200 (docs/performance.md, T1); the KFUSE_ROW_STAGE
 * and KFUSE_ROW_PERSIST knobs turn it on, for measurements and tests. */
#ifndef KF_CG_ROW_STAGE_H
#define KF_CG_ROW_STAGE_H

#include "codegen/cg_internal.h"

typedef struct row_stage {
  int64_t bytes;   /* shared memory per staged row (a row of each held
                      input); 0: not staged */
  int stages;      /* staged rows per block: 1 or 2 */
  bool by_thread;  /* each thread copies its own chunks (cp.async);
                      else thread 0 bulk-copies whole rows */
  bool persistent; /* strides over rows by gridDim.x, on the grid the
                      runtime fits to the resident blocks: when staged,
                      or with KFUSE_ROW_PERSIST=1 alone */
  bool dynamic;    /* persistent, each block taking its next row from a
                      launch-wide counter (KFUSE_ROW_PERSIST=dynamic; not
                      staged, or two bulk stages): faster SMs take more */
} row_stage;

/* The staging of row kernel a->k: rows held in registers (hold), `group`
 * threads per row, `rpb` rows per block, `lanes` elements per access. */
row_stage cg_row_stage_plan(const cg_emit_args *a, bool hold, int group, int rpb, int lanes);

/* The words for the kernel's decisions line: "" when not staged. */
const char *cg_row_stage_words(const row_stage *s);

/* Where a staged row function reads held input v's chunk at column c0. */
void cg_row_stage_chunk(const cg_emit_args *a, int32_t v, char *out, size_t size);

/* After a staged row's held loads: with one bulk stage, the barrier and
 * thread 0's copies of the block's next row (nothing otherwise). */
void cg_row_stage_after_loads(const cg_emit_args *a, const row_stage *s, const char *idx,
                              cg_buf *body);

/* Whether the kernel takes templates/row_staged.cu (staged or dynamic). */
bool cg_row_stage_template(const row_stage *s);

/* The holes of row_staged.cu: `stage` (the shared buffers, the mbarriers,
 * <fn>_stage; or the dynamic rows' counters and <fn>_take), `init` (before
 * the first row), `top` (each row's copies of the row after and its wait
 * for its own), `advance` (to the block's next row) and `finish` (after
 * the last). idx: the index type; params and args: the part's parameter
 * declarations and arguments. */
typedef struct row_stage_holes {
  cg_buf stage, init, top, advance, finish;
} row_stage_holes;
void cg_row_stage_holes(const cg_emit_args *a, const row_stage *s, int group, int lanes,
                        const char *idx, const char *params, const char *args,
                        row_stage_holes *out);
void cg_row_stage_holes_free(row_stage_holes *h);

#endif
