/* templates.h - the CUDA templates embedded at build time (see
 * cmake/embed_templates.cmake), looked up by file name. */
#ifndef KF_CG_TEMPLATES_H
#define KF_CG_TEMPLATES_H

#include <stddef.h>

typedef struct cg_template {
  const char *name; /* "pointwise.cu" */
  const char *text; /* NUL-terminated */
  size_t size;      /* bytes, without the NUL */
} cg_template;

/* Terminated by an entry whose name is NULL. */
extern const cg_template cg_templates[];

#endif
