/* text.h - short text the fuser writes: names of kinds and roles, value
 * labels, byte counts, digits without printf (text.c). */
#ifndef KF_FUSER_TEXT_H
#define KF_FUSER_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "fuser/plan.h"

/* "12.0 MiB" into buf. */
const char *fuse_fmt_bytes(char *buf, size_t size, int64_t bytes);
/* Appends the decimal digits of x, or the string s, at buf[*n] (NUL kept;
 * truncated at size): the decision log formats thousands of these per
 * plan, and printf was the pass's hot spot. */
void fuse_put_int(char *buf, size_t size, size_t *n, int64_t x);
void fuse_put_str(char *buf, size_t size, size_t *n, const char *s);

/* The names of a kernel kind ("row") and of a node's role ("full"). */
const char *fuse_kind_name(fuse_kind kind);
const char *fuse_role_name(fuse_role role);
/* A value's display name: its name, or "%<index>" when unnamed. */
const char *fuse_value_label(const kf_graph *g, int32_t v, char *buf, size_t size);

#endif
