/* names.c - value names: syntax, and the graph's name -> value map (open
 * addressing with linear probing and backward-shift deletion). */
#include "ir/names.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "core/alloc.h"
#include "ir/graph.h"
#include "ir/ir.h"

#define IR_NAME_MAX 255

bool ir_name_valid(const char *name) {
  if (!name) return false;
  const unsigned char *s = (const unsigned char *)name;
  bool first_ok = (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_';
  if (!first_ok) return false;
  size_t i = 1;
  for (; s[i]; i++) {
    unsigned char c = s[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.';
    if (!ok || i >= IR_NAME_MAX) return false;
  }
  return true;
}

static uint32_t name_hash(const char *s) {
  return (uint32_t)XXH3_64bits(s, strlen(s));
}

int32_t ir_names_find(const kf_graph *g, const char *name) {
  if (!g || !name || g->names.cap == 0) return -1;
  uint32_t mask = g->names.cap - 1;
  for (uint32_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
    int32_t v = g->names.slots[i];
    if (v < 0) return -1;
    if (strcmp(g->nodes[v].name, name) == 0) return v;
  }
}

/* Places v (whose node already carries its name) in the first free slot. */
static void place(ir_names *names, const char *name, int32_t v) {
  uint32_t mask = names->cap - 1;
  uint32_t i = name_hash(name) & mask;
  while (names->slots[i] >= 0) i = (i + 1) & mask;
  names->slots[i] = v;
}

/* Keeps the load factor at or below one half, so probes stay short. */
static bool reserve(kf_graph *g) {
  ir_names *names = &g->names;
  if ((uint64_t)(names->count + 1) * 2 <= names->cap) return true;
  uint32_t cap = names->cap ? names->cap * 2 : 16;
  if (cap == 0 || cap > (1u << 30)) return false;
  int32_t *slots = core_malloc((size_t)cap * sizeof *slots);
  if (!slots) return false;
  for (uint32_t i = 0; i < cap; i++) slots[i] = -1;
  ir_names bigger = {slots, cap, names->count};
  for (uint32_t i = 0; i < names->cap; i++)
    if (names->slots[i] >= 0) place(&bigger, g->nodes[names->slots[i]].name, names->slots[i]);
  free(names->slots);
  *names = bigger;
  return true;
}

/* Drops v's current name from the map (its node keeps the string). */
static void unmap(kf_graph *g, int32_t v) {
  ir_names *names = &g->names;
  if (names->cap == 0 || !g->nodes[v].name) return;
  uint32_t mask = names->cap - 1;
  uint32_t i = name_hash(g->nodes[v].name) & mask;
  while (names->slots[i] != v) {
    if (names->slots[i] < 0) return; /* not mapped */
    i = (i + 1) & mask;
  }
  /* Backward shift: pull later entries of the cluster into the hole when
   * their home slot does not lie cyclically in (hole, j]. */
  for (uint32_t j = (i + 1) & mask; names->slots[j] >= 0; j = (j + 1) & mask) {
    uint32_t home = name_hash(g->nodes[names->slots[j]].name) & mask;
    bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!stays) {
      names->slots[i] = names->slots[j];
      i = j;
    }
  }
  names->slots[i] = -1;
  names->count--;
}

bool ir_names_insert(kf_graph *g, const char *name, int32_t v) {
  if (!g || !name || v < 0 || v >= g->n_nodes) return false;
  size_t len = strlen(name);
  char *copy = core_malloc(len + 1);
  if (!copy) return false;
  memcpy(copy, name, len + 1);
  if (!g->nodes[v].name && !reserve(g)) {
    free(copy);
    return false;
  }
  if (g->nodes[v].name) { /* a rename: the slot count does not grow */
    unmap(g, v);
    free(g->nodes[v].name);
  }
  g->nodes[v].name = copy;
  place(&g->names, copy, v);
  g->names.count++;
  return true;
}

void ir_names_free(ir_names *names) {
  if (!names) return;
  free(names->slots);
  names->slots = NULL;
  names->cap = names->count = 0;
}

kf_status kf_set_name(kf_graph *g, kf_value v, const char *name) {
  if (!g) return KF_ERR_INVALID_ARG;
  if (!ir_valid(g, v)) return ir_error(g, KF_ERR_INVALID_ARG, "kf_set_name: bad value %d", v);
  if (!ir_name_valid(name))
    return ir_error(g, KF_ERR_INVALID_ARG,
                    "kf_set_name: invalid name '%.64s' (want [A-Za-z_][A-Za-z0-9_.]*, "
                    "at most %d bytes)",
                    name ? name : "(null)", IR_NAME_MAX);
  int32_t owner = ir_names_find(g, name);
  if (owner == v) return KF_OK;
  if (owner >= 0)
    return ir_error(g, KF_ERR_INVALID_ARG, "kf_set_name: name '%s' is already taken by %%%d", name,
                    owner);
  if (!ir_names_insert(g, name, v))
    return ir_error(g, KF_ERR_OUT_OF_MEMORY, "kf_set_name: out of memory");
  return KF_OK;
}

kf_value kf_graph_find(const kf_graph *g, const char *name) {
  int32_t v = ir_names_find(g, name);
  return v < 0 ? KF_NONE : v;
}
