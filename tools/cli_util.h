/* cli_util.h - helpers shared by the kfuse subcommands: option values,
 * escaped printing, loading a graph file with a clear error, seeded random
 * host tensors, per-dtype tolerances and comparison. */
#ifndef KF_TOOLS_CLI_UTIL_H
#define KF_TOOLS_CLI_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_args.h"
#include "cli_json.h"
#include "kfuse.h"

/* ---- arguments ---------------------------------------------------------- */

/* Parses a whole decimal integer in [lo, hi]; false (message on stderr,
 * naming cmd and the option --opt) otherwise. */
bool cli_int(const char *cmd, const char *opt, const char *text, long long lo, long long hi,
             long long *out);
/* A finite number >= lo; false (message on stderr) otherwise. */
bool cli_double(const char *cmd, const char *opt, const char *text, double lo, double *out);
/* "plain", "streams" or "graph". */
bool cli_mode(const char *cmd, const char *text, kf_run_mode *out);
const char *cli_mode_name(kf_run_mode mode);

/* Text from a file, the environment or the command line, safe to print
 * (kf_escape): cli_show for one line (names, paths), cli_show_text for a
 * message that may span lines (a compiler log). The result lives until 8
 * more calls; not thread-safe (the program has one thread). */
const char *cli_show(const char *text);
const char *cli_show_text(const char *text);

/* Prints "kfuse CMD: message" on stderr (escaped) and keeps the first such
 * message of the process for cli_json_failure. */
void cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Under --json, a failed command still prints one object on stdout:
 * {"ok":false,"file":FILE,"error":MESSAGE,"exit":RC}. */
void cli_json_failure(const char *file, int rc);
/* The exit code for a failed library call (cli_args.h): CLI_NO_DEVICE for
 * KF_ERR_NO_DEVICE, else CLI_FAILED. */
int cli_exit_code(kf_status st);

/* ---- graphs ------------------------------------------------------------- */

/* A context, or NULL with a message on stderr. */
kf_ctx *cli_ctx(const char *cmd);
/* Loads a graph file; on failure prints "kfuse CMD: <where and what>" on
 * stderr, sets *rc (CLI_BAD_INPUT, or CLI_FAILED when out of memory) and
 * returns NULL. */
kf_graph *cli_load(kf_ctx *ctx, const char *cmd, const char *path, int *rc);
/* Whether GPU 0 is usable; its name into name (else the context's message
 * says why). */
bool cli_gpu(kf_ctx *ctx, char *name, size_t size);
/* "f32[8192,8192]" into buf. */
const char *cli_type_str(const kf_graph *g, kf_value v, char *buf, size_t size);
/* A value's name, or "%N". */
const char *cli_value_name(const kf_graph *g, kf_value v, char *buf, size_t size);

/* What the CPU reference would cost on g, in element operations: every
 * node counts its output elements plus its operands' elements, and a
 * matmul adds M*N*K multiply-adds (per batch). Inputs and constants cost
 * nothing. Read through kf_graph_dump (the public API names no operands).
 * A negative result means the graph could not be dumped. */
double cli_reference_cost(const kf_graph *g);

/* ---- host tensors ------------------------------------------------------- */

/* Host tensors shaped like the graph's inputs (outputs false) or outputs;
 * zeroed; NULL on out of memory (message printed). Free with
 * cli_tensors_free. */
kf_host_tensor *cli_tensors(const kf_graph *g, bool outputs, const char *cmd);
void cli_tensors_free(kf_host_tensor *t, int n);
size_t cli_numel(const kf_host_tensor *t);
size_t cli_bytes(const kf_host_tensor *t);

/* Fills a tensor from a seeded generator: floats uniform in [lo, hi)
 * (rounded to f16/bf16), integers uniform in [-64, 64], bools 0/1. Each
 * input gets its own stream (seed and index), so adding an input does not
 * change the others. */
void cli_fill_random(kf_host_tensor *t, uint64_t seed, int index, double lo, double hi);
/* Element i as a double (f16/bf16 widened, integers converted). */
double cli_elem(const kf_host_tensor *t, size_t i);

/* ---- comparison --------------------------------------------------------- */

/* The fixed tolerance of a comparison without an error bound (the unfused
 * plan on the GPU as the oracle): |got - want| <= atol + rtol * max(|want|,
 * max |want| of the output), NaN exactly where the oracle has NaN,
 * infinities equal: f64 1e-10/1e-12, f32 1e-4/1e-5, f16 1e-2/1e-3, bf16
 * 2e-2/1e-2; integers and bool exact. */
void cli_tolerance(kf_dtype dtype, double *rtol, double *atol);

/* The tolerance of attention's numerical contract (docs/attention.md): a
 * flash kernel reorders the softmax, so what it writes (the output and the
 * logsumexp) is not the graph's bit for bit, and may differ by
 * |got - want| <= tol + tol |want|, tol 2^-9 for f16 and 2^-6 for bf16
 * q/k/v (the dtype of the kernel's first input, q). True with *tol set
 * when a kernel of kind attention in plan_json (kf_plan_describe's JSON)
 * writes the value named name; false otherwise. */
bool cli_attention_tolerance(const kf_graph *g, const char *plan_json, const char *name,
                             double *tol);

typedef struct cli_cmp {
  double max_abs, max_rel; /* over elements where both are finite or equal */
  int64_t bad;             /* elements outside the tolerance */
  int64_t nan_mismatch;    /* NaN or infinity in one and not the other (counted in bad) */
  double rtol, atol;
  bool bounded;      /* compared within the reference's error bound (kf_compare) */
  int64_t unbounded; /* bounded: elements whose bound is infinite (not checked) */
  double max_ratio;  /* bounded: largest |got - want| / allowed */
  /* the element farthest outside (or nearest to) what is allowed, -1: none */
  int64_t worst;
  double worst_got, worst_want, worst_bound, worst_allowed;
  bool ok;
} cli_cmp;
/* With a fixed tolerance (cli_tolerance). */
void cli_compare(const kf_host_tensor *got, const kf_host_tensor *want, double rtol, double atol,
                 cli_cmp *out);
/* Within bound, the CPU reference's error bound of each element
 * (kf_graph_run_reference_bounded), plus atol + rtol |want| (0 and 0 by
 * default): kf_compare. */
void cli_compare_bounded(const kf_host_tensor *got, const kf_host_tensor *want, const double *bound,
                         double rtol, double atol, cli_cmp *out);
/* "[3,17]": element i of t as its index, into buf. */
const char *cli_index_str(const kf_host_tensor *t, int64_t i, char *buf, size_t size);

/* Summary of a tensor's values (for runs without a GPU). */
typedef struct cli_stats {
  double min, max, mean; /* over finite elements */
  int64_t nan, inf;
} cli_stats;
void cli_tensor_stats(const kf_host_tensor *t, cli_stats *out);

#endif
