/* test_hash.c - the structural hash: equal graphs hash equal, every change of
 * op, attribute, dtype, shape, operand order, inputs or outputs changes it,
 * and names do not. Graphs are made with ir_append so that each field can be
 * varied alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "ir/graph.h"
#include "ir/ir.h"
#include "ir/names.h"
#include "pipeline/pipeline.h"

/* What one variant of the reference graph changes. */
typedef enum variant {
  V_BASE,
  V_RENAMED,
  V_GRAPH_NAME,
  V_OP,
  V_DTYPE,
  V_SHAPE,
  V_RANK,
  V_OPERAND_ORDER,
  V_CONST_VALUE,
  V_CLAMP_LO,
  V_CLAMP_HI,
  V_REDUCE_AXES,
  V_REDUCE_KEEPDIM,
  V_REDUCE_OP,
  V_PERM,
  V_OUTPUT_ORDER,
  V_OUTPUT_MISSING,
  V_INPUT_ORDER,
  V_EXTRA_NODE,
  V_COUNT
} variant;

static ir_node make(ir_op op, kf_dtype dt, int rank, const int64_t *shape, int nargs, kf_value a,
                    kf_value b) {
  ir_node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  n.dtype = dt;
  n.rank = (int8_t)rank;
  for (int i = 0; i < rank; i++) n.shape[i] = shape[i];
  n.nargs = (int8_t)nargs;
  n.args[0] = a;
  n.args[1] = b;
  n.lo = -INFINITY;
  n.hi = INFINITY;
  return n;
}

static kf_value input(kf_graph *g, const char *name, kf_dtype dt, int rank, const int64_t *shape) {
  ir_node n = make(IR_OP_INPUT, dt, rank, shape, 0, 0, 0);
  kf_value v = ir_append(g, &n);
  ck_assert(ir_names_insert(g, name, v));
  g->inputs = realloc(g->inputs, (size_t)(g->n_inputs + 1) * sizeof *g->inputs);
  ck_assert_ptr_nonnull(g->inputs);
  g->inputs[g->n_inputs++] = v;
  g->cap_inputs = g->n_inputs;
  return v;
}

/* x, y: f32[4,8]; k = const 0.5; s = add(x, y); m = mul(s, k);
 * c = clamp(m) [0, 6]; r = sum(c) axes {1} ; t = transpose(c) [1,0].
 * outputs r, t. Each variant changes one thing. */
static kf_graph *build(variant var) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  kf_dtype dt = var == V_DTYPE ? KF_F16 : KF_F32;
  int64_t shape[3] = {4, var == V_SHAPE ? 16 : 8, 1};
  int rank = var == V_RANK ? 3 : 2;
  kf_value x = input(g, var == V_RENAMED ? "x_renamed" : "x", dt, rank, shape);
  kf_value y = input(g, "y", dt, rank, shape);
  if (var == V_INPUT_ORDER) { /* same nodes, bound in the other order */
    g->inputs[0] = y;
    g->inputs[1] = x;
  }
  ir_node n = make(IR_OP_CONST, dt, 0, NULL, 0, 0, 0);
  n.value = var == V_CONST_VALUE ? 0.25 : 0.5;
  kf_value k = ir_append(g, &n);
  if (var == V_EXTRA_NODE) {
    n = make(IR_OP_NEG, dt, rank, shape, 1, x, 0);
    ir_append(g, &n);
  }
  n = var == V_OPERAND_ORDER ? make(IR_OP_ADD, dt, rank, shape, 2, y, x)
                             : make(var == V_OP ? IR_OP_SUB : IR_OP_ADD, dt, rank, shape, 2, x, y);
  kf_value s = ir_append(g, &n);
  if (var == V_RENAMED) kf_set_name(g, s, "sum_of_inputs");
  n = make(IR_OP_MUL, dt, rank, shape, 2, s, k);
  kf_value m = ir_append(g, &n);
  n = make(IR_OP_CLAMP, dt, rank, shape, 1, m, 0);
  n.lo = var == V_CLAMP_LO ? -1.0 : 0.0;
  n.hi = var == V_CLAMP_HI ? INFINITY : 6.0;
  kf_value c = ir_append(g, &n);
  int64_t rshape[3] = {4, 1, 1};
  n = make(var == V_REDUCE_OP ? IR_OP_MAX : IR_OP_SUM, dt, rank, rshape, 1, c, 0);
  n.axes = var == V_REDUCE_AXES ? 1u << 0 : 1u << 1;
  n.keepdim = var != V_REDUCE_KEEPDIM;
  kf_value r = ir_append(g, &n);
  int64_t tshape[3] = {shape[1], shape[0], 1};
  n = make(IR_OP_TRANSPOSE, dt, rank, tshape, 1, c, 0);
  n.perm[0] = 1;
  n.perm[1] = 0;
  n.perm[2] = 2;
  if (var == V_PERM) { /* same result shape, different permutation */
    n.perm[0] = 0;
    n.perm[1] = 1;
  }
  kf_value t = ir_append(g, &n);
  if (var == V_OUTPUT_ORDER) {
    kf_set_output(g, t);
    kf_set_output(g, r);
  } else {
    kf_set_output(g, r);
    if (var != V_OUTPUT_MISSING) kf_set_output(g, t);
  }
  if (var == V_GRAPH_NAME) kf_graph_set_name(g, "named");
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

static kf_hash128 hash_of(variant var) {
  kf_graph *g = build(var);
  kf_hash128 h = kf_graph_hash(g);
  kf_graph_destroy(g);
  return h;
}

static bool same(kf_hash128 a, kf_hash128 b) {
  return a.lo == b.lo && a.hi == b.hi;
}

START_TEST(equal_graphs_hash_equal) {
  kf_hash128 a = hash_of(V_BASE), b = hash_of(V_BASE);
  ck_assert(same(a, b));
  ck_assert(a.lo != 0 || a.hi != 0);
  /* Names, of values or of the graph, are not part of the structure. */
  ck_assert(same(a, hash_of(V_RENAMED)));
  ck_assert(same(a, hash_of(V_GRAPH_NAME)));
  /* A copy hashes equal; uses and is_output are derived, not hashed twice. */
  kf_graph *g = build(V_BASE);
  kf_graph *c = ir_graph_clone(g);
  ck_assert_ptr_nonnull(c);
  ck_assert(same(kf_graph_hash(c), a));
  kf_graph_destroy(c);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(each_change_changes_hash) {
  static const variant changed[] = {
      V_OP,          V_DTYPE,    V_SHAPE,        V_RANK,           V_OPERAND_ORDER,
      V_CONST_VALUE, V_CLAMP_LO, V_CLAMP_HI,     V_REDUCE_AXES,    V_REDUCE_KEEPDIM,
      V_REDUCE_OP,   V_PERM,     V_OUTPUT_ORDER, V_OUTPUT_MISSING, V_INPUT_ORDER,
      V_EXTRA_NODE};
  kf_hash128 hs[V_COUNT];
  for (int v = 0; v < V_COUNT; v++) hs[v] = hash_of((variant)v);
  for (size_t i = 0; i < sizeof changed / sizeof *changed; i++)
    ck_assert_msg(!same(hs[V_BASE], hs[changed[i]]), "variant %d hashes like the base",
                  (int)changed[i]);
  /* And the changes differ from each other. */
  for (size_t i = 0; i < sizeof changed / sizeof *changed; i++)
    for (size_t j = i + 1; j < sizeof changed / sizeof *changed; j++)
      ck_assert_msg(!same(hs[changed[i]], hs[changed[j]]), "variants %d and %d collide",
                    (int)changed[i], (int)changed[j]);
}
END_TEST

/* Fields that do not belong to an op do not leak into its hash: a stale
 * clamp bound on an add node, or axes on a transpose, change nothing. */
START_TEST(irrelevant_fields_ignored) {
  kf_graph *g = build(V_BASE);
  kf_hash128 before = kf_graph_hash(g);
  for (int32_t i = 0; i < g->n_nodes; i++) {
    ir_node *n = &g->nodes[i];
    if (n->op != IR_OP_CLAMP) n->lo = 123.0;
    if (n->op != IR_OP_CONST) n->value = 99.0;
    if (n->op != IR_OP_TRANSPOSE) n->perm[0] = 5;
    if (n->op != IR_OP_SUM) {
      n->axes = 0xFF;
      n->keepdim = !n->keepdim;
    }
    n->shape[KF_MAX_RANK - 1] = 777; /* past the rank */
  }
  ck_assert(same(before, kf_graph_hash(g)));
  kf_graph_destroy(g);
}
END_TEST

START_TEST(null_and_empty) {
  kf_hash128 z = kf_graph_hash(NULL);
  ck_assert(z.lo == 0 && z.hi == 0);
  kf_graph *a = NULL, *b = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &a), KF_OK);
  ck_assert_int_eq(kf_graph_create(NULL, &b), KF_OK);
  ck_assert(same(kf_graph_hash(a), kf_graph_hash(b)));
  int64_t one = 1;
  input(b, "x", KF_F32, 1, &one);
  ck_assert(!same(kf_graph_hash(a), kf_graph_hash(b)));
  /* 0.0 and -0.0 are different constants. */
  ir_node n;
  memset(&n, 0, sizeof n);
  n.op = IR_OP_CONST;
  n.dtype = KF_F32;
  ck_assert_int_ge(ir_append(a, &n), 0);
  kf_hash128 pz = kf_graph_hash(a);
  a->nodes[0].value = -0.0;
  ck_assert(!same(pz, kf_graph_hash(a)));
  kf_graph_destroy(a);
  kf_graph_destroy(b);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("hash");
  TCase *tc = tcase_create("hash");
  tcase_add_test(tc, equal_graphs_hash_equal);
  tcase_add_test(tc, each_change_changes_hash);
  tcase_add_test(tc, irrelevant_fields_ignored);
  tcase_add_test(tc, null_and_empty);
  suite_add_tcase(s, tc);
  return s;
}
