/* lib_launch.h - launches that are library calls (lib_launch.c): the
 * context's cuBLASLt handle, preparing, running and capturing a plan's
 * matmul kernel as one cuBLASLt call. */
#ifndef KF_RUNTIME_LIB_LAUNCH_H
#define KF_RUNTIME_LIB_LAUNCH_H

#include "runtime/rt.h"

/* KFUSE_MATMUL's values (core/knobs.def): how matmul kernels run. */
enum { RT_MATMUL_AUTO, RT_MATMUL_LIBRARY, RT_MATMUL_TEMPLATE };
/* The library's workspace in a plan with library calls: what cuBLASLt's
 * Hopper kernels ask for at most (32 MiB). */
#define RT_LIB_WS_BYTES (32ll << 20)

/* The context's cuBLASLt table and handle, created once (thread-safe).
 * KF_ERR_UNSUPPORTED with the reason when the library is absent. */
kf_status rt_lib_handle(kf_ctx *ctx, rt_state *rt, char *err, size_t errsize);
/* Prepares launch l as kernel k's library call with candidate cand (0: the
 * heuristic's first), its workspace max the plan's library workspace.
 * KF_ERR_UNSUPPORTED with the reason in err when cuBLASLt refuses it. */
kf_status rt_lib_prepare(rt_plan *rp, rt_state *rt, rt_launch *l, const fuse_kernel *k, int cand,
                         char *err, size_t errsize);
void rt_lib_free(rt_launch *l);
/* Picks the candidates for the pointers bound in l->args: the load's, or
 * (pointers less aligned than they assume) a set asked of the heuristic
 * for their alignments, kept per set (one log line for the first).
 * KF_ERR_UNSUPPORTED with the reason in err when cuBLASLt has no
 * algorithm for them: the run takes the launch's template form
 * (fallback.c). */
kf_status rt_lib_bind(rt_plan *rp, rt_launch *l, char *err, size_t errsize);
/* Enqueues the library call of l on s, with the pointers bound in l->args
 * and the candidates rt_lib_bind picked. */
kf_status rt_lib_run(rt_plan *rp, rt_launch *l, CUstream s);
/* Captures the call into a new graph (*child, the caller's) on the side
 * stream s, for graph mode's child node; records the workspace, the
 * candidate set and the algorithm it holds. */
kf_status rt_lib_capture(rt_plan *rp, rt_launch *l, CUstream s, CUgraph *child);
/* Graph mode: whether this binding runs the candidate set and algorithm
 * that l's child graph was captured with (rt_lib_capture). Where not, the
 * graph is built again rather than the child swapped in place: another
 * algorithm may launch other kernels with their own launch attributes
 * (a cluster shape, say) that an in-place update need not carry over. */
bool rt_lib_same_capture(const rt_launch *l);

#endif
