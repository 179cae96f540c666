/* gemm_sm90.h - the Hopper matmul template (gemm_sm90.c): whether a matmul
 * kernel fits it on this target, its plan and its part function. */
#ifndef KF_CG_GEMM_SM90_H
#define KF_CG_GEMM_SM90_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/cg_internal.h"

/* Whether the matmul kernel fits the template on this target (else why
 * not, into why). */
bool cg_gemm90_fits(const cg_emit_args *a, char *why, size_t size);
/* The block tiles the template computes for an m x n x k product (one
 * block per tile, tails computed whole), and each tile's FLOPs with K
 * padded to the k-block (2 x 128 x BN x ceil64(k)): what a bound on its
 * time needs (src/pipeline/matmul_floor.c). */
int64_t cg_gemm90_tiles(int64_t m, int64_t n, int64_t k, double *tile_flops);
/* Chooses threads/blocks (part->threads, part->blocks) without emitting. */
kf_status cg_plan_gemm90(cg_emit_args *a);
/* Emits the part function once part->launch_threads is known. */
kf_status cg_emit_gemm90(cg_emit_args *a);

#endif
