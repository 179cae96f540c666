/*
 * kfuse.h - the public API of kfuse, a runtime JIT kernel-fusion compiler for
 * NVIDIA GPUs. This header is the manual: every function says who owns what,
 * whether it may be called from several threads, and how it fails.
 *
 * The shape of a session:
 *
 *   kf_ctx *ctx;   kf_ctx_create(&ctx);
 *   kf_graph *g;   kf_graph_create(ctx, &g);
 *   int64_t shape[2] = {8192, 8192};
 *   kf_value x = kf_input(g, "x", KF_F32, 2, shape);
 *   kf_value y = kf_softmax(g, x, -1);
 *   kf_set_output(g, y);
 *   if (kf_graph_status(g) != KF_OK) puts(kf_graph_errmsg(g));
 *   ... run it on the CPU reference, or compile and launch it ...
 *   kf_graph_destroy(g);  kf_ctx_destroy(ctx);
 *
 * Conventions
 * - Every handle is opaque. Each create has a destroy; destroy(NULL) is a no-op.
 * - Functions that can fail return kf_status; the detailed message is kept on
 *   the handle involved (kf_ctx_errmsg, kf_graph_errmsg) until the next failing
 *   call on that handle.
 * - Builder functions (kf_add, kf_softmax, ...) return a kf_value. Their first
 *   error is sticky on the graph: it is kept, naming the node, the op and the
 *   shapes; that call and every later builder call return KF_NONE; nothing
 *   aborts. Check kf_graph_status() once after building.
 * - Thread-safety: a kf_ctx may be shared by threads (its caches lock
 *   internally). A kf_graph is not thread-safe: build and mutate it from one
 *   thread at a time; read-only calls (const kf_graph *) may run concurrently.
 * - Strings returned as `const char *` belong to the handle and stay valid
 *   until the handle changes or is destroyed. Strings returned as `char *`
 *   are the caller's, released with kf_free().
 * - The library never writes to stdout and never aborts.
 */
#ifndef KFUSE_H
#define KFUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(KFUSE_BUILDING) && defined(__GNUC__)
#define KF_API __attribute__((visibility("default")))
#else
#define KF_API
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                 */
/* ------------------------------------------------------------------------ */

#define KFUSE_VERSION_MAJOR 0
#define KFUSE_VERSION_MINOR 1
#define KFUSE_VERSION_PATCH 0
#define KFUSE_VERSION_STRING "0.1.0"
/* MAJOR*10000 + MINOR*100 + PATCH, for compile-time comparisons. */
#define KFUSE_VERSION_NUMBER \
  (KFUSE_VERSION_MAJOR * 10000 + KFUSE_VERSION_MINOR * 100 + KFUSE_VERSION_PATCH)

/* The version of the library actually loaded ("0.1.0"). Thread-safe. */
KF_API const char *kf_version(void);
/* KFUSE_VERSION_NUMBER of the library actually loaded. Thread-safe. */
KF_API int kf_version_number(void);

/* ------------------------------------------------------------------------ */
/* Status codes, written once                                               */
/* ------------------------------------------------------------------------ */

#define KF_STATUS_MAP(X)                                                      \
  X(OK, "success")                                                            \
  X(ERR_INVALID_ARG, "invalid argument")                                      \
  X(ERR_OUT_OF_MEMORY, "out of memory")                                       \
  X(ERR_SHAPE, "incompatible shapes")                                         \
  X(ERR_DTYPE, "incompatible dtypes")                                         \
  X(ERR_PARSE, "malformed graph file")                                        \
  X(ERR_IO, "file input/output failed")                                       \
  X(ERR_UNSUPPORTED, "not supported")                                         \
  X(ERR_COMPILE, "kernel compilation failed")                                 \
  X(ERR_NO_DEVICE, "no CUDA driver or GPU available")                         \
  X(ERR_CUDA, "CUDA driver call failed")                                      \
  X(ERR_CONTEXT_LOST, "CUDA context lost after a sticky error")               \
  X(ERR_INTERNAL, "internal error")

typedef enum kf_status {
#define KF_STATUS_ENUM_(name, msg) KF_##name,
  KF_STATUS_MAP(KF_STATUS_ENUM_)
#undef KF_STATUS_ENUM_
      KF_STATUS_COUNT_
} kf_status;

/* A short constant description of a status ("incompatible shapes"); an
 * unknown value gives "unknown status". Thread-safe. */
KF_API const char *kf_status_str(kf_status status);
/* The enumerator's name without the prefix ("ERR_SHAPE"). Thread-safe. */
KF_API const char *kf_status_name(kf_status status);

/* ------------------------------------------------------------------------ */
/* Data types                                                               */
/* ------------------------------------------------------------------------ */

#define KF_DTYPE_MAP(X)                                                       \
  X(F16, f16, 2)                                                              \
  X(BF16, bf16, 2)                                                            \
  X(F32, f32, 4)                                                              \
  X(F64, f64, 8)                                                              \
  X(I32, i32, 4)                                                              \
  X(I64, i64, 8)                                                              \
  X(BOOL, bool, 1)

typedef enum kf_dtype {
#define KF_DTYPE_ENUM_(id, name, size) KF_##id,
  KF_DTYPE_MAP(KF_DTYPE_ENUM_)
#undef KF_DTYPE_ENUM_
      KF_DTYPE_COUNT
} kf_dtype;

/* "f16", "bf16", ...; "?" for an unknown value. Thread-safe. */
KF_API const char *kf_dtype_name(kf_dtype dtype);
/* Bytes per element (bool is one byte holding 0 or 1); 0 for an unknown value. */
KF_API size_t kf_dtype_size(kf_dtype dtype);
/* Parses a dtype name. KF_ERR_INVALID_ARG for an unknown name. */
KF_API kf_status kf_dtype_parse(const char *name, kf_dtype *out);

/* Conversions between float and the 16-bit float formats, rounding to
 * nearest even; NaN stays NaN, infinities and subnormals are exact where
 * representable. Thread-safe. */
KF_API uint16_t kf_float_to_f16(float value);
KF_API float kf_f16_to_float(uint16_t bits);
KF_API uint16_t kf_float_to_bf16(float value);
KF_API float kf_bf16_to_float(uint16_t bits);

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct kf_ctx kf_ctx;     /* caches, device state, logging */
typedef struct kf_graph kf_graph; /* an op graph under construction */

/* A value in a graph: an input, a constant or the result of an op. */
typedef int32_t kf_value;
/* An absent or invalid value; also what a failing builder returns. */
#define KF_NONE ((kf_value)-1)

/* Most dimensions a tensor can have. */
#define KF_MAX_RANK 8

/* Most bytes one tensor may hold (element count times dtype size): 2^62,
 * 4 EiB. kf_input, every op builder and the graph loaders refuse a value
 * whose element count overflows int64 or whose bytes exceed it
 * (KF_ERR_SHAPE, sticky); kf_plan_create refuses a plan whose buffers and
 * workspace together exceed it. The headroom below INT64_MAX keeps every
 * index and byte offset a kernel or the runtime forms (one grid stride past
 * the end, base + bytes, a sum of two tensors) inside int64. */
#define KF_MAX_TENSOR_BYTES (INT64_C(1) << 62)

/* ------------------------------------------------------------------------ */
/* Context                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum kf_log_level {
  KF_LOG_ERROR = 0,
  KF_LOG_WARN = 1,
  KF_LOG_INFO = 2,
  KF_LOG_DEBUG = 3
} kf_log_level;

/* Receives every log line of a context; `component` is "ir", "fuse",
 * "codegen", "cache" or "runtime". May be called from any thread that uses
 * the context, so it must be thread-safe itself. */
typedef void (*kf_log_fn)(void *user, kf_log_level level, const char *component,
                          const char *message);

/* Creates a context. The caller owns *out and releases it with
 * kf_ctx_destroy. Reads KFUSE_LOG (e.g. "warn", "fuse=debug,cache=info") for
 * the default logger, which writes to stderr. Errors: KF_ERR_INVALID_ARG
 * (out is NULL), KF_ERR_OUT_OF_MEMORY. */
KF_API kf_status kf_ctx_create(kf_ctx **out);
/* Destroys a context; graphs created from it must be destroyed first. */
KF_API void kf_ctx_destroy(kf_ctx *ctx);
/* The message of the last failing call made on this context ("" if none). */
KF_API const char *kf_ctx_errmsg(const kf_ctx *ctx);
/* Replaces the logger (NULL restores the stderr logger). Not thread-safe
 * against concurrent use of the context. */
KF_API void kf_ctx_set_log(kf_ctx *ctx, kf_log_fn fn, void *user);

/* Releases a string or buffer that kfuse returned as the caller's. */
KF_API void kf_free(void *ptr);

/* ------------------------------------------------------------------------ */
/* Text from files, made safe to show                                       */
/* ------------------------------------------------------------------------ */

/* Names, paths and messages that kfuse hands back can hold any bytes a graph
 * file or a caller put there (an ESC sequence in a graph name, a newline in
 * a path). kf_escape writes them so that they cannot act on a terminal, split
 * a log line or break a JSON document; the library's own log lines and JSON
 * go through it, and the kfuse program prints every such string through it.
 *
 * KF_ESCAPE_LINE: one line for a terminal or a log. Valid UTF-8 is kept; a
 *   control character (below 0x20, 0x7f), a C1 control (U+0080..U+009F, as
 *   its two bytes) and every byte of invalid UTF-8 becomes \xNN (two
 *   upper-case hex digits). A backslash is kept as it is, so a shown \x1B
 *   may also be those four characters; JSON output gives the exact text.
 * KF_ESCAPE_TEXT: the same, but newlines and tabs are kept (multi-line
 *   messages such as a compiler log).
 * KF_ESCAPE_JSON: the inside of a JSON string (no quotes added): " and \
 *   escaped, \n \r \t as such, other controls, DEL and C1 as \u00NN, and a
 *   byte of invalid UTF-8 as \u00NN (read as Latin-1), so the result is
 *   valid JSON and printable.
 *
 * Writes at most size bytes, NUL included, into buf (NUL-terminated when
 * size > 0; buf may be NULL when size is 0) and returns the length the whole
 * escaped text needs, without the NUL, as snprintf does. text NULL is "".
 * Thread-safe. */
typedef enum kf_escape_style { KF_ESCAPE_LINE, KF_ESCAPE_TEXT, KF_ESCAPE_JSON } kf_escape_style;
KF_API size_t kf_escape(char *buf, size_t size, const char *text, kf_escape_style style);

/* The candidate closest to word by edit distance (insertions, deletions,
 * substitutions and swaps of neighbours, each 1; a difference of letter case
 * is free), when it is close enough to be a likely typo: no edit (only case)
 * for a word of 1 or 2 characters, 1 edit up to 5, 2 up to 8, 3 beyond.
 * Returns its index, or
 * -1 when none is close (or word is NULL or longer than 64 bytes). The
 * first of equally close candidates wins. The YAML loader's "did you mean"
 * and the kfuse program's use this one rule. Thread-safe. */
KF_API int kf_suggest(const char *word, const char *const *candidates, int n);

/* ------------------------------------------------------------------------ */
/* Graphs                                                                   */
/* ------------------------------------------------------------------------ */

/* Creates an empty graph. ctx may be NULL (a graph needs a context only to
 * be loaded from YAML, compiled or run). The caller owns *out.
 * Errors: KF_ERR_INVALID_ARG, KF_ERR_OUT_OF_MEMORY. */
KF_API kf_status kf_graph_create(kf_ctx *ctx, kf_graph **out);
/* Destroys a graph and everything it owns. */
KF_API void kf_graph_destroy(kf_graph *g);

/* KF_OK, or the sticky status of the first builder error. */
KF_API kf_status kf_graph_status(const kf_graph *g);
/* The message of the first builder error, or else of the last failing call
 * on this graph ("" if none). */
KF_API const char *kf_graph_errmsg(const kf_graph *g);

/* The graph's name (may be NULL). kf_graph_set_name copies the string. */
KF_API const char *kf_graph_name(const kf_graph *g);
KF_API kf_status kf_graph_set_name(kf_graph *g, const char *name);

/* Gives value v a name, used by dumps, YAML files and error messages. Names
 * match [A-Za-z_][A-Za-z0-9_.]* and are unique within the graph. The string
 * is copied. Errors: KF_ERR_INVALID_ARG (bad v, bad syntax, name taken).
 * Not sticky. */
KF_API kf_status kf_set_name(kf_graph *g, kf_value v, const char *name);
/* Marks v as the next graph output (outputs keep the order of these calls;
 * marking one value twice is an error). Sticky like a builder error. */
KF_API kf_status kf_set_output(kf_graph *g, kf_value v);

/* Introspection; all read-only. A bad value gives KF_DTYPE_COUNT, -1 or NULL. */
KF_API int kf_graph_num_values(const kf_graph *g);
KF_API int kf_graph_num_inputs(const kf_graph *g);
KF_API kf_value kf_graph_input(const kf_graph *g, int index);
KF_API int kf_graph_num_outputs(const kf_graph *g);
KF_API kf_value kf_graph_output(const kf_graph *g, int index);
KF_API kf_value kf_graph_find(const kf_graph *g, const char *name);
KF_API kf_dtype kf_value_dtype(const kf_graph *g, kf_value v);
KF_API int kf_value_rank(const kf_graph *g, kf_value v);
/* Points at the value's KF_MAX_RANK-long shape array (first rank entries
 * meaningful), valid while the graph lives. */
KF_API const int64_t *kf_value_shape(const kf_graph *g, kf_value v);
/* Element count of a value; -1 for a bad value. */
KF_API int64_t kf_value_numel(const kf_graph *g, kf_value v);
/* The value's name, or NULL when it has none. */
KF_API const char *kf_value_name(const kf_graph *g, kf_value v);
/* The op that defines v ("input", "const", "add", ...), or NULL. */
KF_API const char *kf_value_op(const kf_graph *g, kf_value v);

/* A 128-bit structural hash: equal graphs hash equal; any change of op,
 * operand, attribute, dtype, shape, or of the inputs and outputs, changes
 * it. Names are not part of it. Thread-safe on a const graph. */
typedef struct kf_hash128 {
  uint64_t lo, hi;
} kf_hash128;
KF_API kf_hash128 kf_graph_hash(const kf_graph *g);

/* A readable text dump, one line per value:
 *   %3 y: f32[8192,8192] = add(%1 x, %2)
 * The caller frees the result with kf_free; NULL on out of memory. */
KF_API char *kf_graph_dump(const kf_graph *g);

/* ------------------------------------------------------------------------ */
/* Builders. Each checks its operands, infers the result's dtype and shape, */
/* and returns the new value (KF_NONE after a sticky error).                */
/* Tensor operands of one op must share a dtype (use kf_cast); binary and   */
/* ternary ops broadcast as NumPy does.                                     */
/* ------------------------------------------------------------------------ */

/* A graph input; inputs are bound in the order they are declared. The name
 * is required. */
KF_API kf_value kf_input(kf_graph *g, const char *name, kf_dtype dtype, int rank,
                         const int64_t *shape);
/* A rank-0 constant of a value dtype holds: i32/i64 an integer in range,
 * bool 0 or 1, a float dtype any value rounded once to nearest even (NaN
 * and infinities kept) except a finite one that would round to an
 * infinity. Anything else is a sticky KF_ERR_INVALID_ARG ("0.5 is not an
 * integer, which i32 needs"), never a silent truncation or saturation. */
KF_API kf_value kf_scalar(kf_graph *g, double value, kf_dtype dtype);

/* Unary pointwise ops. exp..ceil (the transcendental and rounding ones)
 * need a floating dtype; neg, abs, relu and sign take any numeric dtype;
 * logical_not takes any dtype and gives bool. */
KF_API kf_value kf_neg(kf_graph *g, kf_value x);
KF_API kf_value kf_abs(kf_graph *g, kf_value x);
KF_API kf_value kf_exp(kf_graph *g, kf_value x);
KF_API kf_value kf_log(kf_graph *g, kf_value x);
KF_API kf_value kf_sqrt(kf_graph *g, kf_value x);
KF_API kf_value kf_rsqrt(kf_graph *g, kf_value x);
KF_API kf_value kf_reciprocal(kf_graph *g, kf_value x);
KF_API kf_value kf_sin(kf_graph *g, kf_value x);
KF_API kf_value kf_cos(kf_graph *g, kf_value x);
KF_API kf_value kf_tanh(kf_graph *g, kf_value x);
KF_API kf_value kf_sigmoid(kf_graph *g, kf_value x);
KF_API kf_value kf_relu(kf_graph *g, kf_value x);
KF_API kf_value kf_gelu(kf_graph *g, kf_value x);      /* erf form */
KF_API kf_value kf_gelu_tanh(kf_graph *g, kf_value x); /* tanh approximation */
KF_API kf_value kf_silu(kf_graph *g, kf_value x);
KF_API kf_value kf_erf(kf_graph *g, kf_value x);
KF_API kf_value kf_floor(kf_graph *g, kf_value x);
KF_API kf_value kf_ceil(kf_graph *g, kf_value x);
KF_API kf_value kf_sign(kf_graph *g, kf_value x);
KF_API kf_value kf_logical_not(kf_graph *g, kf_value x);

/* Binary pointwise ops. add, sub, mul, maximum and minimum take numeric
 * dtypes; div and pow floating ones; comparisons and logical ops any dtype
 * and give bool. maximum/minimum propagate NaN. */
KF_API kf_value kf_add(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_sub(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_mul(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_div(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_pow(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_maximum(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_minimum(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_eq(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_ne(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_lt(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_le(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_gt(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_ge(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_logical_and(kf_graph *g, kf_value a, kf_value b);
KF_API kf_value kf_logical_or(kf_graph *g, kf_value a, kf_value b);

/* cond ? a : b, elementwise; cond is bool, a and b share a dtype. */
KF_API kf_value kf_where(kf_graph *g, kf_value cond, kf_value a, kf_value b);
/* min(max(x, lo), hi) on a numeric dtype; pass -INFINITY / INFINITY for an
 * absent bound. lo > hi is an error. */
KF_API kf_value kf_clamp(kf_graph *g, kf_value x, double lo, double hi);
/* Converts to dtype (floats to integers truncate toward zero and saturate;
 * NaN gives 0; anything nonzero gives true). */
KF_API kf_value kf_cast(kf_graph *g, kf_value x, kf_dtype dtype);

/* Reductions over `axes` (naxes entries; negative ones count from the end;
 * naxes == 0 reduces over every axis). keepdim keeps reduced axes as 1.
 * sum, max and min take numeric dtypes, mean floating ones. */
KF_API kf_value kf_sum(kf_graph *g, kf_value x, int naxes, const int *axes, bool keepdim);
KF_API kf_value kf_mean(kf_graph *g, kf_value x, int naxes, const int *axes, bool keepdim);
KF_API kf_value kf_max(kf_graph *g, kf_value x, int naxes, const int *axes, bool keepdim);
KF_API kf_value kf_min(kf_graph *g, kf_value x, int naxes, const int *axes, bool keepdim);

/* Layout ops. reshape keeps the element count; one entry of shape may be -1
 * and is inferred. transpose permutes the axes (perm has rank(x) entries).
 * broadcast_to expands size-1 and missing leading axes as NumPy does. */
KF_API kf_value kf_reshape(kf_graph *g, kf_value x, int rank, const int64_t *shape);
KF_API kf_value kf_transpose(kf_graph *g, kf_value x, const int *perm);
KF_API kf_value kf_broadcast_to(kf_graph *g, kf_value x, int rank, const int64_t *shape);

/* Index ops (they fuse with pointwise work on both sides).
 *
 * slice: x[start:stop:step] along `axis` (negative axis counts from the
 * end), by Python's rules: a negative start or stop counts from the end,
 * both are then clamped into [0, n]; pass KF_SLICE_END as stop for "to the
 * end". step >= 1. An empty result is a KF_ERR_SHAPE error (kfuse has no
 * empty tensors).
 *
 * concat: the n values (n >= 1) joined along `axis`; equal rank and dtype,
 * equal sizes on every other axis. n == 1 returns xs[0].
 *
 * gather: numpy.take along `axis`: the result's shape is x's with axis
 * replaced by index's whole shape (embedding: x [V, D], index [B, S], axis
 * 0 gives [B, S, D]); index is i32 or i64; result rank <= KF_MAX_RANK.
 * Out-of-range indices cannot raise on a GPU, so they are clamped into
 * [0, n-1] (negative ones read element 0), on the GPU and in the reference.
 *
 * iota: a new value of `shape` and numeric `dtype` whose element is its
 * coordinate along `axis` (arange broadcast over the other axes). */
#define KF_SLICE_END INT64_MAX
KF_API kf_value kf_slice(kf_graph *g, kf_value x, int axis, int64_t start, int64_t stop,
                         int64_t step);
KF_API kf_value kf_concat(kf_graph *g, int n, const kf_value *xs, int axis);
KF_API kf_value kf_gather(kf_graph *g, kf_value x, kf_value index, int axis);
KF_API kf_value kf_iota(kf_graph *g, kf_dtype dtype, int rank, const int64_t *shape, int axis);

/* Composites, expanded into primitives when built (half-precision inputs are
 * computed in f32 and cast back once). softmax and log_softmax work along
 * `axis`; layernorm and rmsnorm along the last axis, with optional weight
 * and bias (KF_NONE when absent) of the last axis's length. */
KF_API kf_value kf_softmax(kf_graph *g, kf_value x, int axis);
KF_API kf_value kf_log_softmax(kf_graph *g, kf_value x, int axis);
/* logsumexp: log(sum(exp(x))) along `axis`, that axis removed from the
 * shape (torch.logsumexp with keepdim false), computed stably as
 * m + log(sum(exp(x - m))) with m the max; a slice that is all -inf gives
 * -inf, one holding +inf gives +inf (not NaN). Half-precision x gives a
 * half result, as the other composites; for an f32 result from half
 * scores pass kf_cast(x, KF_F32). Over the last axis of attention scores
 * it is the flash kernel's second output (docs/attention.md). */
KF_API kf_value kf_logsumexp(kf_graph *g, kf_value x, int axis);
KF_API kf_value kf_layernorm(kf_graph *g, kf_value x, kf_value weight, kf_value bias,
                             double eps);
KF_API kf_value kf_rmsnorm(kf_graph *g, kf_value x, kf_value weight, double eps);

/* Matrix product over the last two axes; leading axes broadcast; rank-1
 * operands are not promoted (both operands need rank >= 2). Numeric dtypes;
 * half-precision products accumulate in f32. */
KF_API kf_value kf_matmul(kf_graph *g, kf_value a, kf_value b);

/* ------------------------------------------------------------------------ */
/* CPU reference interpreter                                                */
/* ------------------------------------------------------------------------ */

/* A dense, row-major tensor in host memory. */
typedef struct kf_host_tensor {
  void *data;
  kf_dtype dtype;
  int rank;
  int64_t shape[KF_MAX_RANK];
} kf_host_tensor;

/* Runs the graph on the CPU, computing every value in f64 (integers in
 * int64) and rounding once to its dtype. inputs[i] binds the i-th declared
 * input, outputs[j] receives the j-th output; each must match the value's
 * dtype and shape exactly, and output buffers are the caller's, allocated
 * beforehand. Slow and simple on purpose: it is the oracle for every other
 * check. Not thread-safe on one graph.
 * Errors: KF_ERR_INVALID_ARG (counts, dtypes, shapes, NULL data; the message
 * names the tensor), KF_ERR_OUT_OF_MEMORY, the graph's sticky status. */
KF_API kf_status kf_graph_run_reference(kf_graph *g, const kf_host_tensor *inputs,
                                        int n_inputs, kf_host_tensor *outputs,
                                        int n_outputs);

/* kf_graph_run_reference, and also an error bound for every output element:
 * bounds[j] (the caller's, one double per element of output j) receives the
 * most a correct kernel's value may differ from the reference's. The bound
 * is a running error analysis done next to the values (docs/reference.md,
 * "Error bounds"): each op's bound follows from its operands' bounds and
 * values (worst cases over the operands' intervals), plus the op's own
 * error on the GPU (the device function's documented ulps; f16/bf16/f32
 * nodes compute in f32) and its rounding to the node's dtype; a sum, mean
 * or matmul adds an accumulation error relative to the sum of its |terms|
 * (in any order: serial, split or tree), so that cancellation does not fail
 * a correct kernel while a wrong element, index or term still fails. Integer
 * and bool values have bound 0 unless they come from floats (a comparison
 * that may flip has bound 1). A bound is INFINITY where nothing can be said
 * (a division by a value that may be zero). For a NaN or infinite reference
 * value a finite bound means that the kernel must give the same special
 * value. Costs one more double per element held. Not thread-safe on one
 * graph.
 * Errors: those of kf_graph_run_reference; KF_ERR_INVALID_ARG when bounds
 * or one of its entries is NULL. */
KF_API kf_status kf_graph_run_reference_bounded(kf_graph *g, const kf_host_tensor *inputs,
                                                int n_inputs, kf_host_tensor *outputs,
                                                double *const *bounds, int n_outputs);

/* What kf_compare found. `worst` is the element with the largest
 * |got - want| / allowed (so a mismatch when there is one), -1 when there
 * are no elements; allowed is the element's bound widened by the slack of
 * kf_compare, plus atol + rtol |want|. */
typedef struct kf_compare_result {
  int64_t elements;           /* compared */
  int64_t mismatches;         /* outside what is allowed, special values included */
  int64_t special_mismatches; /* NaN or infinity where the reference has another value */
  int64_t unbounded;          /* elements with an infinite bound: any value passes */
  int64_t worst;
  double worst_got, worst_want, worst_bound, worst_allowed;
  double max_abs_err; /* largest |got - want| where both are finite */
  double max_ratio;   /* largest |got - want| / allowed (INFINITY for a special value) */
  double max_rel_err; /* largest |got - want| / |want| where both are finite and want != 0 */
  bool ok;            /* mismatches == 0 */
} kf_compare_result;

/* Compares a kernel's output with the reference's, element by element:
 * |got - want| <= bound * (1 + 2^-20) + tiny + atol + rtol * |want|, where
 * tiny is the dtype's smallest normal (f16 2^-14, bf16 and f32 2^-126, f64
 * 2^-1022: subnormal results) and bound the one that
 * kf_graph_run_reference_bounded gave (NULL: 0 everywhere, so that atol and
 * rtol alone make a fixed tolerance). NaN must be where the reference has
 * NaN and an infinity where it has the same infinity, unless the element's
 * bound is infinite; integers and bools compare exactly (as int64) where
 * their bound is 0. got and want must have the same dtype and shape.
 * Thread-safe.
 * Errors: KF_ERR_INVALID_ARG (NULL tensors, data or out; dtypes or shapes
 * differ; rtol or atol negative or NaN). */
KF_API kf_status kf_compare(const kf_host_tensor *got, const kf_host_tensor *want,
                            const double *bound, double rtol, double atol,
                            kf_compare_result *out);

/* ------------------------------------------------------------------------ */
/* YAML graph files (format version 1; docs/yaml.md)                        */
/* ------------------------------------------------------------------------ */

/* Loads a graph file. On success the caller owns *out (a graph of ctx,
 * released with kf_graph_destroy); on failure *out is NULL and the message
 * is on ctx (kf_ctx_errmsg), as "FILE:LINE:COL: node 'h' (add): what is
 * wrong; what was expected" with 1-based line and column where the error
 * has a place in the file. The file is read whole (at most 64 MiB); YAML
 * anchors, aliases and tags are refused, nesting is bounded, names are at
 * most 255 bytes. Composite ops are expanded into primitives as they are
 * built. Thread-safe when each thread uses its own ctx (loads on one shared
 * ctx are safe too, but then which message ctx keeps is unspecified).
 * Errors: KF_ERR_INVALID_ARG (NULL path or out), KF_ERR_IO (cannot read),
 * KF_ERR_PARSE (the file breaks a rule of the format), KF_ERR_SHAPE /
 * KF_ERR_DTYPE / KF_ERR_INVALID_ARG (a builder refused a node: the message
 * names it and its position), KF_ERR_OUT_OF_MEMORY. */
KF_API kf_status kf_graph_load_yaml(kf_ctx *ctx, const char *path, kf_graph **out);
/* The same from text[0..len) (no NUL needed); filename is only used in
 * messages (NULL gives "<string>"). */
KF_API kf_status kf_graph_load_yaml_string(kf_ctx *ctx, const char *text, size_t len,
                                           const char *filename, kf_graph **out);

/* Writes g as a version-1 graph file: inputs, nodes (primitives only, since
 * composites were expanded when built), outputs. Unnamed values get fresh
 * names (t12, avoiding every existing name); numbers are written so that
 * they read back to the same bits. Loading the result gives a graph with the
 * same kf_graph_hash. Read-only on g apart from its error message: do not
 * call it concurrently with other calls on g.
 * Errors: KF_ERR_INVALID_ARG (NULL g or path, a graph without outputs, a
 * graph name over 255 bytes), KF_ERR_UNSUPPORTED (a constant that is not a
 * scalar), the graph's sticky status
 * (a failed graph is not saved), KF_ERR_IO (the file cannot be written; it
 * is written to a temporary file and renamed, so a failure leaves no partial
 * file), KF_ERR_OUT_OF_MEMORY; the message is on the graph (kf_graph_errmsg). */
KF_API kf_status kf_graph_save_yaml(const kf_graph *g, const char *path);
/* The same text as a string the caller frees with kf_free; NULL on error,
 * with the message on the graph. */
KF_API char *kf_graph_to_yaml(const kf_graph *g);

/* ------------------------------------------------------------------------ */
/* Plans: fusion, code generation, compilation                              */
/* ------------------------------------------------------------------------ */

typedef struct kf_plan kf_plan; /* a fused, compiled (and loaded) graph */

/* How a plan runs its launches. */
typedef enum kf_run_mode {
  KF_MODE_PLAIN = 0,   /* one after another on the caller's stream */
  KF_MODE_STREAMS = 1, /* independent launches on prioritized streams */
  KF_MODE_GRAPH = 2    /* recorded once as a CUDA Graph and replayed */
} kf_run_mode;

/* The math policy of a plan's pointwise device functions (docs/codegen.md,
 * "Math policy", has each op's error in ulps per policy and dtype). Every
 * policy keeps fused == unfused bit for bit: an op's function may contract
 * or approximate inside itself, and the same function runs fused and
 * unfused; nothing is contracted across ops. */
typedef enum kf_math {
  KF_MATH_DEFAULT = 0, /* the CUDA math library's functions, contracted (fma)
                          inside each op, hardware reciprocal where its error
                          is bounded (sigmoid, silu, reciprocal) */
  KF_MATH_STRICT = 1,  /* correctly rounded where the hardware allows (IEEE
                          division and sqrt), the library's functions, no
                          contraction: kfuse before the policy existed */
  KF_MATH_FAST = 2     /* --use_fast_math-like hardware approximations (exp,
                          log, sin, cos, tanh, sqrt, division, pow) */
} kf_math;

typedef struct kf_options {
  bool fusion;           /* false: every op its own kernel */
  bool horizontal;       /* false: no horizontal packing */
  const char *arch;      /* "sm_90"; NULL: the current device's. Copied by
                            kf_plan_create (at most 31 bytes) */
  kf_run_mode mode;       /* checked by kf_plan_create, as every field is */
  double occupancy_drop; /* split a fused kernel whose occupancy falls more
                            than this fraction below its parts' (0.20);
                            <= 0: never split */
  int streams;           /* streams in KF_MODE_STREAMS (4), 1 to 8 */
  bool pdl;              /* plain runs on sm_90 (driver 12.3+) launch with
                            programmatic dependent launch: each kernel may
                            start while the one ahead drains, and waits for
                            its writes (docs/runtime.md). false: plain
                            launches */
  kf_math math;          /* KF_MATH_DEFAULT; another value is an error of
                            kf_plan_create (KF_ERR_INVALID_ARG) */
  bool allow_tf32;       /* f32 matrix products through cuBLASLt may use
                            TF32 tensor cores (10-bit mantissas, as
                            PyTorch's allow_tf32); false (the default):
                            full f32 accuracy (docs/matmul.md) */
} kf_options;

/* Fills defaults: fusion and horizontal packing on (unless KFUSE_NO_FUSION
 * or KFUSE_NO_HORIZONTAL is set to 1), arch NULL, KF_MODE_PLAIN, 0.20, 4,
 * pdl on (unless KFUSE_PDL is set to 0), math KF_MATH_DEFAULT (KFUSE_MATH
 * set to strict, default or fast chooses; another value makes the
 * kf_plan_create of these options fail with a message naming it). */
KF_API void kf_options_init(kf_options *opt);

/* Text renderings of a plan. */
typedef enum kf_format { KF_FORMAT_TEXT = 0, KF_FORMAT_JSON = 1, KF_FORMAT_DOT = 2 } kf_format;

/* -- KFUSE PLAN API: sections below are added by the fuser, codegen and
 *    runtime modules. -- */

/* Plans a valid graph that has outputs: fusion and buffer planning only,
 * needing neither a GPU nor NVRTC. The plan keeps its own copy of the
 * graph, so g may be destroyed afterwards. opt may be NULL (defaults). The
 * caller owns *out. A plan is not thread-safe: use one from one thread at a
 * time (several plans of one context may be used from different threads).
 * Options are checked first: mode one of kf_run_mode, streams 1 to 8,
 * occupancy_drop not NaN, arch NULL or "sm_XY", "sm_XYa", "sm_XYf",
 * "compute_XY", "XY" or "X.Y" (at most 31 bytes).
 * Errors: KF_ERR_INVALID_ARG (NULL arguments, a bad option, no outputs), the
 * graph's sticky status, KF_ERR_SHAPE (the plan's buffers exceed
 * KF_MAX_TENSOR_BYTES together), KF_ERR_OUT_OF_MEMORY; the message is on ctx. */
KF_API kf_status kf_plan_create(kf_ctx *ctx, const kf_graph *g, const kf_options *opt,
                                kf_plan **out);
KF_API void kf_plan_destroy(kf_plan *plan);
/* The message of the last failing call on this plan ("" if none). */
KF_API const char *kf_plan_errmsg(const kf_plan *plan);
/* The plan as text, JSON or Graphviz DOT (each launch a cluster). The JSON
 * has launches, kernels (name, kind, ops, outputs, bytes), bytes_fused,
 * bytes_unfused, workspace_bytes and decisions. Caller frees with kf_free;
 * NULL on out of memory. */
KF_API char *kf_plan_describe(const kf_plan *plan, kf_format fmt);
KF_API int kf_plan_num_launches(const kf_plan *plan);
KF_API int kf_plan_num_kernels(const kf_plan *plan);
/* Bytes of device workspace the plan needs between launches. */
KF_API int64_t kf_plan_workspace_size(const kf_plan *plan);
/* The generated CUDA C of launch `launch` (0 .. kf_plan_num_launches-1),
 * for `arch` ("sm_90"; NULL: the plan's options.arch, else "sm_90"); needs
 * neither a GPU nor NVRTC. Each source begins with a comment naming the ops
 * it fuses and the code-generation decisions (docs/codegen.md). The caller
 * frees the result with kf_free; NULL on error (bad launch or arch, a
 * kernel codegen cannot emit, out of memory), with the message on the plan.
 * Not thread-safe on one plan. */
KF_API char *kf_plan_source(kf_plan *plan, int launch, const char *arch);

/* ------------------------------------------------------------------------ */
/* Compiling plans (NVRTC) and the kernel caches. See docs/caching.md.      */
/* ------------------------------------------------------------------------ */

/* Generates CUDA C for every launch of the plan and compiles it with NVRTC
 * to a CUBIN, all launches in parallel on the context's thread pool, each
 * through the memory cache, then the disk cache. Needs no GPU when
 * options.arch is set ("sm_90", "sm_90a", "90" or "9.0"); with arch NULL
 * the current device's arch is used, or "sm_90" with a warning when there
 * is no device. Compiling a compiled plan again recompiles it (from the
 * caches). Cache I/O failures never fail a compile: they are logged
 * ("cache" component) and counted. Not thread-safe on one plan.
 * Errors: KF_ERR_COMPILE (the message on the plan and the context has the
 * kernel, the NVRTC log and the numbered source around the first error;
 * with KFUSE_DUMP_DIR set the source is also written there),
 * KF_ERR_INVALID_ARG (bad arch), KF_ERR_UNSUPPORTED (a kernel codegen
 * cannot emit), KF_ERR_OUT_OF_MEMORY. */
KF_API kf_status kf_plan_compile(kf_plan *plan);
/* kf_plan_create then kf_plan_compile. On failure *out is NULL and the
 * message is on ctx. The caller owns *out. */
KF_API kf_status kf_compile(kf_ctx *ctx, const kf_graph *g, const kf_options *opt,
                            kf_plan **out);

/* What the last kf_plan_compile did. */
typedef struct kf_compile_stats {
  int kernels;       /* compiled modules: one per launch */
  int compiled;      /* compiled by NVRTC now (cache misses) */
  int cache_hits;    /* found in the memory or disk cache */
  int mem_hits, disk_hits;
  double compile_ms; /* wall time of the whole compile step */
  char arch[16];     /* "sm_90" */
} kf_compile_stats;
/* Errors: KF_ERR_INVALID_ARG (NULL), KF_ERR_UNSUPPORTED (not compiled). */
KF_API kf_status kf_plan_compile_stats(const kf_plan *plan, kf_compile_stats *out);

/* How each launch of the last kf_plan_compile got its code: the first-call
 * profile of docs/caching.md ("Where a first compile's time goes"). */
typedef enum kf_origin {
  KF_ORIGIN_COMPILED = 0, /* NVRTC compiled it (a cache miss) */
  KF_ORIGIN_MEM_HIT = 1,  /* in the memory cache, or another thread's compile of it waited for */
  KF_ORIGIN_DISK_HIT = 2, /* read from the disk cache */
  KF_ORIGIN_LIBRARY = 3   /* a library call (cuBLASLt): nothing to compile */
} kf_origin;
typedef struct kf_launch_compile {
  kf_origin origin;
  double emit_ms;          /* code generation of this launch */
  double compile_ms;       /* cache lookups and NVRTC, on a worker thread (launches overlap) */
  int64_t source_bytes;    /* the generated CUDA C */
  uint64_t key_hi, key_lo; /* its kernel cache key: equal keys, identical kernels */
} kf_launch_compile;
/* Launch 0 .. kf_plan_num_launches-1 of the last compile. Errors:
 * KF_ERR_INVALID_ARG (NULL, a launch out of range), KF_ERR_UNSUPPORTED
 * (not compiled). */
KF_API kf_status kf_plan_launch_compile(const kf_plan *plan, int launch, kf_launch_compile *out);

/* The NVRTC version kfuse is linked with (13, 0). Thread-safe.
 * Errors: KF_ERR_INTERNAL. */
KF_API kf_status kf_nvrtc_version(int *major, int *minor);

/* Counters of a context's kernel caches since it was created, and the disk
 * cache's current contents. */
typedef struct kf_cache_stats {
  uint64_t mem_hits;       /* kernels found in memory (or waited for) */
  uint64_t disk_hits;      /* kernels loaded from disk */
  uint64_t misses;         /* kernels compiled */
  uint64_t evictions;      /* disk entries removed by the size bound */
  uint64_t disk_errors;    /* disk reads or writes that failed (compiles went on) */
  uint64_t corrupt;        /* bad disk entries found and deleted */
  uint64_t mem_entries;    /* kernels held in memory now */
  uint64_t mem_bytes;      /* their bytes */
  uint64_t mem_max_bytes;  /* the bound (KFUSE_CACHE_MEM_MAX_MB, default 256) */
  uint64_t mem_evictions;  /* least recently used kernels dropped by it */
  uint64_t disk_entries;   /* entries in the folder now */
  uint64_t disk_bytes;     /* their bytes */
  uint64_t disk_max_bytes; /* the bound (KFUSE_CACHE_MAX_MB) */
  bool disk_enabled;       /* false: no usable folder (see the log) */
} kf_cache_stats;
/* Thread-safe. Errors: KF_ERR_INVALID_ARG, KF_ERR_OUT_OF_MEMORY. */
KF_API kf_status kf_ctx_cache_stats(kf_ctx *ctx, kf_cache_stats *out);
/* Empties the context's memory cache and deletes every disk entry of its
 * folder (shared with other processes using it). Thread-safe.
 * Errors: KF_ERR_INVALID_ARG, KF_ERR_OUT_OF_MEMORY, KF_ERR_IO (the folder
 * cannot be listed, or some entry could not be removed: the message names
 * the first one and why). */
KF_API kf_status kf_cache_clear(kf_ctx *ctx);
/* kf_cache_clear, also saying how many disk entries it really removed
 * (*removed) and how many it could not (*kept); either may be NULL. */
KF_API kf_status kf_cache_clear_report(kf_ctx *ctx, uint64_t *removed, uint64_t *kept);
/* The disk cache folder (KFUSE_CACHE_DIR, else $XDG_CACHE_HOME/kfuse, else
 * $HOME/.cache/kfuse); "" when none could be resolved. Owned by ctx. */
KF_API const char *kf_cache_dir(kf_ctx *ctx);

/* ------------------------------------------------------------------------ */
/* Devices (runtime). libcuda.so.1 is loaded with dlopen at first use; it is */
/* never linked. Without it every call below returns KF_ERR_NO_DEVICE and   */
/* says so on the context; compiling still works with an explicit arch.     */
/* ------------------------------------------------------------------------ */

typedef struct kf_device_info {
  int ordinal;
  char name[256];           /* "NVIDIA H200" */
  int cc_major, cc_minor;   /* compute capability: 9, 0 */
  int sm_count;             /* multiprocessors */
  uint64_t total_mem;       /* bytes of device memory */
  int max_threads_per_sm;
  int max_smem_per_block;   /* opt-in maximum, bytes */
  int l2_bytes;
  int driver_version;       /* 13000 for CUDA 13.0 */
} kf_device_info;

/* The CUDA version the installed driver supports (13000 = 13.0). Works
 * without a GPU. Errors: KF_ERR_NO_DEVICE (no libcuda), KF_ERR_INVALID_ARG. */
KF_API kf_status kf_driver_version(kf_ctx *ctx, int *version);
/* Number of GPUs. Errors: KF_ERR_NO_DEVICE (no libcuda, or a driver that
 * sees no GPU; the message tells which), KF_ERR_INVALID_ARG. Thread-safe. */
KF_API kf_status kf_device_count(kf_ctx *ctx, int *count);
/* Facts about GPU `ordinal`. Errors: KF_ERR_NO_DEVICE, KF_ERR_INVALID_ARG
 * (bad ordinal, NULL out). Thread-safe. */
KF_API kf_status kf_device_query(kf_ctx *ctx, int ordinal, kf_device_info *out);

/* ------------------------------------------------------------------------ */
/* Running plans (runtime)                                                  */
/* ------------------------------------------------------------------------ */

/* A dense, row-major tensor in device memory: `data` is a CUdeviceptr cast
 * to a pointer. kfuse only borrows it for the run. */
typedef struct kf_tensor {
  void *data;
  kf_dtype dtype;
  int rank;
  int64_t shape[KF_MAX_RANK];
} kf_tensor;

/* The dtype, rank and shape of each of g's inputs (in order) into
 * inputs[0..n_inputs) and of each output into outputs[0..n_outputs), data
 * set to NULL: what a binding needs to check and allocate a plan's tensors,
 * in one call (a 600-tensor graph: one call instead of 1800). The counts
 * must be the graph's (kf_graph_num_inputs/_outputs), else
 * KF_ERR_INVALID_ARG (no message: g is const, and may be shared by
 * threads); an array may be NULL when its count is 0. */
KF_API kf_status kf_graph_io(const kf_graph *g, kf_tensor *inputs, int n_inputs,
                             kf_tensor *outputs, int n_outputs);

/* Loads a compiled plan's kernels into the CUDA context (the caller's
 * current one, else the primary context of device 0, which kfuse retains),
 * reads their registers, spills and occupancy, and allocates the workspace
 * unless the caller handed one in. A fused kernel that spills or whose
 * occupancy is more than options.occupancy_drop below its unfused parts'
 * is split and recompiled here (the plan may then have more launches and
 * a larger workspace; KFUSE_NO_OCCUPANCY_SPLIT=1 or occupancy_drop <= 0
 * turns this off; docs/runtime.md). The first kf_plan_run does this if it
 * was not done, but not while the caller's stream is capturing a CUDA
 * Graph: call kf_plan_load (and one kf_plan_run) before capturing.
 * Errors: KF_ERR_NO_DEVICE, KF_ERR_UNSUPPORTED (plan not compiled),
 * KF_ERR_OUT_OF_MEMORY (the plan stays usable; retry later),
 * KF_ERR_CUDA, KF_ERR_CONTEXT_LOST. */
KF_API kf_status kf_plan_load(kf_plan *plan);

/* Hands the plan a caller-owned device workspace of `bytes` bytes (at least
 * kf_plan_workspace_size, 256-byte aligned) used by every later run; kfuse
 * frees any workspace it allocated itself. dptr NULL returns to a workspace
 * allocated by kfuse. The memory must outlive the runs that use it.
 * Errors: KF_ERR_INVALID_ARG (too small, misaligned). */
KF_API kf_status kf_plan_set_workspace(kf_plan *plan, void *dptr, size_t bytes);

/* Changes how later runs launch (plain, streams, CUDA Graph) without
 * recompiling. Errors: KF_ERR_INVALID_ARG. */
KF_API kf_status kf_plan_set_mode(kf_plan *plan, kf_run_mode mode);

/* Runs the plan on `stream` (a CUstream; NULL = the legacy default stream).
 * inputs[i] binds the graph's i-th input, outputs[j] its j-th output; each
 * must match the value's dtype and shape, be non-NULL device memory and
 * be aligned to its element size (16-byte alignment is faster). Outputs
 * must not overlap inputs or each other. Every tensor is checked before
 * anything is launched. The run is asynchronous: it never synchronizes the
 * device, and the tensors must stay alive until the stream reaches the
 * run's end. In KF_MODE_STREAMS independent kernels run on kfuse's
 * prioritized streams, forked from and joined back to `stream`; in
 * KF_MODE_GRAPH the plan is one CUDA Graph, instantiated once and replayed,
 * new tensor addresses updating it in place. May be called while `stream`
 * is being captured once the plan is loaded (see kf_plan_load).
 * Not thread-safe on one plan.
 * Errors: KF_ERR_INVALID_ARG (the message names the tensor and what is
 * wrong), KF_ERR_NO_DEVICE, KF_ERR_OUT_OF_MEMORY (plan stays usable),
 * KF_ERR_CONTEXT_LOST (a sticky CUDA error: this and every later call of
 * the context fail; the process must recreate its CUDA context),
 * KF_ERR_CUDA. */
KF_API kf_status kf_plan_run(kf_plan *plan, const kf_tensor *inputs, int n_inputs,
                             const kf_tensor *outputs, int n_outputs, void *stream);

/* kf_plan_run with addresses only, for callers that run the same plan
 * often (frameworks, ctypes bindings): the dtypes and shapes are the
 * plan's own (kf_graph_input/kf_graph_output, kf_value_dtype,
 * kf_value_shape) and are not given, so they are not checked; the caller
 * vouches for them. inputs[i] is the device address of the graph's i-th
 * input, outputs[j] of its j-th output. Everything else is kf_plan_run's,
 * through the same code: the counts; each address non-NULL (NULL is
 * allowed for an empty tensor) and aligned to its element size on every
 * run; device memory of the plan's GPU and no output overlapping an input
 * or another output, checked when an address changes (the plan caches the
 * last addresses that passed, shared with kf_plan_run); same launches,
 * modes, capture rules and asynchrony. Not thread-safe on one plan.
 * Errors as kf_plan_run (the message names the tensor). */
KF_API kf_status kf_plan_run_ptrs(kf_plan *plan, void *const *inputs, int n_inputs,
                                  void *const *outputs, int n_outputs, void *stream);

/* DLPack (v1.x) variants of kf_plan_run. kfuse borrows the tensors: it
 * never calls their deleters. Each must be on a CUDA device (kDLCUDA or
 * kDLCUDAManaged) of the plan's device, with the value's dtype and shape,
 * and strides NULL or compact row-major; byte_offset is honoured. An output
 * flagged DLPACK_FLAG_BITMASK_READ_ONLY is refused. Include dlpack.h for
 * the structs; kfuse.h only names them. Errors as kf_plan_run. */
struct DLManagedTensorVersioned;
struct DLManagedTensor;
KF_API kf_status kf_plan_run_dlpack(kf_plan *plan,
                                    struct DLManagedTensorVersioned *const *inputs,
                                    int n_inputs,
                                    struct DLManagedTensorVersioned *const *outputs,
                                    int n_outputs, void *stream);
KF_API kf_status kf_plan_run_dlpack_legacy(kf_plan *plan, struct DLManagedTensor *const *inputs,
                                           int n_inputs, struct DLManagedTensor *const *outputs,
                                           int n_outputs, void *stream);

/* ------------------------------------------------------------------------ */
/* Profiling and tracing (docs/cli.md)                                      */
/* ------------------------------------------------------------------------ */

/* Device memory for tools, tests and simple embedders (a framework keeps
 * its own allocator: kfuse only borrows tensors). These use the context's
 * CUDA context (the caller's current one, else device 0's primary one).
 * Thread-safe. Errors: KF_ERR_NO_DEVICE, KF_ERR_OUT_OF_MEMORY, KF_ERR_CUDA,
 * KF_ERR_CONTEXT_LOST, KF_ERR_INVALID_ARG; the message is on ctx. */
KF_API kf_status kf_device_alloc(kf_ctx *ctx, size_t bytes, void **dptr);
/* Frees memory from kf_device_alloc; NULL is a no-op. */
KF_API void kf_device_free(kf_ctx *ctx, void *dptr);
/* Blocking copies between host and device memory. */
KF_API kf_status kf_memcpy_to_device(kf_ctx *ctx, void *dst, const void *src, size_t bytes);
KF_API kf_status kf_memcpy_to_host(kf_ctx *ctx, void *dst, const void *src, size_t bytes);
/* Sets `bytes` bytes at dptr to `byte` and waits (0xff poisons floats
 * with NaN). */
KF_API kf_status kf_memset_device(kf_ctx *ctx, void *dptr, int byte, size_t bytes);
/* Waits for the work queued on stream (NULL: the legacy default stream). */
KF_API kf_status kf_stream_synchronize(kf_ctx *ctx, void *stream);

/* One launch of a profiled run. */
typedef struct kf_launch_profile {
  char name[64];        /* kernel entry: "k0_pointwise" */
  int kernels;          /* fused kernels packed into it (horizontal > 1) */
  int stream;           /* 0: the caller's stream; 1..: kfuse's pool */
  double start_ms;      /* from the start of the run, by CUDA events */
  double ms;            /* its time, by CUDA events */
  int64_t bytes;        /* the fewest bytes its kernels must move */
  double gbps;          /* bytes / ms */
  unsigned grid, block, smem_bytes;
  int registers, local_bytes; /* per thread; local > 0 means spills */
  int blocks_per_sm;
  double occupancy;     /* resident threads / max threads per SM, 0..1 */
} kf_launch_profile;

typedef struct kf_profile {
  char device[256];             /* "NVIDIA H200" */
  kf_run_mode mode;             /* plain or streams (graph runs as streams) */
  int n_launches;
  kf_launch_profile *launches;  /* owned: release with kf_profile_release */
  double ms;                    /* first launch's start to last one's end */
  int64_t bytes;                /* the plan's minimum bytes (bytes_fused) */
  double gbps;                  /* bytes / ms */
} kf_profile;

/* Runs the plan once with a CUDA event before and after every launch and
 * waits for it (a profiling call: it synchronizes `stream`). Launches go
 * one after another on `stream` in KF_MODE_PLAIN, and on kfuse's streams
 * as kf_plan_run would place them in KF_MODE_STREAMS and KF_MODE_GRAPH.
 * Registers, spills and occupancy are those measured at load. While a
 * trace is recording (kf_trace_start) the launches are added to it. Tensors
 * as kf_plan_run. *out is filled even on failure (then with no launches);
 * release it with kf_profile_release. Not thread-safe on one plan.
 * Errors: as kf_plan_run, on the plan. */
KF_API kf_status kf_plan_profile(kf_plan *plan, const kf_tensor *inputs, int n_inputs,
                                 const kf_tensor *outputs, int n_outputs, void *stream,
                                 kf_profile *out);
/* Frees the launches of a profile; NULL and a released profile are no-ops. */
KF_API void kf_profile_release(kf_profile *profile);

typedef struct kf_bench_options {
  int warmup;       /* untimed runs first (3) */
  int iters;        /* timed runs (20) */
  bool host_timing; /* also time kf_plan_run on the host in plain and graph modes (true) */
  bool nvml;        /* sample GPU utilization with NVML if libnvidia-ml is there (true) */
} kf_bench_options;
KF_API void kf_bench_options_init(kf_bench_options *opt);

typedef struct kf_bench_result {
  int iters;
  double ms_median, ms_min, ms_max; /* per run, CUDA events around each run */
  int64_t bytes;                    /* the plan's minimum bytes (bytes_fused) */
  double gbps;                      /* bytes / ms_median */
  double host_us_plain;             /* host time per kf_plan_run call, back to back */
  double host_us_graph;             /*   (-1 when not measured) */
  int nvml_samples;                 /* 0: NVML absent or not asked */
  double gpu_util, mem_util;        /* mean percent over the timed runs; -1 when absent */
} kf_bench_result;

/* Times the plan in its current mode: warm-up runs, then `iters` runs each
 * between two CUDA events on `stream`, then (host_timing) the host time of
 * back-to-back kf_plan_run calls in plain and in graph mode (the plan's mode
 * is restored). Synchronizes `stream`. Tensors as kf_plan_run; their
 * contents are overwritten as by any run. Not thread-safe on one plan.
 * Errors: as kf_plan_run, on the plan. */
KF_API kf_status kf_plan_benchmark(kf_plan *plan, const kf_tensor *inputs, int n_inputs,
                                   const kf_tensor *outputs, int n_outputs, void *stream,
                                   const kf_bench_options *opt, kf_bench_result *out);
/* The device-to-device copy bandwidth (bytes read + written per second,
 * in GB/s = 1e9 B/s): the median of `iters` cuMemcpyDtoDAsync of a
 * `bytes`-byte buffer, timed with CUDA events. The ceiling that kernels'
 * GB/s are compared with. Errors: KF_ERR_NO_DEVICE, KF_ERR_OUT_OF_MEMORY,
 * KF_ERR_CUDA, KF_ERR_INVALID_ARG, on ctx. */
KF_API kf_status kf_device_copy_bandwidth(kf_ctx *ctx, size_t bytes, int iters, double *gbps);

/* Records a Chrome / Perfetto trace (chrome://tracing, ui.perfetto.dev) of
 * the whole process: host spans of parsing, fusion, code generation, NVRTC,
 * module loads and launches per thread, and the kernels of every
 * kf_plan_profile on their streams. Starting again restarts it. The same
 * spans go to NVTX (domain "kfuse") whenever Nsight Systems is attached,
 * trace or not. Thread-safe. Errors: KF_ERR_OUT_OF_MEMORY. */
KF_API kf_status kf_trace_start(void);
/* Stops recording and writes the trace to path as JSON. Errors (on ctx,
 * which may be NULL): KF_ERR_INVALID_ARG (not recording, NULL path),
 * KF_ERR_IO. */
KF_API kf_status kf_trace_stop(kf_ctx *ctx, const char *path);
/* Opens and closes a host span named `name` (copied) on this thread, in
 * NVTX and the trace, around a caller's own phase. Spans nest per thread.
 * Thread-safe. */
KF_API void kf_trace_push(const char *name);
KF_API void kf_trace_pop(void);

#ifdef __cplusplus
}
#endif

#endif /* KFUSE_H */
