/* plan_dump.c - KFUSE_DUMP_DIR: writes a plan's JSON, text and decision log and
 * each launch's CUDA source and CUBIN into a folder, for people to read. */
#include "pipeline/plan_dump.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "core/knobs.h"
#include "pipeline/pipeline.h"

const char *pl_dump_dir(void) {
  return core_knobs_quiet()->dump_dir;
}

/* mkdir -p; true when the folder exists afterwards. */
static bool make_dirs(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) return false;
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return false;
    *p = '/';
  }
  return mkdir(path, 0755) == 0 || errno == EEXIST;
}

bool pl_dump_file(kf_ctx *ctx, const char *name, const void *data, size_t size) {
  const char *dir = pl_dump_dir();
  if (!dir || !name || strchr(name, '/')) return false;
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  bool ok = make_dirs(dir);
  FILE *f = ok ? fopen(tmp, "wb") : NULL;
  ok = f && fwrite(data, 1, size, f) == size;
  if (f && fclose(f) != 0) ok = false;
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) {
    if (f) remove(tmp);
    core_log(ctx, KF_LOG_WARN, LOG_RUNTIME, "KFUSE_DUMP_DIR: cannot write %s: %s", path,
             strerror(errno));
    return false;
  }
  core_log(ctx, KF_LOG_DEBUG, LOG_RUNTIME, "dumped %s (%zu bytes)", path, size);
  return true;
}

static void dump_string(kf_ctx *ctx, const char *prefix, const char *suffix, char *text) {
  char name[512];
  snprintf(name, sizeof name, "%s.%s", prefix, suffix);
  if (text) pl_dump_file(ctx, name, text, strlen(text));
  free(text);
}

/* The one decision log: the fuser's, with the occupancy decisions that
 * the feedback loop wrote into it (rule "occupancy"). */
static char *decision_log(const kf_plan *plan) {
  const fuse_plan *fp = plan->fuse;
  size_t cap = 64 + (size_t)fp->n_decisions * 300;
  char *s = core_malloc(cap);
  if (!s) return NULL;
  size_t n = 0;
  for (int i = 0; i < fp->n_decisions; i++)
    n += (size_t)snprintf(s + n, cap - n, "fuse %s %-20s %s\n",
                          fp->decisions[i].accepted ? "took   " : "refused", fp->decisions[i].rule,
                          fp->decisions[i].text);
  if (n == 0) snprintf(s, cap, "(no decisions)\n");
  return s;
}

static void dump_launches(kf_plan *plan, const char *prefix) {
  const cg_program *prog = plan->code;
  for (int i = 0; prog && i < prog->n_launches; i++) {
    const cg_program_launch *l = &prog->launches[i];
    char name[512];
    const char *entry = l->src.entry[0] ? l->src.entry : "launch";
    if (l->src.source) {
      snprintf(name, sizeof name, "%s.%s.cu", prefix, entry);
      pl_dump_file(plan->ctx, name, l->src.source, strlen(l->src.source));
    }
    if (l->image && l->image_size) {
      snprintf(name, sizeof name, "%s.%s.cubin", prefix, entry);
      pl_dump_file(plan->ctx, name, l->image, l->image_size);
    }
  }
}

void pl_dump_plan(kf_plan *plan) {
  if (!pl_dump_dir() || !plan || !plan->fuse) return;
  char prefix[160], safe[96];
  const char *gname = kf_graph_name(plan->graph);
  snprintf(safe, sizeof safe, "%s", gname && *gname ? gname : "graph");
  /* File names get letters, digits, '.', '-' and '_' only: a graph name
   * comes from a file and may hold a slash, a newline or an ESC sequence. */
  for (char *p = safe; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_') *p = '_';
  kf_hash128 h = kf_graph_hash(plan->graph);
  snprintf(prefix, sizeof prefix, "%s-%08x%s", safe, (unsigned)(h.hi >> 32),
           plan->options.fusion ? "" : "-nofusion");
  dump_string(plan->ctx, prefix, "plan.json", kf_plan_describe(plan, KF_FORMAT_JSON));
  dump_string(plan->ctx, prefix, "plan.txt", kf_plan_describe(plan, KF_FORMAT_TEXT));
  dump_string(plan->ctx, prefix, "decisions.txt", decision_log(plan));
  dump_launches(plan, prefix);
}
