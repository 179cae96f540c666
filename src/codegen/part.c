/* part.c - what every kind of part shares: its parameters and their
 * declarations, and the index-width decision. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
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
