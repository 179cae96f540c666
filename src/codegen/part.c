/* part.c - what every kind of part shares: its parameters and their
 * declarations, the index-width decision, and its grid (blocks within the
 * hardware limit, a block-stride loop over the rest). */
#include "codegen/part.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "core/alloc.h"

bool cg_part_params(cg_part *part) {
  const fuse_kernel *k = part->k;
  part->params = core_calloc((size_t)(k->n_inputs + k->n_outputs) + 1, sizeof *part->params);
  if (!part->params) return false;
  part->n_params = 0;
  for (int i = 0; i < k->n_inputs; i++)
    part->params[part->n_params++] = (cg_pparam){k->inputs[i], false};
  for (int i = 0; i < k->n_outputs; i++)
    part->params[part->n_params++] = (cg_pparam){k->outputs[i], true};
  return true;
}

void cg_param_decls(const kf_graph *g, const cg_part *part, cg_buf *out) {
  for (int i = 0; i < part->n_params; i++) {
    const cg_pparam *p = &part->params[i];
    cg_printf(out, "%s%s%s *__restrict__ p%d", i ? ", " : "", p->written ? "" : "const ",
              cg_storage_type(g->nodes[p->value].dtype), (int)p->value);
  }
  if (part->n_params == 0) cg_puts(out, "void *kf_unused");
}

void cg_param_args(const cg_part *part, cg_buf *out) {
  for (int i = 0; i < part->n_params; i++)
    cg_printf(out, "%sp%d", i ? ", " : "", (int)part->params[i].value);
  if (part->n_params == 0) cg_puts(out, "kf_unused");
}

bool cg_same_shape(int ra, const int64_t *a, int rb, const int64_t *b) {
  if (ra != rb) return false;
  for (int d = 0; d < ra; d++)
    if (a[d] != b[d]) return false;
  return true;
}

const char *cg_index_type(int64_t max_offset, bool *index64) {
  *index64 = max_offset > INT32_MAX;
  return *index64 ? "long long" : "int";
}

static uint32_t cap_of(const cg_part *p) {
  return p->max_blocks > 0 ? p->max_blocks : CG_MAX_GRID;
}

void cg_part_grid(cg_part *p, int64_t want) {
  p->vblocks = want;
  p->blocks = (uint32_t)cg_min64(want, cap_of(p));
}

void cg_part_grid_stride(cg_part *p, int64_t want) {
  cg_part_grid(p, want);
  p->vblocks = p->blocks;
}

const char *cg_part_bid_type(const cg_part *p) {
  return p->vblocks > p->blocks ? "long long" : "unsigned";
}

void cg_part_call(cg_buf *out, const cg_part *p, const char *bid, const char *args,
                  const char *indent) {
  if (p->vblocks <= p->blocks) {
    cg_printf(out, "%s(%s, %s);", p->fn, bid, args);
    return;
  }
  /* Every thread of the block runs the same rounds, so the barrier is
   * reached by all; it keeps a round's shared memory from being
   * overwritten while a slower warp still reads the previous one. */
  cg_printf(out,
            "for (long long kf_vb = (long long)(%s); kf_vb < %lldLL; kf_vb += %uLL) {\n"
            "%s  %s(kf_vb, %s);\n"
            "%s  __syncthreads();\n"
            "%s}",
            bid, (long long)p->vblocks, p->blocks, indent, p->fn, args, indent, indent);
}
