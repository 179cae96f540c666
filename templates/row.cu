// row.cu - row kernel: {{ROWS}} rows of {{COLS}} columns, each row reduced by
// a group of {{G}} threads ({{RPB}} rows per block: a warp per row for short
// rows, a block per row for long ones), grid-stride over rows. Each thread
// owns chunks of W consecutive columns: chunk kk covers columns
// (kk * G + lane) * W .. + W - 1. When the row fits in registers
// ({{HOLD}}), the full-row inputs are loaded once into x<v>[NV][W] and every
// phase reads registers; otherwise each phase re-reads them (L2 helps).
// Phases: one per reduction, in order (warp shuffles, then shared memory
// across warps), then the outputs (W per store; per-row outputs by lane 0).
// W > 1 only when every vector-accessed pointer is aligned (checked at run
// time, uniformly); otherwise the fallback <fn>_row1 runs the row one
// element per access, looped (compact: it runs rarely, must compile fast).
// Holes: fn, IDX, ROWS, COLS, G, RPB, THREADS, BLOCKS, LAUNCH, W, HOLD,
// params, args, body, aligned, fallback, fallback_call.
template <int W>
KF_INLINE void {{fn}}_row({{IDX}} r, int lane, {{params}}) {
  enum { G = {{G}}, COLS = {{COLS}}, NV = (COLS + G * W - 1) / (G * W),
         FULL = COLS % (G * W) == 0, kf_cb = 0 /* first column: the block holds the row */ };
{{body}}}

{{fallback}}
KF_INLINE void {{fn}}(unsigned bid, {{params}}) {
  if (threadIdx.x >= {{THREADS}}) return;
  const int lane = threadIdx.x % {{G}};
  const int grp = threadIdx.x / {{G}};
  const bool vec = {{W}} > 1 && {{aligned}};
  for ({{IDX}} r = ({{IDX}})bid * {{RPB}} + grp; r < {{ROWS}}; r += ({{IDX}}){{BLOCKS}} * {{RPB}}) {
    if (vec)
      {{fn}}_row<{{W}}>(r, lane, {{args}});
    else
      {{fallback_call}};
  }
}
