/* index_ctx.c - index contexts: how the element being computed maps to each
 * value's linear index and coordinates, through broadcasting and layout ops,
 * with the constants of the shapes baked into the expressions. */
#include <stdio.h>
#include <string.h>

#include "codegen/cg_internal.h"

/* An index constant: a plain literal, or LL-suffixed past 32 bits. */
static void num(char *out, size_t size, int64_t v) {
  if (v > INT32_MAX)
    snprintf(out, size, "%lldLL", (long long)v);
  else
    snprintf(out, size, "%lld", (long long)v);
}

static int64_t stride_of(int rank, const int64_t *shape, int d) {
  int64_t s = 1;
  for (int i = d + 1; i < rank; i++) s *= shape[i];
  return s;
}

void cg_ctx_linear(cg_ctx *c, int rank, const int64_t *shape, const char *lin, int vclass) {
  memset(c, 0, sizeof *c);
  c->rank = rank;
  for (int d = 0; d < rank; d++) c->shape[d] = shape[d];
  snprintf(c->lin, sizeof c->lin, "%s", lin);
  c->vclass = vclass;
}

void cg_ctx_key(const cg_ctx *c, char *key, size_t size) {
  if (c->lin[0]) {
    snprintf(key, size, "L:%s", c->lin);
    return;
  }
  size_t n = (size_t)snprintf(key, size, "C:");
  for (int d = 0; d < c->rank && n < size; d++) {
    char x[192];
    cg_ctx_coord(c, d, x, sizeof x);
    n += (size_t)snprintf(key + n, size - n, "%s;", x);
  }
}

void cg_ctx_lin(const cg_ctx *c, char *out, size_t size) {
  if (c->lin[0]) {
    snprintf(out, size, "%s", c->lin);
    return;
  }
  size_t n = 0;
  out[0] = '\0';
  for (int d = 0; d < c->rank && n < size; d++) {
    if (c->shape[d] == 1) continue;
    char x[192], s[32];
    cg_ctx_coord(c, d, x, sizeof x);
    int64_t st = stride_of(c->rank, c->shape, d);
    num(s, sizeof s, st);
    if (st == 1)
      n += (size_t)snprintf(out + n, size - n, "%s(%s)", n ? " + " : "", x);
    else
      n += (size_t)snprintf(out + n, size - n, "%s(%s) * %s", n ? " + " : "", x, s);
  }
  if (n == 0) snprintf(out, size, "0");
}

/* Coordinate d of `var`, a linear index over dims [first, last) of shape. */
static void decompose(const char *var, int first, int last, const int64_t *shape, int d,
                      char *out, size_t size) {
  if (shape[d] == 1) {
    snprintf(out, size, "0");
    return;
  }
  int64_t st = 1;
  for (int i = d + 1; i < last; i++) st *= shape[i];
  bool leading = true; /* no non-1 dim before d: no modulo needed */
  for (int i = first; i < d; i++)
    if (shape[i] != 1) leading = false;
  char s[32], e[32];
  num(s, sizeof s, st);
  num(e, sizeof e, shape[d]);
  if (leading && st == 1)
    snprintf(out, size, "%s", var);
  else if (leading)
    snprintf(out, size, "(%s) / %s", var, s);
  else if (st == 1)
    snprintf(out, size, "(%s) %% %s", var, e);
  else
    snprintf(out, size, "(%s) / %s %% %s", var, s, e);
}

void cg_ctx_coord(const cg_ctx *c, int d, char *out, size_t size) {
  if (c->coord[d][0])
    snprintf(out, size, "%s", c->coord[d]);
  else if (c->lin[0])
    decompose(c->lin, 0, c->rank, c->shape, d, out, size);
  else
    snprintf(out, size, "0");
}

void cg_ctx_groups(cg_ctx *c, int rank, const int64_t *shape, int ngroups, const int *bounds,
                   const char *const *vars, int vclass) {
  memset(c, 0, sizeof *c);
  c->rank = rank;
  c->vclass = vclass;
  for (int d = 0; d < rank; d++) c->shape[d] = shape[d];
  size_t n = 0;
  for (int gi = 0; gi < ngroups; gi++) {
    int64_t after = 1;
    for (int d = bounds[gi + 1]; d < rank; d++) after *= shape[d];
    char s[32];
    num(s, sizeof s, after);
    int64_t ext = 1;
    for (int d = bounds[gi]; d < bounds[gi + 1]; d++) ext *= shape[d];
    if (ext == 1) continue;
    if (after == 1)
      n += (size_t)snprintf(c->lin + n, sizeof c->lin - n, "%s%s", n ? " + " : "", vars[gi]);
    else
      n += (size_t)snprintf(c->lin + n, sizeof c->lin - n, "%s%s * %s", n ? " + " : "",
                            vars[gi], s);
    for (int d = bounds[gi]; d < bounds[gi + 1]; d++)
      decompose(vars[gi], bounds[gi], bounds[gi + 1], shape, d, c->coord[d],
                sizeof c->coord[d]);
  }
  if (n == 0) snprintf(c->lin, sizeof c->lin, "0");
  for (int d = 0; d < rank; d++)
    if (!c->coord[d][0]) snprintf(c->coord[d], sizeof c->coord[d], "0");
}

/* The part of var (a row-major index over the dims d of shape with
 * group[d] == gi) that dims [d0, d1) of that group hold: (var / st) % ext. */
static void run_index(const char *var, int rank, const int64_t *shape, const int *group, int gi,
                      int d0, int d1, char *out, size_t size) {
  int64_t st = 1, ext = 1;
  bool leading = true;
  for (int i = 0; i < rank; i++) {
    if (group[i] != gi || shape[i] == 1) continue;
    if (i < d0) leading = false;
    if (i >= d1) st *= shape[i];
    if (i >= d0 && i < d1) ext *= shape[i];
  }
  char s[32], e[32];
  num(s, sizeof s, st);
  num(e, sizeof e, ext);
  if (leading && st == 1)
    snprintf(out, size, "%s", var);
  else if (leading)
    snprintf(out, size, "(%s) / %s", var, s);
  else if (st == 1)
    snprintf(out, size, "(%s) %% %s", var, e);
  else
    snprintf(out, size, "(%s) / %s %% %s", var, s, e);
}

void cg_ctx_assign(cg_ctx *c, int rank, const int64_t *shape, const int *group,
                   const char *const *vars, int vclass) {
  memset(c, 0, sizeof *c);
  c->rank = rank;
  c->vclass = vclass;
  for (int d = 0; d < rank; d++) c->shape[d] = shape[d];
  size_t n = 0;
  for (int d = 0; d < rank;) {
    if (shape[d] == 1) {
      snprintf(c->coord[d], sizeof c->coord[d], "0");
      d++;
      continue;
    }
    /* a run: consecutive dims of one group (1-extents in between add nothing) */
    int e = d + 1, last = d;
    while (e < rank && (shape[e] == 1 || group[e] == group[d])) {
      if (shape[e] != 1) last = e;
      e++;
    }
    e = last + 1;
    for (int i = d; i < e; i++)
      if (shape[i] != 1)
        run_index(vars[group[d]], rank, shape, group, group[d], i, i + 1, c->coord[i],
                  sizeof c->coord[i]);
      else
        snprintf(c->coord[i], sizeof c->coord[i], "0");
    char r[200], s[32];
    run_index(vars[group[d]], rank, shape, group, group[d], d, e, r, sizeof r);
    int64_t st = stride_of(rank, shape, e - 1);
    num(s, sizeof s, st);
    if (st == 1)
      n += (size_t)snprintf(c->lin + n, sizeof c->lin - n, "%s%s", n ? " + " : "", r);
    else
      n += (size_t)snprintf(c->lin + n, sizeof c->lin - n, "%s(%s) * %s", n ? " + " : "", r, s);
    d = e;
  }
  if (n == 0) snprintf(c->lin, sizeof c->lin, "0");
}

/* Vector class of an operand reached from c by broadcasting or a
 * transposition that keeps the innermost axis: it stays contiguous only if
 * a W-group of c never crosses c's innermost run and the operand keeps
 * that innermost axis. */
static int derived_vclass(const cg_ctx *c, bool keeps_inner, bool inner_broadcast, int vec) {
  if (c->vclass == VC_SPLAT) return VC_SPLAT;
  if (c->vclass != VC_CONTIG || c->rank == 0) return VC_GATHER;
  if (c->shape[c->rank - 1] % vec != 0) return VC_GATHER;
  if (inner_broadcast) return VC_SPLAT;
  return keeps_inner ? VC_CONTIG : VC_GATHER;
}

void cg_ctx_broadcast(const cg_ctx *c, int rank, const int64_t *shape, int vec, cg_ctx *out) {
  if (cg_same_shape(c->rank, c->shape, rank, shape)) {
    *out = *c;
    return;
  }
  memset(out, 0, sizeof *out);
  out->rank = rank;
  int off = c->rank - rank;
  for (int d = 0; d < rank; d++) {
    out->shape[d] = shape[d];
    if (shape[d] == 1)
      snprintf(out->coord[d], sizeof out->coord[d], "0");
    else
      cg_ctx_coord(c, d + off, out->coord[d], sizeof out->coord[d]);
  }
  bool inner_bc = rank == 0 || shape[rank - 1] == 1;
  bool keeps = rank > 0 && c->rank > 0 && shape[rank - 1] == c->shape[c->rank - 1];
  out->vclass = derived_vclass(c, keeps, inner_bc, vec);
}

void cg_ctx_transpose(const cg_ctx *c, int rank, const int64_t *in_shape, const int8_t *perm,
                      int vec, cg_ctx *out) {
  memset(out, 0, sizeof *out);
  out->rank = rank;
  for (int d = 0; d < rank; d++) out->shape[d] = in_shape[d];
  for (int i = 0; i < rank; i++)
    cg_ctx_coord(c, i, out->coord[perm[i]], sizeof out->coord[perm[i]]);
  bool keeps = rank > 0 && perm[rank - 1] == rank - 1;
  bool inner_bc = rank == 0 || in_shape[rank - 1] == 1;
  out->vclass = derived_vclass(c, keeps, inner_bc && keeps, vec);
}
