/* buffers.c - where memory values live: graph inputs and outputs are the
 * caller's; every other value that crosses launches gets a 256-byte aligned
 * range of one workspace, reused once the value is dead (greedy first fit
 * over live intervals, measured in launches). */
#include "fuser/buffers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "fuser/node.h"
#include "ir/shape.h"

#define FUSE_ALIGN 256

static int64_t align_up(int64_t x) {
  return (x + FUSE_ALIGN - 1) / FUSE_ALIGN * FUSE_ALIGN;
}

/* Last launch that reads each value (-1 when none). */
static void last_reads(const fuse_plan *plan, int32_t *last) {
  for (int32_t v = 0; v < plan->graph->n_nodes; v++) last[v] = -1;
  for (int32_t k = 0; k < plan->n_kernels; k++) {
    const fuse_kernel *kk = &plan->kernels[k];
    for (int32_t i = 0; i < kk->n_inputs; i++)
      if (last[kk->inputs[i]] < kk->launch) last[kk->inputs[i]] = kk->launch;
  }
}

static int cmp_ws(const void *a, const void *b) {
  const fuse_buffer *x = a, *y = b;
  if (x->first_launch != y->first_launch) return x->first_launch < y->first_launch ? -1 : 1;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return (x->value > y->value) - (x->value < y->value);
}

static int cmp_offset(const void *a, const void *b) {
  const fuse_buffer *x = *(fuse_buffer *const *)a, *y = *(fuse_buffer *const *)b;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

/* First fit among the values still live when b is written. Offsets and
 * the total stay within KF_MAX_TENSOR_BYTES (ir_bytes_add), so no sum here
 * can overflow: each buffer is at most that, plus 255 bytes of padding. */
static kf_status place_workspace(fuse_plan *plan, fuse_buffer *ws, int32_t n) {
  qsort(ws, (size_t)n, sizeof *ws, cmp_ws);
  fuse_buffer **active = core_malloc(((size_t)n + 1) * sizeof *active);
  if (!active) return KF_ERR_OUT_OF_MEMORY;
  int32_t na = 0;
  for (int32_t i = 0; i < n; i++) {
    fuse_buffer *b = &ws[i];
    int32_t keep = 0; /* drop values dead before b is written */
    for (int32_t j = 0; j < na; j++)
      if (active[j]->last_launch >= b->first_launch) active[keep++] = active[j];
    na = keep;
    int64_t size = align_up(b->bytes > 0 ? b->bytes : 1), at = 0;
    for (int32_t j = 0; j < na; j++) { /* active is sorted by offset */
      if (active[j]->offset - at >= size) break;
      int64_t end = active[j]->offset + align_up(active[j]->bytes > 0 ? active[j]->bytes : 1);
      if (end > at) at = end;
    }
    int64_t end = at;
    if (!ir_bytes_add(&end, size)) {
      free(active);
      return KF_ERR_SHAPE;
    }
    b->offset = at;
    if (end > plan->workspace_bytes) plan->workspace_bytes = end;
    active[na++] = b;
    qsort(active, (size_t)na, sizeof *active, cmp_offset);
  }
  free(active);
  return KF_OK;
}

kf_status fuse_buffers(fuse_plan *plan, char *err, size_t errsize) {
  const kf_graph *g = plan->graph;
  int32_t *last = core_malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1) * sizeof *last);
  int32_t cap = g->n_inputs + g->n_outputs;
  for (int32_t k = 0; k < plan->n_kernels; k++) cap += plan->kernels[k].n_outputs;
  plan->buffers = core_calloc((size_t)cap + 1, sizeof *plan->buffers);
  if (!last || !plan->buffers) {
    free(last);
    snprintf(err, errsize, "out of memory");
    return KF_ERR_OUT_OF_MEMORY;
  }
  last_reads(plan, last);
  int64_t io = 0;
  bool fits = true;
  for (int32_t i = 0; i < g->n_inputs; i++) {
    int32_t v = g->inputs[i];
    plan->buffers[plan->n_buffers++] =
        (fuse_buffer){v, HOME_INPUT, i, 0, fuse_bytes(&g->nodes[v]), -1, last[v]};
    fits = fits && ir_bytes_add(&io, fuse_bytes(&g->nodes[v]));
  }
  for (int32_t i = 0; i < g->n_outputs; i++) {
    int32_t v = g->outputs[i];
    if (g->nodes[v].op == IR_OP_INPUT) continue; /* the runtime copies it */
    int32_t first = plan->kernel_of[v] >= 0 ? plan->kernels[plan->kernel_of[v]].launch : -1;
    plan->buffers[plan->n_buffers++] = (fuse_buffer){
        v, HOME_OUTPUT, i, 0, fuse_bytes(&g->nodes[v]), first, last[v] > first ? last[v] : first};
    fits = fits && ir_bytes_add(&io, fuse_bytes(&g->nodes[v]));
  }
  int32_t ws0 = plan->n_buffers;
  for (int32_t k = 0; k < plan->n_kernels; k++) {
    const fuse_kernel *kk = &plan->kernels[k];
    for (int32_t i = 0; i < kk->n_outputs; i++) {
      int32_t v = kk->outputs[i];
      if (g->nodes[v].is_output) continue;
      plan->buffers[plan->n_buffers++] =
          (fuse_buffer){v, HOME_WORKSPACE, -1, 0, fuse_bytes(&g->nodes[v]), kk->launch, last[v]};
    }
  }
  free(last);
  kf_status st = place_workspace(plan, plan->buffers + ws0, plan->n_buffers - ws0);
  /* The library's own workspace, after the values' (256-byte aligned). */
  if (st == KF_OK && plan->n_library > 0 && plan->options.library_ws_bytes > 0) {
    plan->library_ws_offset = align_up(plan->workspace_bytes);
    plan->workspace_bytes = plan->library_ws_offset;
    if (!ir_bytes_add(&plan->workspace_bytes, plan->options.library_ws_bytes)) st = KF_ERR_SHAPE;
  }
  if (st == KF_OK) {
    plan->peak_bytes = io;
    if (!fits || !ir_bytes_add(&plan->peak_bytes, plan->workspace_bytes)) st = KF_ERR_SHAPE;
  }
  if (st == KF_ERR_SHAPE)
    snprintf(err, errsize,
             "the plan's inputs, outputs and workspace together exceed 2^62 bytes "
             "(KF_MAX_TENSOR_BYTES)");
  else if (st != KF_OK)
    snprintf(err, errsize, "out of memory");
  return st;
}
