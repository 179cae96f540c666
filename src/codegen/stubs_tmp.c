/* stubs_tmp.c - TEMPORARY: row, reduce and matmul emitters being written. */
#include <stdio.h>

#include "codegen/cg_internal.h"

#define STUB(fn)                                                                   \
  kf_status fn(cg_emit_args *a) {                                                  \
    snprintf(a->err, a->errsize, "%s: not generated yet", a->k->name);             \
    return KF_ERR_UNSUPPORTED;                                                      \
  }
STUB(cg_plan_matmul)
STUB(cg_emit_matmul)
