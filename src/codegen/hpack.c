/* hpack.c - a horizontal launch whose parts share bodies: identical
 * pointwise parts become one generic function that a block finds its part
 * for by binary search over baked tables, with every pointer packed in one
 * __grid_constant__ kernel parameter indexed by part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/emit.h"
#include "codegen/expr.h"
#include "codegen/hpack.h"
#include "codegen/part.h"
#include "codegen/pointwise.h"
#include "core/alloc.h"

/* Stands for a group's function name while texts are compared. */
#define PLACEHOLDER "KF_GENERIC_FN"
/* Kernel parameter space on sm_70+ with CUDA 12.1+: 32764 bytes. */
#define MAX_PACKED_PTRS (32764 / 8)
/* Up to this many units are routed by an if-chain, above by a search. */
#define CHAIN_UNITS 8

/* A block range of the launch: one group of identical parts, or one part. */
typedef struct unit {
  int *members; /* part indices, launch order */
  int n;
  uint32_t start, end; /* block range */
  int param_base;      /* first pointer of its first member in P.p */
  int group;           /* group number (kf_g<group>), -1 for a single part */
} unit;

typedef struct packing {
  unit *units;
  int n_units, n_groups;
  char **texts; /* per part: its generic function text (NULL: not generic) */
  cg_part *generic; /* per part: its plan as a generic part */
} packing;

static void packing_free(packing *pk, int n) {
  for (int u = 0; u < pk->n_units; u++) free(pk->units[u].members);
  free(pk->units);
  for (int i = 0; pk->texts && i < n; i++) free(pk->texts[i]);
  free(pk->texts);
  free(pk->generic);
}

/* The text of an earlier part whose generic key equals part i's, or NULL
 * (keys[i].s NULL: part i has none). */
static const char *same_key(const cg_buf *keys, char **texts, int i) {
  for (int j = 0; keys[i].s && j < i; j++)
    if (keys[j].s && texts[j] && keys[j].len == keys[i].len &&
        memcmp(keys[i].s, keys[j].s, keys[i].len) == 0)
      return texts[j];
  return NULL;
}

/* Each pointwise part's generic text and plan (the part itself unchanged).
 * A part whose generic key (cg_pointwise_generic_key) matches an earlier
 * part's reuses that text instead of emitting its own. */
static kf_status generic_texts(const kf_graph *g, const cg_target *t, cg_part *parts, int n,
                               packing *pk, char *err, size_t errsize) {
  cg_buf *keys = core_calloc((size_t)n + 1, sizeof *keys);
  if (!keys) return KF_ERR_OUT_OF_MEMORY;
  kf_status st = KF_OK;
  for (int i = 0; i < n && st == KF_OK; i++) {
    /* a tiled transpose keeps its own body, as other kinds do */
    if (parts[i].k->kind != FK_POINTWISE || parts[i].tiled) continue;
    cg_part p = parts[i];
    snprintf(p.fn, sizeof p.fn, "%s", PLACEHOLDER);
    cg_buf text = {0};
    cg_emit_args a = {g, p.k, t, &p, &text, err, errsize};
    st = cg_plan_pointwise_generic(&a);
    if (st != KF_OK) break;
    if (!cg_pointwise_generic_key(g, &p, &keys[i])) cg_buf_free(&keys[i]);
    const char *reuse = same_key(keys, pk->texts, i);
    if (reuse) {
      cg_pointwise_generic_done(g, &p);
      cg_puts(&text, reuse);
    } else {
      st = cg_emit_pointwise_generic(&a);
    }
    if (st == KF_OK && text.oom) st = KF_ERR_OUT_OF_MEMORY;
    if (st != KF_OK) {
      cg_buf_free(&text);
      break;
    }
    snprintf(p.fn, sizeof p.fn, "%s", parts[i].fn);
    pk->generic[i] = p;
    pk->texts[i] = cg_buf_take(&text);
  }
  for (int i = 0; i < n; i++) cg_buf_free(&keys[i]);
  free(keys);
  return st;
}

static bool add_member(unit *u, int i) {
  int *m = core_realloc(u->members, (size_t)(u->n + 1) * sizeof *m);
  if (!m) return false;
  u->members = m;
  u->members[u->n++] = i;
  return true;
}

/* Units in order of first appearance: parts with equal generic texts
 * share one. false on OOM. */
static bool make_units(int n, packing *pk) {
  pk->units = core_calloc((size_t)n, sizeof *pk->units);
  int *unit_of = core_calloc((size_t)n, sizeof *unit_of);
  bool ok = pk->units && unit_of;
  for (int i = 0; ok && i < n; i++) {
    int u = -1;
    for (int j = 0; pk->texts[i] && j < i && u < 0; j++)
      if (pk->texts[j] && strcmp(pk->texts[i], pk->texts[j]) == 0) u = unit_of[j];
    if (u < 0) {
      u = pk->n_units++;
      pk->units[u].group = -1;
    }
    unit_of[i] = u;
    ok = add_member(&pk->units[u], i);
  }
  free(unit_of);
  for (int u = 0; ok && u < pk->n_units; u++)
    if (pk->units[u].n > 1) pk->units[u].group = pk->n_groups++;
  return ok;
}

/* Lays the units out: block ranges, pointer ranges, the launch's shape. */
static bool layout(const kf_graph *g, cg_part *parts, packing *pk, cg_launch_src *out) {
  int np = 0;
  for (int u = 0; u < pk->n_units; u++) {
    unit *un = &pk->units[u];
    un->start = out->grid;
    un->param_base = np;
    for (int m = 0; m < un->n; m++) {
      cg_part *p = &parts[un->members[m]];
      if (un->group >= 0) {
        *p = pk->generic[un->members[m]];
        snprintf(p->fn, sizeof p->fn, "kf_g%d", un->group);
      }
      out->grid += p->blocks;
      if (p->threads > out->block) out->block = p->threads;
      if (p->max_offset > out->max_offset) out->max_offset = p->max_offset;
      out->index64 |= p->index64;
      np += p->n_params;
    }
    un->end = out->grid;
  }
  (void)g;
  out->params = core_calloc((size_t)np + 1, sizeof *out->params);
  if (!out->params) return false;
  for (int u = 0; u < pk->n_units; u++)
    for (int m = 0; m < pk->units[u].n; m++) {
      const cg_part *p = &parts[pk->units[u].members[m]];
      for (int j = 0; j < p->n_params; j++)
        out->params[out->n_params++] = (cg_param){p->params[j].value, p->params[j].written};
    }
  return true;
}

/* "(const float *)P.p[<base> + <index> * <k> + j]" for each pointer. */
static void packed_args(const kf_graph *g, const cg_part *p, int base, const char *index,
                        cg_buf *out) {
  for (int j = 0; j < p->n_params; j++) {
    const cg_pparam *q = &p->params[j];
    cg_printf(out, ", (%s%s *)P.p[%d", q->written ? "" : "const ",
              cg_storage_type(g->nodes[q->value].dtype), base + j);
    if (index) cg_printf(out, " + %s * %d", index, p->n_params);
    cg_puts(out, "]");
  }
  if (p->n_params == 0) cg_puts(out, ", (void *)0");
}

/* A group's tables: absolute block starts (n + 1) and element counts. */
static void group_tables(const cg_part *parts, const unit *un, cg_buf *decls) {
  const cg_part *p0 = &parts[un->members[0]];
  cg_printf(decls, "__constant__ unsigned kf_g%d_start[%d] = {", un->group, un->n + 1);
  uint32_t s = un->start;
  for (int m = 0; m < un->n; m++) {
    cg_printf(decls, "%s%u", m ? ", " : "", s);
    s += parts[un->members[m]].blocks;
  }
  cg_printf(decls, ", %u};\n__constant__ %s kf_g%d_numel[%d] = {", s,
            p0->index64 ? "long long" : "int", un->group, un->n);
  for (int m = 0; m < un->n; m++)
    cg_printf(decls, "%s%lld", m ? ", " : "", (long long)parts[un->members[m]].k->numel);
  cg_puts(decls, "};\n");
}

/* The statements that run unit un for block b. */
static void unit_call(const kf_graph *g, const cg_part *parts, const unit *un, cg_buf *out) {
  const cg_part *p0 = &parts[un->members[0]];
  if (un->group < 0) {
    char bid[32];
    cg_buf args = {0};
    snprintf(bid, sizeof bid, "b - %uu", un->start);
    packed_args(g, p0, un->param_base, NULL, &args);
    cg_part_call(out, p0, bid, args.s ? args.s + 2 : "", "    "); /* skip the ", " */
    out->oom |= args.oom;
    cg_buf_free(&args);
    return;
  }
  int G = un->group;
  cg_printf(out,
            "int lo = 0, hi = %d;\n"
            "    while (lo < hi) {\n"
            "      const int mid = (lo + hi + 1) >> 1;\n"
            "      if (kf_g%d_start[mid] <= b) lo = mid; else hi = mid - 1;\n"
            "    }\n"
            "    const unsigned s = kf_g%d_start[lo];\n"
            "    kf_g%d(b - s, kf_g%d_numel[lo], kf_g%d_start[lo + 1] - s",
            un->n - 1, G, G, G, G, G);
  packed_args(g, p0, un->param_base, "lo", out);
  cg_puts(out, ");");
}

/* The entry's body: an if-chain over the units, or (many units) a binary
 * search over their starts and a switch. */
static void packed_route(const kf_graph *g, const cg_part *parts, const packing *pk,
                         cg_buf *decls, cg_buf *route) {
  cg_puts(route, "  const unsigned b = blockIdx.x;\n");
  int nu = pk->n_units;
  if (nu > CHAIN_UNITS) {
    cg_printf(decls, "__constant__ unsigned kf_unit_start[%d] = {", nu);
    for (int u = 0; u < nu; u++) cg_printf(decls, "%s%u", u ? ", " : "", pk->units[u].start);
    cg_puts(decls, "};\n");
    cg_printf(route,
              "  int u = 0, uhi = %d;\n"
              "  while (u < uhi) {\n"
              "    const int mid = (u + uhi + 1) >> 1;\n"
              "    if (kf_unit_start[mid] <= b) u = mid; else uhi = mid - 1;\n"
              "  }\n"
              "  switch (u) {\n",
              nu - 1);
  }
  for (int u = 0; u < nu; u++) {
    const unit *un = &pk->units[u];
    if (un->group >= 0) group_tables(parts, un, decls);
    if (nu > CHAIN_UNITS)
      cg_printf(route, "  case %d: {\n    ", u);
    else if (nu == 1)
      cg_puts(route, "  {\n    ");
    else
      cg_printf(route, "  %sif (b < %uu) {\n    ", u ? "else " : "", un->end);
    unit_call(g, parts, un, route);
    cg_puts(route, nu > CHAIN_UNITS ? "\n    break;\n  }\n" : "\n  }\n");
  }
  if (nu > CHAIN_UNITS) cg_puts(route, "  }\n");
}

/* Emits every unit's function once into body. */
static kf_status emit_units(const kf_graph *g, const cg_target *t, cg_part *parts,
                            const packing *pk, cg_buf *body, cg_launch_src *out, char *err,
                            size_t errsize) {
  for (int u = 0; u < pk->n_units; u++) {
    const unit *un = &pk->units[u];
    for (int m = 0; m < un->n; m++) parts[un->members[m]].launch_threads = (int)out->block;
    cg_part *p0 = &parts[un->members[0]];
    if (un->group < 0) {
      cg_emit_args a = {g, p0->k, t, p0, body, err, errsize};
      kf_status st = cg_emit_part(&a);
      if (st != KF_OK) return st;
    } else {
      /* the placeholder becomes the group's name */
      char name[32];
      snprintf(name, sizeof name, "kf_g%d", un->group);
      const char *s = pk->texts[un->members[0]];
      for (const char *hit; (hit = strstr(s, PLACEHOLDER)); s = hit + strlen(PLACEHOLDER)) {
        cg_printf(body, "%.*s", (int)(hit - s), s);
        cg_puts(body, name);
      }
      cg_puts(body, s);
    }
    cg_puts(body, "\n");
    for (int m = 0; m < un->n; m++)
      if (parts[un->members[m]].vec_bytes > out->vec_bytes)
        out->vec_bytes = parts[un->members[m]].vec_bytes;
  }
  return body->oom ? KF_ERR_OUT_OF_MEMORY : KF_OK;
}

kf_status cg_emit_packed(const kf_graph *g, const cg_target *t, cg_part *parts, int n,
                         cg_buf *body, cg_buf *decls, cg_buf *params, cg_buf *route,
                         cg_launch_src *out, bool *done, char *err, size_t errsize) {
  *done = false;
  packing pk = {0};
  pk.texts = core_calloc((size_t)n, sizeof *pk.texts);
  pk.generic = core_calloc((size_t)n, sizeof *pk.generic);
  kf_status st = pk.texts && pk.generic ? KF_OK : KF_ERR_OUT_OF_MEMORY;
  if (st == KF_OK) st = generic_texts(g, t, parts, n, &pk, err, errsize);
  if (st == KF_OK && !make_units(n, &pk)) st = KF_ERR_OUT_OF_MEMORY;
  int ptrs = 0;
  for (int i = 0; i < n; i++) ptrs += parts[i].n_params;
  if (st != KF_OK || pk.n_groups == 0 || ptrs > MAX_PACKED_PTRS) {
    packing_free(&pk, n);
    return st; /* not done: the caller emits one body per part */
  }
  *done = true;
  if (!layout(g, parts, &pk, out)) st = KF_ERR_OUT_OF_MEMORY;
  if (st == KF_OK) st = emit_units(g, t, parts, &pk, body, out, err, errsize);
  if (st == KF_OK) {
    out->packed_params = true;
    cg_printf(decls, "struct kf_params_%d { const void *p[%d]; };\n", out->n_params,
              out->n_params > 0 ? out->n_params : 1);
    cg_printf(params, "const __grid_constant__ kf_params_%d P", out->n_params);
    packed_route(g, parts, &pk, decls, route);
    for (int u = 0; u < pk.n_units; u++)
      if (pk.units[u].group >= 0)
        cg_printf(decls, "// kf_g%d: one body for %d identical parts, blocks [%u, %u)\n",
                  pk.units[u].group, pk.units[u].n, pk.units[u].start, pk.units[u].end);
  }
  packing_free(&pk, n);
  return st;
}
