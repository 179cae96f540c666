/* render.c - a plan as text for people, JSON for tools and Graphviz DOT
 * (each launch a cluster, each kernel a cluster inside it). */
#include "fuser/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"
#include "core/json.h"
#include "fuser/text.h"
#include "ir/ops.h"
#include "ir/shape.h"

/* ---- a growable string -------------------------------------------------- */

/* DOT strings: quotes and backslashes escaped, control characters dropped
 * (names from files are passed through kf_escape first). */
static void dot_str(fuse_sb *sb, const char *s) {
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      fuse_sb_printf(sb, "\\%c", *p);
    else if (*p >= 0x20)
      fuse_sb_printf(sb, "%c", *p);
  }
}

char *fuse_sb_finish(fuse_sb *sb) {
  if (sb->oom || !sb->s) {
    free(sb->s);
    return NULL;
  }
  return sb->s;
}

/* ---- shared pieces ------------------------------------------------------ */

static const char *L(const fuse_plan *p, int32_t v, char *buf, size_t n) {
  return fuse_value_label(p->graph, v, buf, n);
}

/* "%5 = add(x, 2)" */
static void node_expr(fuse_sb *sb, const fuse_plan *p, int32_t v) {
  const ir_node *nd = &p->graph->nodes[v];
  char b[64];
  fuse_sb_printf(sb, "%s = %s(", L(p, v, b, sizeof b), ir_ops[nd->op].name);
  for (int a = 0; a < nd->nargs; a++) {
    const ir_node *u = &p->graph->nodes[nd->args[a]];
    if (u->op == IR_OP_CONST && !u->name)
      fuse_sb_printf(sb, a ? ", %g" : "%g", u->value);
    else
      fuse_sb_printf(sb, a ? ", %s" : "%s", L(p, nd->args[a], b, sizeof b));
  }
  if (nd->op == IR_OP_CONST) fuse_sb_printf(sb, "%g", nd->value);
  fuse_sb_printf(sb, ")");
}

static void space_text(fuse_sb *sb, const fuse_kernel *k) {
  char b[200];
  switch (k->kind) {
    case FK_POINTWISE:
      fuse_sb_printf(sb, "%s (%lld elements)", ir_shape_str(b, sizeof b, k->rank, k->shape),
                     (long long)k->numel);
      break;
    case FK_ROW:
      fuse_sb_printf(sb, "%lld rows x %lld cols", (long long)k->rows, (long long)k->cols);
      break;
    case FK_REDUCE:
      fuse_sb_printf(sb, "outer %lld x reduced %lld x inner %lld%s", (long long)k->outer,
                     (long long)k->red, (long long)k->inner, k->red_strided ? " (strided)" : "");
      break;
    case FK_MATMUL:
      fuse_sb_printf(sb, "batch %lld x m %lld x n %lld x k %lld, %d epilogue ops%s%s",
                     (long long)k->batch, (long long)k->m, (long long)k->n, (long long)k->k,
                     (int)k->n_epilogue, k->library ? ", a library call" : "",
                     k->paired ? ", a paired product (two B, one A)" : "");
      break;
    case FK_ATTENTION:
      fuse_sb_printf(sb, "batch %lld x queries %lld x keys %lld x head dim %lld%s",
                     (long long)k->batch, (long long)k->m, (long long)k->k, (long long)k->n,
                     k->attn.causal ? ", causal" : "");
      break;
  }
}

static void list_text(fuse_sb *sb, const fuse_plan *p, const int32_t *v, int32_t n) {
  char b[64];
  if (n == 0) fuse_sb_printf(sb, "-");
  for (int32_t i = 0; i < n; i++) fuse_sb_printf(sb, i ? ", %s" : "%s", L(p, v[i], b, sizeof b));
}

/* ---- text --------------------------------------------------------------- */

static void kernel_text(fuse_sb *sb, const fuse_plan *p, const fuse_kernel *k) {
  char b1[32], b2[32], b3[32];
  fuse_sb_printf(sb, "  %s: %s, ", k->name, fuse_kind_name(k->kind));
  space_text(sb, k);
  fuse_sb_printf(sb, ", ~%lld blocks, depth %d\n    reads  ", (long long)k->blocks, k->depth);
  list_text(sb, p, k->inputs, k->n_inputs);
  fuse_sb_printf(sb, "\n    writes ");
  list_text(sb, p, k->outputs, k->n_outputs);
  fuse_sb_printf(sb, "\n    moves %s (read %s, written %s), %lld flops\n",
                 fuse_fmt_bytes(b1, sizeof b1, k->bytes_read + k->bytes_written),
                 fuse_fmt_bytes(b2, sizeof b2, k->bytes_read),
                 fuse_fmt_bytes(b3, sizeof b3, k->bytes_written), (long long)k->flops);
  for (int32_t i = 0; i < k->n_nodes; i++) {
    fuse_sb_printf(sb, "      ");
    node_expr(sb, p, k->nodes[i]);
    fuse_sb_printf(sb, "  [%s%s]\n", fuse_role_name((fuse_role)k->roles[i]),
                   k->recomputed[i] ? ", recomputed" : "");
  }
}

static const char *home_name(fuse_home h) {
  return h == HOME_INPUT ? "input" : h == HOME_OUTPUT ? "output" : "workspace";
}

char *fuse_plan_text(const fuse_plan *p) {
  if (!p) return NULL;
  fuse_sb sb = {0};
  char b1[32], b2[32], b3[32], b4[32], b5[64];
  const kf_graph *g = p->graph;
  /* The graph's name comes from a file: shown escaped (kf_escape). */
  fuse_sb_printf(&sb, "plan ");
  core_str_escaped(&sb, g->name ? g->name : "(unnamed)", KF_ESCAPE_LINE);
  fuse_sb_printf(&sb, ": %d nodes -> %d kernels in %d launches\n", (int)g->n_nodes,
                 (int)p->n_kernels, (int)p->n_launches);
  fuse_sb_printf(&sb, "bytes moved: %s fused, %s unfused; workspace %s; peak %s\n",
                 fuse_fmt_bytes(b1, sizeof b1, p->bytes_fused),
                 fuse_fmt_bytes(b2, sizeof b2, p->bytes_unfused),
                 fuse_fmt_bytes(b3, sizeof b3, p->workspace_bytes),
                 fuse_fmt_bytes(b4, sizeof b4, p->peak_bytes));
  for (int32_t l = 0; l < p->n_launches; l++) {
    const fuse_launch *la = &p->launches[l];
    fuse_sb_printf(&sb, "\nlaunch %d%s (%d parameter bytes):\n", (int)l,
                   la->horizontal ? ", horizontal" : "", (int)la->param_bytes);
    for (int32_t i = 0; i < la->n_kernels; i++) kernel_text(&sb, p, &p->kernels[la->kernels[i]]);
  }
  fuse_sb_printf(&sb, "\nbuffers:\n");
  for (int32_t i = 0; i < p->n_buffers; i++) {
    const fuse_buffer *b = &p->buffers[i];
    fuse_sb_printf(&sb, "  %-16s %-9s %s", L(p, b->value, b5, sizeof b5), home_name(b->home),
                   fuse_fmt_bytes(b1, sizeof b1, b->bytes));
    if (b->home == HOME_WORKSPACE) fuse_sb_printf(&sb, " at offset %lld", (long long)b->offset);
    fuse_sb_printf(&sb, ", launches %d..%d\n", b->first_launch, b->last_launch);
  }
  fuse_sb_printf(&sb, "\ndecisions (%d):\n", (int)p->n_decisions);
  for (int32_t i = 0; i < p->n_decisions; i++)
    fuse_sb_printf(&sb, "  %c %s: %s\n", p->decisions[i].accepted ? '+' : '-', p->decisions[i].rule,
                   p->decisions[i].text);
  return fuse_sb_finish(&sb);
}

/* ---- JSON --------------------------------------------------------------- */

/* One line per kernel, launch, buffer and decision (core_json_arr_lines). */
static void json_names(core_json *j, const char *key, const fuse_plan *p, const int32_t *v,
                       int32_t n, const uint8_t *only, uint8_t want) {
  char b[64];
  core_json_arr(j, key);
  for (int32_t i = 0; i < n; i++)
    if (!only || only[i] == want) core_json_str(j, NULL, L(p, v[i], b, sizeof b));
  core_json_arr_end(j);
}

static void kernel_shape_json(core_json *j, const fuse_kernel *k) {
  core_json_arr(j, "shape");
  for (int i = 0; i < k->rank; i++) core_json_int(j, NULL, k->shape[i]);
  core_json_arr_end(j);
  core_json_int(j, "numel", k->numel);
  if (k->kind == FK_ROW) {
    core_json_int(j, "rows", k->rows);
    core_json_int(j, "cols", k->cols);
  }
  if (k->kind == FK_REDUCE) {
    core_json_int(j, "outer", k->outer);
    core_json_int(j, "red", k->red);
    core_json_int(j, "inner", k->inner);
    core_json_bool(j, "strided", k->red_strided);
  }
  if (k->kind == FK_MATMUL || k->kind == FK_ATTENTION) {
    core_json_int(j, "batch", k->batch);
    core_json_int(j, "m", k->m);
    core_json_int(j, "n", k->n);
    core_json_int(j, "k", k->k);
    core_json_int(j, "epilogue", k->n_epilogue);
    core_json_bool(j, "library", k->library);
    if (k->kind == FK_MATMUL) core_json_bool(j, "paired", k->paired);
  }
}

static void kernel_json(core_json *j, const fuse_plan *p, const fuse_kernel *k) {
  core_json_obj(j, NULL);
  core_json_str(j, "name", k->name);
  core_json_str(j, "kind", fuse_kind_name(k->kind));
  core_json_int(j, "launch", k->launch);
  core_json_int(j, "depth", k->depth);
  json_names(j, "ops", p, k->nodes, k->n_nodes, NULL, 0);
  json_names(j, "recomputed", p, k->nodes, k->n_nodes, k->recomputed, 1);
  json_names(j, "inputs", p, k->inputs, k->n_inputs, NULL, 0);
  json_names(j, "outputs", p, k->outputs, k->n_outputs, NULL, 0);
  kernel_shape_json(j, k);
  core_json_int(j, "bytes", k->bytes_read + k->bytes_written);
  core_json_int(j, "bytes_read", k->bytes_read);
  core_json_int(j, "bytes_written", k->bytes_written);
  core_json_int(j, "flops", k->flops);
  core_json_int(j, "blocks", k->blocks);
  core_json_obj_end(j);
}

static void launches_json(core_json *j, const fuse_plan *p) {
  core_json_arr_lines(j, "launch_list");
  for (int32_t l = 0; l < p->n_launches; l++) {
    const fuse_launch *la = &p->launches[l];
    core_json_obj(j, NULL);
    core_json_int(j, "index", l);
    core_json_bool(j, "horizontal", la->horizontal);
    core_json_int(j, "param_bytes", la->param_bytes);
    core_json_arr(j, "kernels");
    for (int32_t i = 0; i < la->n_kernels; i++)
      core_json_str(j, NULL, p->kernels[la->kernels[i]].name);
    core_json_arr_end(j);
    core_json_obj_end(j);
  }
  core_json_arr_end(j);
}

static void buffers_json(core_json *j, const fuse_plan *p) {
  char b[64];
  core_json_arr_lines(j, "buffers");
  for (int32_t i = 0; i < p->n_buffers; i++) {
    const fuse_buffer *bf = &p->buffers[i];
    core_json_obj(j, NULL);
    core_json_str(j, "value", L(p, bf->value, b, sizeof b));
    core_json_str(j, "home", home_name(bf->home));
    core_json_int(j, "index", bf->index);
    core_json_int(j, "offset", bf->offset);
    core_json_int(j, "bytes", bf->bytes);
    core_json_int(j, "first_launch", bf->first_launch);
    core_json_int(j, "last_launch", bf->last_launch);
    core_json_obj_end(j);
  }
  core_json_arr_end(j);
}

static void decisions_json(core_json *j, const fuse_plan *p) {
  core_json_arr_lines(j, "decisions");
  for (int32_t i = 0; i < p->n_decisions; i++) {
    const fuse_decision *d = &p->decisions[i];
    core_json_obj(j, NULL);
    core_json_bool(j, "accepted", d->accepted);
    core_json_str(j, "rule", d->rule);
    core_json_str(j, "text", d->text);
    core_json_obj_end(j);
  }
  core_json_arr_end(j);
}

/* Only after a load's matmul choice: a plan before its load (the goldens)
 * renders as before. */
static void mm_choice_json(core_json *j, const fuse_plan *p) {
  const fuse_mm_choice *c = &p->mm_choice;
  if (!c->how) return;
  core_json_obj(j, "matmul_choice");
  core_json_str(j, "how", c->how);
  core_json_str(j, "choice", c->library ? "library" : "template");
  core_json_str(j, "template", c->tmpl);
  core_json_fixed(j, "library_ms", c->library_ms, 4);
  core_json_fixed(j, "template_ms", c->template_ms, 4);
  core_json_fixed(j, "floor_ms", c->floor_ms, 4);
  core_json_int(j, "calls", c->calls);
  core_json_int(j, "calls_timed", c->calls_timed);
  core_json_int(j, "calls_known", c->calls_known);
  core_json_fixed(j, "choose_ms", c->choose_ms, 3);
  core_json_fixed(j, "template_ms_spent", c->template_ms_spent, 3);
  core_json_fixed(j, "template_ahead_ms", c->template_ahead_ms, 3);
  core_json_obj_end(j);
}

char *fuse_plan_json(const fuse_plan *p) {
  if (!p) return NULL;
  fuse_sb sb = {0};
  core_json j;
  core_json_init(&j, &sb);
  core_json_obj(&j, NULL);
  core_json_str(&j, "graph", p->graph->name);
  core_json_int(&j, "launches", p->n_launches);
  core_json_int(&j, "n_kernels", p->n_kernels);
  core_json_arr_lines(&j, "kernels");
  for (int32_t k = 0; k < p->n_kernels; k++) kernel_json(&j, p, &p->kernels[k]);
  core_json_arr_end(&j);
  launches_json(&j, p);
  buffers_json(&j, p);
  core_json_int(&j, "bytes_fused", p->bytes_fused);
  core_json_int(&j, "bytes_unfused", p->bytes_unfused);
  core_json_int(&j, "workspace_bytes", p->workspace_bytes);
  core_json_int(&j, "peak_bytes", p->peak_bytes);
  core_json_int(&j, "dead_nodes", p->n_dead);
  core_json_int(&j, "recomputed", p->n_recomputed);
  decisions_json(&j, p);
  mm_choice_json(&j, p);
  core_json_obj_end(&j);
  fuse_sb_printf(&sb, "\n");
  return fuse_sb_finish(&sb);
}

/* ---- DOT ---------------------------------------------------------------- */

static bool in_kernel(const fuse_kernel *k, int32_t v) {
  int32_t lo = 0, hi = k->n_nodes - 1;
  while (lo <= hi) {
    int32_t mid = (lo + hi) / 2;
    if (k->nodes[mid] == v) return true;
    if (k->nodes[mid] < v)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return false;
}

static void dot_kernel(fuse_sb *sb, const fuse_plan *p, const fuse_kernel *k) {
  /* one per fuse_kind, in its order */
  static const char *const colors[] = {"#e8f0fe", "#fce8e6", "#e6f4ea", "#fef7e0", "#f3e8fd"};
  unsigned kind = (unsigned)k->kind;
  fuse_sb_printf(
      sb, "    subgraph cluster_k%d {\n      label=\"%s\"; style=filled; fillcolor=\"%s\";\n",
      k->id, k->name, kind < sizeof colors / sizeof colors[0] ? colors[kind] : "#ffffff");
  for (int32_t i = 0; i < k->n_nodes; i++) {
    fuse_sb tmp = {0};
    node_expr(&tmp, p, k->nodes[i]);
    fuse_sb_printf(sb, "      k%d_n%d [label=\"", k->id, (int)k->nodes[i]);
    dot_str(sb, core_str_use(sb, &tmp)); /* carries tmp's out of memory over */
    core_str_free(&tmp);
    fuse_sb_printf(sb, "\"%s%s];\n", k->recomputed[i] ? ", style=dashed" : "",
                   p->graph->nodes[k->nodes[i]].is_output ? ", peripheries=2" : "");
  }
  fuse_sb_printf(sb, "    }\n");
}

static void dot_edges(fuse_sb *sb, const fuse_plan *p, const fuse_kernel *k) {
  const kf_graph *g = p->graph;
  for (int32_t i = 0; i < k->n_nodes; i++) {
    const ir_node *nd = &g->nodes[k->nodes[i]];
    for (int a = 0; a < nd->nargs; a++) {
      int32_t u = nd->args[a];
      if (g->nodes[u].op == IR_OP_CONST) continue;
      if (in_kernel(k, u))
        fuse_sb_printf(sb, "  k%d_n%d -> k%d_n%d;\n", k->id, (int)u, k->id, (int)k->nodes[i]);
      else if (g->nodes[u].op == IR_OP_INPUT)
        fuse_sb_printf(sb, "  v%d -> k%d_n%d;\n", (int)u, k->id, (int)k->nodes[i]);
      else
        fuse_sb_printf(sb, "  k%d_n%d -> k%d_n%d [style=bold, color=\"#d93025\"];\n",
                       (int)p->kernel_of[u], (int)u, k->id, (int)k->nodes[i]);
    }
  }
}

char *fuse_plan_dot(const fuse_plan *p) {
  if (!p) return NULL;
  fuse_sb sb = {0};
  const kf_graph *g = p->graph;
  char b[64];
  fuse_sb_printf(&sb, "digraph plan {\n  label=\"");
  char shown[256];
  dot_str(&sb, core_escaped(shown, sizeof shown, g->name ? g->name : "plan"));
  fuse_sb_printf(&sb, ": %d launches, %d kernels\";\n  node [shape=box, fontsize=10];\n",
                 (int)p->n_launches, (int)p->n_kernels);
  for (int32_t i = 0; i < g->n_inputs; i++)
    fuse_sb_printf(&sb, "  v%d [label=\"%s\", shape=ellipse];\n", (int)g->inputs[i],
                   L(p, g->inputs[i], b, sizeof b));
  for (int32_t l = 0; l < p->n_launches; l++) {
    const fuse_launch *la = &p->launches[l];
    fuse_sb_printf(&sb, "  subgraph cluster_launch%d {\n    label=\"launch %d%s\"; style=dashed;\n",
                   (int)l, (int)l, la->horizontal ? " (horizontal)" : "");
    for (int32_t i = 0; i < la->n_kernels; i++) dot_kernel(&sb, p, &p->kernels[la->kernels[i]]);
    fuse_sb_printf(&sb, "  }\n");
  }
  for (int32_t k = 0; k < p->n_kernels; k++) dot_edges(&sb, p, &p->kernels[k]);
  fuse_sb_printf(&sb, "}\n");
  return fuse_sb_finish(&sb);
}
