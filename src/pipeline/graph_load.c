/* graph_load.c - kf_graph_load_yaml and kf_graph_load_yaml_string: the
 * YAML loader (src/ir/yaml_load.c), with the parsed graph of a large file
 * kept in the disk cache. libyaml's parser was two thirds of a 600-tensor
 * graph's warm start (1.6 of 2.4 ms on the development machine); a cached
 * graph is rebuilt from its bytes instead (src/ir/graph_blob.c). The key is
 * the file's bytes and the kfuse version, so an edited file is parsed anew,
 * and only graphs that loaded without error are kept: every error message
 * is the parser's. KFUSE_DISK_CACHE=0 turns it off with the kernel cache. */
#include <stdlib.h>

#include "core/ctx.h"
#include "ir/graph_blob.h"
#include "ir/ir.h"
#include "ir/yaml_load.h"
#include "ir/yaml_tree.h"
#include "runtime/cache.h"
#include "runtime/cache_state.h"
#include "runtime/nvtx.h"

/* Files smaller than this parse in well under a millisecond: not cached. */
enum { GRAPH_CACHE_MIN_BYTES = 16384 };

static kf_status load_cached(kf_ctx *ctx, const char *text, size_t len, const char *filename,
                             kf_graph **out) {
  /* NULL arguments and oversized texts are the parser's to refuse (it does
   * so before reading a byte) */
  bool cache = ctx && text && out && len >= GRAPH_CACHE_MIN_BYTES && len <= IR_YAML_MAX_BYTES;
  cache_key key = {0, 0};
  if (cache) {
    key = rt_cache_key_blob("graph-v1", text, len);
    void *blob = NULL;
    size_t size = 0;
    *out = NULL;
    if (rt_cache_blob_get(ctx, key, &blob, &size)) {
      char why[1024];
      *out = ir_graph_from_blob(ctx, blob, size, why, sizeof why);
      free(blob);
      if (*out) return KF_OK;
      /* a miss: the parse below keeps a good entry in its place */
      core_log(ctx, KF_LOG_WARN, LOG_CACHE, "%s: a cached parse was refused (%s); parsing the file",
               filename ? filename : "<string>", why);
    }
  }
  kf_status st = ir_yaml_load_string(ctx, text, len, filename, out);
  if (st == KF_OK && cache) {
    core_str b = {0};
    ir_graph_to_blob(*out, &b);
    if (!b.oom) rt_cache_blob_put(ctx, key, b.s, b.len);
    core_str_free(&b);
  }
  return st;
}

/* The "parse" span (NVTX, trace) covers both entry points. */
kf_status kf_graph_load_yaml_string(kf_ctx *ctx, const char *text, size_t len, const char *filename,
                                    kf_graph **out) {
  rt_span_push("parse");
  kf_status st = load_cached(ctx, text, len, filename, out);
  rt_span_pop();
  return st;
}

kf_status kf_graph_load_yaml(kf_ctx *ctx, const char *path, kf_graph **out) {
  if (!path || !out)
    return core_error(ctx, KF_ERR_INVALID_ARG, "kf_graph_load_yaml: NULL argument");
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  kf_status st = ir_yaml_read_file(ctx, path, &text, &len);
  if (st != KF_OK) return st;
  st = kf_graph_load_yaml_string(ctx, text, len, path, out);
  free(text);
  return st;
}
