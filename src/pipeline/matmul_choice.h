/* matmul_choice.h - the pipeline's choice for matmul kernels (matmul_choice.c): cuBLASLt
 * library calls or kfuse's template kernels. */
#ifndef KF_PIPELINE_MATMUL_CHOICE_H
#define KF_PIPELINE_MATMUL_CHOICE_H

#include <stdbool.h>

#include "pipeline/pipeline.h"

/* The library is absent or refused a product (the load said
 * KF_ERR_UNSUPPORTED): plan->fuse and plan->code become the template
 * plan, with one log line; the caller loads again. */
kf_status pl_matmul_fallback(kf_plan *plan);
/* After a load with library calls: each call's cuBLASLt candidates and
 * the whole plan against its template form, timed once (KFUSE_MATMUL=auto;
 * =library times the candidates only) or read back from the disk cache;
 * the choice goes into the decision log. *reload: the template won and
 * plan->fuse, plan->code changed, so the caller loads again. Failures to
 * time keep the library with the heuristic's first candidates (logged),
 * except running out of memory: KF_ERR_OUT_OF_MEMORY, the message in
 * plan->errmsg. */
kf_status pl_matmul_choose(kf_plan *plan, bool *reload);

#endif
