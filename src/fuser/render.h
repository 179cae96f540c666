/* render.h - a plan as text, JSON and DOT (render.c), and the growable
 * string the fuser writes with. */
#ifndef KF_FUSER_RENDER_H
#define KF_FUSER_RENDER_H

#include "core/strbuf.h"
#include "fuser/plan.h"

typedef core_str fuse_sb; /* src/core/strbuf.h */
#define fuse_sb_printf core_str_printf
/* The string (the caller's), or NULL after an allocation failure. */
char *fuse_sb_finish(fuse_sb *sb);

/* Renderings for users; each returns a malloc'd string or NULL on OOM. */
char *fuse_plan_text(const fuse_plan *plan);
char *fuse_plan_json(const fuse_plan *plan);
char *fuse_plan_dot(const fuse_plan *plan);

#endif
