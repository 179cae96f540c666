/* yaml_scalar.c - strict readers for the typed values of a graph file
 * (integers, numbers, booleans, dtypes, shapes, names), each reporting a
 * positioned error that says what was expected. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/similar.h"
#include "ir/names.h"
#include "ir/shape.h"
#include "ir/yaml_load.h"
#include "ir/yaml_scalar.h"

const char *ir_yl_kind(const ir_ynode *n) {
  return n->type == IR_Y_SEQ ? "a list" : n->type == IR_Y_MAP ? "a mapping" : "a scalar";
}

const char *ir_yl_show(const ir_yload *L, const ir_ynode *n, char *buf, size_t size) {
  if (n->type != IR_Y_SCALAR) {
    snprintf(buf, size, "%s", ir_yl_kind(n));
    return buf;
  }
  const unsigned char *s = (const unsigned char *)ir_ytext(L->doc, n);
  size_t o = 0;
  if (size < 16) return "";
  buf[o++] = '\'';
  for (uint32_t i = 0; i < n->n; i++) {
    if (o + 8 >= size || i >= 64) {
      memcpy(buf + o, "...", 3);
      o += 3;
      break;
    }
    /* Control characters and bytes of odd encodings are shown escaped so
     * the message stays one printable line. */
    if (s[i] < 0x20 || s[i] == 0x7f || s[i] == '\'')
      o += (size_t)snprintf(buf + o, size - o, "\\x%02X", s[i]);
    else
      buf[o++] = (char)s[i];
  }
  buf[o++] = '\'';
  buf[o] = '\0';
  return buf;
}

/* [-+]?[0-9]+ */
static bool int_syntax(const char *s) {
  if (*s == '-' || *s == '+') s++;
  if (!*s) return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return false;
  return true;
}

bool ir_yl_int(ir_yload *L, const ir_ynode *n, const char *what, int64_t lo, int64_t hi,
               int64_t *out) {
  char b[96];
  const char *s = ir_ytext(L->doc, n);
  if (n->type != IR_Y_SCALAR || !n->plain || strlen(s) != n->n || !int_syntax(s))
    return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: expected an integer, found %s", what,
                      ir_yl_show(L, n, b, sizeof b));
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  if (errno == ERANGE || v < lo || v > hi)
    return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: %s is out of range; expected %" PRId64
                      " to %" PRId64, what, ir_yl_show(L, n, b, sizeof b), lo, hi);
  *out = (int64_t)v;
  return true;
}

/* YAML's special floats, in the spellings of the core schema. */
static bool special_float(const char *s, double *out) {
  int sign = 1;
  const char *t = s;
  if (*t == '-' || *t == '+') sign = *t++ == '-' ? -1 : 1;
  if (!strcmp(t, ".inf") || !strcmp(t, ".Inf") || !strcmp(t, ".INF")) {
    *out = sign * INFINITY;
    return true;
  }
  if (t == s && (!strcmp(t, ".nan") || !strcmp(t, ".NaN") || !strcmp(t, ".NAN"))) {
    *out = NAN;
    return true;
  }
  return false;
}

/* [-+]?(digits[.digits*]|.digits)([eE][-+]?digits)? */
static bool float_syntax(const char *s) {
  if (*s == '-' || *s == '+') s++;
  int digits = 0;
  while (*s >= '0' && *s <= '9') s++, digits++;
  if (*s == '.') {
    s++;
    while (*s >= '0' && *s <= '9') s++, digits++;
  }
  if (!digits) return false;
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '-' || *s == '+') s++;
    if (*s < '0' || *s > '9') return false;
    while (*s >= '0' && *s <= '9') s++;
  }
  return *s == '\0';
}

bool ir_yl_looks_numeric(const ir_yload *L, const ir_ynode *n) {
  const char *s = ir_ytext(L->doc, n);
  return n->type == IR_Y_SCALAR && n->plain && (*s == '-' || *s == '+' || *s == '.' ||
                                                (*s >= '0' && *s <= '9'));
}

bool ir_yl_is_number(const ir_yload *L, const ir_ynode *n, double *out) {
  if (n->type != IR_Y_SCALAR || !n->plain) return false;
  const char *s = ir_ytext(L->doc, n);
  if (strlen(s) != n->n) return false;
  if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
    *out = 1.0;
    return true;
  }
  if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
    *out = 0.0;
    return true;
  }
  if (special_float(s, out)) return true;
  if (!float_syntax(s)) return false;
  errno = 0;
  double v = strtod(s, NULL);
  /* Overflow is an error; underflow to a tiny or zero value is just rounding. */
  if (errno == ERANGE && isinf(v)) return false;
  *out = v;
  return true;
}

bool ir_yl_number(ir_yload *L, const ir_ynode *n, const char *what, double *out) {
  char b[96];
  const char *s = n->type == IR_Y_SCALAR ? ir_ytext(L->doc, n) : "";
  bool syntax = n->type == IR_Y_SCALAR && n->plain && strlen(s) == n->n &&
                (float_syntax(s) || special_float(s, out));
  if (!syntax)
    return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: expected a number, found %s", what,
                      ir_yl_show(L, n, b, sizeof b));
  if (!ir_yl_is_number(L, n, out))
    return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: %s is out of the range of a double", what,
                      ir_yl_show(L, n, b, sizeof b));
  return true;
}

bool ir_yl_digits_only(double v, kf_dtype dt) {
  return (dt == KF_I32 || dt == KF_I64) && fabs(v) >= 9007199254740992.0;
}

bool ir_yl_exact_int(ir_yload *L, const ir_ynode *n, const char *what, double v, kf_dtype dt) {
  if (!ir_yl_digits_only(v, dt)) return true;
  if (fabs(v) >= 9223372036854775808.0) return true; /* out of range: kf_scalar says so */
  const char *s = ir_ytext(L->doc, n);
  errno = 0;
  long long i = int_syntax(s) ? strtoll(s, NULL, 10) : 0;
  if (int_syntax(s) && errno == 0 && (long long)v == i) return true;
  char b[96];
  return ir_yl_fail(L, KF_ERR_PARSE, n,
                    "%s: %s is not exactly an %s constant: constants are held as doubles, "
                    "exact for integers up to 2^53 (beyond it write an integer a double holds, "
                    "in plain digits)",
                    what, ir_yl_show(L, n, b, sizeof b), kf_dtype_name(dt));
}

bool ir_yl_bool(ir_yload *L, const ir_ynode *n, const char *what, bool *out) {
  char b[96];
  const char *s = n->type == IR_Y_SCALAR && n->plain ? ir_ytext(L->doc, n) : "";
  if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
    *out = true;
    return true;
  }
  if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
    *out = false;
    return true;
  }
  return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: expected true or false, found %s", what,
                    ir_yl_show(L, n, b, sizeof b));
}

bool ir_yl_dtype(ir_yload *L, const ir_ynode *n, const char *what, kf_dtype *out) {
  char b[96];
  if (n->type == IR_Y_SCALAR && strlen(ir_ytext(L->doc, n)) == n->n &&
      kf_dtype_parse(ir_ytext(L->doc, n), out) == KF_OK)
    return true;
  const char *names[KF_DTYPE_COUNT];
  for (int i = 0; i < KF_DTYPE_COUNT; i++) names[i] = kf_dtype_name((kf_dtype)i);
  char hint[96];
  if (n->type == IR_Y_SCALAR &&
      ir_yl_hint(ir_ytext(L->doc, n), names, KF_DTYPE_COUNT, NULL, 0, hint, sizeof hint))
    return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: unknown dtype %s%s", what,
                      ir_yl_show(L, n, b, sizeof b), hint);
  return ir_yl_fail(L, KF_ERR_PARSE, n,
                    "%s: unknown dtype %s; expected one of f16, bf16, f32, f64, i32, i64, bool",
                    what, ir_yl_show(L, n, b, sizeof b));
}

bool ir_yl_int_list(ir_yload *L, const ir_ynode *n, const char *what, int64_t lo, int64_t hi,
                    int64_t *out, int *count) {
  if (n->type != IR_Y_SEQ)
    return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: expected a list of integers like [0, 1], found %s",
                      what, ir_yl_kind(n));
  if (n->n > KF_MAX_RANK)
    return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: %u entries; at most %d", what, (unsigned)n->n,
                      KF_MAX_RANK);
  for (uint32_t i = 0; i < n->n; i++)
    if (!ir_yl_int(L, ir_ykid(L->doc, n, i), what, lo, hi, &out[i])) return false;
  *count = (int)n->n;
  return true;
}

bool ir_yl_shape(ir_yload *L, const ir_ynode *n, const char *what, bool allow_infer,
                 int64_t *out, int *rank) {
  if (!ir_yl_int_list(L, n, what, INT64_MIN, INT64_MAX, out, rank)) return false;
  int64_t known[KF_MAX_RANK];
  int inferred = -1;
  for (int i = 0; i < *rank; i++) {
    const ir_ynode *d = ir_ykid(L->doc, n, (uint32_t)i);
    bool infer = allow_infer && out[i] == -1;
    if (out[i] < 1 && !infer)
      return ir_yl_fail(L, KF_ERR_PARSE, d,
                        "%s: dimension %d is %lld; expected a positive integer%s", what, i,
                        (long long)out[i], allow_infer ? " (or one -1)" : "");
    if (infer && inferred >= 0)
      return ir_yl_fail(L, KF_ERR_PARSE, d,
                        "%s: more than one -1; at most one dimension is inferred", what);
    if (infer) inferred = i;
    known[i] = infer ? 1 : out[i];
  }
  if (!ir_numel(*rank, known, NULL))
    return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: the element count overflows int64", what);
  return true;
}

bool ir_yl_check_name(ir_yload *L, const ir_ynode *n, const char *what) {
  char b[96];
  if (n->type != IR_Y_SCALAR)
    return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: expected a name, found %s", what, ir_yl_kind(n));
  if (n->n > IR_YAML_NAME_MAX)
    return ir_yl_fail(L, KF_ERR_PARSE, n, "%s: %u bytes long; names are at most %d bytes", what,
                      (unsigned)n->n, IR_YAML_NAME_MAX);
  const char *s = ir_ytext(L->doc, n);
  if (strlen(s) != n->n || !ir_name_valid(s))
    return ir_yl_fail(L, KF_ERR_PARSE, n,
                      "%s: invalid name %s; expected [A-Za-z_][A-Za-z0-9_.]*", what,
                      ir_yl_show(L, n, b, sizeof b));
  return true;
}

const ir_ynode *ir_yl_get(const ir_yload *L, const ir_ynode *map, const char *key) {
  if (map->type != IR_Y_MAP) return NULL;
  for (uint32_t i = 0; i + 1 < map->n; i += 2) {
    const ir_ynode *k = ir_ykid(L->doc, map, i);
    if (k->type == IR_Y_SCALAR && !strcmp(ir_ytext(L->doc, k), key) && strlen(key) == k->n)
      return ir_ykid(L->doc, map, i + 1);
  }
  return NULL;
}

/* Every key is checked against the allowed set before the duplicate scan,
 * so the scan is over at most n_allowed earlier keys: a hostile mapping with
 * a million keys fails at the first unknown or repeated one. */
bool ir_yl_keys(ir_yload *L, const ir_ynode *map, const char *const *allowed, int n_allowed,
                const char *const *prefer, int n_prefer) {
  char b[96];
  for (uint32_t i = 0; i + 1 < map->n; i += 2) {
    const ir_ynode *k = ir_ykid(L->doc, map, i);
    if (k->type != IR_Y_SCALAR)
      return ir_yl_fail(L, KF_ERR_PARSE, k, "expected a plain key, found %s", ir_yl_kind(k));
    const char *s = ir_ytext(L->doc, k);
    int found = -1;
    for (int a = 0; a < n_allowed && found < 0; a++)
      if (strlen(allowed[a]) == k->n && !strcmp(allowed[a], s)) found = a;
    if (found < 0) {
      char list[400], hint[96];
      size_t o = 0;
      for (int a = 0; a < n_allowed && o < sizeof list; a++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", a ? ", " : "", allowed[a]);
      if (ir_yl_hint(s, prefer, n_prefer, allowed, n_allowed, hint, sizeof hint))
        return ir_yl_fail(L, KF_ERR_PARSE, k, "unknown key %s%s", ir_yl_show(L, k, b, sizeof b),
                          hint);
      return ir_yl_fail(L, KF_ERR_PARSE, k, "unknown key %s; expected one of %s",
                        ir_yl_show(L, k, b, sizeof b), list);
    }
    for (uint32_t j = 0; j < i; j += 2) {
      const ir_ynode *p = ir_ykid(L->doc, map, j);
      if (p->n == k->n && !memcmp(ir_ytext(L->doc, p), s, k->n))
        return ir_yl_fail(L, KF_ERR_PARSE, k, "duplicate key %s (first at %u:%u)",
                          ir_yl_show(L, k, b, sizeof b), (unsigned)p->line, (unsigned)p->col);
    }
  }
  return true;
}

bool ir_yl_hint(const char *word, const char *const *first, int n_first, const char *const *then,
                int n_then, char *buf, size_t size) {
  core_similar sim;
  core_similar_init(&sim, word);
  for (int i = 0; i < n_first; i++) core_similar_add(&sim, first[i]);
  for (int i = 0; !core_similar_best(&sim) && i < n_then; i++) core_similar_add(&sim, then[i]);
  core_similar_hint(&sim, buf, size);
  return core_similar_best(&sim) != NULL;
}
