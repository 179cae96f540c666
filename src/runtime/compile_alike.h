/* compile_alike.h - launches of one program whose sources differ only in
 * the kernel's own name (the plan's kernel index in "kf_k3_row" and its
 * part functions): compiled once, the others load the same image. */
#ifndef KFUSE_RUNTIME_COMPILE_ALIKE_H
#define KFUSE_RUNTIME_COMPILE_ALIKE_H

#include "codegen/program.h"

/* For each launch, the first launch of prog alike to it (itself when it is
 * the first, or a library call); NULL on out of memory (then every launch
 * compiles on its own). Free with free(). */
int *rt_alike_launches(const cg_program *prog);

/* Gives duplicate launch i a copy of its representative's image and the
 * representative's symbol to look up in it; KF_ERR_OUT_OF_MEMORY when the
 * copy cannot be made. */
kf_status rt_alike_adopt(cg_program *prog, int i, int rep);

#endif
