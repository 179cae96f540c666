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

#endif
