/* fuse.c - the fusion pass's front door: options, the pipeline (vertical
 * fusion -> kernels -> launches -> buffers), the decision log, freeing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/ctx.h"
#include "core/knobs.h"
#include "fuser/fuse_int.h"

void fuse_options_default(fuse_options *opt) {
  memset(opt, 0, sizeof *opt);
  const core_knobs *k = core_knobs_quiet();
  opt->fusion = !k->no_fusion;
  opt->horizontal = !k->no_horizontal;
  opt->sm_count = 132;
  /* An optimizer step over a few hundred tensors must fit one launch. */
  opt->max_parts = 1024;
  /* CUDA 12.1+ on sm_70+ allows 32764 bytes of kernel parameters. */
  opt->max_param_bytes = 32764;
  opt->max_nodes = 512;
  opt->max_inputs = 128;
  opt->max_epilogue = 4;
  /* Softmax and layernorm compute about 1.6 values per node per element
   * over their passes; a long prologue before a softmax, 4. A residual
   * ladder fused whole grows without bound (docs/fusion.md). */
  opt->max_recompute = 4;
  opt->blocks_per_sm = 4;
  opt->recompute = true;
}

const char *fuse_kind_name(fuse_kind kind) {
  switch (kind) {
    case FK_POINTWISE: return "pointwise";
    case FK_ROW: return "row";
    case FK_REDUCE: return "reduce";
    case FK_MATMUL: return "matmul";
  }
  return "?";
}

const char *fuse_role_name(fuse_role role) {
  switch (role) {
    case FUSE_ROLE_FREE: return "free";
    case FUSE_ROLE_FULL: return "full";
    case FUSE_ROLE_REDUCED: return "reduced";
  }
  return "?";
}

/* Appends the decimal digits of x at buf[*n] (the decision log formats
 * thousands of these per plan: printf was the pass's hot spot). */
static void put_int(char *buf, size_t size, size_t *n, int64_t x) {
  char tmp[24];
  int k = 0;
  uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
  do tmp[k++] = (char)('0' + u % 10); while ((u /= 10) && k < 23);
  if (x < 0 && *n + 1 < size) buf[(*n)++] = '-';
  while (k > 0 && *n + 1 < size) buf[(*n)++] = tmp[--k];
  buf[*n] = '\0';
}

static void put_str(char *buf, size_t size, size_t *n, const char *s) {
  while (*s && *n + 1 < size) buf[(*n)++] = *s++;
  buf[*n] = '\0';
}

const char *fuse_value_label(const kf_graph *g, int32_t v, char *buf, size_t size) {
  size_t n = 0;
  if (size == 0) return buf;
  buf[0] = '\0';
  if (g && v >= 0 && v < g->n_nodes && g->nodes[v].name) {
    put_str(buf, size, &n, g->nodes[v].name);
  } else {
    put_str(buf, size, &n, "%");
    put_int(buf, size, &n, v);
  }
  return buf;
}

int64_t fuse_numel(const ir_node *n) {
  int64_t e = 0;
  return ir_numel(n->rank, n->shape, &e) ? e : 0;
}

/* Every node passed ir_tensor_bytes when it was appended, so this fits. */
int64_t fuse_bytes(const ir_node *n) {
  int64_t b = 0;
  return ir_tensor_bytes(n->rank, n->shape, n->dtype, &b) ? b : 0;
}

bool fuse_is_elementwise(const ir_node *n) {
  ir_kind k = ir_ops[n->op].kind;
  return k == KIND_UNARY || k == KIND_BINARY || k == KIND_POINTWISE || k == KIND_LAYOUT;
}

const char *fuse_fmt_bytes(char *buf, size_t size, int64_t bytes) {
  static const char *const units[] = {" B", " KiB", " MiB", " GiB", " TiB"};
  size_t n = 0;
  if (size == 0) return buf;
  int u = 0;
  int64_t scale = 1;
  while (u < 4 && bytes / scale >= 1024) scale *= 1024, u++;
  if (u == 0) {
    put_int(buf, size, &n, bytes);
  } else { /* one decimal, rounded to nearest */
    int64_t tenths = (bytes / scale) * 10 + ((bytes % scale) * 10 + scale / 2) / scale;
    put_int(buf, size, &n, tenths / 10);
    put_str(buf, size, &n, ".");
    put_int(buf, size, &n, tenths % 10);
  }
  put_str(buf, size, &n, units[u]);
  return buf;
}

/* ---- the decision log --------------------------------------------------- */

/* A new entry of the log, or NULL once it ran out of memory. */
static fuse_decision *push_decision(fuse_plan *plan, bool accepted, const char *rule) {
  if (plan->cap_decisions < 0) return NULL;
  if (plan->n_decisions == plan->cap_decisions) {
    int32_t cap = plan->cap_decisions ? plan->cap_decisions * 2 : 64;
    fuse_decision *d = core_realloc(plan->decisions, (size_t)cap * sizeof *d);
    if (!d) {
      plan->cap_decisions = -1;
      return NULL;
    }
    plan->decisions = d;
    plan->cap_decisions = cap;
  }
  fuse_decision *d = &plan->decisions[plan->n_decisions++];
  size_t n = 0;
  d->accepted = accepted;
  put_str(d->rule, sizeof d->rule, &n, rule);
  return d;
}

static void log_decision(const fuse_plan *plan, const fuse_decision *d) {
  if (plan->log_decisions)
    core_log(plan->graph->ctx, KF_LOG_DEBUG, LOG_FUSE, "%s %s: %s",
             d->accepted ? "accept" : "refuse", d->rule, d->text);
}

void fuse_decide(fuse_plan *plan, bool accepted, const char *rule, const char *fmt, ...) {
  fuse_decision *d = push_decision(plan, accepted, rule);
  if (!d) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->text, sizeof d->text, fmt, ap);
  va_end(ap);
  log_decision(plan, d);
}

void fuse_decide_parts(fuse_plan *plan, bool accepted, const char *rule, const char *const *parts,
                       int n) {
  fuse_decision *d = push_decision(plan, accepted, rule);
  if (!d) return;
  size_t len = 0;
  d->text[0] = '\0';
  for (int i = 0; i < n; i++) put_str(d->text, sizeof d->text, &len, parts[i]);
  log_decision(plan, d);
}

bool fuse_decisions_ok(const fuse_plan *plan) { return plan->cap_decisions >= 0; }

/* ---- the pipeline ------------------------------------------------------- */

static kf_status check_graph(const kf_graph *g, char *err, size_t errsize) {
  if (!g) {
    snprintf(err, errsize, "no graph");
    return KF_ERR_INVALID_ARG;
  }
  if (g->status != KF_OK) {
    snprintf(err, errsize, "the graph has an error: %s", g->errmsg);
    return g->status;
  }
  if (g->n_outputs <= 0) {
    snprintf(err, errsize, "the graph has no outputs");
    return KF_ERR_INVALID_ARG;
  }
  return KF_OK;
}

static kf_status check_options(const fuse_options *o, char *err, size_t errsize) {
  if (o->sm_count < 1 || o->max_parts < 1 || o->max_param_bytes < 8 || o->max_nodes < 1 ||
      o->max_inputs < 1 || o->max_epilogue < 0 || o->max_recompute < 1 || o->blocks_per_sm < 1) {
    snprintf(err, errsize, "bad fusion options (every limit must be positive)");
    return KF_ERR_INVALID_ARG;
  }
  return KF_OK;
}

kf_status fuse_plan_build(const kf_graph *g, const fuse_options *opt, fuse_plan **out,
                          char *err, size_t errsize) {
  if (!out) return KF_ERR_INVALID_ARG;
  *out = NULL;
  fuse_options defaults;
  if (!opt) {
    fuse_options_default(&defaults);
    opt = &defaults;
  }
  kf_status st = check_graph(g, err, errsize);
  if (st == KF_OK) st = check_options(opt, err, errsize);
  if (st != KF_OK) return st;
  fuse_plan *plan = core_calloc(1, sizeof *plan);
  if (!plan) {
    snprintf(err, errsize, "out of memory");
    return KF_ERR_OUT_OF_MEMORY;
  }
  plan->graph = g;
  plan->options = *opt;
  plan->log_decisions = core_log_enabled(g->ctx, KF_LOG_DEBUG, LOG_FUSE);
  st = fuse_splits_adopt(plan, err, errsize);
  if (st == KF_OK) st = fuse_vertical(plan, err, errsize);
  if (st == KF_OK) st = fuse_finish_kernels(plan, err, errsize);
  if (st == KF_OK) st = fuse_launches(plan, err, errsize);
  if (st == KF_OK) st = fuse_buffers(plan, err, errsize);
  if (st == KF_OK) fuse_splits_log(plan);
  if (st == KF_OK && !fuse_decisions_ok(plan)) {
    snprintf(err, errsize, "out of memory");
    st = KF_ERR_OUT_OF_MEMORY;
  }
  if (st != KF_OK) {
    fuse_plan_free(plan);
    return st;
  }
  kf_ctx *ctx = g->ctx;
  core_log(ctx, KF_LOG_INFO, LOG_FUSE, "planned %d nodes as %d kernels in %d launches",
           (int)g->n_nodes, (int)plan->n_kernels, (int)plan->n_launches);
  *out = plan;
  return KF_OK;
}

void fuse_plan_free(fuse_plan *plan) {
  if (!plan) return;
  for (int32_t i = 0; i < plan->n_kernels; i++) {
    fuse_kernel *k = &plan->kernels[i];
    free(k->nodes);
    free(k->inputs);
    free(k->outputs);
    free(k->roles);
    free(k->recomputed);
  }
  free(plan->kernels);
  for (int32_t i = 0; i < plan->n_launches; i++) free(plan->launches[i].kernels);
  free(plan->launches);
  free(plan->kernel_of);
  free(plan->buffers);
  free(plan->decisions);
  fuse_splits_free(plan);
  free(plan);
}

/* ---- re-checking a built kernel ----------------------------------------- */

static bool needs_write(const fuse_plan *plan, const fuse_kernel *k, int32_t v) {
  const kf_graph *g = plan->graph;
  if (g->nodes[v].is_output) return true;
  for (int32_t j = 0; j < plan->n_kernels; j++) {
    const fuse_kernel *o = &plan->kernels[j];
    if (o == k) continue;
    for (int32_t i = 0; i < o->n_inputs; i++)
      if (o->inputs[i] == v) return true;
  }
  return false;
}

bool fuse_kernel_legal(const fuse_plan *plan, int kernel, char *why, size_t whysize) {
  if (!plan || kernel < 0 || kernel >= plan->n_kernels) {
    snprintf(why, whysize, "no such kernel");
    return false;
  }
  const fuse_kernel *k = &plan->kernels[kernel];
  uint8_t *is_out = core_calloc((size_t)k->n_nodes + 1, 1);
  if (!is_out) {
    snprintf(why, whysize, "out of memory");
    return false;
  }
  fuse_legal_ctx lc;
  bool ok = fuse_legal_init(&lc, plan->graph, &plan->options);
  if (!ok) {
    fuse_legal_free(&lc);
    free(is_out);
    snprintf(why, whysize, "out of memory");
    return false;
  }
  for (int32_t i = 0; i < k->n_nodes && ok; i++) {
    int32_t v = k->nodes[i];
    bool listed = false;
    for (int32_t j = 0; j < k->n_outputs; j++) listed |= k->outputs[j] == v;
    bool home = !k->recomputed[i];
    is_out[i] = listed;
    if (listed != (home && needs_write(plan, k, v))) {
      char b[64];
      snprintf(why, whysize, "%s: %s is %s an output but %s", k->name,
               fuse_value_label(plan->graph, v, b, sizeof b), listed ? "" : "not",
               listed ? "nothing reads it" : "it is read elsewhere");
      ok = false;
    }
  }
  fuse_set set = {k->nodes, k->recomputed, is_out, k->n_nodes};
  fuse_shape_info info;
  if (ok && !fuse_legal(&lc, &set, &info, NULL)) {
    snprintf(why, whysize, "%s: %s: %s", k->name, info.rule, info.why);
    ok = false;
  } else if (ok && info.kind != k->kind) {
    snprintf(why, whysize, "%s: kind %s, the predicate says %s", k->name,
             fuse_kind_name(k->kind), fuse_kind_name(info.kind));
    ok = false;
  }
  fuse_legal_free(&lc);
  free(is_out);
  return ok;
}
