/* yaml_tree.h - a YAML document as a small read-only tree with 1-based
 * positions, built from libyaml events under the limits that make hostile
 * input harmless (no aliases, bounded depth, size and node count). */
#ifndef KF_IR_YAML_TREE_H
#define KF_IR_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kfuse.h"

/* Limits of a graph file; docs/yaml.md states them for users. */
#define IR_YAML_MAX_BYTES ((size_t)64 << 20) /* 64 MiB */
#define IR_YAML_MAX_DEPTH 64                 /* nested collections */
#define IR_YAML_MAX_NODES ((uint32_t)1 << 22) /* scalars + collections */
#define IR_YAML_NAME_MAX 255                 /* bytes in a value name */

typedef enum ir_ytype { IR_Y_SCALAR, IR_Y_SEQ, IR_Y_MAP } ir_ytype;

typedef struct ir_ynode {
  uint8_t type;  /* ir_ytype */
  bool plain;    /* a scalar written without quotes */
  uint32_t line; /* 1-based */
  uint32_t col;  /* 1-based, in characters */
  uint32_t a;    /* scalar: offset of its text; collection: first entry in kids */
  uint32_t n;    /* scalar: bytes of text; sequence: items; mapping: 2 x pairs */
} ir_ynode;

/* Mapping entries are stored key, value, key, value... in kids. Scalar texts
 * are NUL-terminated in text (they may also hold NULs of their own, from
 * "\0" escapes: n is the true length). */
typedef struct ir_ydoc {
  ir_ynode *nodes;
  uint32_t n_nodes, cap_nodes;
  uint32_t *kids;
  uint32_t n_kids, cap_kids;
  char *text;
  size_t n_text, cap_text;
  uint32_t root;
} ir_ydoc;

/* Where and why parsing failed. */
typedef struct ir_yerr {
  kf_status st;
  uint32_t line, col; /* 1-based; 0 when there is no place */
  char msg[512];
} ir_yerr;

/* Parses one YAML document from text[0..len). On failure returns KF_ERR_PARSE
 * (or KF_ERR_OUT_OF_MEMORY) with *err filled, and doc holds nothing. An empty
 * stream is an error. The caller frees doc with ir_ydoc_free either way. */
kf_status ir_ydoc_parse(ir_ydoc *doc, const char *text, size_t len, ir_yerr *err);
void ir_ydoc_free(ir_ydoc *doc);

static inline const ir_ynode *ir_ynode_at(const ir_ydoc *d, uint32_t i) { return &d->nodes[i]; }
static inline const char *ir_ytext(const ir_ydoc *d, const ir_ynode *n) { return d->text + n->a; }
/* The i-th child of a collection (for mappings: 2i is a key, 2i+1 its value). */
static inline const ir_ynode *ir_ykid(const ir_ydoc *d, const ir_ynode *n, uint32_t i) {
  return &d->nodes[d->kids[n->a + i]];
}

#endif
