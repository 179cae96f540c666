/* cmd_check.c - `kfuse check FILE`: validates a graph file and prints a
 * one-screen summary (inputs, outputs, node counts by op). */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

enum { CHECK_JSON };
static const cli_opt check_opts[] = {
    [CHECK_JSON] = {"json", NULL, "one JSON object: every input and output, op counts, hash"},
};
const cli_spec check_spec = {
    "check",
    "FILE",
    1,
    1,
    "validate a YAML graph file and summarize it",
    "A bad file exits 3 with FILE:LINE:COL and what is wrong (and the closest known name).",
    check_opts,
    1};

#define LIST_MAX 12 /* values listed per section before "... and N more" */

static void print_value(const kf_graph *g, kf_value v) {
  char type[160];
  const char *name = kf_value_name(g, v);
  printf("  %-16s %s\n", name ? cli_show(name) : "?", cli_type_str(g, v, type, sizeof type));
}

static void print_values(const kf_graph *g, const char *title, int count,
                         kf_value (*get)(const kf_graph *, int)) {
  printf("%s (%d):\n", title, count);
  for (int i = 0; i < count && i < LIST_MAX; i++) print_value(g, get(g, i));
  if (count > LIST_MAX) printf("  ... and %d more\n", count - LIST_MAX);
}

/* Values per op name, in order of first appearance. */
typedef struct op_counts {
  const char *ops[96];
  int counts[96], n_ops;
} op_counts;

static void count_ops(const kf_graph *g, op_counts *c) {
  c->n_ops = 0;
  for (kf_value v = 0; v < kf_graph_num_values(g); v++) {
    const char *op = kf_value_op(g, v);
    if (!op || !strcmp(op, "input")) continue;
    int i = 0;
    while (i < c->n_ops && strcmp(c->ops[i], op) != 0) i++;
    if (i == c->n_ops) {
      if (c->n_ops == 96) continue;
      c->ops[c->n_ops] = op;
      c->counts[c->n_ops++] = 0;
    }
    c->counts[i]++;
  }
}

static void report_text(const char *file, const kf_graph *g, const op_counts *c, const char *hash) {
  const char *gname = kf_graph_name(g);
  printf("%s: valid\n", cli_show(file));
  printf("graph: %s\n", gname ? cli_show(gname) : "(unnamed)");
  print_values(g, "inputs", kf_graph_num_inputs(g), kf_graph_input);
  print_values(g, "outputs", kf_graph_num_outputs(g), kf_graph_output);
  printf("nodes (%d, composites expanded):", kf_graph_num_values(g) - kf_graph_num_inputs(g));
  for (int i = 0; i < c->n_ops; i++)
    printf("%s %s x%d", i % 6 ? "," : "\n ", c->ops[i], c->counts[i]);
  printf("\nhash: %s\n", hash);
}

static void json_values(cli_json *j, const char *key, const kf_graph *g, int count,
                        kf_value (*get)(const kf_graph *, int)) {
  cj_arr(j, key);
  for (int i = 0; i < count; i++) {
    kf_value v = get(g, i);
    cj_obj(j, NULL);
    cj_str(j, "name", kf_value_name(g, v));
    cj_str(j, "dtype", kf_dtype_name(kf_value_dtype(g, v)));
    cj_arr(j, "shape");
    for (int d = 0; d < kf_value_rank(g, v); d++) cj_int(j, NULL, kf_value_shape(g, v)[d]);
    cj_arr_end(j);
    cj_obj_end(j);
  }
  cj_arr_end(j);
}

static void report_json(const char *file, const kf_graph *g, const op_counts *c, const char *hash) {
  cli_json j;
  cj_init(&j, stdout);
  cj_obj(&j, NULL);
  cj_bool(&j, "ok", true);
  cj_str(&j, "file", file);
  cj_str(&j, "graph", kf_graph_name(g));
  json_values(&j, "inputs", g, kf_graph_num_inputs(g), kf_graph_input);
  json_values(&j, "outputs", g, kf_graph_num_outputs(g), kf_graph_output);
  cj_int(&j, "nodes", kf_graph_num_values(g) - kf_graph_num_inputs(g));
  cj_obj(&j, "ops");
  for (int i = 0; i < c->n_ops; i++) cj_int(&j, c->ops[i], c->counts[i]);
  cj_obj_end(&j);
  cj_str(&j, "hash", hash);
  cj_obj_end(&j);
  cj_done(&j);
}

int cmd_check(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(&check_spec, argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  const char *file = a.pos[0];
  bool json = a.set[CHECK_JSON];
  kf_ctx *ctx = cli_ctx("check");
  kf_graph *g = ctx ? cli_load(ctx, "check", file, &rc) : NULL;
  if (!ctx) rc = CLI_FAILED;
  if (g) {
    kf_hash128 h = kf_graph_hash(g);
    char hash[40];
    snprintf(hash, sizeof hash, "%016llx%016llx", (unsigned long long)h.hi,
             (unsigned long long)h.lo);
    op_counts c;
    count_ops(g, &c);
    if (json)
      report_json(file, g, &c, hash);
    else
      report_text(file, g, &c, hash);
  }
  if (rc && json) cli_json_failure(file, rc);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return rc;
}
