/* test_builder.h - helpers shared by the builder suites (test_builder_*.c):
 * graphs with a fixture, inputs from literal shapes, and assertions on a
 * value's dtype and shape and on the sticky error. */
#ifndef KF_TEST_BUILDER_H
#define KF_TEST_BUILDER_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "ir/ir.h"

static kf_graph *G;

static inline void setup_graph(void) {
  ck_assert_int_eq(kf_graph_create(NULL, &G), KF_OK);
}
static inline void teardown_graph(void) {
  kf_graph_destroy(G);
  G = NULL;
}

/* An input of G: IN("x", KF_F32, 2, 3, 4) is x: f32[3,4]. */
static inline kf_value in_(const char *name, kf_dtype dt, int rank, const int64_t *shape) {
  kf_value v = kf_input(G, name, dt, rank, shape);
  ck_assert_msg(v != KF_NONE, "kf_input(%s) failed: %s", name, kf_graph_errmsg(G));
  return v;
}
#define IN(name, dt, ...)                                                         \
  in_(name, dt, (int)(sizeof((int64_t[]){0, __VA_ARGS__}) / sizeof(int64_t)) - 1, \
      (const int64_t[]){0, __VA_ARGS__} + 1)
#define IN0(name, dt) in_(name, dt, 0, NULL)

/* Asserts v is valid with dtype dt and the given shape: HAS(v, KF_F32, 3, 4). */
static inline void has_(kf_value v, kf_dtype dt, int rank, const int64_t *shape, int line) {
  ck_assert_msg(v != KF_NONE, "line %d: got KF_NONE: %s", line, kf_graph_errmsg(G));
  ck_assert_int_eq(kf_graph_status(G), KF_OK);
  ck_assert_msg(kf_value_dtype(G, v) == dt, "line %d: dtype %s, want %s", line,
                kf_dtype_name(kf_value_dtype(G, v)), kf_dtype_name(dt));
  ck_assert_msg(kf_value_rank(G, v) == rank, "line %d: rank %d, want %d", line, kf_value_rank(G, v),
                rank);
  const int64_t *s = kf_value_shape(G, v);
  for (int i = 0; i < rank; i++)
    ck_assert_msg(s[i] == shape[i], "line %d: dim %d is %lld, want %lld", line, i, (long long)s[i],
                  (long long)shape[i]);
}
#define HAS(v, dt, ...)                                                         \
  has_(v, dt, (int)(sizeof((int64_t[]){0, __VA_ARGS__}) / sizeof(int64_t)) - 1, \
       (const int64_t[]){0, __VA_ARGS__} + 1, __LINE__)
#define HAS0(v, dt) has_(v, dt, 0, NULL, __LINE__)

/* Asserts v is KF_NONE, the graph's sticky status is st, and its message
 * contains each of the NULL-terminated substrings. */
static inline void fails_(kf_value v, kf_status st, int line, ...) {
  ck_assert_msg(v == KF_NONE, "line %d: expected failure, got %%%d", line, (int)v);
  ck_assert_msg(kf_graph_status(G) == st, "line %d: status %s, want %s (%s)", line,
                kf_status_name(kf_graph_status(G)), kf_status_name(st), kf_graph_errmsg(G));
  va_list ap;
  va_start(ap, line);
  for (const char *sub; (sub = va_arg(ap, const char *));)
    ck_assert_msg(strstr(kf_graph_errmsg(G), sub), "line %d: message '%s' lacks '%s'", line,
                  kf_graph_errmsg(G), sub);
  va_end(ap);
}
#define FAILS(v, st, ...) fails_(v, st, __LINE__, __VA_ARGS__, (const char *)NULL)

/* The op of value v, as the IR stores it. */
static inline ir_op op_of(kf_value v) {
  return G->nodes[v].op;
}

static inline TCase *tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, setup_graph, teardown_graph);
  return tc;
}

#endif
