/* segment.c - a long pointwise body cut into out-of-line segment functions
 * (segment.h). NVRTC's optimizer and ptxas take time that grows faster than
 * the length of one function: one body of 2048 exp/tanh calls costs ~4
 * times two of 1024. Functions of a bounded size keep the cost linear in
 * the body (sm_90, exp/tanh chain, with ptxas's fast-compile level that
 * the KF_SEGMENTED marker selects, runtime/nvrtc.c: 512 nodes 141 ms,
 * 2048 359 ms, 4096 751 ms of CPU; whole bodies: 169, 640 and 2.3 s).
 *
 * The cut is on the text: each definition line "const T tN = expr;" stays
 * as it is, moved into a function that takes the temporaries it reads
 * (live-ins) and the pointers it loads from, and returns the ones read
 * after it (live-outs). Any line that is not a definition stays in the
 * caller, and a definition naming anything else (a loop lane, a preloaded
 * register) leaves the body whole: the cut never guesses. */
#include "codegen/expr.h"
#include "codegen/segment.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

/* One line of the body. refs: indices into the scan's refs, each 2 * t for
 * temporary tN's definition line t, or 2 * i + 1 for the part's parameter i. */
typedef struct seg_line {
  const char *s, *type; /* the line (no '\n'); a definition's type */
  size_t n, type_n;
  long id; /* N of the defined tN; -1: not a definition */
  int ref0, nref;
  int last_use; /* definitions: the last line reading it */
} seg_line;

typedef struct seg_scan {
  const kf_graph *g;
  const cg_part *p;
  seg_line *lines;
  int n_lines, n_defs;
  int *refs, n_refs, cap_refs;
  int *def_of; /* tN -> its definition line, -1 */
  long max_id;
  bool ok, oom;
} seg_scan;

static bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* N when [s, s + n) is c followed by decimal digits only, else -1. */
static long numbered(const char *s, size_t n, char c) {
  if (n < 2 || n > 10 || s[0] != c) return -1;
  long v = 0;
  for (size_t i = 1; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/* Splits body into lines and finds each definition's type and number. */
static bool split_lines(seg_scan *sc, const char *body) {
  int cap = 1;
  for (const char *c = body; *c; c++) cap += *c == '\n';
  sc->lines = core_calloc((size_t)cap, sizeof *sc->lines);
  if (!sc->lines) return false;
  for (const char *c = body; *c;) {
    const char *end = strchr(c, '\n');
    size_t n = end ? (size_t)(end - c) : strlen(c);
    seg_line *l = &sc->lines[sc->n_lines++];
    l->s = c, l->n = n, l->id = -1;
    const char *d = c;
    while (d < c + n && *d == ' ') d++;
    const char *eq = strstr(d, " = ");
    if (n > 0 && !strncmp(d, "const ", 6) && eq && eq < c + n && c[n - 1] == ';') {
      const char *t = eq;
      while (t > d && ident_char(t[-1])) t--;
      long id = numbered(t, (size_t)(eq - t), 't');
      if (id >= 0 && t > d + 6 && t[-1] == ' ') {
        l->id = id, l->type = d + 6, l->type_n = (size_t)(t - 1 - (d + 6));
        if (id > sc->max_id) sc->max_id = id;
        sc->n_defs++;
      }
    }
    c += n + (end ? 1 : 0);
  }
  return true;
}

static void add_ref(seg_scan *sc, int r) {
  if (sc->n_refs == sc->cap_refs) {
    int cap = sc->cap_refs ? 2 * sc->cap_refs : 256;
    int *nr = core_realloc(sc->refs, (size_t)cap * sizeof *nr);
    if (!nr) {
      sc->oom = true, sc->ok = false;
      return;
    }
    sc->refs = nr, sc->cap_refs = cap;
  }
  sc->refs[sc->n_refs++] = r;
}

static int param_of(const cg_part *p, long v) {
  for (int i = 0; i < p->n_params; i++)
    if (p->params[i].value == v) return i;
  return -1;
}

/* The names a definition's expression may use besides temporaries,
 * pointers, e and kf_ calls. */
static bool plain_word(const char *s, size_t n) {
  static const char *const words[] = {"float", "double", "int",    "unsigned",     "long",
                                      "short", "char",   "bool",   "signed",       "const",
                                      "true",  "false",  "__half", "__nv_bfloat16"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strlen(words[i]) == n && !strncmp(words[i], s, n)) return true;
  return false;
}

/* Records what line li reads; for a definition, refuses (sc->ok = false)
 * any name the segment could not be given. */
static void scan_refs(seg_scan *sc, int li) {
  seg_line *l = &sc->lines[li];
  const char *c = l->s, *end = l->s + l->n;
  bool def = l->id >= 0;
  if (def) c = strstr(l->s, " = ") + 3;
  l->ref0 = sc->n_refs;
  while (c < end && sc->ok) {
    if ((*c >= '0' && *c <= '9') || (*c == '.' && c + 1 < end && c[1] >= '0' && c[1] <= '9')) {
      bool hex = c + 1 < end && c[0] == '0' && (c[1] == 'x' || c[1] == 'X');
      for (c++; c < end; c++) /* a number: 1.0001f, 1e-05f, 0x1p+3 */
        if (!ident_char(*c) && *c != '.' &&
            !((*c == '+' || *c == '-') &&
              (hex ? (c[-1] == 'p' || c[-1] == 'P') : (c[-1] == 'e' || c[-1] == 'E'))))
          break;
      continue;
    }
    if (!ident_char(*c)) {
      if (def && (*c == '"' || *c == '\'' || *c == '{' || *c == '}')) sc->ok = false;
      c++;
      continue;
    }
    const char *w = c;
    while (c < end && ident_char(*c)) c++;
    size_t n = (size_t)(c - w);
    long t = numbered(w, n, 't'), pv = numbered(w, n, 'p');
    const char *after = c;
    while (after < end && *after == ' ') after++;
    if (t >= 0 && t <= sc->max_id && sc->def_of[t] >= 0 && sc->def_of[t] < li) {
      add_ref(sc, 2 * sc->def_of[t]);
    } else if (!def) {
      continue; /* the caller keeps the line: anything it names is there */
    } else if (pv >= 0 && param_of(sc->p, pv) >= 0) {
      add_ref(sc, 2 * param_of(sc->p, pv) + 1);
    } else if (!((n == 1 && *w == 'e') || plain_word(w, n) ||
                 (n > 3 && !strncmp(w, "kf_", 3) && after < end &&
                  (*after == '(' || *after == '<')))) {
      sc->ok = false;
    }
  }
  l->nref = sc->n_refs - l->ref0;
}

/* Numbers the definitions and finds every line's reads and every
 * definition's last reader. */
static bool scan(seg_scan *sc, const char *body) {
  sc->ok = true;
  sc->max_id = -1;
  if (!split_lines(sc, body)) return sc->oom = true, false;
  if (sc->n_defs < CG_SEGMENT_MIN) return false;
  sc->def_of = core_malloc((size_t)(sc->max_id + 1) * sizeof *sc->def_of);
  if (!sc->def_of) return sc->oom = true, false;
  for (long t = 0; t <= sc->max_id; t++) sc->def_of[t] = -1;
  for (int li = 0; li < sc->n_lines && sc->ok; li++) {
    scan_refs(sc, li);
    seg_line *l = &sc->lines[li];
    if (l->id < 0) continue;
    if (sc->def_of[l->id] >= 0) sc->ok = false; /* defined twice: scopes */
    sc->def_of[l->id] = li;
    l->last_use = li;
  }
  for (int li = 0; li < sc->n_lines && sc->ok; li++)
    for (int r = 0; r < sc->lines[li].nref; r++) {
      int x = sc->refs[sc->lines[li].ref0 + r];
      if (!(x & 1)) sc->lines[x / 2].last_use = li;
    }
  return sc->ok;
}

static void put_type(cg_buf *b, const seg_line *d) {
  cg_putn(b, d->type, d->type_n);
}

/* The parameters (decl: "const float t3", "const float *__restrict__ p0")
 * or arguments of segment [a, b): e, the pointers it loads from, the
 * temporaries it reads from before a. mark: one int per line and per
 * parameter, stamped with stamp. */
static void seg_params(seg_scan *sc, int a, int b, bool decl, const char *idx, int *mark, int stamp,
                       cg_buf *out) {
  cg_printf(out, decl ? "const %s e" : "e", idx);
  for (int pass = 0; pass < 2; pass++)
    for (int li = a; li < b; li++)
      for (int r = 0; r < sc->lines[li].nref; r++) {
        int x = sc->refs[sc->lines[li].ref0 + r], slot = x & 1 ? sc->n_lines + x / 2 : x / 2;
        if ((x & 1) != (pass == 0) || (!(x & 1) && x / 2 >= a) || mark[slot] == stamp) continue;
        mark[slot] = stamp;
        cg_puts(out, ", ");
        if (x & 1) {
          const cg_pparam *pp = &sc->p->params[x / 2];
          if (decl)
            cg_printf(out, "%s%s *__restrict__ ", pp->written ? "" : "const ",
                      cg_storage_type(sc->g->nodes[pp->value].dtype));
          cg_printf(out, "p%d", (int)pp->value);
        } else {
          if (decl) cg_puts(out, "const "), put_type(out, &sc->lines[x / 2]), cg_puts(out, " ");
          cg_printf(out, "t%ld", sc->lines[x / 2].id);
        }
      }
}

/* Writes segment k (definition lines [a, b)) to fns and its call to calls. */
static void emit_segment(seg_scan *sc, int k, int a, int b, const char *fn, const char *idx,
                         int *mark, cg_buf *fns, cg_buf *calls) {
  int n_out = 0, one = -1;
  for (int li = a; li < b; li++)
    if (sc->lines[li].last_use >= b) n_out++, one = li;
  const char *ind = sc->lines[a].s;
  int ind_n = 0;
  while (ind[ind_n] == ' ') ind_n++;
  if (n_out > 1) {
    cg_printf(fns, "struct %s_s%d_r {", fn, k);
    for (int li = a; li < b; li++)
      if (sc->lines[li].last_use >= b)
        cg_puts(fns, " "), put_type(fns, &sc->lines[li]),
            cg_printf(fns, " t%ld;", sc->lines[li].id);
    cg_puts(fns, " };\n");
  }
  cg_puts(fns, "__device__ __noinline__ ");
  if (n_out == 0) cg_puts(fns, "void");
  if (n_out == 1) put_type(fns, &sc->lines[one]);
  if (n_out > 1) cg_printf(fns, "%s_s%d_r", fn, k);
  cg_printf(fns, " %s_s%d(", fn, k);
  seg_params(sc, a, b, true, idx, mark, 2 * k + 1, fns);
  cg_puts(fns, ") {\n  (void)e;\n");
  for (int li = a; li < b; li++) cg_putn(fns, sc->lines[li].s, sc->lines[li].n), cg_puts(fns, "\n");
  if (n_out == 1) cg_printf(fns, "  return t%ld;\n", sc->lines[one].id);
  if (n_out > 1) {
    cg_printf(fns, "  return %s_s%d_r{", fn, k);
    for (int li = a, i = 0; li < b; li++)
      if (sc->lines[li].last_use >= b) cg_printf(fns, "%st%ld", i++ ? ", " : "", sc->lines[li].id);
    cg_puts(fns, "};\n");
  }
  cg_puts(fns, "}\n");
  cg_putn(calls, ind, (size_t)ind_n);
  if (n_out == 1) cg_puts(calls, "const "), put_type(calls, &sc->lines[one]);
  if (n_out == 1) cg_printf(calls, " t%ld = ", sc->lines[one].id);
  if (n_out > 1) cg_printf(calls, "const %s_s%d_r r%d = ", fn, k, k);
  cg_printf(calls, "%s_s%d(", fn, k);
  seg_params(sc, a, b, false, idx, mark, 2 * k + 2, calls);
  cg_puts(calls, ");\n");
  for (int li = a; li < b && n_out > 1; li++) {
    if (sc->lines[li].last_use < b) continue;
    cg_putn(calls, ind, (size_t)ind_n), cg_puts(calls, "const "), put_type(calls, &sc->lines[li]);
    cg_printf(calls, " t%ld = r%d.t%ld;\n", sc->lines[li].id, k, sc->lines[li].id);
  }
}

/* Writes the functions to fns and the new body to calls. */
static bool cut(seg_scan *sc, const char *fn, const char *idx, cg_buf *fns, cg_buf *calls) {
  int *mark = core_calloc((size_t)(sc->n_lines + sc->p->n_params + 1), sizeof *mark);
  if (!mark) return false;
  cg_puts(fns,
          "#ifndef KF_SEGMENTED\n#define KF_SEGMENTED\n#endif\n"
          "// a long body: its definitions in out-of-line segments of at most 64\n");
  int k = 0;
  for (int li = 0; li < sc->n_lines;) {
    if (sc->lines[li].id < 0) {
      cg_putn(calls, sc->lines[li].s, sc->lines[li].n), cg_puts(calls, "\n");
      li++;
      continue;
    }
    int b = li;
    while (b < sc->n_lines && b - li < CG_SEGMENT_LEN && sc->lines[b].id >= 0) b++;
    emit_segment(sc, k++, li, b, fn, idx, mark, fns, calls);
    li = b;
  }
  free(mark);
  return true;
}

bool cg_segment_body(const kf_graph *g, const cg_part *p, const char *fn, const char *idx,
                     cg_buf *body, cg_buf *out) {
  if (!body->s || body->oom) return false;
  seg_scan sc = {.g = g, .p = p};
  bool done = false;
  if (scan(&sc, body->s)) {
    cg_buf calls = {0};
    if (cut(&sc, fn, idx, out, &calls) && !calls.oom) {
      cg_buf_free(body);
      *body = calls;
      done = true;
    } else {
      sc.oom = true;
      cg_buf_free(&calls);
    }
  }
  if (sc.oom) out->oom = true;
  free(sc.lines);
  free(sc.refs);
  free(sc.def_of);
  return done;
}
