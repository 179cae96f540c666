/* buf.h - the growable string generated code is written into, and small
 * integer helpers (buf.c). */
#ifndef KF_CG_BUF_H
#define KF_CG_BUF_H

#include <stdint.h>

#include "core/strbuf.h"

/* Generated source is written into the library's growing string
 * (src/core/strbuf.h); these are its names in codegen. */
typedef core_str cg_buf;
#define cg_puts core_str_puts
#define cg_putn core_str_putn
#define cg_printf core_str_printf
#define cg_vprintf core_str_vprintf
#define cg_buf_free core_str_free
#define cg_buf_take core_str_take
#define cg_use core_str_use

/* The guard an `align` buffer of " && kf_aligned(...)" terms gives (its
 * text past the first " && ", or "true" when empty), through cg_use. */
const char *cg_use_aligned(cg_buf *into, const cg_buf *align);
/* Integer helpers: the lesser of two, and a / b rounded up (b > 0). */
int64_t cg_min64(int64_t a, int64_t b);
int64_t cg_ceil_div(int64_t a, int64_t b);

#endif
