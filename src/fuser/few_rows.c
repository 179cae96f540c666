/* few_rows.c - the kind rule for reductions over a suffix of few, long
 * rows: planned as reduce kernels (split over many blocks per row) rather
 * than row kernels (a block, or a cluster, per row). */
#include "fuser/few_rows.h"

/* A row group with no full-size dependent (no value needs the row's
 * reduction per element: a plain sum, mean, max or min with a prologue and
 * a per-row epilogue) computes the same in the contiguous reduce kernel,
 * which splits each row over many blocks; the row kernel gives each row a
 * block (8 rows of 2^24 f32: 8 blocks on 8 of 132 SMs). Taken when the
 * rows are too few to fill the GPU (fewer than 4 blocks per SM) and long
 * enough for a split (8192 elements: 4 steps of 8 elements for 256
 * threads). The rule depends on shapes only. */
bool fuse_few_long_rows(const fuse_options *opt, int rank, const int64_t *shape, uint8_t mask) {
  int64_t rows = 1, cols = 1;
  for (int i = 0; i < rank; i++) {
    if (mask & (1u << i))
      cols *= shape[i];
    else
      rows *= shape[i];
  }
  return rows < 4 * (int64_t)opt->sm_count && cols >= 8192;
}
