/* cmd_check.c - `kfuse check FILE`: validates a graph file and prints a
 * one-screen summary (inputs, outputs, node counts by op). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "kfuse.h"

#define LIST_MAX 12 /* values listed per section before "... and N more" */

static void print_value(const kf_graph *g, kf_value v) {
  const int64_t *shape = kf_value_shape(g, v);
  int rank = kf_value_rank(g, v);
  const char *name = kf_value_name(g, v);
  printf("  %-16s %s[", name ? name : "?", kf_dtype_name(kf_value_dtype(g, v)));
  for (int i = 0; i < rank; i++) printf("%s%lld", i ? "," : "", (long long)shape[i]);
  printf("]\n");
}

static void print_values(const kf_graph *g, const char *title, int count,
                         kf_value (*get)(const kf_graph *, int)) {
  printf("%s (%d):\n", title, count);
  for (int i = 0; i < count && i < LIST_MAX; i++) print_value(g, get(g, i));
  if (count > LIST_MAX) printf("  ... and %d more\n", count - LIST_MAX);
}

/* Counts values per op name, in order of first appearance. */
static void print_op_counts(const kf_graph *g) {
  enum { MAX_OPS = 96 };
  const char *ops[MAX_OPS];
  int counts[MAX_OPS], n_ops = 0, n = kf_graph_num_values(g);
  for (kf_value v = 0; v < n; v++) {
    const char *op = kf_value_op(g, v);
    if (!op || !strcmp(op, "input")) continue;
    int i = 0;
    while (i < n_ops && strcmp(ops[i], op) != 0) i++;
    if (i == n_ops) {
      if (n_ops == MAX_OPS) continue;
      ops[n_ops] = op;
      counts[n_ops++] = 0;
    }
    counts[i]++;
  }
  printf("nodes (%d, composites expanded):", n - kf_graph_num_inputs(g));
  for (int i = 0; i < n_ops; i++) printf("%s %s x%d", i % 6 ? "," : "\n ", ops[i], counts[i]);
  printf("\n");
}

int cmd_check(int argc, char **argv) {
  if (argc != 1 || argv[0][0] == '-') {
    fprintf(stderr, "usage: kfuse check FILE\n");
    return 2;
  }
  kf_ctx *ctx;
  if (kf_ctx_create(&ctx) != KF_OK) {
    fprintf(stderr, "kfuse: cannot create a context\n");
    return 1;
  }
  kf_graph *g;
  if (kf_graph_load_yaml(ctx, argv[0], &g) != KF_OK) {
    fprintf(stderr, "%s\n", kf_ctx_errmsg(ctx));
    kf_ctx_destroy(ctx);
    return 1;
  }
  kf_hash128 h = kf_graph_hash(g);
  printf("%s: valid\n", argv[0]);
  printf("graph: %s\n", kf_graph_name(g) ? kf_graph_name(g) : "(unnamed)");
  print_values(g, "inputs", kf_graph_num_inputs(g), kf_graph_input);
  print_values(g, "outputs", kf_graph_num_outputs(g), kf_graph_output);
  print_op_counts(g);
  printf("hash: %016llx%016llx\n", (unsigned long long)h.hi, (unsigned long long)h.lo);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return 0;
}
