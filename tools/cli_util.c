/* cli_util.c - helpers shared by the kfuse subcommands (see cli_util.h). */
#include "cli_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- arguments ---------------------------------------------------------- */

bool cli_int(const char *cmd, const char *opt, const char *text, long long lo, long long hi,
             long long *out) {
  char *end = NULL;
  errno = 0;
  long long v = text ? strtoll(text, &end, 10) : 0;
  if (!text || !*text || *end || errno || v < lo || v > hi) {
    fprintf(stderr, "kfuse %s: --%s wants an integer from %lld to %lld, not '%s'\n", cmd, opt, lo,
            hi, cli_show(text));
    return false;
  }
  *out = v;
  return true;
}

static const char *const mode_names[] = {"plain", "streams", "graph"};

bool cli_mode(const char *cmd, const char *text, kf_run_mode *out) {
  for (int m = 0; m < 3; m++)
    if (text && strcmp(text, mode_names[m]) == 0) {
      *out = (kf_run_mode)m;
      return true;
    }
  int near = kf_suggest(text, mode_names, 3);
  fprintf(stderr, "kfuse %s: --mode wants plain, streams or graph, not '%s'%s%s%s\n", cmd,
          cli_show(text), near >= 0 ? "; did you mean '" : "", near >= 0 ? mode_names[near] : "",
          near >= 0 ? "'?" : "");
  return false;
}

const char *cli_mode_name(kf_run_mode mode) {
  return (unsigned)mode < 3 ? mode_names[mode] : "?";
}

bool cli_double(const char *cmd, const char *opt, const char *text, double lo, double *out) {
  char *end = NULL;
  double v = text ? strtod(text, &end) : 0;
  if (!text || !*text || *end || !isfinite(v) || v < lo) {
    fprintf(stderr, "kfuse %s: --%s wants a finite number of at least %g, not '%s'\n", cmd, opt, lo,
            cli_show(text));
    return false;
  }
  *out = v;
  return true;
}

/* A ring of escaped copies, so that a printf may show several at once. */
static const char *show(const char *text, kf_escape_style style) {
  static char *ring[8];
  static int next;
  char **slot = &ring[next++ % 8];
  free(*slot);
  size_t n = kf_escape(NULL, 0, text, style);
  *slot = malloc(n + 1);
  if (!*slot) return "(out of memory)";
  kf_escape(*slot, n + 1, text, style);
  return *slot;
}

const char *cli_show(const char *text) {
  return show(text, KF_ESCAPE_LINE);
}

const char *cli_show_text(const char *text) {
  return show(text, KF_ESCAPE_TEXT);
}

static char first_error[2048];

void cli_fail(const char *cmd, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "kfuse %s: %s\n", cmd, cli_show_text(msg));
  if (!first_error[0]) snprintf(first_error, sizeof first_error, "%s", msg);
}

void cli_json_failure(const char *file, int rc) {
  cli_json j;
  cj_init(&j, stdout);
  cj_obj(&j, NULL);
  cj_bool(&j, "ok", false);
  cj_str(&j, "file", file);
  cj_str(&j, "error", first_error[0] ? first_error : "failed");
  cj_int(&j, "exit", rc);
  cj_obj_end(&j);
  cj_done(&j);
}

int cli_exit_code(kf_status st) {
  return st == KF_OK ? CLI_OK : st == KF_ERR_NO_DEVICE ? CLI_NO_DEVICE : CLI_FAILED;
}

/* ---- graphs ------------------------------------------------------------- */

kf_ctx *cli_ctx(const char *cmd) {
  kf_ctx *ctx = NULL;
  if (kf_ctx_create(&ctx) != KF_OK) {
    cli_fail(cmd, "cannot create a context (out of memory)");
    return NULL;
  }
  return ctx;
}

bool cli_gpu(kf_ctx *ctx, char *name, size_t size) {
  int n = 0;
  kf_device_info d;
  if (kf_device_count(ctx, &n) != KF_OK || n < 1 || kf_device_query(ctx, 0, &d) != KF_OK)
    return false;
  snprintf(name, size, "%s", d.name);
  return true;
}

kf_graph *cli_load(kf_ctx *ctx, const char *cmd, const char *path, int *rc) {
  kf_graph *g = NULL;
  kf_trace_push("load graph file");
  kf_status st = kf_graph_load_yaml(ctx, path, &g);
  kf_trace_pop();
  if (st != KF_OK) {
    const char *msg = kf_ctx_errmsg(ctx);
    cli_fail(cmd, "%s", msg && *msg ? msg : kf_status_str(st));
    *rc = st == KF_ERR_OUT_OF_MEMORY ? CLI_FAILED : CLI_BAD_INPUT;
    return NULL;
  }
  return g;
}

const char *cli_type_str(const kf_graph *g, kf_value v, char *buf, size_t size) {
  const int64_t *shape = kf_value_shape(g, v);
  int rank = kf_value_rank(g, v);
  size_t n = (size_t)snprintf(buf, size, "%s[", kf_dtype_name(kf_value_dtype(g, v)));
  for (int i = 0; i < rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)shape[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

const char *cli_value_name(const kf_graph *g, kf_value v, char *buf, size_t size) {
  const char *name = kf_value_name(g, v);
  if (name) return name;
  snprintf(buf, size, "%%%d", (int)v);
  return buf;
}

/* One dump line "%3 y: f32[4,8] = add(%1 x, %2) ..." of value v: its
 * operands' elements, and for a matmul its multiply-adds. */
static double line_cost(const kf_graph *g, kf_value v, const char *line, const char *end) {
  const char *op = kf_value_op(g, v);
  if (!op || !strcmp(op, "input") || !strcmp(op, "const")) return 0;
  double out = (double)kf_value_numel(g, v), cost = out;
  const char *p = strstr(line, " = ");
  p = p && p < end ? memchr(p, '(', (size_t)(end - p)) : NULL;
  for (int arg = 0; p && p < end && *p != ')'; p++) {
    if (*p != '%') continue;
    kf_value a = (kf_value)strtol(p + 1, NULL, 10);
    int64_t n = kf_value_numel(g, a);
    if (n > 0) cost += (double)n;
    int rank = kf_value_rank(g, a);
    if (arg++ == 0 && !strcmp(op, "matmul") && rank >= 1)
      cost += out * (double)kf_value_shape(g, a)[rank - 1];
  }
  return cost;
}

double cli_reference_cost(const kf_graph *g) {
  char *dump = kf_graph_dump(g);
  if (!dump) return -1;
  double cost = 0;
  const char *line = dump;
  for (kf_value v = 0; v < kf_graph_num_values(g) && *line; v++) {
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    cost += line_cost(g, v, line, end);
    line = *end ? end + 1 : end;
  }
  kf_free(dump);
  return cost;
}

/* ---- host tensors ------------------------------------------------------- */

/* Both saturate at SIZE_MAX rather than wrap: a wrapped count once gave a
 * small allocation that the fill then overran. Graphs from the library fit
 * (KF_MAX_TENSOR_BYTES); the check keeps this file safe on its own. */
size_t cli_numel(const kf_host_tensor *t) {
  size_t n = 1;
  for (int i = 0; i < t->rank; i++)
    if (t->shape[i] < 0 || (uint64_t)t->shape[i] > SIZE_MAX ||
        __builtin_mul_overflow(n, (size_t)t->shape[i], &n))
      return SIZE_MAX;
  return n;
}

size_t cli_bytes(const kf_host_tensor *t) {
  size_t b;
  if (__builtin_mul_overflow(cli_numel(t), kf_dtype_size(t->dtype), &b)) return SIZE_MAX;
  return b;
}

kf_host_tensor *cli_tensors(const kf_graph *g, bool outputs, const char *cmd) {
  int n = outputs ? kf_graph_num_outputs(g) : kf_graph_num_inputs(g);
  kf_host_tensor *t = calloc((size_t)n + 1, sizeof *t);
  for (int i = 0; t && i < n; i++) {
    kf_value v = outputs ? kf_graph_output(g, i) : kf_graph_input(g, i);
    t[i].dtype = kf_value_dtype(g, v);
    t[i].rank = kf_value_rank(g, v);
    memcpy(t[i].shape, kf_value_shape(g, v), sizeof t[i].shape);
    size_t bytes = cli_bytes(&t[i]);
    t[i].data = bytes < SIZE_MAX ? calloc(bytes + 1, 1) : NULL;
    if (!t[i].data) {
      cli_tensors_free(t, n);
      t = NULL;
    }
  }
  if (!t) cli_fail(cmd, "out of host memory for the %s", outputs ? "outputs" : "inputs");
  return t;
}

void cli_tensors_free(kf_host_tensor *t, int n) {
  for (int i = 0; t && i < n; i++) free(t[i].data);
  free(t);
}

/* splitmix64: small, fast, and the same on every machine. */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double next_unit(uint64_t *s) {
  return (double)(next_u64(s) >> 11) * 0x1.0p-53;
}

void cli_fill_random(kf_host_tensor *t, uint64_t seed, int index, double lo, double hi) {
  uint64_t s = seed * 0x100000001b3ull + (uint64_t)index * 0x9e3779b97f4a7c15ull + 1;
  size_t n = cli_numel(t);
  bool integral = t->dtype >= KF_I32;
  for (size_t i = 0; i < n; i++) {
    /* Two draws per element whatever the dtype; the one a dtype does not
     * use only advances the state (splitmix64's state is a counter), which
     * halves the time of filling the ~2e9-element example graphs. */
    double u = 0;
    long long k = 0;
    if (integral)
      s += 0x9e3779b97f4a7c15ull, k = (long long)(next_u64(&s) % 129) - 64;
    else
      u = lo + (hi - lo) * next_unit(&s), s += 0x9e3779b97f4a7c15ull;
    switch (t->dtype) {
      case KF_F16:
        ((uint16_t *)t->data)[i] = kf_float_to_f16((float)u);
        break;
      case KF_BF16:
        ((uint16_t *)t->data)[i] = kf_float_to_bf16((float)u);
        break;
      case KF_F32:
        ((float *)t->data)[i] = (float)u;
        break;
      case KF_F64:
        ((double *)t->data)[i] = u;
        break;
      case KF_I32:
        ((int32_t *)t->data)[i] = (int32_t)k;
        break;
      case KF_I64:
        ((int64_t *)t->data)[i] = k;
        break;
      case KF_BOOL:
        ((uint8_t *)t->data)[i] = (uint8_t)(k & 1);
        break;
      default:
        break;
    }
  }
}

double cli_elem(const kf_host_tensor *t, size_t i) {
  switch (t->dtype) {
    case KF_F16:
      return kf_f16_to_float(((const uint16_t *)t->data)[i]);
    case KF_BF16:
      return kf_bf16_to_float(((const uint16_t *)t->data)[i]);
    case KF_F32:
      return ((const float *)t->data)[i];
    case KF_F64:
      return ((const double *)t->data)[i];
    case KF_I32:
      return ((const int32_t *)t->data)[i];
    case KF_I64:
      return (double)((const int64_t *)t->data)[i];
    case KF_BOOL:
      return ((const uint8_t *)t->data)[i] != 0;
    default:
      return NAN;
  }
}

/* ---- comparison --------------------------------------------------------- */

void cli_tolerance(kf_dtype dtype, double *rtol, double *atol) {
  switch (dtype) {
    case KF_F64:
      *rtol = 1e-10, *atol = 1e-12;
      break;
    case KF_F32:
      *rtol = 1e-4, *atol = 1e-5;
      break;
    case KF_F16:
      *rtol = 1e-2, *atol = 1e-3;
      break;
    case KF_BF16:
      *rtol = 2e-2, *atol = 1e-2;
      break;
    default:
      *rtol = 0, *atol = 0;
      break; /* integers and bool: exact */
  }
}

/* The JSON string at p (just past its opening quote) equals text: names
 * are compared as written, so a name holding a quote or a backslash (which
 * the JSON escapes) never matches. */
static bool json_str_is(const char *p, const char *text) {
  size_t n = strlen(text);
  return strncmp(p, text, n) == 0 && p[n] == '"';
}

/* The first string of the JSON array of key in [p, end), copied into out
 * (empty if none); whether name is one of its strings. */
static bool json_list_has(const char *p, const char *end, const char *key, const char *name,
                          char *first, size_t size) {
  if (first) first[0] = 0;
  const char *a = strstr(p, key);
  if (!a || a >= end) return false;
  bool found = false;
  for (const char *q = a + strlen(key); *q && *q != ']'; q++) {
    if (*q != '"') continue;
    const char *close = strchr(q + 1, '"');
    if (!close) break;
    if (first && !first[0]) snprintf(first, size, "%.*s", (int)(close - q - 1), q + 1);
    found = found || json_str_is(q + 1, name);
    q = close;
  }
  return found;
}

bool cli_attention_tolerance(const kf_graph *g, const char *plan_json, const char *name,
                             double *tol) {
  static const char kind[] = "\"kind\":\"attention\"";
  for (const char *p = plan_json ? strstr(plan_json, kind) : NULL; p; p = strstr(p + 1, kind)) {
    /* this kernel's fields run to the next kernel's kind */
    const char *end = strstr(p + 1, "\"kind\":");
    if (!end) end = p + strlen(p);
    char q[256];
    json_list_has(p, end, "\"inputs\":[", "", q, sizeof q);
    if (!json_list_has(p, end, "\"outputs\":[", name, NULL, 0)) continue;
    kf_value qv = q[0] ? kf_graph_find(g, q) : -1;
    bool f16 = qv >= 0 && kf_value_dtype(g, qv) == KF_F16;
    *tol = f16 ? 0x1p-9 : 0x1p-6; /* an unknown q: the wider, bf16's */
    return true;
  }
  return false;
}

/* Integers compared exactly, as int64 (a double loses bits past 2^53). */
static bool int_equal(const kf_host_tensor *a, const kf_host_tensor *b, size_t i) {
  if (a->dtype == KF_I64) return ((const int64_t *)a->data)[i] == ((const int64_t *)b->data)[i];
  return cli_elem(a, i) == cli_elem(b, i);
}

/* Also keeps the worst element: the largest error over what is allowed. */
static void note_bad(cli_cmp *c, size_t i, double g, double w, double allowed) {
  c->bad++;
  double ratio = isnan(g) || isnan(w) || isinf(g) || isinf(w) ? INFINITY : fabs(g - w) / allowed;
  if (c->worst < 0 || ratio > c->max_ratio) {
    c->worst = (int64_t)i, c->worst_got = g, c->worst_want = w, c->worst_allowed = allowed;
    c->max_ratio = ratio;
  }
}

void cli_compare(const kf_host_tensor *got, const kf_host_tensor *want, double rtol, double atol,
                 cli_cmp *c) {
  memset(c, 0, sizeof *c);
  c->worst = -1;
  c->rtol = rtol, c->atol = atol;
  bool integral = want->dtype >= KF_I32;
  size_t n = cli_numel(want);
  /* The relative part of the tolerance is taken against the output's
   * largest magnitude, not the element's: an element of a sum whose terms
   * cancel (random signs over 32000 columns) carries an error relative to
   * its terms, not to its small result, and a near-zero element would
   * otherwise report an enormous relative error. Indexing bugs still give
   * errors of the order of the values. */
  double scale = 0;
  for (size_t i = 0; i < n && !integral; i++) {
    double w = fabs(cli_elem(want, i));
    if (w > scale && !isinf(w)) scale = w;
  }
  for (size_t i = 0; i < n; i++) {
    double g = cli_elem(got, i), w = cli_elem(want, i);
    if (integral) {
      double d = fabs(g - w);
      if (d > c->max_abs) c->max_abs = d;
      if (w != 0 && d / fabs(w) > c->max_rel) c->max_rel = d / fabs(w);
      if (!int_equal(got, want, i)) note_bad(c, i, g, w, 0);
      continue;
    }
    if (isnan(g) || isnan(w)) {
      if (isnan(g) != isnan(w)) c->nan_mismatch++, note_bad(c, i, g, w, 0);
      continue;
    }
    if (isinf(g) || isinf(w)) {
      if (g != w) c->nan_mismatch++, note_bad(c, i, g, w, 0);
      continue;
    }
    double d = fabs(g - w), rel = d / fmax(fabs(w), fmax(1e-6 * scale, 1e-30));
    if (d > c->max_abs) c->max_abs = d;
    if (d > 0 && rel > c->max_rel) c->max_rel = rel;
    double allowed = atol + rtol * fmax(fabs(w), scale);
    if (d > allowed) note_bad(c, i, g, w, allowed);
  }
  c->ok = c->bad == 0;
}

void cli_compare_bounded(const kf_host_tensor *got, const kf_host_tensor *want, const double *bound,
                         double rtol, double atol, cli_cmp *c) {
  memset(c, 0, sizeof *c);
  c->bounded = true;
  c->rtol = rtol, c->atol = atol;
  kf_compare_result r;
  if (kf_compare(got, want, bound, rtol, atol, &r) != KF_OK) { /* cannot happen: same shapes */
    c->bad = 1, c->worst = -1;
    return;
  }
  c->max_abs = r.max_abs_err, c->max_ratio = r.max_ratio;
  c->bad = r.mismatches, c->nan_mismatch = r.special_mismatches, c->unbounded = r.unbounded;
  c->worst = r.worst, c->worst_got = r.worst_got, c->worst_want = r.worst_want;
  c->worst_bound = r.worst_bound, c->worst_allowed = r.worst_allowed;
  c->max_rel = r.max_rel_err;
  c->ok = r.ok;
}

const char *cli_index_str(const kf_host_tensor *t, int64_t i, char *buf, size_t size) {
  int64_t idx[KF_MAX_RANK];
  for (int d = t->rank - 1; d >= 0; d--) {
    idx[d] = t->shape[d] > 0 ? i % t->shape[d] : 0;
    i = t->shape[d] > 0 ? i / t->shape[d] : 0;
  }
  size_t n = (size_t)snprintf(buf, size, "[");
  for (int d = 0; d < t->rank && n < size; d++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? "," : "", (long long)idx[d]);
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

void cli_tensor_stats(const kf_host_tensor *t, cli_stats *s) {
  memset(s, 0, sizeof *s);
  s->min = INFINITY, s->max = -INFINITY;
  size_t n = cli_numel(t), finite = 0;
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    double v = cli_elem(t, i);
    if (isnan(v)) {
      s->nan++;
    } else if (isinf(v)) {
      s->inf++;
    } else {
      sum += v, finite++;
      s->min = fmin(s->min, v), s->max = fmax(s->max, v);
    }
  }
  s->mean = finite ? sum / (double)finite : NAN;
  if (!finite) s->min = s->max = NAN;
}
