/* yaml_node.h - one entry of a graph file's nodes list, read and built
 * (yaml_node.c). */
#ifndef KF_IR_YAML_NODE_H
#define KF_IR_YAML_NODE_H

#include <stdbool.h>

#include "ir/yaml_load.h"

/* Reads and builds one entry of `nodes`. */
bool ir_yl_node(ir_yload *L, const ir_ynode *node);

#endif /* KF_IR_YAML_NODE_H */
