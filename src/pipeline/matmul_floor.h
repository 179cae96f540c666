/* matmul_floor.h - what a plan's matrix products can gain, for the matmul
 * choice (matmul_floor.c): the least time its template plan can take, and
 * the sizes under which timing cannot pay. */
#ifndef KF_PIPELINE_MATMUL_FLOOR_H
#define KF_PIPELINE_MATMUL_FLOOR_H

#include <stdbool.h>

#include "pipeline/pipeline.h"

/* A library call whose heuristic's first candidate takes less than this
 * is not timed with its other candidates (docs/matmul.md). */
#define PL_CAND_MIN_MS 0.020
/* A template plan that could save less than this per call is neither
 * compiled nor timed (docs/matmul.md, "cannot pay"). */
#define PL_TEMPLATE_MIN_GAIN_MS 0.005

typedef struct pl_mm_floor {
  double ms;    /* the template plan's least time: its products at their ceilings */
  double gflop; /* the products' work, summed */
  double rate;  /* GFLOP/s per SM the floor amounts to */
  int sms;
} pl_mm_floor;

/* The floor of plan's template plan (the library kernels' products as
 * template kernels, everything else free); false when the device is
 * unknown. */
bool pl_template_floor(kf_plan *plan, pl_mm_floor *out);

#endif
