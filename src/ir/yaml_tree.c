/* yaml_tree.c - turns libyaml's event stream into an ir_ydoc, refusing what a
 * graph file never needs and hostile input relies on: anchors and aliases
 * (so alias bombs cannot exist), tags, several documents, deep nesting. */
#include "ir/yaml_tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/alloc.h"

/* Parser state: open collections and the finished children not yet given to
 * their parent (a collection's children are contiguous at the top of pending
 * when it ends). */
typedef struct builder {
  ir_ydoc *doc;
  ir_yerr *err;
  uint32_t open[IR_YAML_MAX_DEPTH];     /* node index of each open collection */
  uint32_t open_at[IR_YAML_MAX_DEPTH];  /* pending length when it opened */
  int depth;
  uint32_t *pending;
  uint32_t n_pending, cap_pending;
  int documents;
  bool have_root;
  bool done;
} builder;

static kf_status fail_at(builder *b, kf_status st, size_t line0, size_t col0, const char *fmt,
                         ...) __attribute__((format(printf, 5, 6)));

static kf_status fail_at(builder *b, kf_status st, size_t line0, size_t col0, const char *fmt,
                         ...) {
  b->err->st = st;
  b->err->line = (uint32_t)(line0 + 1);
  b->err->col = (uint32_t)(col0 + 1);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->err->msg, sizeof b->err->msg, fmt, ap);
  va_end(ap);
  return st;
}

static kf_status oom(builder *b) {
  b->err->st = KF_ERR_OUT_OF_MEMORY;
  b->err->line = b->err->col = 0;
  snprintf(b->err->msg, sizeof b->err->msg, "out of memory while reading the YAML");
  return KF_ERR_OUT_OF_MEMORY;
}

/* Grows an array of elem-sized items to hold need of them. */
static bool grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t ncap = *cap ? *cap : 16;
  while (ncap < need) ncap *= 2;
  void *p = core_realloc(*arr, ncap * elem);
  if (!p) return false;
  *arr = p;
  *cap = ncap;
  return true;
}

static bool grow_u32(uint32_t **arr, uint32_t *cap, uint32_t need) {
  size_t c = *cap;
  void *p = *arr;
  if (!grow(&p, &c, need, sizeof(uint32_t))) return false;
  *arr = p;
  *cap = (uint32_t)c;
  return true;
}

static kf_status new_node(builder *b, const yaml_event_t *ev, ir_ytype type, uint32_t *out) {
  ir_ydoc *d = b->doc;
  if (d->n_nodes >= IR_YAML_MAX_NODES)
    return fail_at(b, KF_ERR_PARSE, ev->start_mark.line, ev->start_mark.column,
                   "too many YAML nodes (the limit is %u)", (unsigned)IR_YAML_MAX_NODES);
  size_t cap = d->cap_nodes;
  void *p = d->nodes;
  if (!grow(&p, &cap, (size_t)d->n_nodes + 1, sizeof(ir_ynode))) return oom(b);
  d->nodes = p;
  d->cap_nodes = (uint32_t)cap;
  ir_ynode *n = &d->nodes[d->n_nodes];
  memset(n, 0, sizeof *n);
  n->type = (uint8_t)type;
  n->line = (uint32_t)ev->start_mark.line + 1;
  n->col = (uint32_t)ev->start_mark.column + 1;
  *out = d->n_nodes++;
  return KF_OK;
}

/* A finished node becomes the root or a child of the innermost collection. */
static kf_status finish(builder *b, uint32_t idx) {
  if (b->depth == 0) {
    b->doc->root = idx;
    b->have_root = true;
    return KF_OK;
  }
  if (!grow_u32(&b->pending, &b->cap_pending, b->n_pending + 1)) return oom(b);
  b->pending[b->n_pending++] = idx;
  return KF_OK;
}

/* Anchors, aliases and tags are refused wherever they appear. */
static kf_status check_props(builder *b, const yaml_event_t *ev, const yaml_char_t *anchor,
                             const yaml_char_t *tag) {
  if (anchor)
    return fail_at(b, KF_ERR_PARSE, ev->start_mark.line, ev->start_mark.column,
                   "YAML anchors and aliases are not supported (anchor '&%.64s'); write the "
                   "value out in full",
                   (const char *)anchor);
  if (tag)
    return fail_at(b, KF_ERR_PARSE, ev->start_mark.line, ev->start_mark.column,
                   "YAML tags are not supported (tag '%.64s')", (const char *)tag);
  return KF_OK;
}

static kf_status on_scalar(builder *b, const yaml_event_t *ev) {
  kf_status st = check_props(b, ev, ev->data.scalar.anchor, ev->data.scalar.tag);
  if (st != KF_OK) return st;
  uint32_t idx;
  if ((st = new_node(b, ev, IR_Y_SCALAR, &idx)) != KF_OK) return st;
  ir_ydoc *d = b->doc;
  size_t len = ev->data.scalar.length;
  if (len > IR_YAML_MAX_BYTES || d->n_text + len + 1 > UINT32_MAX)
    return fail_at(b, KF_ERR_PARSE, ev->start_mark.line, ev->start_mark.column,
                   "YAML text too long");
  void *p = d->text;
  if (!grow(&p, &d->cap_text, d->n_text + len + 1, 1)) return oom(b);
  d->text = p;
  memcpy(d->text + d->n_text, ev->data.scalar.value, len);
  d->text[d->n_text + len] = '\0';
  ir_ynode *n = &d->nodes[idx];
  n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  n->a = (uint32_t)d->n_text;
  n->n = (uint32_t)len;
  d->n_text += len + 1;
  return finish(b, idx);
}

static kf_status on_start(builder *b, const yaml_event_t *ev, ir_ytype type) {
  const yaml_char_t *anchor = type == IR_Y_SEQ ? ev->data.sequence_start.anchor
                                               : ev->data.mapping_start.anchor;
  const yaml_char_t *tag =
      type == IR_Y_SEQ ? ev->data.sequence_start.tag : ev->data.mapping_start.tag;
  kf_status st = check_props(b, ev, anchor, tag);
  if (st != KF_OK) return st;
  if (b->depth >= IR_YAML_MAX_DEPTH)
    return fail_at(b, KF_ERR_PARSE, ev->start_mark.line, ev->start_mark.column,
                   "nesting deeper than %d levels", IR_YAML_MAX_DEPTH);
  uint32_t idx;
  if ((st = new_node(b, ev, type, &idx)) != KF_OK) return st;
  b->open[b->depth] = idx;
  b->open_at[b->depth] = b->n_pending;
  b->depth++;
  return KF_OK;
}

static kf_status on_end(builder *b) {
  if (b->depth == 0) return KF_OK; /* libyaml never does this */
  b->depth--;
  uint32_t idx = b->open[b->depth];
  uint32_t from = b->open_at[b->depth];
  uint32_t count = b->n_pending - from;
  ir_ydoc *d = b->doc;
  if (!grow_u32(&d->kids, &d->cap_kids, d->n_kids + count)) return oom(b);
  if (count) memcpy(d->kids + d->n_kids, b->pending + from, count * sizeof(uint32_t));
  d->nodes[idx].a = d->n_kids;
  d->nodes[idx].n = count;
  d->n_kids += count;
  b->n_pending = from;
  return finish(b, idx);
}

static kf_status on_event(builder *b, const yaml_event_t *ev) {
  switch (ev->type) {
    case YAML_STREAM_END_EVENT:
      b->done = true;
      return KF_OK;
    case YAML_DOCUMENT_START_EVENT:
      if (b->documents++ > 0)
        return fail_at(b, KF_ERR_PARSE, ev->start_mark.line, ev->start_mark.column,
                       "a second YAML document starts here; a graph file holds one");
      return KF_OK;
    case YAML_ALIAS_EVENT:
      return fail_at(b, KF_ERR_PARSE, ev->start_mark.line, ev->start_mark.column,
                     "YAML anchors and aliases are not supported (alias '*%.64s'); write the "
                     "value out in full",
                     (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
      return on_scalar(b, ev);
    case YAML_SEQUENCE_START_EVENT:
      return on_start(b, ev, IR_Y_SEQ);
    case YAML_MAPPING_START_EVENT:
      return on_start(b, ev, IR_Y_MAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      return on_end(b);
    default:
      return KF_OK;
  }
}

/* Reader errors carry a byte offset, not a mark: count lines and characters
 * (UTF-8 lead bytes) up to it, as libyaml's marks would. */
static void offset_position(const char *text, size_t len, size_t off, size_t *line0,
                            size_t *col0) {
  size_t line = 0, col = 0;
  if (off > len) off = len;
  for (size_t i = 0; i < off; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c == '\n' || (c == '\r' && (i + 1 >= len || text[i + 1] != '\n'))) {
      line++;
      col = 0;
    } else if ((c & 0xC0) != 0x80 && c != '\r') {
      col++;
    }
  }
  *line0 = line;
  *col0 = col;
}

static kf_status libyaml_error(builder *b, const yaml_parser_t *p, const char *text,
                               size_t len) {
  const char *problem = p->problem ? p->problem : "unknown error";
  if (p->error == YAML_MEMORY_ERROR) return oom(b);
  if (p->error == YAML_READER_ERROR) {
    size_t line0, col0;
    offset_position(text, len, p->problem_offset, &line0, &col0);
    if (p->problem_value >= 0)
      return fail_at(b, KF_ERR_PARSE, line0, col0,
                     "not valid UTF-8 text: %s (0x%02X); a graph file must be UTF-8", problem,
                     (unsigned)p->problem_value);
    return fail_at(b, KF_ERR_PARSE, line0, col0,
                   "not valid UTF-8 text: %s; a graph file must be UTF-8", problem);
  }
  if (p->context)
    return fail_at(b, KF_ERR_PARSE, p->problem_mark.line, p->problem_mark.column,
                   "YAML syntax error: %s (%s at %zu:%zu)", problem, p->context,
                   p->context_mark.line + 1, p->context_mark.column + 1);
  return fail_at(b, KF_ERR_PARSE, p->problem_mark.line, p->problem_mark.column,
                 "YAML syntax error: %s", problem);
}

void ir_ydoc_free(ir_ydoc *doc) {
  if (!doc) return;
  free(doc->nodes);
  free(doc->kids);
  free(doc->text);
  memset(doc, 0, sizeof *doc);
}

kf_status ir_ydoc_parse(ir_ydoc *doc, const char *text, size_t len, ir_yerr *err) {
  memset(doc, 0, sizeof *doc);
  memset(err, 0, sizeof *err);
  builder b = {.doc = doc, .err = err};
  if (len > IR_YAML_MAX_BYTES)
    return fail_at(&b, KF_ERR_PARSE, 0, 0, "file is too large (%zu bytes; the limit is %zu MiB)",
                   len, IR_YAML_MAX_BYTES >> 20);
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) return oom(&b);
  yaml_parser_set_input_string(&p, (const unsigned char *)(text ? text : ""), text ? len : 0);
  kf_status st = KF_OK;
  while (!b.done && st == KF_OK) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&p, &ev)) {
      st = libyaml_error(&b, &p, text ? text : "", text ? len : 0);
      break;
    }
    st = on_event(&b, &ev);
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&p);
  free(b.pending);
  if (st == KF_OK && !b.have_root)
    st = fail_at(&b, KF_ERR_PARSE, 0, 0, "empty file: expected a mapping with kfuse: 1");
  if (st != KF_OK) ir_ydoc_free(doc);
  return st;
}
