// reduce_cols.cu - reduction over a strided axis (inner == {{INNER}} > 1):
// {{OUTER}} x {{INNER}} outputs, each over {{RED}} elements {{INNER}} apart.
// A block of TX x TY threads (256, or fewer: the threads past TX * TY are
// idle, live false) covers TX * LANES consecutive outputs (a tile):
// each thread owns LANES adjacent outputs, loaded W at a time (16-byte loads
// when W = LANES, coalesced along inner); its TY thread rows split the
// block's share of the reduced axis. Slices are combined through shared
// memory in a fixed order. When the tiles are too few to fill the GPU, the
// reduced axis is split over SPLIT blocks per tile: each stores its partials,
// and the last block of the tile (an atomic counter) combines them in a fixed
// order (deterministic), then resets the counter for the next launch. The
// epilogue runs in thread row 0 of the block that finishes a tile.
// W > 1 only when every vector-accessed pointer is aligned (checked at run
// time, uniformly); W = 1 reads the same LANES outputs one at a time. Only
// the accumulation loop is written in both widths (the W = 1 copy not
// unrolled); the combine, split and epilogue code is compiled once, so the
// unaligned path costs little compile time.
// The aligned loop is unrolled UNROLL times (8 for scalar lanes, so that
// more loads are in flight; fewer for heavy bodies); the order is the same.
// Holes: fn, IDX, OUTER, RED, INNER, LANES, TX, TY, NT, SPLIT, CHUNK, UNROLL,
// THREADS, LAUNCH, live, params, args, globals, decl, pre_decl, pre, accumulate,
// combine, partial_store, partial_load, epilogue, aligned.
{{globals}}
KF_INLINE void {{fn}}_cols({{BID}} bid, bool vec, {{params}}) {
  enum { TX = {{TX}}, TY = {{TY}}, LANES = {{LANES}} };
  __shared__ bool kf_last;
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
  const {{IDX}} o = ({{IDX}})bid / ({{NT}} * {{SPLIT}});
  const {{IDX}} t = ({{IDX}})(bid / {{SPLIT}}) % {{NT}};
  const {{IDX}} s = ({{IDX}})bid % {{SPLIT}};
  const {{IDX}} n0 = (t * TX + tx) * LANES;
  const bool live = n0 < {{INNER}}{{live}};
  const {{IDX}} k0 = s * {{CHUNK}};
  const {{IDX}} k1 = k0 + {{CHUNK}} < {{RED}} ? k0 + {{CHUNK}} : {{RED}};
  (void)k0; (void)k1;
{{decl}}
  if (vec || LANES == 1) {
    enum { W = LANES };
    if (live) {
#pragma unroll {{UNROLL}}
      for ({{IDX}} k = k0 + ty; k < k1; k += TY) {
#pragma unroll
        for (int g = 0; g < LANES / W; g++) {
{{pre_decl}}          {
            const {{IDX}} n = n0 + g * W;
            (void)n;
{{pre}}          }
#pragma unroll
          for (int j = 0; j < W; j++) {
            const int l = g * W + j;
            const {{IDX}} n = n0 + l;
            (void)n;
{{accumulate}}          }
        }
      }
    }
  } else {
    enum { W = 1 };
    if (live) {
#pragma unroll 1
      for ({{IDX}} k = k0 + ty; k < k1; k += TY) {
#pragma unroll
        for (int g = 0; g < LANES; g++) {
{{pre_decl}}          {
            const {{IDX}} n = n0 + g;
            (void)n;
{{pre}}          }
          {
            const int j = 0, l = g;
            const {{IDX}} n = n0 + l;
            (void)j;
            (void)n;
{{accumulate}}          }
        }
      }
    }
  }
  // Pass 0 combines this block's slices; with a split, the last block of
  // the tile then loads every block's partials and combines again (pass 1).
  // One copy of the combine code for both passes: less to compile.
#pragma unroll 1
  for (int pass = 0;; pass++) {
{{combine}}
    if ({{SPLIT}} == 1 || pass == 1) break;
    if (ty == 0 && live) {
#pragma unroll
      for (int l = 0; l < LANES; l++) {
{{partial_store}}      }
    }
    __threadfence();
    kf_sync<{{THREADS}}, {{LAUNCH}}>();
    if (threadIdx.x == 0) kf_last = atomicAdd(&{{fn}}_count[o * {{NT}} + t], 1u) == {{SPLIT}} - 1;
    kf_sync<{{THREADS}}, {{LAUNCH}}>();
    if (!kf_last) return;
    __threadfence();
{{partial_load}}
  }
  if ({{SPLIT}} > 1 && threadIdx.x == 0) {{fn}}_count[o * {{NT}} + t] = 0u;
  if (ty == 0 && live) {
#pragma unroll
    for (int l = 0; l < LANES; l++) {
      const {{IDX}} n = n0 + l;
      (void)n;
{{epilogue}}    }
  }
}

KF_INLINE void {{fn}}({{BID}} bid, {{params}}) {
  if (threadIdx.x >= {{THREADS}}) return;
  {{fn}}_cols(bid, {{LANES}} > 1 && {{aligned}}, {{args}});
}
