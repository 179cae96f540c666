/* yaml_load.c - the YAML loader: reads a graph file (version 1, see
 * docs/yaml.md) into a kf_graph, or reports FILE:LINE:COL of what is wrong.
 * The public entry points are in src/pipeline/graph_load.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "core/alloc.h"
#include "core/ctx.h"
#include "core/escape.h"
#include "core/similar.h"
#include "ir/ops.h"
#include "ir/yaml_load.h"
#include "ir/yaml_node.h"
#include "ir/yaml_scalar.h"

/* ---- errors ----------------------------------------------------------------- */

/* The prefix naming what was being read (L->where and its parts). */
static void where_text(const ir_yload *L, char *buf, size_t size) {
  switch (L->where) {
    case IR_YW_INPUT: snprintf(buf, size, "input '%s': ", L->where_name); break;
    case IR_YW_NODE_NUMBER: snprintf(buf, size, "node #%d: ", L->node_number); break;
    case IR_YW_NODE_NAME: snprintf(buf, size, "node '%s': ", L->where_name); break;
    case IR_YW_NODE_OP:
      snprintf(buf, size, "node '%s' (%s): ", L->where_name, ir_ops[L->where_op].name);
      break;
    case IR_YW_OUTPUTS: snprintf(buf, size, "outputs: "); break;
    default: buf[0] = '\0'; break;
  }
}

__attribute__((format(printf, 4, 0))) static void vfail(ir_yload *L, kf_status st,
                                                       const ir_ynode *at, const char *fmt,
                                                       va_list ap) {
  if (L->st != KF_OK) return; /* the first error is the one to fix */
  L->st = st;
  char where[320], file[1024];
  where_text(L, where, sizeof where);
  core_escaped(file, sizeof file, L->file);
  int o = at ? snprintf(L->msg, sizeof L->msg, "%s:%u:%u: %s", file, (unsigned)at->line,
                        (unsigned)at->col, where)
             : snprintf(L->msg, sizeof L->msg, "%s: %s", file, where);
  if (o < 0 || (size_t)o >= sizeof L->msg) return;
  vsnprintf(L->msg + o, sizeof L->msg - (size_t)o, fmt, ap);
}

bool ir_yl_fail(ir_yload *L, kf_status st, const ir_ynode *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(L, st, at, fmt, ap);
  va_end(ap);
  return false;
}

/* Builder messages start "node %12 (add): "; our prefix names the node
 * by its name in the file instead, so theirs is dropped. */
static const char *strip_node_prefix(const char *m) {
  if (strncmp(m, "node %", 6) != 0) return m;
  const char *p = m + 6;
  while (*p >= '0' && *p <= '9') p++;
  if (*p == ' ' && p[1] == '(') {
    const char *end = strstr(p, "): ");
    if (end) return end + 3;
  }
  return m;
}

bool ir_yl_fail_builder(ir_yload *L, const ir_ynode *at) {
  return ir_yl_fail_call(L, at, KF_ERR_INVALID_ARG);
}

bool ir_yl_fail_call(ir_yload *L, const ir_ynode *at, kf_status st) {
  if (kf_graph_status(L->g) != KF_OK) st = kf_graph_status(L->g);
  return ir_yl_fail(L, st, at, "%s", strip_node_prefix(kf_graph_errmsg(L->g)));
}

/* ---- symbols: name -> value, with where it was defined ---------------------- */

static uint32_t sym_hash(const char *s) { return (uint32_t)XXH3_64bits(s, strlen(s)); }

const ir_ysym *ir_yl_lookup(const ir_yload *L, const char *name) {
  if (L->cap_syms == 0) return NULL;
  uint32_t mask = L->cap_syms - 1;
  for (uint32_t i = sym_hash(name) & mask;; i = (i + 1) & mask) {
    const ir_ysym *s = &L->syms[i];
    if (!s->name) return NULL;
    if (!strcmp(s->name, name)) return s;
  }
}

static void sym_place(ir_ysym *slots, uint32_t cap, ir_ysym sym) {
  uint32_t mask = cap - 1, i = sym_hash(sym.name) & mask;
  while (slots[i].name) i = (i + 1) & mask;
  slots[i] = sym;
}

bool ir_yl_name_hint(const ir_yload *L, const char *name, char *buf, size_t size) {
  core_similar sim;
  core_similar_init(&sim, name);
  for (uint32_t k = 0; k < L->cap_syms; k++) core_similar_add(&sim, L->syms[k].name);
  core_similar_hint(&sim, buf, size);
  return core_similar_best(&sim) != NULL;
}

bool ir_yl_define(ir_yload *L, const ir_ynode *name_node, kf_value v) {
  if ((uint64_t)(L->n_syms + 1) * 2 > L->cap_syms) { /* load factor <= 1/2 */
    uint32_t cap = L->cap_syms ? L->cap_syms * 2 : 64;
    ir_ysym *slots = cap < L->cap_syms ? NULL : core_calloc(cap, sizeof *slots);
    if (!slots) return ir_yl_fail(L, KF_ERR_OUT_OF_MEMORY, name_node, "out of memory");
    for (uint32_t i = 0; i < L->cap_syms; i++)
      if (L->syms[i].name) sym_place(slots, cap, L->syms[i]);
    free(L->syms);
    L->syms = slots;
    L->cap_syms = cap;
  }
  ir_ysym sym = {ir_ytext(L->doc, name_node), v,
                 (uint32_t)(name_node - ir_ynode_at(L->doc, 0))};
  sym_place(L->syms, L->cap_syms, sym);
  L->n_syms++;
  return true;
}

/* ---- the document ------------------------------------------------------------ */

static const char *const top_keys[] = {"kfuse", "name", "inputs", "nodes", "outputs"};
static const char *const input_keys[] = {"dtype", "shape"};

static bool read_version(ir_yload *L, const ir_ynode *root) {
  const ir_ynode *v = ir_yl_get(L, root, "kfuse");
  if (!v)
    return ir_yl_fail(L, KF_ERR_PARSE, root,
                      "missing required key 'kfuse' (the format version); expected kfuse: 1");
  int64_t version;
  if (!ir_yl_int(L, v, "kfuse", INT64_MIN, INT64_MAX, &version)) return false;
  if (version != 1)
    return ir_yl_fail(L, KF_ERR_PARSE, v,
                      "unsupported format version %lld; expected kfuse: 1", (long long)version);
  return true;
}

static bool read_name(ir_yload *L, const ir_ynode *root) {
  const ir_ynode *n = ir_yl_get(L, root, "name");
  if (!n) return true;
  if (n->type != IR_Y_SCALAR)
    return ir_yl_fail(L, KF_ERR_PARSE, n, "name: expected a string, found %s", ir_yl_kind(n));
  const char *s = ir_ytext(L->doc, n);
  if (n->n > IR_YAML_NAME_MAX || strlen(s) != n->n)
    return ir_yl_fail(L, KF_ERR_PARSE, n,
                      "name: expected a string of at most %d bytes without NUL characters",
                      IR_YAML_NAME_MAX);
  kf_status st = kf_graph_set_name(L->g, s);
  if (st != KF_OK) return ir_yl_fail_call(L, n, st);
  return true;
}

static bool read_input(ir_yload *L, const ir_ynode *key, const ir_ynode *spec) {
  if (!ir_yl_check_name(L, key, "input")) return false;
  const char *name = ir_ytext(L->doc, key);
  L->where = IR_YW_INPUT, L->where_name = name;
  const ir_ysym *prev = ir_yl_lookup(L, name);
  if (prev) {
    const ir_ynode *at = ir_ynode_at(L->doc, prev->at);
    return ir_yl_fail(L, KF_ERR_PARSE, key, "name '%s' is already defined at %u:%u", name,
                      (unsigned)at->line, (unsigned)at->col);
  }
  if (spec->type != IR_Y_MAP)
    return ir_yl_fail(L, KF_ERR_PARSE, spec,
                      "expected a mapping like {dtype: f32, shape: [8, 16]}, found %s",
                      ir_yl_kind(spec));
  if (!ir_yl_keys(L, spec, input_keys, 2, NULL, 0)) return false;
  const ir_ynode *dt = ir_yl_get(L, spec, "dtype"), *sh = ir_yl_get(L, spec, "shape");
  if (!dt) return ir_yl_fail(L, KF_ERR_PARSE, spec, "missing required key 'dtype'");
  if (!sh) return ir_yl_fail(L, KF_ERR_PARSE, spec, "missing required key 'shape'");
  kf_dtype dtype;
  int64_t shape[KF_MAX_RANK];
  int rank;
  if (!ir_yl_dtype(L, dt, "dtype", &dtype) || !ir_yl_shape(L, sh, "shape", false, shape, &rank))
    return false;
  kf_value v = kf_input(L->g, name, dtype, rank, shape);
  if (v == KF_NONE) return ir_yl_fail_builder(L, key);
  L->where = IR_YW_NONE;
  return ir_yl_define(L, key, v);
}

static bool read_inputs(ir_yload *L, const ir_ynode *root) {
  const ir_ynode *m = ir_yl_get(L, root, "inputs");
  if (!m) return true;
  if (m->type != IR_Y_MAP)
    return ir_yl_fail(L, KF_ERR_PARSE, m,
                      "inputs: expected a mapping of names to {dtype, shape}, found %s",
                      ir_yl_kind(m));
  for (uint32_t i = 0; i + 1 < m->n; i += 2)
    if (!read_input(L, ir_ykid(L->doc, m, i), ir_ykid(L->doc, m, i + 1))) return false;
  return true;
}

static bool read_nodes(ir_yload *L, const ir_ynode *root) {
  const ir_ynode *seq = ir_yl_get(L, root, "nodes");
  if (!seq) return true;
  if (seq->type != IR_Y_SEQ)
    return ir_yl_fail(L, KF_ERR_PARSE, seq, "nodes: expected a list of nodes, found %s",
                      ir_yl_kind(seq));
  L->nodes_seq = seq;
  for (uint32_t i = 0; i < seq->n; i++) {
    L->node_number = (int)i + 1;
    if (!ir_yl_node(L, ir_ykid(L->doc, seq, i))) return false;
  }
  return true;
}

static bool read_output(ir_yload *L, const ir_ynode *seq, uint32_t i) {
  char b[96];
  const ir_ynode *n = ir_ykid(L->doc, seq, i);
  if (n->type != IR_Y_SCALAR)
    return ir_yl_fail(L, KF_ERR_PARSE, n, "outputs: expected a value name, found %s",
                      ir_yl_kind(n));
  const char *name = ir_ytext(L->doc, n);
  const ir_ysym *sym = strlen(name) == n->n ? ir_yl_lookup(L, name) : NULL;
  char hint[96];
  if (!sym && ir_yl_name_hint(L, name, hint, sizeof hint))
    return ir_yl_fail(L, KF_ERR_PARSE, n, "outputs: unknown value %s%s",
                      ir_yl_show(L, n, b, sizeof b), hint);
  if (!sym)
    return ir_yl_fail(L, KF_ERR_PARSE, n,
                      "outputs: unknown value %s; expected an input or node name",
                      ir_yl_show(L, n, b, sizeof b));
  /* A repeat is told by the value's output flag; only then is the list
   * searched for the first mention, so a long list stays linear. */
  for (uint32_t j = 0; L->g->nodes[sym->value].is_output && j < i; j++) {
    const ir_ynode *p = ir_ykid(L->doc, seq, j);
    if (p->n == n->n && !strcmp(ir_ytext(L->doc, p), name))
      return ir_yl_fail(L, KF_ERR_PARSE, n, "outputs: '%s' is listed twice (first at %u:%u)",
                        name, (unsigned)p->line, (unsigned)p->col);
  }
  kf_status st = kf_set_output(L->g, sym->value);
  if (st != KF_OK) {
    L->where = IR_YW_OUTPUTS;
    return ir_yl_fail_call(L, n, st);
  }
  return true;
}

static bool read_outputs(ir_yload *L, const ir_ynode *root) {
  const ir_ynode *seq = ir_yl_get(L, root, "outputs");
  if (!seq)
    return ir_yl_fail(L, KF_ERR_PARSE, root,
                      "missing required key 'outputs'; expected a list of value names");
  if (seq->type != IR_Y_SEQ || seq->n == 0)
    return ir_yl_fail(L, KF_ERR_PARSE, seq,
                      "outputs: expected a list of one or more value names like [y], found %s",
                      seq->type == IR_Y_SEQ ? "an empty list" : ir_yl_kind(seq));
  for (uint32_t i = 0; i < seq->n; i++)
    if (!read_output(L, seq, i)) return false;
  return true;
}

static bool read_document(ir_yload *L) {
  const ir_ynode *root = ir_ynode_at(L->doc, L->doc->root);
  if (root->type != IR_Y_MAP)
    return ir_yl_fail(L, KF_ERR_PARSE, root, "expected a mapping with kfuse: 1, found %s",
                      ir_yl_kind(root));
  return ir_yl_keys(L, root, top_keys, 5, NULL, 0) && read_version(L, root) && read_name(L, root) &&
         read_inputs(L, root) && read_nodes(L, root) && read_outputs(L, root);
}

/* ---- entry points -------------------------------------------------------------- */

static kf_status load_string(kf_ctx *ctx, const char *text, size_t len, const char *filename,
                             kf_graph **out) {
  if (!out || (!text && len > 0))
    return core_error(ctx, KF_ERR_INVALID_ARG, "kf_graph_load_yaml_string: NULL argument");
  *out = NULL;
  ir_yload L;
  memset(&L, 0, sizeof L);
  L.ctx = ctx;
  L.file = filename ? filename : "<string>";
  ir_ydoc doc;
  ir_yerr err;
  if (ir_ydoc_parse(&doc, text, len, &err) != KF_OK) {
    ir_ydoc_free(&doc);
    if (err.line)
      return core_error(ctx, err.st, "%s:%u:%u: %s", L.file, (unsigned)err.line,
                        (unsigned)err.col, err.msg);
    return core_error(ctx, err.st, "%s: %s", L.file, err.msg);
  }
  L.doc = &doc;
  if (kf_graph_create(ctx, &L.g) != KF_OK) {
    ir_ydoc_free(&doc);
    return core_error(ctx, KF_ERR_OUT_OF_MEMORY, "%s: out of memory", L.file);
  }
  read_document(&L);
  ir_ydoc_free(&doc);
  free(L.syms);
  if (L.st != KF_OK) {
    kf_graph_destroy(L.g);
    return core_error(ctx, L.st, "%s", L.msg);
  }
  *out = L.g;
  return KF_OK;
}

kf_status ir_yaml_load_string(kf_ctx *ctx, const char *text, size_t len, const char *filename,
                              kf_graph **out) {
  return load_string(ctx, text, len, filename, out);
}

/* Reads at most IR_YAML_MAX_BYTES + 1 bytes, so an oversized file (or an
 * endless one such as a pipe) is refused without reading it all. */
kf_status ir_yaml_read_file(kf_ctx *ctx, const char *path, char **text, size_t *len) {
  char shown[1024]; /* the path as messages show it (kf_escape) */
  core_escaped(shown, sizeof shown, path);
  FILE *f = fopen(path, "rb");
  if (!f) return core_error(ctx, KF_ERR_IO, "%s: cannot open: %s", shown, strerror(errno));
  struct stat sb;
  memset(&sb, 0, sizeof sb);
  if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
    fclose(f);
    return core_error(ctx, KF_ERR_IO, "%s: is a directory", shown);
  }
  size_t limit = IR_YAML_MAX_BYTES + 1, cap = 1 << 16, n = 0;
  if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_size >= limit) n = limit; /* too large */
  char *buf = core_malloc(cap);
  while (buf && n < limit) {
    if (n == cap) {
      size_t ncap = cap * 2 < limit ? cap * 2 : limit;
      char *bigger = core_realloc(buf, ncap);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap = ncap;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  bool bad = buf && ferror(f);
  fclose(f);
  if (!buf) return core_error(ctx, KF_ERR_OUT_OF_MEMORY, "%s: out of memory", shown);
  if (bad) {
    free(buf);
    return core_error(ctx, KF_ERR_IO, "%s: read error", shown);
  }
  if (n > IR_YAML_MAX_BYTES) {
    free(buf);
    return core_error(ctx, KF_ERR_PARSE, "%s: file is too large (more than %zu MiB)", shown,
                      IR_YAML_MAX_BYTES >> 20);
  }
  *text = buf;
  *len = n;
  return KF_OK;
}
