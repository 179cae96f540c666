/* compile_alike.c - finds a program's launches that are the same kernel
 * under other names. A ladder of alike layers (exp, sum, div, add, again
 * and again) plans one row kernel per layer; their sources differ only in
 * the kernel index that names the entry and its part functions, so NVRTC
 * would compile the same code once per layer. The index token "_k<i>_"
 * of each launch's entry is masked when comparing; a duplicate takes a
 * copy of the first one's image and looks up the first one's symbol. */
#include "runtime/compile_alike.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

/* The part of an entry that differs between alike kernels: "_k3_row" of
 * "kf_k3_row" (every function of the launch carries it); "" when the entry
 * has no such form. */
static const char *stem_of(const char *entry) {
  return strncmp(entry, "kf_k", 4) == 0 ? entry + 2 : "";
}

/* A reader of a source as the compiler sees it, less the kernel's name:
 * a comment reads as one space (comments name graph node ids), the stem
 * as one marker, anything else (string and character literals whole) as
 * its characters. */
typedef struct reader {
  const char *p, *stem;
  size_t n;
  char quote; /* inside a literal: its quote */
} reader;

enum { R_END = -1, R_MARK = 256 };

static int next_unit(reader *r) {
  const char *p = r->p;
  if (!*p) return R_END;
  if (r->quote) {
    if (*p == '\\' && p[1]) {
      r->p = p + 2;
      return (unsigned char)p[1] | 512;
    }
    if (*p == r->quote) r->quote = 0;
    r->p = p + 1;
    return (unsigned char)*p;
  }
  if (p[0] == '/' && (p[1] == '/' || p[1] == '*')) {
    const char *e = p[1] == '/' ? strchr(p, '\n') : strstr(p + 2, "*/");
    r->p = !e ? p + strlen(p) : p[1] == '/' ? e : e + 2;
    return ' ';
  }
  if (r->n && *p == r->stem[0] && strncmp(p, r->stem, r->n) == 0) {
    r->p = p + r->n;
    return R_MARK;
  }
  if (*p == '"' || *p == '\'') r->quote = *p;
  r->p = p + 1;
  return (unsigned char)*p;
}

static reader reader_of(const char *src, const char *stem) {
  return (reader){src, stem, strlen(stem), 0};
}

/* FNV-1a over what a reader reads. */
static uint64_t masked_hash(const char *src, const char *stem) {
  reader r = reader_of(src, stem);
  uint64_t h = 1469598103934665603ull;
  for (int u; (u = next_unit(&r)) != R_END;) h = (h ^ (uint64_t)u) * 1099511628211ull;
  return h;
}

/* a and b read alike. */
static bool masked_equal(const char *a, const char *sa, const char *b, const char *sb) {
  reader ra = reader_of(a, sa), rb = reader_of(b, sb);
  for (;;) {
    int ua = next_unit(&ra), ub = next_unit(&rb);
    if (ua != ub) return false;
    if (ua == R_END) return true;
  }
}

static bool alike(const cg_program_launch *x, const cg_program_launch *y) {
  const cg_launch_src *a = &x->src, *b = &y->src;
  return a->arch_specific == b->arch_specific &&
         masked_equal(a->source, stem_of(a->entry), b->source, stem_of(b->entry));
}

int *rt_alike_launches(const cg_program *prog) {
  int n = prog->n_launches;
  int *rep = core_malloc((size_t)(n ? n : 1) * sizeof *rep);
  uint64_t *h = core_malloc((size_t)(n ? n : 1) * sizeof *h);
  if (!rep || !h) {
    free(rep);
    free(h);
    return NULL;
  }
  /* open addressing over launch indices, twice n slots */
  size_t slots = 16;
  while (slots < 2 * (size_t)n) slots *= 2;
  int *table = core_malloc(slots * sizeof *table);
  if (!table) {
    free(rep);
    free(h);
    return NULL;
  }
  for (size_t s = 0; s < slots; s++) table[s] = -1;
  for (int i = 0; i < n; i++) {
    const cg_program_launch *l = &prog->launches[i];
    rep[i] = i;
    if (l->src.library || !l->src.source || !stem_of(l->src.entry)[0]) continue;
    h[i] = masked_hash(l->src.source, stem_of(l->src.entry));
    for (size_t s = (size_t)h[i] & (slots - 1);; s = (s + 1) & (slots - 1)) {
      int j = table[s];
      if (j < 0) {
        table[s] = i;
        break;
      }
      if (h[j] == h[i] && alike(l, &prog->launches[j])) {
        rep[i] = j;
        break;
      }
    }
  }
  free(table);
  free(h);
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
