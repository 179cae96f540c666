/* render.h - a plan as text, JSON and DOT (render.c; the entry points are in
 * plan.h), and the growable string the fuser writes with. */
#ifndef KF_FUSER_RENDER_H
#define KF_FUSER_RENDER_H

#include "core/strbuf.h"

typedef core_str fuse_sb; /* src/core/strbuf.h */
#define fuse_sb_printf core_str_printf
/* The string (the caller's), or NULL after an allocation failure. */
char *fuse_sb_finish(fuse_sb *sb);

#endif
