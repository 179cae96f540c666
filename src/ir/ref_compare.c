/* ref_compare.c - kf_compare: a kernel's output against the reference's,
 * within the reference's per-element error bound (kfuse.h, docs/reference.md). */
#include <math.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/ir.h"
#include "ir/shape.h"

/* Widening of the bound for the bound's own f64 evaluation. */
#define CMP_REL_SLACK 0x1p-20

static double tiny_of(kf_dtype dt) {
  switch (dt) {
    case KF_F16:
      return 0x1p-14;
    case KF_BF16:
    case KF_F32:
      return 0x1p-126;
    case KF_F64:
      return 0x1p-1022;
    default:
      return 0;
  }
}

static double elem_f(const kf_host_tensor *t, int64_t i) {
  switch (t->dtype) {
    case KF_F16:
      return kf_f16_to_float(((const uint16_t *)t->data)[i]);
    case KF_BF16:
      return kf_bf16_to_float(((const uint16_t *)t->data)[i]);
    case KF_F32:
      return ((const float *)t->data)[i];
    case KF_F64:
      return ((const double *)t->data)[i];
    default:
      return NAN;
  }
}

static int64_t elem_i(const kf_host_tensor *t, int64_t i) {
  switch (t->dtype) {
    case KF_I32:
      return ((const int32_t *)t->data)[i];
    case KF_I64:
      return ((const int64_t *)t->data)[i];
    default:
      return ((const uint8_t *)t->data)[i] != 0; /* bool */
  }
}

static bool same_kind(const kf_host_tensor *a, const kf_host_tensor *b) {
  if (a->dtype != b->dtype || a->rank != b->rank || a->rank < 0 || a->rank > KF_MAX_RANK)
    return false;
  if (kf_dtype_size(a->dtype) == 0) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

/* Records element i: how far outside (ratio > 1) or inside what is allowed. */
static void note(kf_compare_result *r, int64_t i, double got, double want, double bound,
                 double allowed, double ratio, bool bad) {
  if (bad) r->mismatches++;
  if (r->worst < 0 || ratio > r->max_ratio) {
    r->worst = i, r->worst_got = got, r->worst_want = want;
    r->worst_bound = bound, r->worst_allowed = allowed;
  }
  if (ratio > r->max_ratio) r->max_ratio = ratio;
}

static void compare_float(const kf_host_tensor *got, const kf_host_tensor *want,
                          const double *bound, double rtol, double atol, kf_compare_result *r) {
  double tiny = tiny_of(want->dtype);
  for (int64_t i = 0; i < r->elements; i++) {
    double g = elem_f(got, i), w = elem_f(want, i), b = bound ? bound[i] : 0;
    if (!(b < INFINITY)) { /* nothing can be said: any value passes */
      r->unbounded++;
      continue;
    }
    double allowed = b * (1 + CMP_REL_SLACK) + tiny + atol + rtol * (isfinite(w) ? fabs(w) : 0);
    if (!isfinite(w) || !isfinite(g)) {
      bool same = isnan(w) ? isnan(g) : g == w;
      if (!same) r->special_mismatches++;
      note(r, i, g, w, b, allowed, same ? 0 : INFINITY, !same);
      continue;
    }
    double d = fabs(g - w);
    if (d > r->max_abs_err) r->max_abs_err = d;
    if (w != 0 && d / fabs(w) > r->max_rel_err) r->max_rel_err = d / fabs(w);
    note(r, i, g, w, b, allowed, d / allowed, d > allowed);
  }
}

static void compare_int(const kf_host_tensor *got, const kf_host_tensor *want, const double *bound,
                        double rtol, double atol, kf_compare_result *r) {
  for (int64_t i = 0; i < r->elements; i++) {
    int64_t g = elem_i(got, i), w = elem_i(want, i);
    double b = bound ? bound[i] : 0;
    if (!(b < INFINITY)) {
      r->unbounded++;
      continue;
    }
    double allowed = b + atol + rtol * fabs((double)w);
    /* |g - w| without overflow (through uint64) */
    double d = g >= w ? (double)((uint64_t)g - (uint64_t)w) : (double)((uint64_t)w - (uint64_t)g);
    if (d > r->max_abs_err) r->max_abs_err = d;
    if (w != 0 && d / fabs((double)w) > r->max_rel_err) r->max_rel_err = d / fabs((double)w);
    bool bad = allowed == 0 ? g != w : d > allowed;
    note(r, i, (double)g, (double)w, b, allowed, allowed > 0 ? d / allowed : (bad ? INFINITY : 0),
         bad);
  }
}

kf_status kf_compare(const kf_host_tensor *got, const kf_host_tensor *want, const double *bound,
                     double rtol, double atol, kf_compare_result *out) {
  if (!out) return KF_ERR_INVALID_ARG;
  memset(out, 0, sizeof *out);
  out->worst = -1;
  if (!got || !want || !got->data || !want->data || !same_kind(got, want))
    return KF_ERR_INVALID_ARG;
  if (!(rtol >= 0) || !(atol >= 0)) return KF_ERR_INVALID_ARG;
  if (!ir_numel(want->rank, want->shape, &out->elements)) return KF_ERR_INVALID_ARG;
  if (ir_dtype_is_float(want->dtype))
    compare_float(got, want, bound, rtol, atol, out);
  else
    compare_int(got, want, bound, rtol, atol, out);
  out->ok = out->mismatches == 0;
  return KF_OK;
}
