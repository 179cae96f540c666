/* test_graph.c - the graph object: lifetime, sticky errors, ir_append, names,
 * outputs, introspection, shapes, deep copies and the text dump. Nodes are
 * made with ir_append directly so that these tests do not depend on the
 * builders. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "ir/graph.h"
#include "ir/ir.h"
#include "ir/names.h"
#include "ir/shape.h"
#include "pipeline/pipeline.h"

static kf_graph *new_graph(void) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  ck_assert_ptr_nonnull(g);
  return g;
}

static ir_node make(ir_op op, kf_dtype dt, int rank, const int64_t *shape) {
  ir_node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  n.dtype = dt;
  n.rank = (int8_t)rank;
  for (int i = 0; i < rank; i++) n.shape[i] = shape[i];
  n.lo = -INFINITY;
  n.hi = INFINITY;
  return n;
}

/* An input as kf_input makes it: appended, named, registered. */
static kf_value input(kf_graph *g, const char *name, kf_dtype dt, int rank, const int64_t *shape) {
  ir_node n = make(IR_OP_INPUT, dt, rank, shape);
  kf_value v = ir_append(g, &n);
  ck_assert_int_ge(v, 0);
  ck_assert(ir_names_insert(g, name, v));
  g->inputs = realloc(g->inputs, (size_t)(g->n_inputs + 1) * sizeof *g->inputs);
  ck_assert_ptr_nonnull(g->inputs);
  g->inputs[g->n_inputs++] = v;
  g->cap_inputs = g->n_inputs;
  return v;
}

static kf_value binary(kf_graph *g, ir_op op, kf_value a, kf_value b) {
  ir_node n = make(op, g->nodes[a].dtype, g->nodes[a].rank, g->nodes[a].shape);
  n.nargs = 2;
  n.args[0] = a;
  n.args[1] = b;
  return ir_append(g, &n);
}

static const int64_t s48[2] = {4, 8};

START_TEST(lifetime_and_null) {
  ck_assert_int_eq(kf_graph_create(NULL, NULL), KF_ERR_INVALID_ARG);
  kf_graph_destroy(NULL);
  ck_assert_int_eq(kf_graph_status(NULL), KF_ERR_INVALID_ARG);
  ck_assert_str_eq(kf_graph_errmsg(NULL), "");
  ck_assert_ptr_null(kf_graph_name(NULL));
  ck_assert_int_eq(kf_graph_set_name(NULL, "x"), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_graph_num_values(NULL), -1);
  ck_assert_int_eq(kf_graph_num_inputs(NULL), -1);
  ck_assert_int_eq(kf_graph_num_outputs(NULL), -1);
  ck_assert_int_eq(kf_graph_input(NULL, 0), KF_NONE);
  ck_assert_int_eq(kf_graph_output(NULL, 0), KF_NONE);
  ck_assert_int_eq(kf_graph_find(NULL, "x"), KF_NONE);
  ck_assert_int_eq(kf_set_name(NULL, 0, "x"), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_set_output(NULL, 0), KF_ERR_INVALID_ARG);
  ck_assert_ptr_null(ir_graph_clone(NULL));
  ck_assert_int_eq(ir_append(NULL, NULL), KF_NONE);

  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  ck_assert_ptr_eq(g->ctx, ctx);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  ck_assert_str_eq(kf_graph_errmsg(g), "");
  ck_assert_int_eq(kf_graph_num_values(g), 0);
  ck_assert_ptr_null(kf_graph_name(g));
  ck_assert_int_eq(kf_graph_set_name(g, "my graph"), KF_OK);
  ck_assert_str_eq(kf_graph_name(g), "my graph");
  ck_assert_int_eq(kf_graph_set_name(g, NULL), KF_OK);
  ck_assert_ptr_null(kf_graph_name(g));
  ck_assert_int_eq(kf_graph_set_name(g, "again"), KF_OK);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(append_and_uses) {
  kf_graph *g = new_graph();
  kf_value x = input(g, "x", KF_F32, 2, s48);
  kf_value y = input(g, "y", KF_F32, 2, s48);
  kf_value a = binary(g, IR_OP_ADD, x, y);
  kf_value m = binary(g, IR_OP_MUL, a, x);
  ck_assert_int_eq(x, 0);
  ck_assert_int_eq(m, 3);
  ck_assert_int_eq(g->nodes[x].uses, 2);
  ck_assert_int_eq(g->nodes[y].uses, 1);
  ck_assert_int_eq(g->nodes[a].uses, 1);
  ck_assert_int_eq(g->nodes[m].uses, 0);
  ck_assert_ptr_null(g->nodes[a].name);
  /* A node's own name, uses and is_output are not copied in. */
  ir_node n = make(IR_OP_NEG, KF_F32, 2, s48);
  n.nargs = 1;
  n.args[0] = m;
  n.uses = 7;
  n.is_output = true;
  n.name = (char *)"bogus";
  kf_value ng = ir_append(g, &n);
  ck_assert_int_eq(g->nodes[ng].uses, 0);
  ck_assert(!g->nodes[ng].is_output);
  ck_assert_ptr_null(g->nodes[ng].name);
  ck_assert_int_eq(g->nodes[m].uses, 1);
  /* Growth keeps earlier nodes. */
  kf_value last = ng;
  for (int i = 0; i < 1000; i++) last = binary(g, IR_OP_ADD, last, x);
  ck_assert_int_eq(kf_graph_num_values(g), 1005);
  ck_assert_int_eq(g->nodes[x].uses, 1002);
  ck_assert_int_eq(g->nodes[1004].args[0], 1003);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(append_rejects_bad_nodes) {
  kf_graph *g = new_graph();
  kf_value x = input(g, "x", KF_F32, 2, s48);
  ir_node n = make(IR_OP_NEG, KF_F32, 2, s48);
  n.nargs = 1;
  n.args[0] = 5; /* not a value yet */
  ck_assert_int_eq(ir_append(g, &n), KF_NONE);
  ck_assert_int_eq(kf_graph_status(g), KF_ERR_INTERNAL);
  ck_assert_ptr_nonnull(strstr(kf_graph_errmsg(g), "operand 0"));
  ck_assert_int_eq(kf_graph_num_values(g), 1);
  /* Sticky: a good node is refused too. */
  n.args[0] = x;
  ck_assert_int_eq(ir_append(g, &n), KF_NONE);
  ck_assert_int_eq(g->nodes[x].uses, 0);
  kf_graph_destroy(g);

  g = new_graph();
  n = make(IR_OP_INPUT, KF_F32, 2, s48);
  n.rank = 9;
  ck_assert_int_eq(ir_append(g, &n), KF_NONE);
  ck_assert_int_eq(kf_graph_status(g), KF_ERR_INTERNAL);
  kf_graph_destroy(g);
  g = new_graph();
  n = make(IR_OP_COUNT, KF_F32, 0, NULL);
  ck_assert_int_eq(ir_append(g, &n), KF_NONE);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(sticky_errors) {
  kf_graph *g = new_graph();
  /* A non-sticky error sets the message but not the status. */
  ck_assert_int_eq(ir_error(g, KF_ERR_IO, "io %d", 1), KF_ERR_IO);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  ck_assert_str_eq(kf_graph_errmsg(g), "io 1");
  ck_assert_int_eq(ir_fail(g, KF_ERR_SHAPE, "first %s", "error"), KF_NONE);
  ck_assert_int_eq(kf_graph_status(g), KF_ERR_SHAPE);
  ck_assert_str_eq(kf_graph_errmsg(g), "first error");
  ck_assert_int_eq(ir_fail(g, KF_ERR_DTYPE, "second"), KF_NONE);
  ck_assert_int_eq(kf_graph_status(g), KF_ERR_SHAPE);
  ck_assert_str_eq(kf_graph_errmsg(g), "first error");
  ck_assert_int_eq(ir_error(g, KF_ERR_IO, "later"), KF_ERR_IO);
  ck_assert_str_eq(kf_graph_errmsg(g), "first error");
  ck_assert_int_eq(kf_set_output(g, 0), KF_ERR_SHAPE);
  ck_assert_int_eq(kf_set_name(g, 0, "x"), KF_ERR_INVALID_ARG);
  ck_assert_str_eq(kf_graph_errmsg(g), "first error");
  kf_graph_destroy(g);
  /* ir_fail with KF_OK still marks the graph failed; long messages truncate. */
  g = new_graph();
  char big[3000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  ir_fail(g, KF_OK, "%s", big);
  ck_assert_int_ne(kf_graph_status(g), KF_OK);
  ck_assert_uint_eq(strlen(kf_graph_errmsg(g)), sizeof g->errmsg - 1);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(name_syntax) {
  static const char *good[] = {"x", "_", "X1", "a.b", "layer.0.weight", "_a_9."};
  static const char *bad[] = {"", "1x", ".a", "a-b", "a b", "é", "x\n", "$", NULL};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) ck_assert(ir_name_valid(good[i]));
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    ck_assert_msg(!ir_name_valid(bad[i]), "%s", bad[i] ? bad[i] : "NULL");
  char name[300];
  memset(name, 'a', sizeof name);
  name[255] = '\0';
  ck_assert(ir_name_valid(name)); /* 255 bytes */
  name[255] = 'a';
  name[256] = '\0';
  ck_assert(!ir_name_valid(name)); /* 256 bytes */
}
END_TEST

START_TEST(names_set_find_rename) {
  kf_graph *g = new_graph();
  kf_value x = input(g, "x", KF_F32, 2, s48);
  kf_value a = binary(g, IR_OP_ADD, x, x);
  kf_value b = binary(g, IR_OP_ADD, a, x);
  ck_assert_int_eq(kf_graph_find(g, "x"), x);
  ck_assert_int_eq(kf_graph_find(g, "y"), KF_NONE);
  ck_assert_int_eq(kf_graph_find(g, NULL), KF_NONE);
  ck_assert_int_eq(kf_set_name(g, a, "a"), KF_OK);
  ck_assert_str_eq(kf_value_name(g, a), "a");
  ck_assert_int_eq(kf_graph_find(g, "a"), a);
  ck_assert_int_eq(kf_set_name(g, a, "a"), KF_OK); /* same name again: fine */
  ck_assert_int_eq(kf_set_name(g, b, "a"), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_graph_errmsg(g), "taken"));
  ck_assert_int_eq(kf_set_name(g, b, "1b"), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_graph_errmsg(g), "invalid name"));
  ck_assert_int_eq(kf_set_name(g, b, NULL), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_set_name(g, 99, "z"), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_set_name(g, KF_NONE, "z"), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_graph_status(g), KF_OK); /* not sticky */
  ck_assert_ptr_null(kf_value_name(g, b));
  /* Renaming frees the old name for others. */
  ck_assert_int_eq(kf_set_name(g, a, "a2"), KF_OK);
  ck_assert_int_eq(kf_graph_find(g, "a"), KF_NONE);
  ck_assert_int_eq(kf_graph_find(g, "a2"), a);
  ck_assert_int_eq(kf_set_name(g, b, "a"), KF_OK);
  ck_assert_int_eq(kf_graph_find(g, "a"), b);
  ck_assert_uint_eq(g->names.count, 3);
  kf_graph_destroy(g);
}
END_TEST

/* Many names, renamed at random: the map always agrees with the nodes, and
 * 100k names stay fast (a quadratic map would time out here). */
START_TEST(names_many) {
  enum { N = 100000 };
  kf_graph *g = new_graph();
  int64_t one = 1;
  kf_value x = input(g, "x", KF_F32, 1, &one);
  char name[64];
  for (int i = 1; i < N; i++) {
    ir_node n = make(IR_OP_NEG, KF_F32, 1, &one);
    n.nargs = 1;
    n.args[0] = x;
    kf_value v = ir_append(g, &n);
    snprintf(name, sizeof name, "v%d", i);
    ck_assert_int_eq(kf_set_name(g, v, name), KF_OK);
  }
  unsigned seed = 12345;
  for (int k = 0; k < N; k++) {
    seed = seed * 1103515245u + 12345u;
    int v = 1 + (int)((seed >> 8) % (N - 1));
    snprintf(name, sizeof name, "r%d.%d", v, k);
    ck_assert_int_eq(kf_set_name(g, v, name), KF_OK);
  }
  ck_assert_uint_eq(g->names.count, N);
  for (int v = 0; v < N; v++) {
    const char *nm = kf_value_name(g, v);
    ck_assert_ptr_nonnull(nm);
    ck_assert_int_eq(kf_graph_find(g, nm), v);
  }
  int stale = 0;
  for (int i = 1; i < N; i += 97) {
    snprintf(name, sizeof name, "v%d", i);
    kf_value f = kf_graph_find(g, name);
    if (f >= 0)
      ck_assert_str_eq(kf_value_name(g, f), name);
    else
      stale++;
  }
  ck_assert_int_gt(stale, 0);
  kf_graph_destroy(g);
}
END_TEST

/* A small, full-ish table under heavy churn: deletions hit clusters that
 * wrap around the end of the slot array, and every name stays findable. */
START_TEST(names_churn) {
  enum { N = 7 }; /* 7 names in 16 slots */
  kf_graph *g = new_graph();
  int64_t one = 1;
  kf_value x = input(g, "x", KF_F32, 1, &one);
  for (int i = 1; i < N; i++) {
    ir_node n = make(IR_OP_NEG, KF_F32, 1, &one);
    n.nargs = 1;
    n.args[0] = x;
    ir_append(g, &n);
  }
  char name[64];
  unsigned seed = 7;
  for (int k = 0; k < 200000; k++) {
    seed = seed * 1103515245u + 12345u;
    int v = (int)((seed >> 8) % N);
    snprintf(name, sizeof name, "n%d", k);
    ck_assert_int_eq(kf_set_name(g, v, name), KF_OK);
    for (int u = 0; u < N; u++) {
      const char *nm = kf_value_name(g, u);
      if (nm) ck_assert_msg(kf_graph_find(g, nm) == u, "step %d: %s lost", k, nm);
    }
  }
  ck_assert_uint_eq(g->names.cap, 16);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(outputs) {
  kf_graph *g = new_graph();
  kf_value x = input(g, "x", KF_F32, 2, s48);
  kf_value a = binary(g, IR_OP_ADD, x, x);
  kf_value b = binary(g, IR_OP_MUL, a, x);
  ck_assert_int_eq(kf_set_output(g, b), KF_OK);
  ck_assert_int_eq(kf_set_output(g, a), KF_OK);
  ck_assert_int_eq(kf_graph_num_outputs(g), 2);
  ck_assert_int_eq(kf_graph_output(g, 0), b);
  ck_assert_int_eq(kf_graph_output(g, 1), a);
  ck_assert_int_eq(kf_graph_output(g, 2), KF_NONE);
  ck_assert_int_eq(kf_graph_output(g, -1), KF_NONE);
  ck_assert(g->nodes[a].is_output && !g->nodes[x].is_output);
  ck_assert_int_eq(kf_set_output(g, a), KF_ERR_INVALID_ARG); /* twice: sticky */
  ck_assert_int_eq(kf_graph_status(g), KF_ERR_INVALID_ARG);
  ck_assert_ptr_nonnull(strstr(kf_graph_errmsg(g), "%1"));
  ck_assert_int_eq(kf_graph_num_outputs(g), 2);
  kf_graph_destroy(g);

  g = new_graph();
  ck_assert_int_eq(kf_set_output(g, 0), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_graph_status(g), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_graph_num_outputs(g), 0);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(introspection) {
  kf_graph *g = new_graph();
  kf_value x = input(g, "x", KF_BF16, 2, s48);
  ir_node c = make(IR_OP_CONST, KF_BF16, 0, NULL);
  c.value = 2.0;
  kf_value k = ir_append(g, &c);
  kf_value a = binary(g, IR_OP_ADD, x, k);
  ck_assert_int_eq(kf_graph_num_inputs(g), 1);
  ck_assert_int_eq(kf_graph_input(g, 0), x);
  ck_assert_int_eq(kf_graph_input(g, 1), KF_NONE);
  ck_assert_int_eq(kf_value_dtype(g, a), KF_BF16);
  ck_assert_int_eq(kf_value_rank(g, a), 2);
  ck_assert_int_eq(kf_value_rank(g, k), 0);
  ck_assert_int_eq(kf_value_shape(g, a)[1], 8);
  ck_assert_int_eq(kf_value_numel(g, a), 32);
  ck_assert_int_eq(kf_value_numel(g, k), 1);
  ck_assert_str_eq(kf_value_op(g, x), "input");
  ck_assert_str_eq(kf_value_op(g, k), "const");
  ck_assert_str_eq(kf_value_op(g, a), "add");
  ck_assert_str_eq(kf_value_name(g, x), "x");
  ck_assert_ptr_null(kf_value_name(g, a));
  kf_value bad[] = {-1, KF_NONE, 3, 1000, INT32_MIN};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_int_eq(kf_value_dtype(g, bad[i]), KF_DTYPE_COUNT);
    ck_assert_int_eq(kf_value_rank(g, bad[i]), -1);
    ck_assert_ptr_null(kf_value_shape(g, bad[i]));
    ck_assert_int_eq(kf_value_numel(g, bad[i]), -1);
    ck_assert_ptr_null(kf_value_name(g, bad[i]));
    ck_assert_ptr_null(kf_value_op(g, bad[i]));
    ck_assert_int_eq(kf_value_dtype(NULL, 0), KF_DTYPE_COUNT);
  }
  /* every input and output spec in one call */
  kf_set_output(g, a);
  kf_set_output(g, k);
  kf_tensor in[1], out[2];
  memset(in, 0x5a, sizeof in);
  ck_assert_int_eq(kf_graph_io(g, in, 1, out, 2), KF_OK);
  ck_assert_ptr_null(in[0].data);
  ck_assert_int_eq(in[0].dtype, KF_BF16);
  ck_assert_int_eq(in[0].rank, 2);
  ck_assert_int_eq(in[0].shape[0], 4);
  ck_assert_int_eq(in[0].shape[1], 8);
  ck_assert_int_eq(in[0].shape[2], 0);
  ck_assert_int_eq(out[0].rank, 2);
  ck_assert_int_eq(out[1].rank, 0);
  ck_assert_int_eq(kf_graph_io(g, in, 1, out, 1), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_graph_io(g, in, 2, out, 2), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_graph_io(g, NULL, 1, out, 2), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_graph_io(NULL, NULL, 0, NULL, 0), KF_ERR_INVALID_ARG);
  char buf[64];
  ck_assert_str_eq(ir_node_label(g, x, buf, sizeof buf), "%0 x");
  ck_assert_str_eq(ir_node_label(g, a, buf, sizeof buf), "%2");
  ck_assert_str_eq(ir_node_label(g, 77, buf, sizeof buf), "%77");
  kf_graph_destroy(g);
}
END_TEST

START_TEST(shapes) {
  int64_t n = -5;
  ck_assert(ir_numel(0, NULL, &n) && n == 1);
  int64_t s[8] = {2, 3, 4};
  ck_assert(ir_numel(3, s, &n) && n == 24);
  int64_t z[3] = {0, INT64_MAX, INT64_MAX};
  ck_assert(ir_numel(3, z, &n) && n == 0);
  int64_t z2[3] = {INT64_MAX, INT64_MAX, 0};
  ck_assert(ir_numel(3, z2, &n) && n == 0);
  int64_t big[2] = {INT64_C(1) << 32, INT64_C(1) << 31}; /* 2^63: one too many */
  ck_assert(!ir_numel(2, big, &n));
  big[1] = INT64_C(1) << 30;
  ck_assert(ir_numel(2, big, &n) && n == INT64_C(1) << 62);
  int64_t over[2] = {INT64_C(1) << 32, INT64_C(1) << 32};
  ck_assert(!ir_numel(2, over, &n));
  int64_t edge[2] = {INT64_MAX, 1};
  ck_assert(ir_numel(2, edge, &n) && n == INT64_MAX);
  int64_t neg[2] = {4, -1};
  ck_assert(!ir_numel(2, neg, &n));
  ck_assert(!ir_numel(9, s, &n) && !ir_numel(-1, s, &n));
  int64_t eight[8] = {256, 256, 256, 256, 256, 256, 256, 256}; /* 2^64 */
  ck_assert(!ir_numel(8, eight, &n));
  eight[7] = 64; /* 2^62 */
  ck_assert(ir_numel(8, eight, &n) && n == INT64_C(1) << 62);

  int r = -1;
  int64_t out[8];
  int64_t a[4] = {8, 1, 6, 1}, b[3] = {7, 1, 5};
  ck_assert(ir_broadcast_shapes(4, a, 3, b, &r, out));
  ck_assert_int_eq(r, 4);
  ck_assert(out[0] == 8 && out[1] == 7 && out[2] == 6 && out[3] == 5);
  ck_assert(ir_broadcast_shapes(3, b, 4, a, &r, out) && r == 4 && out[1] == 7 && out[3] == 5);
  int64_t three[1] = {3}, two[1] = {2}, one[1] = {1}, zero[1] = {0};
  ck_assert(ir_broadcast_shapes(0, NULL, 1, three, &r, out) && r == 1 && out[0] == 3);
  ck_assert(ir_broadcast_shapes(0, NULL, 0, NULL, &r, out) && r == 0);
  ck_assert(!ir_broadcast_shapes(1, two, 1, three, &r, out));
  ck_assert(ir_broadcast_shapes(1, zero, 1, one, &r, out) && out[0] == 0);
  ck_assert(!ir_broadcast_shapes(1, zero, 1, three, &r, out));
  int64_t c[2] = {4, 1}, d[2] = {3, 1};
  ck_assert(!ir_broadcast_shapes(2, c, 2, d, &r, out));
  int64_t e[2] = {1, 5}; /* out may alias an operand */
  ck_assert(ir_broadcast_shapes(2, e, 2, c, &r, e) && e[0] == 4 && e[1] == 5);

  char buf[8 * 21 + 3];
  ck_assert_str_eq(ir_shape_str(buf, sizeof buf, 0, NULL), "[]");
  ck_assert_str_eq(ir_shape_str(buf, sizeof buf, 2, s48), "[4,8]");
  int64_t m[8] = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX,
                  INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
  ir_shape_str(buf, sizeof buf, 8, m);
  ck_assert_uint_eq(strlen(buf), 8 * 19 + 7 + 2);
  char tiny[4];
  ck_assert_str_eq(ir_shape_str(tiny, sizeof tiny, 2, s48), "[4,");
}
END_TEST

START_TEST(clone_is_deep) {
  kf_graph *g = new_graph();
  kf_graph_set_name(g, "orig");
  kf_value x = input(g, "x", KF_F32, 2, s48);
  kf_value a = binary(g, IR_OP_ADD, x, x);
  kf_set_name(g, a, "a");
  kf_set_output(g, a);
  kf_graph *c = ir_graph_clone(g);
  ck_assert_ptr_nonnull(c);
  kf_hash128 hg = kf_graph_hash(g), hc = kf_graph_hash(c);
  ck_assert(hg.lo == hc.lo && hg.hi == hc.hi);
  ck_assert_ptr_ne(c->nodes, g->nodes);
  ck_assert_ptr_ne(c->name, g->name);
  ck_assert_str_eq(kf_graph_name(c), "orig");
  ck_assert_ptr_ne(kf_value_name(c, a), kf_value_name(g, a));
  ck_assert_int_eq(kf_graph_find(c, "a"), a);
  ck_assert_int_eq(kf_graph_num_inputs(c), 1);
  ck_assert_int_eq(kf_graph_output(c, 0), a);
  /* Changing the copy leaves the original alone, and vice versa. */
  ck_assert_int_eq(kf_set_name(c, a, "renamed"), KF_OK);
  kf_value b = binary(c, IR_OP_MUL, a, x);
  ck_assert_int_eq(kf_set_output(c, b), KF_OK);
  ck_assert_int_eq(kf_graph_find(g, "a"), a);
  ck_assert_int_eq(kf_graph_find(g, "renamed"), KF_NONE);
  ck_assert_int_eq(kf_graph_num_values(g), 2);
  ck_assert_int_eq(kf_graph_num_outputs(g), 1);
  ck_assert_int_eq(g->nodes[a].uses, 0);
  kf_graph_destroy(g);
  ck_assert_int_eq(kf_graph_find(c, "x"), x);
  ck_assert_int_eq(kf_graph_num_outputs(c), 2);
  kf_graph_destroy(c);
  /* An empty graph and a failed one clone too. */
  g = new_graph();
  ir_fail(g, KF_ERR_SHAPE, "broken");
  c = ir_graph_clone(g);
  ck_assert_ptr_nonnull(c);
  ck_assert_int_eq(kf_graph_status(c), KF_ERR_SHAPE);
  ck_assert_str_eq(kf_graph_errmsg(c), "broken");
  kf_graph_destroy(c);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(dump_text) {
  kf_graph *g = new_graph();
  kf_value x = input(g, "x", KF_F32, 2, s48);
  ir_node c = make(IR_OP_CONST, KF_F32, 0, NULL);
  c.value = 1.5;
  kf_value k = ir_append(g, &c);
  kf_value y = binary(g, IR_OP_ADD, x, k);
  kf_set_name(g, y, "y");
  ir_node r = make(IR_OP_SUM, KF_F32, 2, (int64_t[]){4, 1});
  r.nargs = 1;
  r.args[0] = y;
  r.axes = 1u << 1;
  r.keepdim = true;
  kf_value s = ir_append(g, &r);
  ir_node t = make(IR_OP_TRANSPOSE, KF_F32, 2, (int64_t[]){8, 4});
  t.nargs = 1;
  t.args[0] = y;
  t.perm[0] = 1;
  t.perm[1] = 0;
  kf_value tr = ir_append(g, &t);
  ir_node cl = make(IR_OP_CLAMP, KF_F32, 2, (int64_t[]){8, 4});
  cl.nargs = 1;
  cl.args[0] = tr;
  cl.lo = 0;
  cl.hi = 6;
  kf_value cv = ir_append(g, &cl);
  cl.args[0] = cv;
  cl.lo = -INFINITY;
  cl.hi = 0.1;
  ir_append(g, &cl);
  kf_set_output(g, y);
  kf_set_output(g, s);
  char *d = kf_graph_dump(g);
  ck_assert_ptr_nonnull(d);
  const char *want =
      "%0 x: f32[4,8] = input\n"
      "%1: f32[] = const 1.5\n"
      "%2 y: f32[4,8] = add(%0 x, %1)\n"
      "%3: f32[4,1] = sum(%2 y) axes=[1] keepdim=true\n"
      "%4: f32[8,4] = transpose(%2 y) perm=[1,0]\n"
      "%5: f32[8,4] = clamp(%4) min=0 max=6\n"
      "%6: f32[8,4] = clamp(%5) max=0.1\n"
      "outputs: %2 y, %3\n";
  ck_assert_str_eq(d, want);
  kf_free(d);
  ir_fail(g, KF_ERR_SHAPE, "bad shapes");
  d = kf_graph_dump(g);
  ck_assert_ptr_nonnull(strstr(d, "error: ERR_SHAPE: bad shapes\n"));
  kf_free(d);
  kf_graph_destroy(g);
  g = new_graph();
  d = kf_graph_dump(g);
  ck_assert_str_eq(d, "outputs:\n");
  kf_free(d);
  kf_graph_destroy(g);
  d = kf_graph_dump(NULL);
  ck_assert_ptr_nonnull(d);
  kf_free(d);
}
END_TEST

/* The same checks through the public builders, as a user sees them. */
START_TEST(public_builders) {
  kf_graph *g = new_graph(), *h = new_graph();
  kf_graph *gs[2] = {g, h};
  for (int i = 0; i < 2; i++) {
    int64_t shape[2] = {8192, 8192};
    kf_value x = kf_input(gs[i], "x", KF_F32, 2, shape);
    kf_value w = kf_input(gs[i], "w", KF_F32, 2, shape);
    kf_value k = kf_scalar(gs[i], 2.0, KF_F32);
    kf_value m = kf_mul(gs[i], w, k);
    kf_value y = kf_add(gs[i], x, m);
    ck_assert_int_eq(kf_set_name(gs[i], y, i ? "y2" : "y"), KF_OK);
    int ax = -1;
    kf_value r = kf_sum(gs[i], y, 1, &ax, true);
    ck_assert_int_eq(kf_set_output(gs[i], y), KF_OK);
    ck_assert_int_eq(kf_set_output(gs[i], r), KF_OK);
    ck_assert_int_eq(kf_graph_status(gs[i]), KF_OK);
    ck_assert_int_eq(kf_graph_num_inputs(gs[i]), 2);
    ck_assert_int_eq(kf_graph_input(gs[i], 1), w);
    ck_assert_int_eq(kf_value_numel(gs[i], r), 8192);
    ck_assert_int_eq(gs[i]->nodes[y].uses, 1);
  }
  kf_hash128 a = kf_graph_hash(g), b = kf_graph_hash(h);
  ck_assert(a.lo == b.lo && a.hi == b.hi); /* only a name differs */
  char *d = kf_graph_dump(g);
  ck_assert_ptr_nonnull(d);
  ck_assert_ptr_nonnull(strstr(d, "%0 x: f32[8192,8192] = input\n"));
  ck_assert_ptr_nonnull(strstr(d, "%2: f32[] = const 2\n"));
  ck_assert_ptr_nonnull(strstr(d, "%4 y: f32[8192,8192] = add(%0 x, %3)\n"));
  ck_assert_ptr_nonnull(strstr(d, "= sum(%4 y) axes=[1] keepdim=true\n"));
  ck_assert_ptr_nonnull(strstr(d, "outputs: %4 y, %5\n"));
  kf_free(d);
  /* A builder error is sticky and later calls return KF_NONE. */
  ck_assert_int_eq(kf_add(g, 0, 99), KF_NONE);
  ck_assert_int_ne(kf_graph_status(g), KF_OK);
  ck_assert_int_eq(kf_neg(g, 0), KF_NONE);
  kf_graph_destroy(g);
  kf_graph_destroy(h);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("graph");
  TCase *tc = tcase_create("graph");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, lifetime_and_null);
  tcase_add_test(tc, append_and_uses);
  tcase_add_test(tc, append_rejects_bad_nodes);
  tcase_add_test(tc, sticky_errors);
  tcase_add_test(tc, name_syntax);
  tcase_add_test(tc, names_set_find_rename);
  tcase_add_test(tc, names_many);
  tcase_add_test(tc, names_churn);
  tcase_add_test(tc, outputs);
  tcase_add_test(tc, introspection);
  tcase_add_test(tc, shapes);
  tcase_add_test(tc, clone_is_deep);
  tcase_add_test(tc, dump_text);
  tcase_add_test(tc, public_builders);
  suite_add_tcase(s, tc);
  return s;
}
