/* target.c - what code is generated for: an arch name and its defaults. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"

/* Parses "sm_90", "sm_90a", "compute_90": the digits give major and minor. */
bool cg_target_from_arch(const char *arch, cg_target *out) {
  if (!arch || !out) return false;
  const char *p;
  if (strncmp(arch, "sm_", 3) == 0)
    p = arch + 3;
  else if (strncmp(arch, "compute_", 8) == 0)
    p = arch + 8;
  else
    return false;
  size_t n = 0;
  while (p[n] >= '0' && p[n] <= '9') n++;
  if (n < 2 || n > 3) return false;
  if (p[n] != '\0' && !((p[n] == 'a' || p[n] == 'f') && p[n + 1] == '\0')) return false;
  int v = atoi(p);
  out->cc_major = v / 10;
  out->cc_minor = v % 10;
  if (out->cc_major < 5) return false;
  /* An H200 for sm_90; a reasonable mid-size GPU otherwise. The runtime
   * replaces these with the device's attributes when one is present. */
  out->sm_count = v == 90 ? 132 : v >= 100 ? 148 : 108;
  out->max_threads_per_sm = (v == 86 || v == 89 || v == 120) ? 1536 : 2048;
  out->max_smem_per_block = v >= 90 ? 227 * 1024 : v >= 80 ? 163 * 1024 : 96 * 1024;
  out->grid_dep = true;
  out->max_grid = CG_MAX_GRID;
  return true;
}
