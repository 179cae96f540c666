/* program.c - a plan's generated code: CUDA C and compiled images per kernel.
 * Owned by src/codegen. */
#include <stdlib.h>

#include "core/plan.h"

void cg_program_free(struct cg_program *code) { free(code); }
