/* codegen.h - from a planned launch to CUDA C: the contract between code
 * generation (src/codegen), compilation (src/runtime/nvrtc, caches) and
 * launching (src/runtime): the target, a launch's parameters and its
 * generated code. The functions are emit.h's and target.h's. */
#ifndef KF_CODEGEN_H
#define KF_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "core/knobs.h"
#include "fuser/plan.h"

/* What code is generated for. */
typedef struct cg_target {
  int cc_major, cc_minor; /* 9, 0 for sm_90 */
  int sm_count;           /* to size grid-stride grids; 132 on an H200 */
  int max_threads_per_sm; /* 2048 */
  int max_smem_per_block; /* opt-in maximum, bytes (227 KB on sm_90) */
  bool grid_dep;          /* kernels start with kf_grid_dep_sync (true; the
                             plan's kf_options.pdl) */
  uint32_t max_grid;      /* most blocks of one launch's 1-D grid: CG_MAX_GRID
                             (0 means that too); tests lower it to exercise
                             the block-stride loops on small shapes */
  kf_math math;           /* the device functions' math policy (the plan's
                             kf_options.math; KF_MATH_DEFAULT) */
  /* The tuning knobs (core/knobs.def) the code is generated with: code
   * generation reads them here, never the environment. */
  const core_knobs *knobs;
} cg_target;

/* The hardware's limit on gridDim.x (2^31 - 1 on every arch since sm_30). */
#define CG_MAX_GRID 2147483647u

/* The arch names accepted, for messages. */
#define CG_ARCH_FORMS "expected sm_XY, sm_XYa, sm_XYf, compute_XY, XY or X.Y, e.g. sm_90"

/* One device-memory parameter of a launch, in kernel-signature order. Every
 * kernel parameter is a pointer: shapes are compile-time constants of the
 * source, so a graph with other shapes is another kernel. */
typedef struct cg_param {
  int32_t value;  /* the graph value the pointer addresses */
  bool written;   /* the kernel stores to it */
} cg_param;

/* A tensor-map parameter of a launch (the Hopper kernels' TMA operands:
 * the sm_90 matmul's and the sm_90 attention's): the runtime encodes it
 * with cuTensorMapEncodeTiled from the bound address of parameter `value`
 * each time the addresses are bound, and passes it by value after the
 * pointers. 2-D or 3-D, 128-byte swizzle, elements past the tensor read
 * as zeros. */
#define CG_MAX_TMAPS 3
typedef struct cg_tmap {
  int32_t value;       /* the graph value (one of the launch's params) */
  kf_dtype dtype;      /* its elements' */
  uint64_t dims[3];    /* elements, innermost first */
  uint64_t strides[2]; /* bytes between consecutive indices of dims 1 and 2 */
  uint32_t box[3];     /* the box one copy brings, innermost first */
  int rank;            /* 2 or 3 */
} cg_tmap;

/* The generated code of one launch (one plan launch: a kernel, or a
 * horizontal pack of several). */
typedef struct cg_launch_src {
  char *source;        /* complete CUDA C translation unit, NUL-terminated */
  char entry[64];      /* extern "C" __global__ function name */
  cg_param *params;
  int32_t n_params;
  uint32_t grid;       /* blocks (1-D grid) */
  uint32_t block;      /* threads per block (1-D) */
  uint32_t smem_bytes; /* dynamic shared memory; > 48 KB needs the opt-in */
  int64_t max_offset;  /* largest element offset used; decides index width */
  bool index64;        /* 64-bit index arithmetic was needed */
  int vec_bytes;       /* widest vector access emitted (16, 8, 4 or elem size) */
  /* The entry takes ONE parameter, a struct of n_params pointers in params
   * order (`const __grid_constant__ kf_params_<n> P`): launch it with
   * kernelParams = { &ptrs[0] }, ptrs the contiguous array of the n_params
   * device pointers. Set for horizontal launches with shared bodies, whose
   * params may repeat a value (one entry per part and pointer). */
  bool packed_params;
  /* The kernel strides over its work by gridDim.x (a staged row kernel):
   * the runtime launches min(grid, resident blocks per SM x SMs) blocks,
   * from the occupancy of the loaded kernel; any grid is correct. */
  bool persistent;
  /* The kernel prefetches rows ahead into L2 by the module global
   * `kf_l2pf_rows` (an int: how many rows ahead; 0, as loaded, turns it
   * off): the runtime sets it at load time from the kernel's resident
   * blocks (templates/common.cuh, docs/runtime.md). */
  bool l2_prefetch;
  /* Every block starts with kf_grid_dep_sync (templates/common.cuh): the
   * runtime may launch it with programmatic dependent launch. As
   * cg_target.grid_dep asked. */
  bool grid_dep;
  kf_math math; /* cg_target.math: the policy the source is written for */
  /* A library call (fuse_kernel.library), not a kernel: source is a comment
   * naming it, nothing is compiled, and params are the call's operands in
   * the order a, b, [bias], [c], out (the gemm says which are present). */
  bool library;
  /* Tensor maps after the pointer parameters (`const __grid_constant__
   * kf_tmap kf_tm<i>`), in order. */
  cg_tmap tmaps[CG_MAX_TMAPS];
  int n_tmaps;
  /* Compiled for the arch-specific target (sm_90a rather than sm_90):
   * the source uses wgmma and setmaxnreg (the sm_90 matmul and
   * attention kernels). */
  bool arch_specific;
  /* Blocks per thread block cluster (__cluster_dims__ in the source), 0 or
   * 1 for none: a persistent launch's grid stays a multiple of it. */
  int cluster;
  /* Resident blocks per SM the source asks of ptxas (__launch_bounds__'
   * second argument), 0 for none: the tensor-core templates fix their
   * register cap and tile memory by it, so a kernel resident that many
   * times is as resident as its template is designed to be. */
  int min_blocks;
} cg_launch_src;

#endif
