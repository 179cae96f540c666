/* occ_record.c - occupancy measurements kept in the disk cache, one
 * record per kernel source and arch, so a later process re-plans before
 * NVRTC without measuring again. A record is text; one whose numbers no
 * measurement can give is ignored. */
#include "runtime/occ_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "runtime/cache.h"
#include "runtime/cache_state.h"

static cache_key record_key(const char *source, const char *arch) {
  size_t ls = strlen(source), la = strlen(arch);
  char *buf = core_malloc(ls + la + 2);
  if (!buf) return (cache_key){0, 0};
  memcpy(buf, source, ls + 1);
  memcpy(buf + ls + 1, arch, la + 1);
  cache_key key = rt_cache_key_blob("occupancy-v2", buf, ls + la + 2);
  free(buf);
  return key;
}

#define OCC_FMT "%d %d %d %d %d %d %lf"
#define OCC_ARGS(o)                                                                       \
  (o).regs, (o).local_bytes, (o).static_smem, (o).dyn_smem, (o).block, (o).blocks_per_sm, \
      (o).occupancy
#define OCC_PTRS(o)                                                                             \
  &(o).regs, &(o).local_bytes, &(o).static_smem, &(o).dyn_smem, &(o).block, &(o).blocks_per_sm, \
      &(o).occupancy

/* A cached record is bytes from a file: its numbers must be ones a
 * measurement can give, or the record is ignored (measured again). */
static bool occ_sane(const fuse_occ *o) {
  return o->regs >= 0 && o->regs <= 65536 && o->local_bytes >= 0 && o->static_smem >= 0 &&
         o->dyn_smem >= 0 && o->block >= 0 && o->block <= 1024 && o->blocks_per_sm >= 0 &&
         o->occupancy >= 0 && o->occupancy <= 1;
}

bool rt_occ_record_get(kf_ctx *ctx, const char *source, const char *arch, fuse_occ_record *rec) {
  void *data = NULL;
  size_t size = 0;
  if (!rt_cache_blob_get(ctx, record_key(source, arch), &data, &size)) return false;
  char *text = core_realloc(data, size + 1);
  if (!text) {
    free(data);
    return false;
  }
  text[size] = 0;
  memset(rec, 0, sizeof *rec);
  bool ok = sscanf(text, "kfuse-occupancy 2 parts %d fused " OCC_FMT " lowest " OCC_FMT,
                   &rec->n_parts, OCC_PTRS(rec->fused), OCC_PTRS(rec->lowest)) == 15 &&
            rec->n_parts >= 0 && occ_sane(&rec->fused) && occ_sane(&rec->lowest);
  free(text);
  return ok;
}

void rt_occ_record_put(kf_ctx *ctx, const char *source, const char *arch,
                       const fuse_occ_record *rec) {
  char text[400];
  int n = snprintf(text, sizeof text,
                   "kfuse-occupancy 2 parts %d fused " OCC_FMT " lowest " OCC_FMT "\n",
                   rec->n_parts, OCC_ARGS(rec->fused), OCC_ARGS(rec->lowest));
  if (n > 0 && (size_t)n < sizeof text)
    rt_cache_blob_put(ctx, record_key(source, arch), text, (size_t)n);
}
