/* template.h - finding a template and filling its holes (template.c). */
#ifndef KF_CG_TEMPLATE_H
#define KF_CG_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "codegen/buf.h"

/* One named hole and its replacement. */
typedef struct cg_hole {
  const char *name;
  const char *text;
} cg_hole;

/* The text of templates/<name>: from KFUSE_TEMPLATE_DIR when set (read
 * each call, for development), else the embedded copy. malloc'd; NULL when
 * missing (err says why). */
char *cg_template_text(const char *name, char *err, size_t errsize);
/* Appends template `name` to out with every "{{hole}}" replaced. An unknown
 * hole in the template, or a missing template, is an error (false, err). */
bool cg_fill(cg_buf *out, const char *name, const cg_hole *holes, int n_holes, char *err,
             size_t errsize);

#endif
