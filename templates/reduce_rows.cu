// reduce_rows.cu - reduction over contiguous elements (inner == 1): {{OUTER}}
// outputs, each the reduction of {{RED}} elements (after the fused
// prologue), consecutive in runs of a multiple of V = {{V}}. A block of
// {{THREADS}} threads reduces a share of one output's elements: thread t
// takes V consecutive elements at a time (k0 + t * V, then THREADS * V
// further), folding them into its accumulator in order; then warp shuffles
// and shared memory. The vector path loads the V elements at once (16-byte
// words); when a pointer is not aligned the same elements are read one at a
// time, in the same order, so both give the same bits. When the outputs are
// too few to fill the GPU, each is split over {{SPLIT}} blocks of {{CHUNK}}
// elements (a multiple of V): every block stores its partial, and the last
// block to finish (an atomic counter) combines the partials in a fixed
// order, so the result is deterministic, then resets the counter for the
// next launch. The order depends on the shape only (V, THREADS, SPLIT), not
// on dtypes or the fused prologue. The epilogue runs once per output, in
// thread 0 of the block that finishes it.
// Holes: fn, IDX, OUTER, RED, V, UNROLL, SPLIT, CHUNK, THREADS, LAUNCH,
// params, args, globals, decl, pre_decl, pre, accumulate, combine,
// partial_store, partial_load, epilogue, aligned.
{{globals}}
KF_INLINE void {{fn}}_rows({{BID}} bid, bool vec, {{params}}) {
  enum { V = {{V}} };
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
  if (vec || V == 1) {
    enum { W = V };
#pragma unroll {{UNROLL}}
    for ({{IDX}} kb = k0 + ({{IDX}})threadIdx.x * V; kb < k1; kb += {{THREADS}} * V) {
{{pre_decl}}      {
        const {{IDX}} k = kb;
        (void)k;
{{pre}}      }
#pragma unroll
      for (int j = 0; j < V; j++) {
        const {{IDX}} k = kb + j;
        (void)k;
{{accumulate}}      }
    }
  } else {
    enum { W = 1 };
#pragma unroll 1
    for ({{IDX}} kb = k0 + ({{IDX}})threadIdx.x * V; kb < k1; kb += {{THREADS}} * V) {
#pragma unroll
      for (int g = 0; g < V; g++) {
{{pre_decl}}        {
          const {{IDX}} k = kb + g;
          (void)k;
{{pre}}        }
        {
          const int j = 0;
          const {{IDX}} k = kb + g;
          (void)j;
          (void)k;
{{accumulate}}        }
      }
    }
  }
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

KF_INLINE void {{fn}}({{BID}} bid, {{params}}) {
  if (threadIdx.x >= {{THREADS}}) return;
  {{fn}}_rows(bid, {{V}} > 1 && {{aligned}}, {{args}});
}
