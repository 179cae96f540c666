/* expr.c - the code of one element: each node of a kernel becomes one
 * statement calling its kf_<op> device function, operands reached through
 * index contexts; loads of kernel inputs, vectorized where the analysis of
 * index_ctx.c proves contiguity. */
#include "codegen/expr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/div_const.h"
#include "codegen/index.h"
#include "codegen/index_ctx.h"
#include "core/alloc.h"
#include "ir/dtype.h"
#include "ir/ops.h"
#include "ir/ops_dev.h"
#include "ir/shape.h"

const char *cg_storage_type(kf_dtype dt) {
  static const char *const names[] = {"kf_f16", "kf_bf16",   "float", "double",
                                      "int",    "long long", "bool"};
  return dt < KF_DTYPE_COUNT ? names[dt] : "void";
}

const char *cg_compute_type(kf_dtype dt) {
  static const char *const names[] = {"float", "float",     "float", "double",
                                      "int",   "long long", "bool"};
  return dt < KF_DTYPE_COUNT ? names[dt] : "void";
}

void cg_param_name(int32_t v, char *out, size_t size) {
  snprintf(out, size, "p%d", (int)v);
}

bool cg_in_kernel(const fuse_kernel *k, int32_t v) {
  for (int i = 0; i < k->n_nodes; i++)
    if (k->nodes[i] == v) return true;
  return false;
}

bool cg_is_input(const fuse_kernel *k, int32_t v) {
  for (int i = 0; i < k->n_inputs; i++)
    if (k->inputs[i] == v) return true;
  return false;
}

void cg_gen_init(cg_gen *gen, const kf_graph *g, const fuse_kernel *k, cg_buf *code,
                 const char *idx) {
  memset(gen, 0, sizeof *gen);
  gen->g = g;
  gen->k = k;
  gen->code = code;
  gen->idx = idx;
  gen->vec = 1;
  gen->indent = 1;
}

void cg_gen_reset_memo(cg_gen *gen) {
  for (int i = 0; i < gen->n_memo; i++) {
    free(gen->memo[i].key);
    free(gen->memo[i].raw);
  }
  gen->n_memo = 0;
  for (int i = 0; i < gen->n_ixb; i++) free(gen->ixb[i].expr);
  gen->n_ixb = 0;
}

void cg_gen_free(cg_gen *gen) {
  cg_gen_reset_memo(gen);
  free(gen->memo);
  free(gen->binds);
  free(gen->ixb);
  gen->ixb = NULL;
  gen->memo = NULL;
  gen->binds = NULL;
}

void cg_gen_oom(cg_gen *gen) {
  if (gen->failed) return;
  cg_gen_fail(gen, "out of memory");
  gen->status = KF_ERR_OUT_OF_MEMORY;
}

void cg_gen_fail(cg_gen *gen, const char *fmt, ...) {
  if (gen->failed) return;
  gen->failed = true;
  gen->status = KF_ERR_UNSUPPORTED;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(gen->err, sizeof gen->err, fmt, ap);
  va_end(ap);
}

void cg_gen_bind(cg_gen *gen, int32_t v, const char *key, const char *expr) {
  if (gen->n_binds == gen->cap_binds) {
    int cap = gen->cap_binds ? gen->cap_binds * 2 : 16;
    cg_bind *b = core_realloc(gen->binds, (size_t)cap * sizeof *b);
    if (!b) {
      cg_gen_oom(gen);
      return;
    }
    gen->binds = b;
    gen->cap_binds = cap;
  }
  cg_bind *b = &gen->binds[gen->n_binds++];
  b->value = v;
  int nk = snprintf(b->key, sizeof b->key, "%s", key ? key : ""), ne;
  /* A reduction or matmul result (bound for any context) held in f32 is
   * rounded to its f16/bf16 node's dtype before any use, as the reference
   * rounds every value. Exact already: max/min of rounded values, inputs,
   * and per-element caches of values computed by cg_gen_value. */
  const ir_node *n = &gen->g->nodes[v];
  const char *rnd = n->dtype == KF_F16    ? "kf_round_f16"
                    : n->dtype == KF_BF16 ? "kf_round_bf16"
                                          : NULL;
  if (rnd && (!key || !key[0]) && !cg_is_input(gen->k, v) && n->op != IR_OP_MAX &&
      n->op != IR_OP_MIN)
    ne = snprintf(b->expr, sizeof b->expr, "%s(%s)", rnd, expr);
  else
    ne = snprintf(b->expr, sizeof b->expr, "%s", expr);
  if (nk >= (int)sizeof b->key || ne >= (int)sizeof b->expr) {
    /* a truncated key could match another context: refuse, never guess */
    gen->n_binds--;
    cg_gen_fail(gen, "a bound value's context or name is too long");
  }
}

void cg_line(cg_gen *gen, const char *fmt, ...) {
  for (int i = 0; i < gen->indent; i++) cg_puts(gen->code, "  ");
  va_list ap;
  va_start(ap, fmt);
  cg_vprintf(gen->code, fmt, ap);
  va_end(ap);
  cg_puts(gen->code, "\n");
}

/* A literal of the compute type of dt, exact. */
void cg_literal(kf_dtype dt, double v, char *out, size_t size) {
  switch (dt) {
    case KF_BOOL:
      snprintf(out, size, "%s", v != 0.0 ? "true" : "false");
      return;
    case KF_I32:
      if (v <= -2147483648.0)
        snprintf(out, size, "(-2147483647 - 1)");
      else
        snprintf(out, size, v < 0 ? "(%d)" : "%d", (int)v);
      return;
    case KF_I64:
      if (v <= -9223372036854775808.0)
        snprintf(out, size, "(-9223372036854775807LL - 1)");
      else
        snprintf(out, size, v < 0 ? "(%lldLL)" : "%lldLL",
                 v >= 9223372036854775807.0 ? 9223372036854775807LL : (long long)v);
      return;
    default:
      break;
  }
  bool dbl = dt == KF_F64;
  if (isnan(v)) {
    snprintf(out, size, "%s",
             dbl ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)");
    return;
  }
  if (isinf(v)) {
    snprintf(out, size, "%s%s%s", v < 0 ? "(-" : "", dbl ? "KF_DINF" : "KF_INF", v < 0 ? ")" : "");
    return;
  }
  char b[64];
  snprintf(b, sizeof b, dbl ? "%.17g" : "%.9g", dbl ? v : (double)(float)v);
  if (!strpbrk(b, ".e")) strcat(b, ".0");
  snprintf(out, size, v < 0 ? "(%s%s)" : "%s%s", b, dbl ? "" : "f");
}

/* The binding of v at context key, or NULL. */
static const cg_bind *bind_at(const cg_gen *gen, int32_t v, const char *key) {
  for (int i = 0; i < gen->n_binds; i++)
    if (gen->binds[i].value == v && (!gen->binds[i].key[0] || !strcmp(gen->binds[i].key, key)))
      return &gen->binds[i];
  return NULL;
}

/* The latest memo entry of v at context key, or NULL. */
static const struct cg_memo *memo_at(const cg_gen *gen, int32_t v, const char *key) {
  for (int i = gen->n_memo - 1; i >= 0; i--)
    if (gen->memo[i].value == v && !strcmp(gen->memo[i].key, key)) return &gen->memo[i];
  return NULL;
}

static const char *memo_find(cg_gen *gen, int32_t v, const char *key) {
  const cg_bind *b = bind_at(gen, v, key);
  gen->last_cost = 0;
  if (b) return b->expr;
  const struct cg_memo *m = memo_at(gen, v, key);
  if (!m) return NULL;
  gen->last_cost = m->cost;
  static __thread char name[32];
  snprintf(name, sizeof name, "t%d", m->tmp);
  return name;
}

static int memo_add(cg_gen *gen, int32_t v, const char *key) {
  if (gen->n_memo == gen->cap_memo) {
    int cap = gen->cap_memo ? gen->cap_memo * 2 : 32;
    struct cg_memo *m = core_realloc(gen->memo, (size_t)cap * sizeof *m);
    if (!m) {
      cg_gen_oom(gen);
      return gen->tmp++;
    }
    gen->memo = m;
    gen->cap_memo = cap;
  }
  char *k = core_strdup(key);
  if (!k) {
    cg_gen_oom(gen);
    return gen->tmp++;
  }
  gen->memo[gen->n_memo].value = v;
  gen->memo[gen->n_memo].key = k;
  gen->memo[gen->n_memo].tmp = gen->tmp;
  gen->memo[gen->n_memo].raw = NULL;
  gen->memo[gen->n_memo].cost = 1; /* a load; an op adds its operands' */
  gen->n_memo++;
  return gen->tmp++;
}

/* Records the value of the last memo entry before its rounding. */
static void memo_raw(cg_gen *gen, const char *raw) {
  if (!gen->n_memo) return;
  free(gen->memo[gen->n_memo - 1].raw);
  gen->memo[gen->n_memo - 1].raw = core_strdup(raw);
  if (!gen->memo[gen->n_memo - 1].raw) cg_gen_oom(gen);
}

/* Whether v is an output that no other node of the kernel reads: then only
 * the store needs it, and the store can take the value before its rounding
 * (when the rounded value is read too, both would stay live: more
 * registers, no fewer conversions). */
static bool stored_only(const cg_gen *gen, int32_t v) {
  const fuse_kernel *k = gen->k;
  bool out = false;
  for (int i = 0; i < k->n_outputs; i++) out |= k->outputs[i] == v;
  for (int i = 0; out && i < k->n_nodes; i++) {
    const ir_node *n = &gen->g->nodes[k->nodes[i]];
    for (int a = 0; a < n->nargs; a++)
      if (n->args[a] == v) return false;
  }
  return out;
}

/* A kernel input at context c: a register of a vector preload, or a scalar
 * load. */
static void gen_load(cg_gen *gen, int32_t v, const cg_ctx *c, char *name, size_t size,
                     const char *key) {
  const ir_node *n = &gen->g->nodes[v];
  char p[32];
  cg_buf lb = {0};
  cg_ctx_lin_s(c, &lb);
  const char *lin = cg_use(gen->code, &lb);
  cg_param_name(v, p, sizeof p);
  int t = memo_add(gen, v, key);
  if (gen->vec > 1 && gen->pre && c->vclass != VC_GATHER) {
    /* Loaded once for the W lanes, before the lane loop; lane j's value is
     * register j (a SPLAT operand is the same scalar for every lane). */
    if (c->vclass == VC_CONTIG) {
      cg_printf(gen->pre_decl, "  %s r%d[W];\n", cg_compute_type(n->dtype), t);
      cg_printf(gen->pre, "    kf_ldv<%s, W>(r%d, %s + (%s));\n", cg_storage_type(n->dtype), t, p,
                lin);
      snprintf(name, size, "r%d[j]", t);
      if (gen->align) {
        int wb = (int)kf_dtype_size(n->dtype) * gen->vec;
        cg_printf(gen->align, " && kf_aligned(%s, %d)", p, wb > 16 ? 16 : wb);
      }
    } else if (cg_vc_sub(c->vclass)) {
      /* one scalar per aligned run of S lanes, loaded at its first lane
       * (the body is also the W = 1 tail's: one run there) */
      int s = cg_vc_sub(c->vclass);
      cg_printf(gen->pre_decl, "  %s r%d[(W + %d) / %d];\n", cg_compute_type(n->dtype), t, s - 1,
                s);
      cg_printf(gen->pre,
                "#pragma unroll\n    for (int kf_q = 0; kf_q < (W + %d) / %d; kf_q++) {\n", s - 1,
                s);
      cg_printf(gen->pre,
                "      const %s e = i + kf_q * %d;\n      r%d[kf_q] = kf_ld(%s + (%s));\n    }\n",
                gen->idx, s, t, p, lin);
      snprintf(name, size, "r%d[j / %d]", t, s);
    } else {
      cg_printf(gen->pre_decl, "  %s r%d;\n", cg_compute_type(n->dtype), t);
      cg_printf(gen->pre, "    r%d = kf_ld(%s + (%s));\n", t, p, lin);
      snprintf(name, size, "r%d", t);
    }
    gen->n_pre++;
    /* the memo names t<t>; alias it to the register */
    cg_line(gen, "const %s t%d = %s;", cg_compute_type(n->dtype), t, name);
  } else {
    cg_line(gen, "const %s t%d = kf_ld(%s + (%s));", cg_compute_type(n->dtype), t, p, lin);
  }
  cg_buf_free(&lb);
  snprintf(name, size, "t%d", t);
}

static const char *const op_lname[] = {
#define UNARY(ID, lname, ...) #lname,
#define BINARY(ID, lname, ...) #lname,
#define OTHER(ID, lname, ...) #lname,
#include "ir/ops.def"
};

/* Each op's device columns: an f16 or bf16 node of an op whose row has a
 * .half column calls kf_<op>_h16 (docs/codegen.md, "Math policy"). */
static const ir_op_dev op_dev[] = {
#define UNARY(ID, lname, acc, res, fexpr, iexpr, ...) [IR_OP_##ID] = {__VA_ARGS__},
#define BINARY(ID, lname, acc, res, fexpr, iexpr, ...) [IR_OP_##ID] = {__VA_ARGS__},
#include "ir/ops.def"
};

static bool has_h16(const ir_node *n) {
  return (n->dtype == KF_F16 || n->dtype == KF_BF16) &&
         (size_t)n->op < sizeof op_dev / sizeof op_dev[0] && op_dev[n->op].half;
}

/* A 16-bit division of a 16-bit value by a constant of its dtype that a
 * product by the reciprocal computes bit for bit, for every input
 * (cg_div_const_exact); the reciprocal as an exact hexadecimal literal. */
static bool div_by_const(cg_gen *gen, const ir_node *n, char *lit, size_t size) {
  if (n->op != IR_OP_DIV || (n->dtype != KF_F16 && n->dtype != KF_BF16)) return false;
  const ir_node *x = &gen->g->nodes[n->args[0]], *c = &gen->g->nodes[n->args[1]];
  float r;
  if (x->dtype != n->dtype || c->op != IR_OP_CONST || c->dtype != n->dtype ||
      !cg_div_const_exact(n->dtype, c->value, &r))
    return false;
  snprintf(lit, size, "%af", (double)r);
  return true;
}

/* An operand of node n at the node's context c. */
static void operand(cg_gen *gen, const ir_node *n, int i, const cg_ctx *c, char *out, size_t size) {
  const ir_node *a = &gen->g->nodes[n->args[i]];
  cg_ctx ac;
  cg_ctx_broadcast(gen, c, a->rank, a->shape, &ac);
  cg_gen_value(gen, n->args[i], &ac, out, size);
}

/* Bounds rounded to the node's dtype: rounding is monotonic, so clamping an
 * exact value to rounded bounds equals rounding the clamp (as the
 * reference does), and no run-time rounding is needed. */
static void gen_clamp(cg_gen *gen, const ir_node *n, const char *x, int t) {
  char lo[64], hi[64];
  if (ir_dtype_is_float(n->dtype)) {
    cg_literal(n->dtype, isnan(n->lo) ? -INFINITY : ir_round_to_dtype(n->lo, n->dtype), lo,
               sizeof lo);
    cg_literal(n->dtype, isnan(n->hi) ? INFINITY : ir_round_to_dtype(n->hi, n->dtype), hi,
               sizeof hi);
  } else {
    /* integer bounds: the smallest integer >= lo, the largest <= hi */
    double l = isnan(n->lo) ? -INFINITY : ceil(n->lo), h = isnan(n->hi) ? INFINITY : floor(n->hi);
    double mn = n->dtype == KF_I32 ? -2147483648.0 : n->dtype == KF_BOOL ? 0.0 : -9.3e18;
    double mx = n->dtype == KF_I32 ? 2147483647.0 : n->dtype == KF_BOOL ? 1.0 : 9.3e18;
    cg_literal(n->dtype, l < mn ? mn : l > mx ? mx : l, lo, sizeof lo);
    cg_literal(n->dtype, h < mn ? mn : h > mx ? mx : h, hi, sizeof hi);
  }
  cg_line(gen, "const %s t%d = kf_clamp(%s, %s, %s);", cg_compute_type(n->dtype), t, x, lo, hi);
}

static void gen_cast(cg_gen *gen, int32_t v, const char *x, int t) {
  const ir_node *n = &gen->g->nodes[v];
  const char *ct = cg_compute_type(n->dtype);
  /* a float operand may be stored as it is: the store rounds it the same */
  if ((n->dtype == KF_F16 || n->dtype == KF_BF16) && stored_only(gen, v) &&
      !strcmp(cg_compute_type(gen->g->nodes[n->args[0]].dtype), "float"))
    memo_raw(gen, x);
  if (n->dtype == KF_F16)
    cg_line(gen, "const float t%d = kf_round_f16(%s);", t, x);
  else if (n->dtype == KF_BF16)
    cg_line(gen, "const float t%d = kf_round_bf16(%s);", t, x);
  else
    cg_line(gen, "const %s t%d = kf_cast<%s>(%s);", ct, t, ct, x);
}

/* The context of operand a at the same linear index as c (a reshape). */
static void relinear(cg_gen *gen, const cg_ctx *c, const ir_node *a, cg_ctx *ac) {
  cg_buf lin = {0};
  cg_ctx_lin_s(c, &lin);
  cg_ctx_linear(ac, a->rank, a->shape, "", c->vclass);
  ac->overflow = c->overflow;
  ac->oom = c->oom;
  if (lin.oom) cg_gen_oom(gen);
  cg_ctx_put(gen, ac, -1, lin.s ? lin.s : "0");
  cg_buf_free(&lin);
}

/* Layout ops: no code, the operand at a transformed context. */
static bool gen_layout(cg_gen *gen, const ir_node *n, const cg_ctx *c, char *name, size_t size) {
  if (cg_gen_index(gen, n, c, name, size)) return true;
  const ir_node *a = &gen->g->nodes[n->args[0]];
  cg_ctx ac;
  switch (n->op) {
    case IR_OP_RESHAPE:
      relinear(gen, c, a, &ac);
      break;
    case IR_OP_TRANSPOSE:
      cg_ctx_transpose(gen, c, a->rank, a->shape, n->perm, &ac);
      break;
    case IR_OP_BROADCAST_TO:
      cg_ctx_broadcast(gen, c, a->rank, a->shape, &ac);
      break;
    default:
      return false;
  }
  cg_gen_value(gen, n->args[0], &ac, name, size);
  return true;
}

/* A reduction of extent 1 (ir_is_copy_reduce): the operand's element at the
 * same linear index, as a reshape. Max and min of one element are that
 * element; sum and mean add +0, exactly what a sum from 0 gives (-0 becomes
 * +0, as in the reference), so no rounding follows. */
static void gen_copy_reduce(cg_gen *gen, int32_t v, const cg_ctx *c, const char *key, char *name,
                            size_t size) {
  const ir_node *n = &gen->g->nodes[v], *a = &gen->g->nodes[n->args[0]];
  char x[160], zero[64];
  cg_ctx ac;
  relinear(gen, c, a, &ac);
  cg_gen_value(gen, n->args[0], &ac, x, sizeof x);
  if (n->op == IR_OP_MAX || n->op == IR_OP_MIN) {
    snprintf(name, size, "%s", x);
    return;
  }
  int t = memo_add(gen, v, key);
  cg_literal(n->dtype, 0.0, zero, sizeof zero);
  const char *ct = cg_compute_type(n->dtype);
  cg_line(gen, "const %s t%d = kf_add(%s, (%s)%s);", ct, t, x, ct, zero);
  snprintf(name, size, "t%d", t);
}

/* Whether expr is a value bound for every context (a per-row reduction
 * result): one value for all the elements the code runs over. */
static bool uniform_expr(const cg_gen *gen, const char *expr) {
  for (int i = 0; i < gen->n_binds; i++)
    if (!gen->binds[i].key[0] && !strcmp(gen->binds[i].expr, expr)) return true;
  return false;
}

/* Ops whose result is exact in the dtype of their operands (which is the
 * node's: the builder requires it): no rounding after them. */
static bool exact_op(ir_op op) {
  switch (op) {
    case IR_OP_NEG:
    case IR_OP_ABS:
    case IR_OP_RELU:
    case IR_OP_SIGN:
    case IR_OP_FLOOR:
    case IR_OP_CEIL:
    case IR_OP_MAXIMUM:
    case IR_OP_MINIMUM:
    case IR_OP_WHERE:
    case IR_OP_CLAMP:
    case IR_OP_CAST:
      return true;
    default:
      return false;
  }
}

/* Every f16/bf16 value is rounded to its dtype where it is computed, exactly
 * as the reference rounds each node: arithmetic runs in float, each result is
 * a round trip through the storage type (kf_round_bf16(kf_add(a, b))). So a
 * fused kernel computes what the unfused kernels store, up to float-versus-
 * double evaluation. */
static const char *rounding(const ir_node *n) {
  if (exact_op(n->op)) return NULL;
  return n->dtype == KF_F16 ? "kf_round_f16" : n->dtype == KF_BF16 ? "kf_round_bf16" : NULL;
}

/* The memo key of c (malloc'd), or NULL with gen failed: out of memory,
 * or a context whose index expression did not fit (cg_ctx_put). */
static char *ctx_key(cg_gen *gen, const cg_ctx *c) {
  if (c->oom) cg_gen_oom(gen);
  if (c->overflow) cg_gen_fail(gen, "an index expression too long for its context");
  if (c->oom || c->overflow) return NULL;
  cg_buf b = {0};
  cg_ctx_key_s(c, &b);
  char *key = cg_buf_take(&b);
  if (!key) cg_gen_oom(gen);
  return key;
}

/* cg_gen_value for the context's key. */
static void value_at(cg_gen *gen, int32_t v, const cg_ctx *c, const char *key, char *name,
                     size_t size) {
  const ir_node *n = &gen->g->nodes[v];
  const char *hit = memo_find(gen, v, key);
  if (hit) {
    snprintf(name, size, "%s", hit);
    return;
  }
  if (n->op == IR_OP_CONST) {
    cg_literal(n->dtype, n->value, name, size);
    return;
  }
  if (cg_is_input(gen->k, v) || n->op == IR_OP_INPUT) {
    gen_load(gen, v, c, name, size, key);
    gen->last_cost = 1;
    return;
  }
  if (gen_layout(gen, n, c, name, size)) return;
  if (ir_is_copy_reduce(gen->g, n)) {
    gen_copy_reduce(gen, v, c, key, name, size);
    return;
  }
  ir_kind kind = ir_ops[n->op].kind;
  if (kind != KIND_UNARY && kind != KIND_BINARY && kind != KIND_POINTWISE) {
    cg_gen_fail(gen, "node %d (%s) cannot be computed per element here", (int)v,
                ir_ops[n->op].name);
    snprintf(name, size, "0");
    return;
  }
  char a[3][160];
  int cost = 1;
  for (int i = 0; i < n->nargs; i++) {
    operand(gen, n, i, c, a[i], sizeof a[i]);
    cost += gen->last_cost;
  }
  enum { COST_CAP = 1 << 20 }; /* a tree of shared values doubles per level */
  if (cost > COST_CAP) cost = COST_CAP;
  int t = memo_add(gen, v, key);
  if (gen->n_memo && gen->memo[gen->n_memo - 1].tmp == t) gen->memo[gen->n_memo - 1].cost = cost;
  gen->last_cost = cost;
  const char *ct = cg_compute_type(n->dtype), *rnd = rounding(n);
  if (kind == KIND_UNARY || kind == KIND_BINARY) {
    char call[520];
    /* the 16-bit function computes other bits than kf_div_rcp */
    const bool h16 = has_h16(n);
    const char *sfx = h16 ? "_h16" : "";
    char rcp[48];
    if (gen->fast16 && h16 && n->op == IR_OP_TANH)
      snprintf(call, sizeof call, "kf_tanh_approx(%s)", a[0]);
    else if (gen->fast16 && div_by_const(gen, n, rcp, sizeof rcp))
      snprintf(call, sizeof call, "kf_mul(%s, %s)", a[0], rcp);
    else if (kind == KIND_UNARY)
      snprintf(call, sizeof call, "kf_%s%s(%s)", op_lname[n->op], sfx, a[0]);
    else if (n->op == IR_OP_DIV && !h16 && !strcmp(ct, "float") && uniform_expr(gen, a[1]))
    /* a division by a per-row value: its reciprocal is computed once
     * (the compiler shares kf_rcp_rn(d) between the elements) */
    {
      /* literal formats, so that -Wformat=2 can check them */
      if (gen->div_mode == CG_DIV_FLAG)
        snprintf(call, sizeof call, "kf_div_rcpf(%s, %s, kf_rcp_rn(%s), kf_bad)", a[0], a[1], a[1]);
      else if (gen->div_mode == CG_DIV_REDO)
        snprintf(call, sizeof call, "kf_div_rcp(kf_fresh(%s), %s, kf_rcp_rn(%s))", a[0], a[1],
                 a[1]);
      else
        snprintf(call, sizeof call, "kf_div_rcp(%s, %s, kf_rcp_rn(%s))", a[0], a[1], a[1]);
    } else
      snprintf(call, sizeof call, "kf_%s%s(%s, %s)", op_lname[n->op], sfx, a[0], a[1]);
    if (rnd && stored_only(gen, v)) {
      /* stored too: the store gets the value before the rounding */
      cg_line(gen, "const %s u%d = %s;", ct, t, call);
      cg_line(gen, "const %s t%d = %s(u%d);", ct, t, rnd, t);
      char raw[32];
      snprintf(raw, sizeof raw, "u%d", t);
      memo_raw(gen, raw);
    } else if (rnd)
      cg_line(gen, "const %s t%d = %s(%s);", ct, t, rnd, call);
    else
      cg_line(gen, "const %s t%d = %s;", ct, t, call);
  } else if (n->op == IR_OP_WHERE)
    cg_line(gen, "const %s t%d = kf_where(%s, %s, %s);", ct, t, a[0], a[1], a[2]);
  else if (n->op == IR_OP_CLAMP)
    gen_clamp(gen, n, a[0], t);
  else
    gen_cast(gen, v, a[0], t);
  snprintf(name, size, "t%d", t);
}

const char *cg_gen_value(cg_gen *gen, int32_t v, const cg_ctx *c, char *name, size_t size) {
  char *key = ctx_key(gen, c);
  if (!key) {
    snprintf(name, size, "0");
    return name;
  }
  value_at(gen, v, c, key, name, size);
  free(key);
  return name;
}

const char *cg_gen_stored(cg_gen *gen, int32_t v, const cg_ctx *c, char *name, size_t size) {
  char *key = ctx_key(gen, c);
  if (!key) {
    snprintf(name, size, "0");
    return name;
  }
  value_at(gen, v, c, key, name, size);
  /* bound: no memo entry of this pass */
  const struct cg_memo *m = bind_at(gen, v, key) ? NULL : memo_at(gen, v, key);
  if (m && m->raw) snprintf(name, size, "%s", m->raw);
  free(key);
  return name;
}
