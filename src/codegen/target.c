/* target.c - what code is generated for: an arch name, parsed strictly,
 * and its defaults. */
#include "codegen/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"

/* "90", "90a", "100f": 2 or 3 digits, the first not 0, then at most one
 * suffix letter. Digits are read by hand: strtol would take a sign,
 * spaces and overlong numbers. */
static bool parse_arch_digits(const char *s, int *num, char *suffix) {
  int n = 0, v = 0;
  while (n < 4 && s[n] >= '0' && s[n] <= '9') v = v * 10 + (s[n++] - '0');
  if (n < 2 || n > 3 || s[0] == '0') return false;
  *suffix = 0;
  if (s[n] == 'a' || s[n] == 'f') *suffix = s[n++];
  if (s[n]) return false;
  *num = v;
  return true;
}

/* "9.0", "12.1": 1 or 2 digits of major (not 0), '.', one digit of minor. */
static bool parse_arch_dotted(const char *s, int *num) {
  int n = 0, ma = 0;
  while (n < 3 && s[n] >= '0' && s[n] <= '9') ma = ma * 10 + (s[n++] - '0');
  if (n < 1 || n > 2 || s[0] == '0' || s[n] != '.') return false;
  if (s[n + 1] < '0' || s[n + 1] > '9' || s[n + 2]) return false;
  *num = ma * 10 + (s[n + 1] - '0');
  return true;
}

bool cg_arch_parse(const char *name, int *num, char *suffix) {
  int v = 0;
  char sfx = 0;
  bool ok;
  if (!name) return false;
  if (strncmp(name, "sm_", 3) == 0)
    ok = parse_arch_digits(name + 3, &v, &sfx);
  else if (strncmp(name, "compute_", 8) == 0)
    ok = parse_arch_digits(name + 8, &v, &sfx);
  else if (strchr(name, '.'))
    ok = parse_arch_dotted(name, &v);
  else
    ok = parse_arch_digits(name, &v, &sfx);
  if (ok && num) *num = v;
  if (ok && suffix) *suffix = sfx;
  return ok;
}

bool cg_target_from_arch(const char *arch, cg_target *out) {
  int v = 0;
  if (!out || !cg_arch_parse(arch, &v, NULL)) return false;
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
  out->math = KF_MATH_DEFAULT;
  out->knobs = core_knobs_quiet();
  return true;
}
