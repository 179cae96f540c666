/* names.h - value names (names.c): their syntax and the graph's name ->
 * value map. */
#ifndef KF_IR_NAMES_H
#define KF_IR_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* Name syntax [A-Za-z_][A-Za-z0-9_.]*, at most 255 bytes. */
bool ir_name_valid(const char *name);
/* Index of a named value, or -1. */
int32_t ir_names_find(const kf_graph *g, const char *name);
/* Adds name -> v; false on OOM. The caller checked uniqueness. */
bool ir_names_insert(kf_graph *g, const char *name, int32_t v);
void ir_names_free(ir_names *names);

#endif /* KF_IR_NAMES_H */
