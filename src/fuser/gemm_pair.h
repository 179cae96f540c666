/* gemm_pair.h - the shape rules of a paired product (gemm_pair.c): two
 * matmuls of one A that the sm_90 template computes as one kernel. */
#ifndef KF_FUSER_GEMM_PAIR_H
#define KF_FUSER_GEMM_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fuser/plan.h"

/* Whether matmuls m0 and m1 of g may be one paired kernel as far as their
 * operands go: pairs asked for (opt->gemm_pair), the same A value, B of
 * the same shape and dtype, and both what the sm_90 template takes (bf16
 * or f16, no batch, K and N multiples of 8, cg_gemm90_fits). false with
 * the reason in why. The set's own rules (neither product written, an
 * epilogue that combines them) are legal.c's. */
bool fuse_pair_fits(const kf_graph *g, const fuse_options *opt, int32_t m0, int32_t m1, char *why,
                    size_t size);

#endif
