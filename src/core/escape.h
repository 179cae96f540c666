/* escape.h - text from files made safe for terminals, logs and JSON (the
 * one escaper of the code base; kf_escape in kfuse.h states the rules). */
#ifndef KF_CORE_ESCAPE_H
#define KF_CORE_ESCAPE_H

#include "core/strbuf.h"
#include "kfuse.h"

/* Appends text escaped in style to b (an allocation failure latches b->oom,
 * as every core_str write does). */
void core_str_escaped(core_str *b, const char *text, kf_escape_style style);

/* text in KF_ESCAPE_LINE style into buf (cut to fit), returned: for a path
 * or name inside a message. */
const char *core_escaped(char *buf, size_t size, const char *text);

#endif
