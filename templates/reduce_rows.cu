// reduce_rows.cu - reduction over contiguous elements (inner == 1): {{OUTER}}
// outputs, each the reduction of {{RED}} consecutive elements (after the
// fused prologue). A block of {{THREADS}} threads reduces a share of one
// output's elements (warp shuffles, then shared memory). When the outputs are
// too few to fill the GPU, each is split over {{SPLIT}} blocks: every block
// stores its partial, and the last block to finish (an atomic counter)
// combines the partials in a fixed order, so the result is deterministic,
// then resets the counter for the next launch. The epilogue runs once per
// output, in thread 0 of the block that finishes it.
// Holes: fn, IDX, OUTER, RED, SPLIT, CHUNK, THREADS, LAUNCH, params, globals,
// decl, accumulate, combine, partial_store, partial_load, epilogue.
{{globals}}
KF_INLINE void {{fn}}({{BID}} bid, {{params}}) {
  if (threadIdx.x >= {{THREADS}}) return;
  __shared__ float kf_smf[32];
  __shared__ double kf_smd[32];
  __shared__ int kf_smi[32];
  __shared__ long long kf_sml[32];
  __shared__ bool kf_last;
  (void)kf_smf; (void)kf_smd; (void)kf_smi; (void)kf_sml; (void)kf_last;
  const {{IDX}} o = ({{IDX}})bid / {{SPLIT}};
  const {{IDX}} s = ({{IDX}})bid % {{SPLIT}};
  const {{IDX}} k0 = s * {{CHUNK}};
  const {{IDX}} k1 = k0 + {{CHUNK}} < {{RED}} ? k0 + {{CHUNK}} : {{RED}};
  const {{IDX}} n = 0;
  (void)n;
{{decl}}
#pragma unroll 4
  for ({{IDX}} k = k0 + threadIdx.x; k < k1; k += {{THREADS}}) {
{{accumulate}}  }
{{combine}}
  if ({{SPLIT}} > 1) {
    if (threadIdx.x == 0) {
{{partial_store}}      __threadfence();
      const unsigned done = atomicAdd(&{{fn}}_count[o], 1u);
      kf_last = done == {{SPLIT}} - 1;
    }
    kf_sync<{{THREADS}}, {{LAUNCH}}>();
    if (!kf_last) return;
    __threadfence();
{{partial_load}}
{{combine}}
    if (threadIdx.x == 0) {{fn}}_count[o] = 0u;
  }
  if (threadIdx.x == 0) {
{{epilogue}}  }
}
