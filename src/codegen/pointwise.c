/* pointwise.c - the part function of a pointwise kernel: a grid-stride loop
 * over W-element groups of one iteration space (templates/pointwise.cu),
 * either with its sizes baked in or as a generic body that identical parts
 * of a horizontal launch share. */
#include "codegen/pointwise.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/index_ctx.h"
#include "codegen/part.h"
#include "codegen/segment.h"
#include "codegen/template.h"
#include "core/alloc.h"
#include "ir/ops.h"

/* Vector iterations per thread of a generic part's block: each block of 256
 * threads covers 2 x 256 x 16 bytes = 8 KB of each f32 tensor. */
#define CG_GENERIC_ITERS 2

/* The largest element count among the tensors the kernel touches. */
static int64_t largest_numel(const kf_graph *g, const fuse_kernel *k) {
  int64_t m = k->numel;
  for (int i = 0; i < k->n_inputs; i++) {
    int64_t n = kf_value_numel(g, k->inputs[i]);
    if (n > m) m = n;
  }
  return m;
}

/* Rough size of one element's code: the ops whose device functions are long
 * (argument reduction, slow paths) count more. Each lane of the vector path
 * and the scalar loop inline the body once, so ptxas time grows with
 * cost x (W + 1). */
int cg_body_cost(const kf_graph *g, const fuse_kernel *k) {
  int cost = 0;
  for (int i = 0; i < k->n_nodes; i++) {
    switch (g->nodes[k->nodes[i]].op) {
      case IR_OP_SIN:
      case IR_OP_COS:
      case IR_OP_POW:
        cost += 8;
        break;
      case IR_OP_EXP:
      case IR_OP_LOG:
      case IR_OP_TANH:
      case IR_OP_SIGMOID:
      case IR_OP_GELU:
      case IR_OP_GELU_TANH:
      case IR_OP_SILU:
      case IR_OP_ERF:
      case IR_OP_DIV:
        cost += 2;
        break;
      default:
        cost += 1;
        break;
    }
  }
  return cost;
}

/* 16 bytes of the smallest full-size tensor per thread and group, at most 8
 * lanes (so a bool output is stored 8 bytes at a time); fewer lanes when the
 * body is heavy: such a kernel is bound by arithmetic (or by launch latency
 * when small), not by access width, and every lane is another inlined copy
 * of the body for NVRTC (a 64-op chain with 16 sinf: 1.8 s at W = 4). */
int cg_pointwise_lanes(const kf_graph *g, const fuse_kernel *k) {
  size_t minsz = 8;
  for (int i = 0; i < k->n_outputs; i++) {
    size_t s = kf_dtype_size(g->nodes[k->outputs[i]].dtype);
    if (s < minsz) minsz = s;
  }
  for (int i = 0; i < k->n_inputs; i++) {
    if (kf_value_numel(g, k->inputs[i]) != k->numel) continue;
    size_t s = kf_dtype_size(g->nodes[k->inputs[i]].dtype);
    if (s < minsz) minsz = s;
  }
  int w = (int)(16 / minsz);
  w = w > 8 ? 8 : w < 1 ? 1 : w;
  int cost = cg_body_cost(g, k);
  while (w > 1 && cost * w > 128) w /= 2;
  return w;
}

static void decide_index(cg_part *p, int64_t numel, const kf_graph *g, const fuse_kernel *k) {
  p->max_offset = largest_numel(g, k) - 1;
  /* the loop counter may run one grid stride past the end */
  int64_t reach = numel + (int64_t)p->blocks * p->threads * p->lanes;
  cg_index_type(reach > p->max_offset ? reach : p->max_offset, &p->index64);
}

/* Waves of resident blocks in a pointwise grid (grid-stride beyond them):
 * 1024, or KFUSE_PW_WAVES=N (1..1024, a tuning knob for measurements). */
static int64_t waves(const core_knobs *k) {
  return k->pw_waves;
}

/* Vector groups per thread (KFUSE_PW_GROUPS=G, 1..4, a tuning knob;
 * templates/pointwise_groups.cu): a plain part's thread loads G groups
 * before it computes any. Generic bodies keep one (their grid is sized in
 * blocks of CG_GENERIC_ITERS). */
static int groups(const cg_emit_args *a, bool generic) {
  return generic || a->part->lanes < 2 ? 1 : a->t->knobs->pw_groups;
}

kf_status cg_plan_pointwise(cg_emit_args *a) {
  const fuse_kernel *k = a->k;
  cg_part *p = a->part;
  int64_t numel = k->numel > 0 ? k->numel : 1;
  int w = cg_pointwise_lanes(a->g, k);
  int64_t items = cg_ceil_div(numel, w);
  int64_t threads = items >= 256 ? 256 : cg_ceil_div(items, 32) * 32;
  /* up to 1024 waves of resident blocks: in practice one vector group per
   * thread, grid-striding only past a million blocks (chain8 on the H200:
   * 4 waves 4131 GB/s, 16 waves 4260, 1024 waves 4314; docs/performance.md) */
  int64_t cap = (int64_t)a->t->sm_count * a->t->max_threads_per_sm * waves(a->t->knobs) / threads;
  p->threads = (uint32_t)threads;
  p->lanes = w;
  cg_part_grid_stride(p,
                      cg_min64(cg_ceil_div(items, threads * groups(a, false)), cap < 1 ? 1 : cap));
  decide_index(p, numel, a->g, k);
  return KF_OK;
}

kf_status cg_plan_pointwise_generic(cg_emit_args *a) {
  const fuse_kernel *k = a->k;
  cg_part *p = a->part;
  int64_t numel = k->numel > 0 ? k->numel : 1;
  int w = cg_pointwise_lanes(a->g, k);
  p->threads = 256;
  p->lanes = w;
  cg_part_grid_stride(p, cg_ceil_div(cg_ceil_div(numel, w), 256 * CG_GENERIC_ITERS));
  decide_index(p, numel, a->g, k);
  return KF_OK;
}

/* Calls of the long device functions (argument reduction with a slow
 * path) in one element's code. */
static int long_calls(const kf_graph *g, const fuse_kernel *k) {
  int n = 0;
  for (int i = 0; i < k->n_nodes; i++) {
    ir_op op = g->nodes[k->nodes[i]].op;
    n += op == IR_OP_SIN || op == IR_OP_COS;
  }
  return n;
}

/* The other unary device functions of many instructions (a libdevice body
 * or a few special-function steps each). */
static const char *const heavy_fns[] = {"exp",  "log",       "tanh", "sigmoid",
                                        "gelu", "gelu_tanh", "silu", "erf"};
enum { N_HEAVY = (int)(sizeof heavy_fns / sizeof heavy_fns[0]) };

static int heavy_calls(const kf_graph *g, const fuse_kernel *k) {
  int n = 0;
  for (int i = 0; i < k->n_nodes; i++) {
    ir_op op = g->nodes[k->nodes[i]].op;
    n += op == IR_OP_EXP || op == IR_OP_LOG || op == IR_OP_TANH || op == IR_OP_SIGMOID ||
         op == IR_OP_GELU || op == IR_OP_GELU_TANH || op == IR_OP_SILU || op == IR_OP_ERF;
  }
  return n;
}

/* Past this many calls of heavy_fns in one body, each goes to one
 * out-of-line copy. NVRTC's CPU time for a body of N inlined exp/tanh
 * grows ~0.6-1 ms per call (ptxas two thirds of it) and faster than N past
 * a few hundred; called, ~0.15-0.3 ms (sm_90, 512 calls: 566 -> 193 ms; 64:
 * 91 -> 64 ms). A call costs a few instructions at run time, nothing next
 * to 32 transcendental functions per element. */
#define CG_OUTLINE_HEAVY 32

/* Rewrites each call "kf_<fn>(" in body, for fn in fns, as "kf_ol_<fn>(". */
static void rename_calls(cg_buf *body, cg_buf *out, const char *const *fns, int n_fns) {
  cg_buf nb = {0};
  const char *s = cg_use(out, body);
  while (*s) {
    int hit = -1;
    bool start = s == body->s || !(isalnum((unsigned char)s[-1]) || s[-1] == '_');
    for (int f = 0; f < n_fns && start && hit < 0; f++) {
      size_t n = strlen(fns[f]);
      if (!strncmp(s, "kf_", 3) && !strncmp(s + 3, fns[f], n) && s[3 + n] == '(') hit = f;
    }
    if (hit >= 0) {
      cg_printf(&nb, "kf_ol_%s(", fns[hit]);
      s += strlen(fns[hit]) + 4;
    } else {
      cg_putn(&nb, s++, 1);
    }
  }
  if (nb.oom) body->oom = true;
  cg_buf_free(body);
  *body = nb;
}

/* When a body calls sin/cos several times, each call goes to one
 * out-of-line copy instead of being inlined: NVRTC and ptxas then compile
 * the slow path once (a 64-op chain with 16 sinf: 218 -> 85 ms of CPU).
 * Appends the wrappers (once per translation unit) to out and rewrites the
 * calls in body. */
static void outline_long_calls(cg_buf *body, cg_buf *out) {
  static const char *const fns[] = {"sin", "cos"};
  cg_puts(out,
          "#ifndef KF_OUTLINED\n#define KF_OUTLINED\n"
          "// sin and cos called many times in one body: one out-of-line copy each\n");
  for (int f = 0; f < 2; f++)
    cg_printf(out,
              "template <class T> __device__ __noinline__ T kf_ol_%s(T x) { return kf_%s(x); }\n",
              fns[f], fns[f]);
  cg_puts(out, "#endif\n");
  rename_calls(body, out, fns, 2);
}

/* The same for heavy_fns, past CG_OUTLINE_HEAVY calls in one body. */
static void outline_heavy_calls(cg_buf *body, cg_buf *out) {
  cg_puts(out,
          "#ifndef KF_OUTLINED_HEAVY\n#define KF_OUTLINED_HEAVY\n"
          "// exp, tanh, ... called many times in one body: one out-of-line copy each\n");
  for (int f = 0; f < N_HEAVY; f++)
    cg_printf(out,
              "template <class T> __device__ __noinline__ T kf_ol_%s(T x) { return kf_%s(x); }\n",
              heavy_fns[f], heavy_fns[f]);
  cg_puts(out, "#endif\n");
  rename_calls(body, out, heavy_fns, N_HEAVY);
}

static bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The index of value v among the part's parameters, or -1. */
static int param_index(const cg_part *p, const char *tok, size_t n) {
  if (n < 2 || n > 12 || (tok[0] != 'p' && tok[0] != 'o')) return -1;
  long v = 0;
  for (size_t i = 1; i < n; i++) {
    if (tok[i] < '0' || tok[i] > '9') return -1;
    v = v * 10 + (tok[i] - '0');
  }
  for (int i = 0; i < p->n_params; i++)
    if (p->params[i].value == v) return i;
  return -1;
}

/* Writes c followed by the decimal digits of j at d; the end. */
static char *put_name(char *d, char c, int j) {
  char digits[12];
  int n = 0;
  do digits[n++] = (char)('0' + j % 10), j /= 10;
  while (j > 0);
  *d++ = c;
  while (n > 0) *d++ = digits[--n];
  return d;
}

/* Rewrites the part's parameter names to positions: p<value> -> p<j> and
 * o<value> -> o<j>, j the parameter's index in the part, so that parts
 * differing only in which tensors they touch get the same text. Whole
 * identifiers only; numbers (0.5f, 1e-5f, where '.' continues the token)
 * are copied untouched. One pass over the characters, unchanged spans
 * copied in bulk: this runs for every part of a 1000-part launch (and
 * dominated a 200-part warm start). */
static void rename_positional(const cg_part *p, const char *text, cg_buf *out) {
  size_t len = strlen(text);
  /* a renamed token ("p3" -> "p4095") grows at most 2.5 times */
  char *buf = core_malloc(3 * len + 64), *d = buf;
  if (!buf) {
    out->oom = true;
    return;
  }
  const char *copied = text;
  bool in_word = false, number = false;
  for (const char *c = text; *c; c++) {
    bool w = word_char(*c) || (number && *c == '.');
    if (w && !in_word && (*c == 'p' || *c == 'o')) {
      const char *t = c + 1;
      while (word_char(*t)) t++;
      int j = param_index(p, c, (size_t)(t - c));
      if (j >= 0) {
        memcpy(d, copied, (size_t)(c - copied));
        d = put_name(d + (c - copied), *c, j);
        copied = t;
      }
      c = t - 1; /* the token's last character */
      in_word = true, number = false;
      continue;
    }
    if (w && !in_word) number = *c >= '0' && *c <= '9';
    in_word = w;
    if (!w) number = false;
  }
  memcpy(d, copied, len - (size_t)(copied - text));
  d += len - (size_t)(copied - text);
  cg_putn(out, buf, (size_t)(d - buf));
  free(buf);
}

/* The part's decision text and widest access (its widest output's W
 * lanes, at most 16 bytes). */
static void decide(const kf_graph *g, cg_part *p, bool generic, int ng) {
  size_t widest = 0;
  for (int i = 0; i < p->k->n_outputs; i++) {
    size_t wb = kf_dtype_size(g->nodes[p->k->outputs[i]].dtype) * (size_t)p->lanes;
    if (wb > widest) widest = wb;
  }
  snprintf(p->decisions, sizeof p->decisions,
           "pointwise: %lld elements, %d lanes per thread (%zu-byte accesses), %s index, "
           "%u blocks x %u threads, grid-stride%s%s",
           (long long)p->k->numel, p->lanes, widest > 16 ? (size_t)16 : widest,
           p->index64 ? "long long" : "int", p->blocks, p->threads, generic ? ", generic body" : "",
           ng > 1 ? ", groups per thread: " : "");
  if (ng > 1) {
    size_t n = strlen(p->decisions);
    snprintf(p->decisions + n, sizeof p->decisions - n, "%d (loads first)", ng);
  }
  p->vec_bytes = (int)(widest > 16 ? 16 : widest);
}

/* Fills templates/pointwise.cu for the part into out; generic: NUMEL and
 * BLOCKS are run-time arguments and names are positional. */
static kf_status emit_body(cg_emit_args *a, bool generic, cg_buf *out) {
  const fuse_kernel *k = a->k;
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  int w = p->lanes;
  const char *idx = p->index64 ? "long long" : "int";
  cg_buf decl = {0}, pre = {0}, body = {0}, store = {0}, align = {0}, params = {0}, args = {0};
  cg_buf text = {0};
  cg_gen gen;
  cg_gen_init(&gen, g, k, &body, idx);
  gen.vec = w;
  gen.sub_splat = true;
  gen.pre = &pre;
  gen.pre_decl = &decl;
  gen.align = &align;
  gen.indent = 2;
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &g->nodes[v];
    cg_ctx c;
    cg_ctx_linear(&c, n->rank, n->shape, "e", VC_CONTIG);
    char name[160];
    cg_gen_stored(&gen, v, &c, name, sizeof name);
    cg_printf(&decl, "  %s o%d[W];\n", cg_compute_type(n->dtype), (int)v);
    cg_line(&gen, "o%d[j] = %s;", (int)v, name);
    cg_printf(&store, "  kf_stv<%s, W>(p%d + i, o%d);\n", cg_storage_type(n->dtype), (int)v,
              (int)v);
    size_t wb = kf_dtype_size(n->dtype) * (size_t)w;
    cg_printf(&align, " && kf_aligned(p%d, %d)", (int)v, (int)(wb > 16 ? 16 : wb));
  }
  cg_param_decls(g, p, &params);
  cg_param_args(p, &args);
  char numel[32], sw[16], th[16], bl[16], sizes[64], sg[16];
  int ng = groups(a, generic);
  snprintf(sg, sizeof sg, "%d", ng);
  snprintf(numel, sizeof numel, p->index64 ? "%lldLL" : "%lld", (long long)k->numel);
  snprintf(sw, sizeof sw, "%d", w);
  snprintf(th, sizeof th, "%u", p->threads);
  snprintf(bl, sizeof bl, "%u", p->blocks);
  snprintf(sizes, sizeof sizes, "const %s kf_n, const unsigned kf_nb, ", idx);
  const char *aligned = cg_use_aligned(out, &align);
  if (long_calls(g, k) >= 4) outline_long_calls(&body, generic ? &text : out);
  if (heavy_calls(g, k) >= CG_OUTLINE_HEAVY) outline_heavy_calls(&body, generic ? &text : out);
  cg_segment_body(g, p, p->fn, idx, &body, generic ? &text : out);
  cg_hole holes[] = {{"fn", p->fn},
                     {"IDX", idx},
                     {"NUMEL", generic ? "kf_n" : numel},
                     {"W", sw},
                     {"THREADS", th},
                     {"BLOCKS", generic ? "kf_nb" : bl},
                     {"sizes", generic ? sizes : ""},
                     {"params", cg_use(out, &params)},
                     {"args", cg_use(out, &args)},
                     {"decl", cg_use(out, &decl)},
                     {"pre", cg_use(out, &pre)},
                     {"body", cg_use(out, &body)},
                     {"store", cg_use(out, &store)},
                     {"aligned", aligned},
                     {"G", sg}};
  kf_status st = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", k->name, gen.err);
    st = gen.status;
  } else if (!cg_fill(generic ? &text : out, ng > 1 ? "pointwise_groups.cu" : "pointwise.cu", holes,
                      (int)(sizeof holes / sizeof holes[0]) - (ng > 1 ? 0 : 1), a->err,
                      a->errsize)) {
    st = KF_ERR_INTERNAL;
  } else if (generic) {
    rename_positional(p, cg_use(out, &text), out);
  }
  decide(g, p, generic, ng);
  bool oom = decl.oom || pre.oom || body.oom || store.oom || align.oom || params.oom || args.oom ||
             text.oom;
  cg_gen_free(&gen);
  cg_buf_free(&decl);
  cg_buf_free(&pre);
  cg_buf_free(&body);
  cg_buf_free(&store);
  cg_buf_free(&align);
  cg_buf_free(&params);
  cg_buf_free(&args);
  cg_buf_free(&text);
  if (st == KF_OK && oom) st = KF_ERR_OUT_OF_MEMORY;
  return st;
}

/* The key is the fields' raw bytes (no printf: formatting the doubles with
 * %a cost 40% of a 200-part pack's text work); compare keys by length and
 * bytes. */
static void raw(cg_buf *b, const void *p, size_t n) {
  cg_putn(b, (const char *)p, n);
}
static void raw_i32(cg_buf *b, int32_t v) {
  raw(b, &v, sizeof v);
}

/* How an operand of a keyed node is written in the key: the position of a
 * node of the kernel, the index of a parameter, or a literal. false when
 * it is none of these. */
static bool key_ref(const kf_graph *g, const cg_part *p, const fuse_kernel *k, int32_t v,
                    cg_buf *key) {
  for (int i = 0; i < p->n_params; i++)
    if (p->params[i].value == v && !p->params[i].written) {
      raw(key, "p", 1), raw_i32(key, i);
      return true;
    }
  for (int i = 0; i < k->n_nodes; i++)
    if (k->nodes[i] == v) {
      raw(key, "n", 1), raw_i32(key, i);
      return true;
    }
  const ir_node *n = &g->nodes[v];
  if (n->op != IR_OP_CONST) return false;
  raw(key, "c", 1), raw_i32(key, (int32_t)n->dtype), raw(key, &n->value, sizeof n->value);
  return true;
}

static bool full_shape(const ir_node *n, const ir_node *like) {
  return cg_same_shape(n->rank, n->shape, like->rank, like->shape);
}

bool cg_pointwise_generic_key(const kf_graph *g, const cg_part *p, cg_buf *key) {
  const fuse_kernel *k = p->k;
  if (k->n_outputs < 1) return false;
  const ir_node *shape = &g->nodes[k->outputs[0]];
  int32_t head[5] = {p->lanes, (int32_t)p->index64, (int32_t)p->threads, (int32_t)shape->rank,
                     long_calls(g, k)};
  raw(key, head, sizeof head);
  for (int i = 0; i < p->n_params; i++) {
    const ir_node *n = &g->nodes[p->params[i].value];
    if (!full_shape(n, shape)) return false;
    raw(key, p->params[i].written ? "w" : "r", 1), raw_i32(key, (int32_t)n->dtype);
  }
  for (int i = 0; i < k->n_nodes; i++) {
    const ir_node *n = &g->nodes[k->nodes[i]];
    ir_kind kind = ir_ops[n->op].kind;
    /* layout ops write the dims into the index arithmetic */
    if (!full_shape(n, shape) ||
        (kind != KIND_UNARY && kind != KIND_BINARY && kind != KIND_POINTWISE))
      return false;
    raw(key, "|", 1), raw_i32(key, (int32_t)n->op), raw_i32(key, (int32_t)n->dtype);
    raw(key, &n->lo, sizeof n->lo), raw(key, &n->hi, sizeof n->hi), raw_i32(key, n->nargs);
    for (int j = 0; j < n->nargs; j++)
      if (!key_ref(g, p, k, n->args[j], key)) return false;
  }
  raw(key, "#", 1);
  for (int i = 0; i < k->n_outputs; i++)
    if (!key_ref(g, p, k, k->outputs[i], key)) return false;
  return !key->oom;
}

void cg_pointwise_generic_done(const kf_graph *g, cg_part *p) {
  decide(g, p, true, 1);
}

kf_status cg_emit_pointwise(cg_emit_args *a) {
  return emit_body(a, false, a->out);
}

kf_status cg_emit_pointwise_generic(cg_emit_args *a) {
  return emit_body(a, true, a->out);
}
