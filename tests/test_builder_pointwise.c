/* test_builder_pointwise.c - the op table, sources (inputs, constants) and the
 * elementwise builders: dtype rules of every unary and binary op against an
 * independent list, broadcasting, where, clamp, cast, and sticky errors. */
#include <math.h>

#include "ir/dtype.h"
#include "ir/ops.h"
#include "test_builder.h"

typedef kf_value (*unary_fn)(kf_graph *, kf_value);
typedef kf_value (*binary_fn)(kf_graph *, kf_value, kf_value);

static const struct {
  const char *name;
  unary_fn fn;
} unaries[] = {
#define UNARY(ID, lname, ...) {#lname, kf_##lname},
#include "ir/ops.def"
};

static const struct {
  const char *name;
  binary_fn fn;
} binaries[] = {
#define BINARY(ID, lname, ...) {#lname, kf_##lname},
#include "ir/ops.def"
};

/* The dtype rules as kfuse.h states them, written apart from ops.def. */
static const char *const float_only =
    " exp log sqrt rsqrt reciprocal sin cos tanh sigmoid gelu gelu_tanh silu erf floor ceil"
    " div pow ";
static const char *const any_dtype = " logical_not eq ne lt le gt ge logical_and logical_or ";
static const char *const gives_bool = " logical_not eq ne lt le gt ge logical_and logical_or ";

static bool listed(const char *list, const char *name) {
  char key[64];
  snprintf(key, sizeof key, " %s ", name);
  return strstr(list, key) != NULL;
}

static bool rule_accepts(const char *op, kf_dtype dt) {
  if (listed(float_only, op)) return ir_dtype_is_float(dt);
  if (listed(any_dtype, op)) return true;
  return dt != KF_BOOL; /* numeric */
}

static void fresh_graph(void) {
  teardown_graph();
  setup_graph();
}

START_TEST(op_table) {
  ck_assert_int_eq(IR_OP_COUNT, 2 + 20 + 15 + 3 + 4 + 3 + 4 + 4 + 1 + 1); /* logsumexp last */
  for (int i = 0; i < IR_OP_COUNT; i++) {
    ck_assert_ptr_nonnull(ir_ops[i].name);
    ck_assert_int_eq(ir_op_lookup(ir_ops[i].name), i);
    ck_assert_int_le(ir_ops[i].min_args, ir_ops[i].max_args);
  }
  ck_assert_int_eq(ir_op_lookup("add"), IR_OP_ADD);
  ck_assert_int_eq(ir_op_lookup("gelu_tanh"), IR_OP_GELU_TANH);
  ck_assert_int_eq(ir_op_lookup("Add"), -1);
  ck_assert_int_eq(ir_op_lookup(""), -1);
  ck_assert_int_eq(ir_op_lookup(NULL), -1);
  ck_assert_str_eq(ir_ops[IR_OP_CONST].name, "const");
  ck_assert_int_eq(ir_ops[IR_OP_EXP].kind, KIND_UNARY);
  ck_assert_int_eq(ir_ops[IR_OP_EXP].accepts, ACC_FLT);
  ck_assert_int_eq(ir_ops[IR_OP_NEG].accepts, ACC_NUM);
  ck_assert_int_eq(ir_ops[IR_OP_LT].result, RES_BOOL);
  ck_assert_int_eq(ir_ops[IR_OP_ADD].kind, KIND_BINARY);
  ck_assert_int_eq(ir_ops[IR_OP_ADD].min_args, 2);
  ck_assert_int_eq(ir_ops[IR_OP_WHERE].max_args, 3);
  ck_assert_int_eq(ir_ops[IR_OP_LAYERNORM].kind, KIND_COMPOSITE);
  ck_assert_int_eq(ir_ops[IR_OP_LAYERNORM].min_args, 1);
  ck_assert_int_eq(ir_ops[IR_OP_LAYERNORM].max_args, 3);
  ck_assert_uint_eq(ir_ops[IR_OP_SUM].attrs, ATTR_AXES | ATTR_KEEPDIM);
  ck_assert_uint_eq(ir_ops[IR_OP_CLAMP].attrs, ATTR_MIN | ATTR_MAX);
  ck_assert_int_eq(ir_ops[IR_OP_MATMUL].kind, KIND_MATMUL);
  ck_assert_int_eq(ir_ops[IR_OP_TRANSPOSE].kind, KIND_LAYOUT);
  ck_assert_int_eq(ir_ops[IR_OP_INPUT].kind, KIND_SOURCE);
}
END_TEST

START_TEST(input_ok) {
  kf_value x = IN("x", KF_BF16, 2, 3);
  kf_value s = IN0("s", KF_I64);
  kf_value big = IN("big.v_8", KF_BOOL, 1, 2, 1, 2, 1, 2, 1, 2);
  HAS(x, KF_BF16, 2, 3);
  HAS0(s, KF_I64);
  HAS(big, KF_BOOL, 1, 2, 1, 2, 1, 2, 1, 2);
  ck_assert_int_eq(kf_graph_num_inputs(G), 3);
  ck_assert_int_eq(kf_graph_input(G, 0), x);
  ck_assert_int_eq(kf_graph_input(G, 2), big);
  ck_assert_int_eq(kf_graph_find(G, "s"), s);
  ck_assert_str_eq(kf_value_name(G, x), "x");
  ck_assert_str_eq(kf_value_op(G, x), "input");
  ck_assert_int_eq(kf_value_numel(G, big), 16);
}
END_TEST

START_TEST(input_errors) {
  const int64_t sh[3] = {2, 3, 4}, zero[2] = {2, 0}, neg[1] = {-3};
  const int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 2};
  FAILS(kf_input(G, NULL, KF_F32, 1, sh), KF_ERR_INVALID_ARG, "node %0 (input)", "name");
  fresh_graph();
  FAILS(kf_input(G, "1x", KF_F32, 1, sh), KF_ERR_INVALID_ARG, "invalid name '1x'");
  fresh_graph();
  FAILS(kf_input(G, "a-b", KF_F32, 1, sh), KF_ERR_INVALID_ARG, "invalid name");
  fresh_graph();
  IN("x", KF_F32, 2);
  FAILS(kf_input(G, "x", KF_F32, 1, sh), KF_ERR_INVALID_ARG, "node %1 (input x)",
        "already taken by %0");
  fresh_graph();
  FAILS(kf_input(G, "x", KF_DTYPE_COUNT, 1, sh), KF_ERR_INVALID_ARG, "unknown dtype");
  fresh_graph();
  FAILS(kf_input(G, "x", (kf_dtype)-1, 1, sh), KF_ERR_INVALID_ARG, "unknown dtype");
  fresh_graph();
  FAILS(kf_input(G, "x", KF_F32, 9, sh), KF_ERR_INVALID_ARG, "rank 9");
  fresh_graph();
  FAILS(kf_input(G, "x", KF_F32, -1, sh), KF_ERR_INVALID_ARG, "rank -1");
  fresh_graph();
  FAILS(kf_input(G, "x", KF_F32, 2, NULL), KF_ERR_INVALID_ARG, "rank 2");
  fresh_graph();
  FAILS(kf_input(G, "x", KF_F32, 2, zero), KF_ERR_INVALID_ARG, "[2,0]", "dimension 1 = 0");
  fresh_graph();
  FAILS(kf_input(G, "x", KF_F32, 1, neg), KF_ERR_INVALID_ARG, "[-3]");
  fresh_graph();
  FAILS(kf_input(G, "x", KF_F32, 3, huge), KF_ERR_SHAPE, "2^62 bytes");
  ck_assert_int_eq(kf_graph_num_values(G), 0);
  ck_assert_int_eq(kf_graph_num_inputs(G), 0);
}
END_TEST

START_TEST(scalar_values) {
  kf_value a = kf_scalar(G, 0.1, KF_BF16);
  kf_value b = kf_scalar(G, -2147483648.0, KF_I32);
  kf_value c = kf_scalar(G, INFINITY, KF_F32);
  kf_value d = kf_scalar(G, NAN, KF_F16);
  kf_value e = kf_scalar(G, 9223372036854774784.0, KF_I64); /* the largest double below 2^63 */
  kf_value f = kf_scalar(G, 1, KF_BOOL);
  HAS0(a, KF_BF16);
  HAS0(b, KF_I32);
  ck_assert_str_eq(kf_value_op(G, a), "const");
  ck_assert_double_eq(G->nodes[a].value, 0.10009765625); /* bf16 nearest to 0.1 */
  ck_assert_double_eq(G->nodes[b].value, -2147483648.0);
  ck_assert(isinf(G->nodes[c].value) && G->nodes[c].value > 0);
  ck_assert(isnan(G->nodes[d].value));
  ck_assert_double_eq(G->nodes[e].value, 9223372036854774784.0);
  ck_assert_double_eq(G->nodes[f].value, 1.0);
  ck_assert_int_eq(kf_graph_num_inputs(G), 0);
  FAILS(kf_scalar(G, NAN, KF_I64), KF_ERR_INVALID_ARG, "node %6 (const)", "i64");
  fresh_graph();
  FAILS(kf_scalar(G, -INFINITY, KF_BOOL), KF_ERR_INVALID_ARG, "not finite", "bool");
  fresh_graph();
  FAILS(kf_scalar(G, 1.0, (kf_dtype)42), KF_ERR_INVALID_ARG, "unknown dtype 42");
}
END_TEST

START_TEST(unary_dtype_rules) {
  for (size_t i = 0; i < sizeof unaries / sizeof unaries[0]; i++) {
    for (int d = 0; d < KF_DTYPE_COUNT; d++) {
      fresh_graph();
      kf_value x = IN("x", (kf_dtype)d, 2, 5);
      kf_value y = unaries[i].fn(G, x);
      if (rule_accepts(unaries[i].name, (kf_dtype)d)) {
        HAS(y, listed(gives_bool, unaries[i].name) ? KF_BOOL : (kf_dtype)d, 2, 5);
        ck_assert_str_eq(kf_value_op(G, y), unaries[i].name);
        ck_assert_int_eq(G->nodes[y].nargs, 1);
        ck_assert_int_eq(G->nodes[y].args[0], x);
        ck_assert_int_eq(G->nodes[x].uses, 1);
      } else {
        char want[64];
        snprintf(want, sizeof want, "node %%1 (%s): %s needs", unaries[i].name, unaries[i].name);
        FAILS(y, KF_ERR_DTYPE, want, kf_dtype_name((kf_dtype)d), "%0 x", "use cast");
        ck_assert_int_eq(kf_graph_num_values(G), 1);
      }
    }
  }
  fresh_graph();
  FAILS(kf_exp(G, IN("x", KF_I32, 4)), KF_ERR_DTYPE,
        "exp needs a floating dtype (f16, bf16, f32, f64), got i32", "i32[4]");
  fresh_graph();
  FAILS(kf_neg(G, IN("x", KF_BOOL, 4)), KF_ERR_DTYPE, "neg needs a numeric dtype", "got bool");
}
END_TEST

START_TEST(binary_dtype_rules) {
  for (size_t i = 0; i < sizeof binaries / sizeof binaries[0]; i++) {
    for (int d = 0; d < KF_DTYPE_COUNT; d++) {
      fresh_graph();
      kf_value a = IN("a", (kf_dtype)d, 3, 1), b = IN("b", (kf_dtype)d, 4);
      kf_value y = binaries[i].fn(G, a, b);
      if (rule_accepts(binaries[i].name, (kf_dtype)d)) {
        HAS(y, listed(gives_bool, binaries[i].name) ? KF_BOOL : (kf_dtype)d, 3, 4);
        ck_assert_str_eq(kf_value_op(G, y), binaries[i].name);
        ck_assert_int_eq(G->nodes[y].args[0], a);
        ck_assert_int_eq(G->nodes[y].args[1], b);
      } else {
        char want[64];
        snprintf(want, sizeof want, "node %%2 (%s): %s needs", binaries[i].name, binaries[i].name);
        FAILS(y, KF_ERR_DTYPE, want, kf_dtype_name((kf_dtype)d), "use cast");
      }
    }
  }
}
END_TEST

START_TEST(binary_dtype_mismatch) {
  kf_value a = IN("a", KF_F32, 3), b = IN("b", KF_F16, 3);
  FAILS(kf_mul(G, a, b), KF_ERR_DTYPE, "node %2 (mul)", "share a dtype", "%0 a f32[3]",
        "%1 b f16[3]", "cast");
  fresh_graph();
  a = IN("a", KF_I32, 3);
  FAILS(kf_eq(G, a, kf_scalar(G, 1.0, KF_I64)), KF_ERR_DTYPE, "node %2 (eq)", "%1 i64[]");
}
END_TEST

START_TEST(broadcasting) {
  kf_value x = IN("x", KF_F32, 3, 4);
  kf_value s = kf_scalar(G, 2.0, KF_F32);
  HAS(kf_add(G, x, s), KF_F32, 3, 4);
  HAS(kf_add(G, s, x), KF_F32, 3, 4);
  HAS0(kf_add(G, s, s), KF_F32);
  kf_value c = IN("c", KF_F32, 3, 1), r = IN("r", KF_F32, 1, 4);
  HAS(kf_sub(G, c, r), KF_F32, 3, 4);
  kf_value t = IN("t", KF_F32, 2, 3, 4), v = IN("v", KF_F32, 4);
  HAS(kf_mul(G, t, v), KF_F32, 2, 3, 4);
  HAS(kf_mul(G, v, t), KF_F32, 2, 3, 4);
  kf_value p = IN("p", KF_F32, 5, 1, 4), q = IN("q", KF_F32, 3, 1);
  HAS(kf_maximum(G, p, q), KF_F32, 5, 3, 4);
  HAS(kf_lt(G, q, p), KF_BOOL, 5, 3, 4);
  kf_value b = IN("b", KF_F32, 5);
  FAILS(kf_add(G, x, b), KF_ERR_SHAPE,
        "node %17 (add): cannot broadcast %0 x f32[3,4] with "
        "%16 b f32[5]");
}
END_TEST

START_TEST(bad_operands) {
  kf_value x = IN("x", KF_F32, 3);
  FAILS(kf_add(G, x, KF_NONE), KF_ERR_INVALID_ARG, "node %1 (add)", "operand b is KF_NONE");
  fresh_graph();
  x = IN("x", KF_F32, 3);
  FAILS(kf_exp(G, 99), KF_ERR_INVALID_ARG, "node %1 (exp)", "%99", "not a value");
  fresh_graph();
  FAILS(kf_sub(G, -5, -5), KF_ERR_INVALID_ARG, "node %0 (sub)", "operand a");
  fresh_graph();
  x = IN("x", KF_F32, 3);
  FAILS(kf_where(G, KF_NONE, x, x), KF_ERR_INVALID_ARG, "(where)", "cond");
  fresh_graph();
  FAILS(kf_cast(G, 0, KF_F32), KF_ERR_INVALID_ARG, "(cast)");
  /* A NULL graph is not an error anyone can see: just KF_NONE. */
  ck_assert_int_eq(kf_add(NULL, 0, 0), KF_NONE);
  ck_assert_int_eq(kf_input(NULL, "x", KF_F32, 0, NULL), KF_NONE);
  ck_assert_int_eq(kf_scalar(NULL, 1.0, KF_F32), KF_NONE);
  ck_assert_int_eq(kf_softmax(NULL, 0, -1), KF_NONE);
}
END_TEST

START_TEST(sticky_errors) {
  kf_value x = IN("x", KF_F32, 3, 4), b = IN("b", KF_F32, 5);
  kf_value y = kf_exp(G, x);
  ck_assert_int_ne(y, KF_NONE);
  FAILS(kf_add(G, x, b), KF_ERR_SHAPE, "node %3 (add)");
  char first[1024];
  snprintf(first, sizeof first, "%s", kf_graph_errmsg(G));
  int n = kf_graph_num_values(G);
  /* Later calls, valid or not, do nothing and keep the first message. */
  ck_assert_int_eq(kf_exp(G, x), KF_NONE);
  ck_assert_int_eq(kf_exp(G, kf_scalar(G, 1.0, KF_I32)), KF_NONE);
  ck_assert_int_eq(kf_input(G, "z", KF_F32, 0, NULL), KF_NONE);
  ck_assert_int_eq(kf_softmax(G, x, -1), KF_NONE);
  ck_assert_int_eq(kf_matmul(G, x, x), KF_NONE);
  ck_assert_int_eq(kf_sum(G, x, 0, NULL, false), KF_NONE);
  ck_assert_int_eq(kf_reshape(G, x, 1, (const int64_t[]){12}), KF_NONE);
  ck_assert_int_eq(kf_graph_status(G), KF_ERR_SHAPE);
  ck_assert_str_eq(kf_graph_errmsg(G), first);
  ck_assert_int_eq(kf_graph_num_values(G), n);
  ck_assert_int_eq(kf_graph_num_inputs(G), 2);
}
END_TEST

START_TEST(where_rules) {
  kf_value c = IN("c", KF_BOOL, 3, 1), a = IN("a", KF_I64, 1, 4), b = IN("b", KF_I64, 2, 1, 1);
  kf_value y = kf_where(G, c, a, b);
  HAS(y, KF_I64, 2, 3, 4);
  ck_assert_int_eq(G->nodes[y].nargs, 3);
  ck_assert_int_eq(G->nodes[y].args[0], c);
  ck_assert_int_eq(G->nodes[y].args[2], b);
  HAS(kf_where(G, c, kf_scalar(G, 1, KF_BOOL), kf_scalar(G, 0, KF_BOOL)), KF_BOOL, 3, 1);
  kf_value f = IN("f", KF_F32, 3, 4);
  FAILS(kf_where(G, f, a, b), KF_ERR_DTYPE, "(where)", "cond must be bool", "f32[3,4]");
  fresh_graph();
  c = IN("c", KF_BOOL, 4);
  a = IN("a", KF_F32, 4);
  b = IN("b", KF_F16, 4);
  FAILS(kf_where(G, c, a, b), KF_ERR_DTYPE, "node %3 (where)", "share a dtype");
  fresh_graph();
  c = IN("c", KF_BOOL, 5);
  a = IN("a", KF_F32, 3, 4);
  FAILS(kf_where(G, c, a, a), KF_ERR_SHAPE, "node %2 (where)", "%0 c bool[5]", "[3,4]");
  fresh_graph();
  c = IN("c", KF_BOOL, 4);
  a = IN("a", KF_F32, 3);
  b = IN("b", KF_F32, 4);
  FAILS(kf_where(G, c, a, b), KF_ERR_SHAPE, "cannot broadcast %1 a f32[3] with %2 b f32[4]");
}
END_TEST

START_TEST(clamp_rules) {
  kf_value x = IN("x", KF_I32, 2, 3);
  kf_value y = kf_clamp(G, x, -1.0, 4.0);
  HAS(y, KF_I32, 2, 3);
  ck_assert_str_eq(kf_value_op(G, y), "clamp");
  ck_assert_double_eq(G->nodes[y].lo, -1.0);
  ck_assert_double_eq(G->nodes[y].hi, 4.0);
  kf_value z = kf_clamp(G, kf_cast(G, x, KF_BF16), -INFINITY, 0.0);
  HAS(z, KF_BF16, 2, 3);
  ck_assert(isinf(G->nodes[z].lo));
  HAS(kf_clamp(G, x, 2.0, 2.0), KF_I32, 2, 3);
  FAILS(kf_clamp(G, x, 3.0, 1.0), KF_ERR_INVALID_ARG, "(clamp)", "min 3 is greater than max 1");
  fresh_graph();
  x = IN("x", KF_F32, 2);
  FAILS(kf_clamp(G, x, NAN, 1.0), KF_ERR_INVALID_ARG, "node %1 (clamp)", "NaN");
  fresh_graph();
  x = IN("x", KF_BOOL, 2);
  FAILS(kf_clamp(G, x, 0, 1), KF_ERR_DTYPE, "clamp needs a numeric dtype", "bool");
}
END_TEST

START_TEST(cast_rules) {
  for (int from = 0; from < KF_DTYPE_COUNT; from++) {
    fresh_graph();
    kf_value x = IN("x", (kf_dtype)from, 7, 1);
    for (int to = 0; to < KF_DTYPE_COUNT; to++) {
      kf_value y = kf_cast(G, x, (kf_dtype)to);
      HAS(y, (kf_dtype)to, 7, 1);
      ck_assert_str_eq(kf_value_op(G, y), "cast");
    }
    ck_assert_int_eq(G->nodes[x].uses, KF_DTYPE_COUNT);
  }
  kf_value x = kf_graph_input(G, 0);
  FAILS(kf_cast(G, x, KF_DTYPE_COUNT), KF_ERR_INVALID_ARG, "(cast)", "unknown target dtype");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("builder_pointwise");
  TCase *tc = tcase("pointwise");
  tcase_add_test(tc, op_table);
  tcase_add_test(tc, input_ok);
  tcase_add_test(tc, input_errors);
  tcase_add_test(tc, scalar_values);
  tcase_add_test(tc, unary_dtype_rules);
  tcase_add_test(tc, binary_dtype_rules);
  tcase_add_test(tc, binary_dtype_mismatch);
  tcase_add_test(tc, broadcasting);
  tcase_add_test(tc, bad_operands);
  tcase_add_test(tc, sticky_errors);
  tcase_add_test(tc, where_rules);
  tcase_add_test(tc, clamp_rules);
  tcase_add_test(tc, cast_rules);
  suite_add_tcase(s, tc);
  return s;
}
