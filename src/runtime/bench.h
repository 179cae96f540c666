/* bench.h - host and device timing of repeated runs (bench.c). */
#ifndef KF_RUNTIME_BENCH_H
#define KF_RUNTIME_BENCH_H

#include "runtime/rt.h"

/* What kf_plan_benchmark does (kfuse.h), for the plan whose runtime part is rp
 * (the pipeline's entry point, pipeline/run.c, hands it that part). */
kf_status rt_plan_benchmark(rt_plan *rp, const kf_tensor *inputs, int n_inputs,
                            const kf_tensor *outputs, int n_outputs, void *stream,
                            const kf_bench_options *opt, kf_bench_result *out);

#endif
