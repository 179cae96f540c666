/* text.c - short text the fuser writes: kind and role names, value labels,
 * byte counts, and digits appended without printf. */
#include "fuser/text.h"

#include "ir/ir.h"

const char *fuse_kind_name(fuse_kind kind) {
  switch (kind) {
    case FK_POINTWISE:
      return "pointwise";
    case FK_ROW:
      return "row";
    case FK_REDUCE:
      return "reduce";
    case FK_MATMUL:
      return "matmul";
    case FK_ATTENTION:
      return "attention";
  }
  return "?";
}

const char *fuse_role_name(fuse_role role) {
  switch (role) {
    case FUSE_ROLE_FREE:
      return "free";
    case FUSE_ROLE_FULL:
      return "full";
    case FUSE_ROLE_REDUCED:
      return "reduced";
  }
  return "?";
}

void fuse_put_int(char *buf, size_t size, size_t *n, int64_t x) {
  char tmp[24];
  int k = 0;
  uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
  do tmp[k++] = (char)('0' + u % 10);
  while ((u /= 10) && k < 23);
  if (x < 0 && *n + 1 < size) buf[(*n)++] = '-';
  while (k > 0 && *n + 1 < size) buf[(*n)++] = tmp[--k];
  buf[*n] = '\0';
}

void fuse_put_str(char *buf, size_t size, size_t *n, const char *s) {
  while (*s && *n + 1 < size) buf[(*n)++] = *s++;
  buf[*n] = '\0';
}

const char *fuse_value_label(const kf_graph *g, int32_t v, char *buf, size_t size) {
  size_t n = 0;
  if (size == 0) return buf;
  buf[0] = '\0';
  if (g && v >= 0 && v < g->n_nodes && g->nodes[v].name) {
    fuse_put_str(buf, size, &n, g->nodes[v].name);
  } else {
    fuse_put_str(buf, size, &n, "%");
    fuse_put_int(buf, size, &n, v);
  }
  return buf;
}

const char *fuse_fmt_bytes(char *buf, size_t size, int64_t bytes) {
  static const char *const units[] = {" B", " KiB", " MiB", " GiB", " TiB"};
  size_t n = 0;
  if (size == 0) return buf;
  int u = 0;
  int64_t scale = 1;
  while (u < 4 && bytes / scale >= 1024) scale *= 1024, u++;
  if (u == 0) {
    fuse_put_int(buf, size, &n, bytes);
  } else { /* one decimal, rounded to nearest */
    int64_t tenths = (bytes / scale) * 10 + ((bytes % scale) * 10 + scale / 2) / scale;
    fuse_put_int(buf, size, &n, tenths / 10);
    fuse_put_str(buf, size, &n, ".");
    fuse_put_int(buf, size, &n, tenths % 10);
  }
  fuse_put_str(buf, size, &n, units[u]);
  return buf;
}
