/* compile_alike.c - finds a program's launches that are the same kernel
 * under other names. A ladder of alike layers (exp, sum, div, add, again
 * and again) plans one row kernel per layer; their sources differ only in
 * the kernel index that names the entry and its part functions, so NVRTC
 * would compile the same code once per layer. Each launch's source with
 * the token "_k<i>_<kind>" of its own entry masked gets the kernel cache's
 * key (rt_cache_key_kernel: comments do not count, and two sources with
 * one key are one kernel, as the caches already trust); a duplicate takes
 * a copy of the first one's image and looks up the first one's symbol. */
#include "runtime/compile_alike.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/strbuf.h"
#include "runtime/cache_state.h"

/* The part of an entry that differs between alike kernels: "_k3_row" of
 * "kf_k3_row" (every function of the launch carries it); NULL when the
 * entry has no such form. */
static const char *stem_of(const char *entry) {
  return strncmp(entry, "kf_k", 4) == 0 ? entry + 2 : NULL;
}

/* The cache key of l's source with its stem masked; false on out of
 * memory. */
static bool masked_key(const cg_program_launch *l, const char *stem, cache_key *key) {
  core_str b = {0};
  size_t n = strlen(stem);
  const char *p = l->src.source;
  for (const char *q; (q = strstr(p, stem)); p = q + n) {
    core_str_putn(&b, p, (size_t)(q - p));
    core_str_puts(&b, "_K_");
  }
  core_str_puts(&b, p);
  char *text = core_str_take(&b);
  if (!text) return false;
  *key = rt_cache_key_kernel(text, l->src.arch_specific ? "arch-specific" : "", "");
  free(text);
  return true;
}

int *rt_alike_launches(const cg_program *prog) {
  int n = prog->n_launches;
  int *rep = core_malloc((size_t)(n ? n : 1) * sizeof *rep);
  cache_key *keys = core_malloc((size_t)(n ? n : 1) * sizeof *keys);
  /* open addressing over launch indices, at least twice n slots */
  size_t slots = 16;
  while (slots < 2 * (size_t)n) slots *= 2;
  int *table = core_malloc(slots * sizeof *table);
  bool ok = rep && keys && table;
  for (size_t s = 0; ok && s < slots; s++) table[s] = -1;
  for (int i = 0; ok && i < n; i++) {
    const cg_program_launch *l = &prog->launches[i];
    const char *stem = stem_of(l->src.entry);
    rep[i] = i;
    if (l->src.library || !stem) continue;
    ok = masked_key(l, stem, &keys[i]);
    for (size_t s = (size_t)keys[i].lo & (slots - 1); ok; s = (s + 1) & (slots - 1)) {
      int j = table[s];
      if (j < 0) {
        table[s] = i;
        break;
      }
      if (keys[j].lo == keys[i].lo && keys[j].hi == keys[i].hi) {
        rep[i] = j;
        break;
      }
    }
  }
  free(table);
  free(keys);
  if (!ok) {
    free(rep);
    return NULL;
  }
  return rep;
}

kf_status rt_alike_adopt(cg_program *prog, int i, int rep) {
  cg_program_launch *l = &prog->launches[i];
  const cg_program_launch *r = &prog->launches[rep];
  if (r->status != KF_OK) {
    l->status = r->status;
    return r->status;
  }
  l->image = core_malloc(r->image_size ? r->image_size : 1);
  if (!l->image) {
    l->status = KF_ERR_OUT_OF_MEMORY;
    return l->status;
  }
  memcpy(l->image, r->image, r->image_size);
  l->image_size = r->image_size;
  snprintf(l->symbol, sizeof l->symbol, "%s", r->src.entry);
  l->key_hi = r->key_hi;
  l->key_lo = r->key_lo;
  l->origin = CG_MEM_HIT;
  l->cache_hit = true;
  l->status = KF_OK;
  return KF_OK;
}
