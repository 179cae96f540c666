/* ref_util.h - helpers shared by the reference interpreter suites
 * (test_reference*.c): a graph fixture, host tensors made from doubles, one
 * call that binds inputs, runs the interpreter and reads the outputs back,
 * and comparisons that treat NaN, infinities and signed zeros exactly. */
#ifndef KF_TEST_REF_UTIL_H
#define KF_TEST_REF_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "ir/dtype.h"
#include "ir/ir.h"

#define REF_MAX_IO 8

static kf_graph *G;
static kf_host_tensor INS[REF_MAX_IO], OUTS[REF_MAX_IO];

static inline void ref_setup(void) {
  ck_assert_int_eq(kf_graph_create(NULL, &G), KF_OK);
  memset(INS, 0, sizeof INS);
  memset(OUTS, 0, sizeof OUTS);
}

static inline void ref_teardown(void) {
  for (int i = 0; i < REF_MAX_IO; i++) {
    free(INS[i].data);
    free(OUTS[i].data);
  }
  memset(INS, 0, sizeof INS);
  memset(OUTS, 0, sizeof OUTS);
  kf_graph_destroy(G);
  G = NULL;
}

static inline TCase *ref_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, ref_setup, ref_teardown);
  return tc;
}

/* ---- building ------------------------------------------------------------------ */

static inline kf_value ref_in_(const char *name, kf_dtype dt, int rank, const int64_t *shape) {
  kf_value v = kf_input(G, name, dt, rank, shape);
  ck_assert_msg(v != KF_NONE, "kf_input(%s) failed: %s", name, kf_graph_errmsg(G));
  return v;
}
/* IN("x", KF_F32, 3, 4) is an input x: f32[3,4]; IN0 a rank-0 input. */
#define IN(name, dt, ...)                                                             \
  ref_in_(name, dt, (int)(sizeof((int64_t[]){0, __VA_ARGS__}) / sizeof(int64_t)) - 1, \
          (const int64_t[]){0, __VA_ARGS__} + 1)
#define IN0(name, dt) ref_in_(name, dt, 0, NULL)

/* Marks v as the next output, asserting that the graph is still valid. */
static inline void ref_out(kf_value v) {
  ck_assert_msg(v != KF_NONE, "builder failed: %s", kf_graph_errmsg(G));
  ck_assert_int_eq(kf_set_output(G, v), KF_OK);
}

/* ---- host tensors ------------------------------------------------------------------ */

static inline int64_t ref_numel(const kf_host_tensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++) n *= t->shape[d];
  return n;
}

/* A zeroed host tensor of value v's dtype and shape. */
static inline kf_host_tensor ref_host_like(kf_value v) {
  kf_host_tensor t;
  memset(&t, 0, sizeof t);
  t.dtype = kf_value_dtype(G, v);
  t.rank = kf_value_rank(G, v);
  memcpy(t.shape, kf_value_shape(G, v), sizeof t.shape);
  int64_t n = ref_numel(&t);
  t.data = calloc((size_t)(n > 0 ? n : 1), kf_dtype_size(t.dtype));
  ck_assert_ptr_nonnull(t.data);
  return t;
}

/* Stores a double into element k, rounding once to the tensor's dtype. */
static inline void ref_set(kf_host_tensor *t, int64_t k, double v) {
  switch (t->dtype) {
    case KF_F16:
      ((uint16_t *)t->data)[k] = ir_double_to_f16(v);
      break;
    case KF_BF16:
      ((uint16_t *)t->data)[k] = ir_double_to_bf16(v);
      break;
    case KF_F32:
      ((float *)t->data)[k] = (float)v;
      break;
    case KF_F64:
      ((double *)t->data)[k] = v;
      break;
    case KF_I32:
      ((int32_t *)t->data)[k] = (int32_t)v;
      break;
    case KF_I64:
      ((int64_t *)t->data)[k] = (int64_t)v;
      break;
    default:
      ((uint8_t *)t->data)[k] = v != 0.0;
      break;
  }
}

/* Element k as a double (exact for every dtype but i64 beyond 2^53). */
static inline double ref_get(const kf_host_tensor *t, int64_t k) {
  switch (t->dtype) {
    case KF_F16:
      return kf_f16_to_float(((const uint16_t *)t->data)[k]);
    case KF_BF16:
      return kf_bf16_to_float(((const uint16_t *)t->data)[k]);
    case KF_F32:
      return ((const float *)t->data)[k];
    case KF_F64:
      return ((const double *)t->data)[k];
    case KF_I32:
      return ((const int32_t *)t->data)[k];
    case KF_I64:
      return (double)((const int64_t *)t->data)[k];
    default:
      return ((const uint8_t *)t->data)[k];
  }
}

/* ---- running ------------------------------------------------------------------------- */

/* Input i of G from doubles (its declared dtype and shape). */
static inline void ref_bind(int i, const double *vals) {
  free(INS[i].data);
  INS[i] = ref_host_like(kf_graph_input(G, i));
  for (int64_t k = 0; k < ref_numel(&INS[i]); k++) ref_set(&INS[i], k, vals[k]);
}

/* Input i of G from int64s, for values beyond 2^53. */
static inline void ref_bind_i64(int i, const int64_t *vals) {
  free(INS[i].data);
  INS[i] = ref_host_like(kf_graph_input(G, i));
  for (int64_t k = 0; k < ref_numel(&INS[i]); k++) {
    if (INS[i].dtype == KF_I64)
      ((int64_t *)INS[i].data)[k] = vals[k];
    else
      ref_set(&INS[i], k, (double)vals[k]);
  }
}

/* Allocates OUTS for G's outputs (filled with a 0x5A pattern, so that a
 * missed store shows) and runs the interpreter on INS. */
static inline kf_status ref_exec(void) {
  for (int j = 0; j < kf_graph_num_outputs(G); j++) {
    free(OUTS[j].data);
    OUTS[j] = ref_host_like(kf_graph_output(G, j));
    memset(OUTS[j].data, 0x5A, (size_t)ref_numel(&OUTS[j]) * kf_dtype_size(OUTS[j].dtype));
  }
  return kf_graph_run_reference(G, INS, kf_graph_num_inputs(G), OUTS, kf_graph_num_outputs(G));
}

/* Binds the NULL-terminated input arrays in order, runs, asserts success and
 * copies output 0 into out (when out is not NULL). */
static inline void ref_run_(double *out, const double *const *ins, int line) {
  for (int i = 0; ins[i]; i++) ref_bind(i, ins[i]);
  kf_status st = ref_exec();
  ck_assert_msg(st == KF_OK, "line %d: run failed: %s: %s", line, kf_status_name(st),
                kf_graph_errmsg(G));
  if (out)
    for (int64_t k = 0; k < ref_numel(&OUTS[0]); k++) out[k] = ref_get(&OUTS[0], k);
}
/* RUN(out, (double[]){...}, (double[]){...}): one array per input. */
#define RUN(out, ...) ref_run_(out, (const double *const[]){__VA_ARGS__, NULL}, __LINE__)
#define RUN_NO_INPUTS(out) ref_run_(out, (const double *const[]){NULL}, __LINE__)

/* ---- comparing -------------------------------------------------------------------------- */

/* NaN matches NaN, an infinity itself, a zero a zero of the same sign;
 * others within tol relative to max(1, |want|). */
static inline bool ref_close(double got, double want, double tol) {
  if (isnan(want)) return isnan(got);
  if (isinf(want) || want == 0.0) return got == want && signbit(got) == signbit(want);
  double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
  return fabs(got - want) <= tol * scale;
}

static inline void ref_expect_(const double *got, const double *want, int n, double tol, int line) {
  for (int k = 0; k < n; k++)
    ck_assert_msg(ref_close(got[k], want[k], tol), "line %d: element %d is %.17g, want %.17g", line,
                  k, got[k], want[k]);
}
/* EXPECT(got, tol, want...) compares the first count(want) elements. */
#define EXPECT(got, tol, ...)                     \
  ref_expect_(got, (const double[]){__VA_ARGS__}, \
              (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), tol, __LINE__)

/* Asserts the graph's last message contains sub. */
#define MSG_HAS(sub) \
  ck_assert_msg(strstr(kf_graph_errmsg(G), sub), "message '%s' lacks '%s'", kf_graph_errmsg(G), sub)

#endif /* KF_TEST_REF_UTIL_H */
