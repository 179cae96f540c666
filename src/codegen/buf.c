/* buf.c - small integer helpers of code generation (its strings are
 * core/strbuf.h). */
#include "codegen/buf.h"
#include "codegen/cg_internal.h"

int64_t cg_min64(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t cg_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

const char *cg_use_aligned(cg_buf *into, const cg_buf *align) {
  const char *s = cg_use(into, align);
  return *s ? s + 4 : "true";
}
