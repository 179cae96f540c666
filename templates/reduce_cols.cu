// reduce_cols.cu - reduction over a strided axis (inner == {{INNER}} > 1):
// {{OUTER}} x {{INNER}} outputs, each over {{RED}} elements {{INNER}} apart.
// A block of 32 x 8 threads covers 32 consecutive outputs (so loads are
// coalesced along inner); its 8 thread rows split the reduced axis, and
// their partials are combined through shared memory in a fixed order
// (deterministic). The epilogue runs in thread row 0.
// Holes: fn, IDX, OUTER, RED, INNER, NB, LAUNCH, params, decl, accumulate,
// combine, epilogue.
KF_INLINE void {{fn}}(unsigned bid, {{params}}) {
  if (threadIdx.x >= 256) return;
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const {{IDX}} o = ({{IDX}})bid / {{NB}};
  const {{IDX}} n = ({{IDX}})(bid % {{NB}}) * 32 + tx;
  const bool live = n < {{INNER}};
{{decl}}
  if (live) {
#pragma unroll 4
    for ({{IDX}} k = ty; k < {{RED}}; k += 8) {
{{accumulate}}    }
  }
{{combine}}
  if (ty == 0 && live) {
{{epilogue}}  }
}
