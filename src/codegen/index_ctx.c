/* index_ctx.c - index contexts: how the element being computed maps to each
 * value's linear index and coordinates, through broadcasting and layout ops,
 * with the constants of the shapes baked into the expressions. */
#include "codegen/index_ctx.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/part.h"
#include "core/alloc.h"

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

/* The name of the local bound to expr ("ixN"), emitting it the first time
 * in the memo's scope. */
static void bind_ix(cg_gen *gen, const char *expr, char *name, size_t size) {
  for (int i = 0; i < gen->n_ixb; i++)
    if (!strcmp(gen->ixb[i].expr, expr)) {
      snprintf(name, size, "ix%d", gen->ixb[i].tmp);
      return;
    }
  int t = gen->tmp++;
  snprintf(name, size, "ix%d", t);
  /* Declared, then assigned: NVRTC's front end walks the initializer of a
   * local in a template through the initializers of the locals it reads,
   * without memo, so a chain of initialized index locals that each read
   * the previous one three times took exponential time (14 reshape and
   * transpose rounds: 10 s; 32 rounds: never done). An assignment is not
   * walked (the same 14 rounds: 0.19 s). */
  cg_line(gen, "long long %s;", name);
  cg_line(gen, "%s = %s;", name, expr);
  if (gen->n_ixb == gen->cap_ixb) {
    int cap = gen->cap_ixb ? gen->cap_ixb * 2 : 16;
    struct cg_ixb *b = core_realloc(gen->ixb, (size_t)cap * sizeof *b);
    if (!b) {
      cg_gen_oom(gen);
      return;
    }
    gen->ixb = b;
    gen->cap_ixb = cap;
  }
  char *e = core_strdup(expr);
  if (!e) {
    cg_gen_oom(gen);
    return;
  }
  gen->ixb[gen->n_ixb++] = (struct cg_ixb){e, t};
}

/* Whether every coordinate of c is known. */
static bool coords_known(const cg_ctx *c) {
  for (int d = 0; d < c->rank; d++)
    if (!c->coord[d][0]) return false;
  return true;
}

void cg_ctx_put(cg_gen *gen, cg_ctx *c, int d, const char *expr) {
  char *field = d < 0 ? c->lin : c->coord[d];
  size_t cap = d < 0 ? sizeof c->lin : sizeof c->coord[d], n = strlen(expr);
  if (n < cap) {
    memcpy(field, expr, n + 1);
    return;
  }
  field[0] = '\0';
  if (gen) {
    bind_ix(gen, expr, field, cap);
    c->vclass = VC_GATHER;
  } else if (d < 0 ? !coords_known(c) : !c->lin[0]) {
    c->overflow = true;
  }
}

/* Appends a string builder's text to c's field (see cg_ctx_put) and
 * empties the builder; an allocation failure in it fails gen. */
static void put_buf(cg_gen *gen, cg_ctx *c, int d, cg_buf *b) {
  if (b->oom) {
    if (gen) cg_gen_oom(gen);
    c->oom = true;
  } else {
    cg_ctx_put(gen, c, d, b->s ? b->s : "");
  }
  cg_buf_free(b);
}

/* A context built from both forms without a generator: a field that did
 * not fit is derived from the other form, so only both missing overflow. */
static void root_done(cg_ctx *c) {
  c->overflow = !c->lin[0] && !coords_known(c);
}

void cg_ctx_linear(cg_ctx *c, int rank, const int64_t *shape, const char *lin, int vclass) {
  memset(c, 0, sizeof *c);
  c->rank = rank;
  for (int d = 0; d < rank; d++) c->shape[d] = shape[d];
  c->vclass = vclass;
  cg_ctx_put(NULL, c, -1, lin);
}

void cg_ctx_key_s(const cg_ctx *c, cg_buf *key) {
  if (c->lin[0]) {
    cg_printf(key, "L:%s", c->lin);
    return;
  }
  cg_puts(key, "C:");
  for (int d = 0; d < c->rank; d++) {
    cg_ctx_coord(c, d, key);
    cg_puts(key, ";");
  }
}

/* Appends text to out (size) at *n: false when it does not fit. */
static bool add(char *out, size_t size, size_t *n, const char *text) {
  size_t len = strlen(text);
  if (*n + len >= size) return false;
  memcpy(out + *n, text, len + 1);
  *n += len;
  return true;
}

/* Without the linear index, every coordinate is known or "0" (cg_ctx_coord
 * decomposes only a known linear index), so these need no allocation. */
static const char *coord_or_zero(const cg_ctx *c, int d) {
  return c->coord[d][0] ? c->coord[d] : "0";
}

bool cg_ctx_key(const cg_ctx *c, char *key, size_t size) {
  size_t n = 0;
  bool ok = size > 2;
  if (ok) key[0] = '\0';
  if (ok && c->lin[0]) {
    ok = add(key, size, &n, "L:") && add(key, size, &n, c->lin);
  } else if (ok) {
    ok = add(key, size, &n, "C:");
    for (int d = 0; d < c->rank && ok; d++)
      ok = add(key, size, &n, coord_or_zero(c, d)) && add(key, size, &n, ";");
  }
  if (!ok && size > 1) snprintf(key, size, "?");
  return ok;
}

void cg_ctx_lin_s(const cg_ctx *c, cg_buf *out) {
  if (c->lin[0]) {
    cg_puts(out, c->lin);
    return;
  }
  bool any = false;
  for (int d = 0; d < c->rank; d++) {
    if (c->shape[d] == 1) continue;
    char s[32];
    int64_t st = stride_of(c->rank, c->shape, d);
    num(s, sizeof s, st);
    cg_puts(out, any ? " + (" : "(");
    cg_ctx_coord(c, d, out);
    if (st == 1)
      cg_puts(out, ")");
    else
      cg_printf(out, ") * %s", s);
    any = true;
  }
  if (!any) cg_puts(out, "0");
}

bool cg_ctx_lin(const cg_ctx *c, char *out, size_t size) {
  size_t n = 0;
  if (size < 2) return false;
  out[0] = '\0';
  if (c->lin[0]) return add(out, size, &n, c->lin);
  bool ok = true;
  for (int d = 0; d < c->rank && ok; d++) {
    if (c->shape[d] == 1) continue;
    char s[32];
    int64_t st = stride_of(c->rank, c->shape, d);
    num(s, sizeof s, st);
    ok = add(out, size, &n, n ? " + (" : "(") && add(out, size, &n, coord_or_zero(c, d)) &&
         add(out, size, &n, ")") &&
         (st == 1 || (add(out, size, &n, " * ") && add(out, size, &n, s)));
  }
  if (ok && n == 0) ok = add(out, size, &n, "0");
  return ok;
}

/* Room for a coordinate decomposed from a linear index that fits its
 * field (or from a variable): the index, two constants and the operators. */
enum { CG_DECOMP_CAP = CG_LIN_CAP + 96 };

/* var / st % ext as text, leaving out what cannot change the value: the
 * division by a stride of 1, and the modulo when no dim of extent above 1
 * comes before (leading). */
static void div_mod(const char *var, bool leading, int64_t st, int64_t ext, char *out,
                    size_t size) {
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

/* Coordinate d of `var`, a linear index over dims [first, last) of shape,
 * into out (CG_DECOMP_CAP bytes: no allocation, so that root contexts,
 * built without a generator, cannot fail). */
static void decompose(const char *var, int first, int last, const int64_t *shape, int d, char *out,
                      size_t size) {
  if (shape[d] == 1) {
    snprintf(out, size, "0");
    return;
  }
  int64_t st = 1;
  for (int i = d + 1; i < last; i++) st *= shape[i];
  bool leading = true; /* no non-1 dim before d: no modulo needed */
  for (int i = first; i < d; i++)
    if (shape[i] != 1) leading = false;
  div_mod(var, leading, st, shape[d], out, size);
}

void cg_ctx_coord(const cg_ctx *c, int d, cg_buf *out) {
  char x[CG_DECOMP_CAP];
  if (c->coord[d][0])
    cg_puts(out, c->coord[d]);
  else if (c->lin[0]) {
    decompose(c->lin, 0, c->rank, c->shape, d, x, sizeof x);
    cg_puts(out, x);
  } else
    cg_puts(out, "0");
}

/* printf into a fixed buffer at *n; a text that does not fit marks *full. */
static void addf(char *out, size_t size, size_t *n, bool *full, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void addf(char *out, size_t size, size_t *n, bool *full, const char *fmt, ...) {
  if (*full) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(out + *n, size - *n, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= size - *n)
    *full = true;
  else
    *n += (size_t)k;
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
  div_mod(var, leading, st, ext, out, size);
}

/* The one root builder: dims in runs of one group (1-extents in between
 * add nothing), each run's coordinates and its term of the linear index;
 * a dim of group -1 belongs to none (no coordinate, no term).
 * parens: a term is "(x) * stride" (cg_ctx_assign's text) rather than
 * "x * stride" (cg_ctx_groups', whose terms are bare variables): kept apart
 * so that generated sources stay as they were. */
static void root_ctx(cg_ctx *c, int rank, const int64_t *shape, const int *group,
                     const char *const *vars, int vclass, bool parens) {
  memset(c, 0, sizeof *c);
  c->rank = rank;
  c->vclass = vclass;
  for (int d = 0; d < rank; d++) c->shape[d] = shape[d];
  char lin[4 * CG_LIN_CAP], x[CG_DECOMP_CAP];
  size_t n = 0;
  bool full = false;
  lin[0] = '\0';
  for (int d = 0; d < rank;) {
    if (group[d] < 0) { /* in no group: no coordinate, no term */
      d++;
      continue;
    }
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
    for (int i = d; i < e; i++) {
      if (shape[i] != 1)
        run_index(vars[group[d]], rank, shape, group, group[d], i, i + 1, x, sizeof x);
      else
        snprintf(x, sizeof x, "0");
      cg_ctx_put(NULL, c, i, x);
    }
    char s[32];
    run_index(vars[group[d]], rank, shape, group, group[d], d, e, x, sizeof x);
    int64_t st = stride_of(rank, shape, e - 1);
    num(s, sizeof s, st);
    if (st == 1)
      addf(lin, sizeof lin, &n, &full, "%s%s", n ? " + " : "", x);
    else if (parens)
      addf(lin, sizeof lin, &n, &full, "%s(%s) * %s", n ? " + " : "", x, s);
    else
      addf(lin, sizeof lin, &n, &full, "%s%s * %s", n ? " + " : "", x, s);
    d = e;
  }
  if (n == 0) addf(lin, sizeof lin, &n, &full, "0");
  if (!full) cg_ctx_put(NULL, c, -1, lin);
  root_done(c);
}

/* Consecutive groups are runs of one group each, whose index is the group's
 * bare variable (nothing of the group before or after the run). */
void cg_ctx_groups(cg_ctx *c, int rank, const int64_t *shape, int ngroups, const int *bounds,
                   const char *const *vars, int vclass) {
  int group[KF_MAX_RANK];
  for (int d = 0; d < rank; d++) group[d] = -1;
  for (int gi = 0; gi < ngroups; gi++)
    for (int d = bounds[gi]; d < bounds[gi + 1]; d++) group[d] = gi;
  root_ctx(c, rank, shape, group, vars, vclass, false);
}

void cg_ctx_assign(cg_ctx *c, int rank, const int64_t *shape, const int *group,
                   const char *const *vars, int vclass) {
  root_ctx(c, rank, shape, group, vars, vclass, true);
}

/* Vector class of an operand reached from c by broadcasting or a
 * transposition that keeps the innermost axis. An operand that repeats each
 * of its elements over a run of `rep` consecutive elements of c (the
 * product of c's extents over the trailing axes it broadcasts; 0: it is
 * constant) is the same for every lane when a W-group never crosses a run
 * (rep % W == 0), and for each aligned run of S = gcd(rep, W) lanes when S
 * >= 2 (VC_SUB: loaded once per S lanes, e.g. [R, 12] + [R, 1] with W = 8:
 * S = 4). Otherwise it stays contiguous only if a W-group of c never
 * crosses c's innermost run and the operand keeps that innermost axis. */
static int derived_vclass(const cg_gen *gen, const cg_ctx *c, bool keeps_inner, int64_t rep) {
  int vec = gen->vec;
  if (c->vclass == VC_SPLAT || cg_vc_sub(c->vclass)) return c->vclass;
  if (c->vclass != VC_CONTIG || c->rank == 0) return VC_GATHER;
  if (rep == 0) return VC_SPLAT;
  if (rep > 1) {
    if (rep % vec == 0) return VC_SPLAT;
    int s = 1;
    while (s < vec && rep % (2 * s) == 0) s *= 2;
    return s >= 2 && gen->sub_splat ? VC_SUB | s : VC_GATHER;
  }
  if (c->shape[c->rank - 1] % vec != 0) return VC_GATHER;
  return keeps_inner ? VC_CONTIG : VC_GATHER;
}

/* The repeat count of derived_vclass for an operand of `shape` broadcast
 * over c: c's extents over the trailing axes the operand has as 1 (1: its
 * innermost axis is not broadcast; 0: every axis is, a constant). */
static int64_t repeat_of(const cg_ctx *c, int rank, const int64_t *shape) {
  int64_t rep = 1;
  int off = c->rank - rank, d = rank - 1;
  for (; d >= 0 && shape[d] == 1; d--) rep *= c->shape[d + off];
  return d < 0 ? 0 : rep;
}

void cg_ctx_broadcast(cg_gen *gen, const cg_ctx *c, int rank, const int64_t *shape, cg_ctx *out) {
  if (cg_same_shape(c->rank, c->shape, rank, shape)) {
    *out = *c;
    return;
  }
  memset(out, 0, sizeof *out);
  out->rank = rank;
  int off = c->rank - rank;
  bool keeps = rank > 0 && c->rank > 0 && shape[rank - 1] == c->shape[c->rank - 1];
  out->vclass = derived_vclass(gen, c, keeps, repeat_of(c, rank, shape));
  out->overflow = c->overflow;
  out->oom = c->oom;
  for (int d = 0; d < rank; d++) {
    out->shape[d] = shape[d];
    cg_buf x = {0};
    if (shape[d] == 1)
      cg_puts(&x, "0");
    else
      cg_ctx_coord(c, d + off, &x);
    put_buf(gen, out, d, &x);
  }
}

void cg_ctx_transpose(cg_gen *gen, const cg_ctx *c, int rank, const int64_t *in_shape,
                      const int8_t *perm, cg_ctx *out) {
  memset(out, 0, sizeof *out);
  out->rank = rank;
  for (int d = 0; d < rank; d++) out->shape[d] = in_shape[d];
  bool keeps = rank > 0 && perm[rank - 1] == rank - 1;
  out->vclass = derived_vclass(gen, c, keeps, 1);
  out->overflow = c->overflow;
  out->oom = c->oom;
  for (int i = 0; i < rank; i++) {
    cg_buf x = {0};
    cg_ctx_coord(c, i, &x);
    put_buf(gen, out, perm[i], &x);
  }
}
