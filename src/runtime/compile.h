/* compile.h - NVRTC for a generated program, through the caches
 * (compile.c). */
#ifndef KF_RUNTIME_COMPILE_H
#define KF_RUNTIME_COMPILE_H

#include <stddef.h>

#include "codegen/program.h"

/* Compiles every launch's src.source to prog->arch (set, normalized) on
 * the context's thread pool, through its memory and disk caches; fills
 * image, origin, compile_ms, status and prog->stats (but compile_ms, which
 * the caller measures). On failure returns the first failing launch's
 * status and writes the NVRTC log and numbered source into err. */
kf_status rt_compile_program(kf_ctx *ctx, cg_program *prog, char *err, size_t errsize);

enum { RT_COMPILE_MAX_PROGRAMS = 4 };
/* rt_compile_program for n_progs programs (at most RT_COMPILE_MAX_PROGRAMS)
 * in one batch of the pool, every program's launches longest source first:
 * a second program's kernels compile beside the first's instead of after
 * them. status[p] and errs[p] (errsize bytes) are program p's result, as
 * rt_compile_program would return and write it; one program's failure
 * leaves the others compiled. side, when not NULL, is one more job of the
 * batch, started first: side(side_arg) runs on one of the pool's threads
 * (or the caller's) while the others compile, and must be thread-safe
 * against them. */
void rt_compile_programs(kf_ctx *ctx, cg_program *const *progs, int n_progs, kf_status *status,
                         char *const *errs, size_t errsize, void (*side)(void *), void *side_arg);

#endif
