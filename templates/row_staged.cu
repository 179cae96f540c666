// row_staged.cu - the row kernel of row.cu (a block per row, the row held in
// registers) with its rows staged through shared memory, on sm_90: the grid
// is persistent (the runtime launches as many blocks as are resident, each
// striding over rows by gridDim.x), and the block's next row is copied into
// shared memory while the block reduces and stores the current one, which
// its threads load from there into registers. Two ways (row_stage.c,
// bulk_decls and thread_decls): thread 0 bulk-copies whole rows (cp.async.bulk, one per
// held input, completing on the stage's mbarrier), in STAGES buffers; or
// each thread copies its own chunks (cp.async, two buffers) and waits for
// its own copies. Without staging a block has no load in flight between
// its rows.
// Holes: as row.cu, plus STAGES, stage (the shared buffers, mbarriers and
// {{fn}}_stage), init (before the first row: the first copies), top (each
// row's copies of the row after and its wait for this one), advance (to
// the block's next row: by gridDim.x, or the next row a launch-wide counter
// hands out) and finish (the counter's reset by the last block out).
{{stage}}
template <int W>
KF_INLINE void {{fn}}_row({{IDX}} r, int lane, int slot, {{params}}) {
  enum { G = {{G}}, COLS = {{COLS}}, NV = (COLS + G * W - 1) / (G * W),
         FULL = COLS % (G * W) == 0, kf_cb = 0 /* first column: the block holds the row */ };
{{body}}}

{{fallback}}
KF_INLINE void {{fn}}(unsigned bid, {{params}}) {
  const int lane = threadIdx.x;
  if (!({{W}} > 1 && {{aligned}})) { // unaligned: no staging, one element per access
    for ({{IDX}} r = bid; r < {{ROWS}}; r += ({{IDX}})gridDim.x) {{fallback_call}};
    return;
  }
{{init}}  unsigned i = 0;
  for ({{IDX}} r = bid; r < {{ROWS}}; {{advance}}, i++) {
    const int slot = {{STAGES}} == 2 ? (int)(i & 1) : 0;
{{top}}    {{fn}}_row<{{W}}>(r, lane, slot, {{args}});
  }
{{finish}}}
