/* program.h - struct cg_program: a plan's generated code and, per launch,
 * the compiled CUBIN and where it came from. Emitted by codegen, compiled
 * by the runtime (rt_compile_program, runtime/compile.h), both driven by
 * kf_plan_compile (src/pipeline/pipeline.c). */
#ifndef KF_CG_PROGRAM_H
#define KF_CG_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/codegen.h"
#include "kfuse.h"

typedef enum cg_origin {
  CG_COMPILED = 0, /* NVRTC ran for it */
  CG_MEM_HIT,      /* from the context's memory cache (or waited for) */
  CG_DISK_HIT      /* from the disk cache */
} cg_origin;

typedef struct cg_program_launch {
  cg_launch_src src; /* generated code, owned (cg_launch_src_free) */
  void *image;       /* CUBIN, owned; NULL until compiled */
  size_t image_size;
  cg_origin origin;
  bool cache_hit;          /* origin != CG_COMPILED */
  double compile_ms;       /* this launch's time in cache lookups and NVRTC */
  double emit_ms;          /* its code generation */
  uint64_t key_hi, key_lo; /* its kernel cache key (0 for a library call) */
  kf_status status;        /* of its compile */
  char *log;               /* NVRTC log of a failed compile, owned; else NULL */
  int lib_cand;            /* a library call: the cuBLASLt candidate chosen (0: first) */
  char symbol[64];         /* the function to look up in image when it is an alike
                              launch's (runtime/compile_alike.c); "": src.entry */
} cg_program_launch;

struct cg_program {
  char arch[16]; /* normalized: "sm_90" */
  int n_launches;
  cg_program_launch *launches;
  kf_compile_stats stats;
};
typedef struct cg_program cg_program;

/* A program of n zeroed launches; NULL on out of memory. */
cg_program *cg_program_new(int n_launches);
/* Frees the program, its sources, images and logs. NULL: no-op. */
void cg_program_free(struct cg_program *code);

#endif
