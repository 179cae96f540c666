/* tile.h - which pointwise kernels run as tiled transposes: the rule that
 * the fuser logs and code generation follows (docs/fusion.md, "Tiled
 * transposes"). */
#ifndef KF_FUSER_TILE_H
#define KF_FUSER_TILE_H

#include <stdbool.h>
#include <stdint.h>

#include "fuser/plan.h"

/* Most transposes of one kernel that get a shared-memory tile (each takes
 * up to 64 x 65 x 4 bytes); further ones are read by index arithmetic. */
#define FUSE_TILE_MAX 2
/* Both tiled extents must be at least this: a row shorter than a 32-byte
 * sector of f32 is read in whole sectors already. */
#define FUSE_TILE_MIN_EXTENT 8
/* A transpose that keeps trailing axes (perm[i] == i for the last few)
 * whose kept run is shorter than this many bytes is tiled too, the run
 * being part of the tile's element (a run this long is read in whole
 * 16-byte words by index arithmetic already). */
#define FUSE_TILE_RUN_BYTES 16
typedef struct fuse_tile {
  int n;                        /* tiled transposes; 0: a plain pointwise kernel */
  int32_t nodes[FUSE_TILE_MAX]; /* the transpose nodes, in kernel order */
  int axis;                     /* the iteration axis their operands' axis inner
                                   (below) becomes (never inner itself) */
  int kept;                     /* trailing axes the transposes keep in place (0
                                   when they move the innermost axis); the tile's
                                   axes are `axis` and inner = rank - 1 - kept */
  int64_t run;                  /* values of one tile element: the product of the
                                   kept axes' extents (1, 2 or 4) */
} fuse_tile;

/* Fills t for kernel k (t->n == 0 when it is not a tiled transpose): a
 * POINTWISE kernel of rank >= 2 whose outputs all have the iteration
 * shape, with transposes of that shape that move the innermost axis (or
 * keep a short run of trailing axes: 2 or 4 values of fewer than
 * FUSE_TILE_RUN_BYTES bytes, and move the axis above it) to iteration axis
 * b (the first such transpose's b and kept run; others are not tiled),
 * both tiled extents at least FUSE_TILE_MIN_EXTENT, a 4-byte compute
 * type (f32, f16, bf16, i32), and read only at the iteration's own element
 * (every consumer in the kernel a pointwise op of the iteration shape that
 * is itself read only there). Returns t->n > 0. */
bool fuse_tile_find(const kf_graph *g, const fuse_kernel *k, fuse_tile *t);

/* The largest tile edge t's kernel may use: 64, or 32 when 64 x 64 tiles
 * of its elements would pass the 48 KB of static shared memory a block may
 * declare (two tiles of 2-value elements, or tiles of 4-value ones). */
int fuse_tile_edge_max(const fuse_tile *t);

/* Bytes of shared memory a kernel's tiles may declare (0 when untiled). */
int64_t fuse_tile_smem(const kf_graph *g, const fuse_kernel *k);

/* Logs a "transpose-tile" decision for each kernel that is one. false on
 * OOM. */
bool fuse_tiles_log(fuse_plan *plan);

#endif
