// row_staged.cu - the row kernel of row.cu (a block per row, the row held in
// registers) with its rows staged through shared memory, on sm_90: the grid
// is persistent (the runtime launches as many blocks as are resident, each
// striding over rows by gridDim.x) and thread 0 starts the bulk copies of
// the block's next rows (one cp.async.bulk per held input, {{fn}}_stage,
// completing on the stage's mbarrier), so that they are in flight while the
// block reduces and stores the current row. With STAGES = 2 the copy of the
// row after next starts at the top of each row, into the other stage; with
// 1, the row function starts the next row's copy once every thread has the
// current row in registers (after a barrier). Without staging a block has
// no load in flight between its rows.
// Holes: as row.cu, plus STAGES, SLEEP (ns between waits) and stage (the shared buffers, the
// mbarriers and {{fn}}_stage).
{{stage}}
template <int W>
KF_INLINE void {{fn}}_row({{IDX}} r, int lane, int slot, {{params}}) {
  enum { G = {{G}}, COLS = {{COLS}}, NV = (COLS + G * W - 1) / (G * W),
         FULL = COLS % (G * W) == 0 };
{{body}}}

{{fallback}}
KF_INLINE void {{fn}}(unsigned bid, {{params}}) {
  const int lane = threadIdx.x;
  if (!({{W}} > 1 && {{aligned}})) { // unaligned: no staging, one element per access
    for ({{IDX}} r = bid; r < {{ROWS}}; r += ({{IDX}})gridDim.x) {{fallback_call}};
    return;
  }
  if (threadIdx.x == 0)
    for (int s = 0; s < {{STAGES}}; s++) kf_mbar_init(&{{fn}}_bar[s]);
  __syncthreads();
  if (threadIdx.x == 0) {{fn}}_stage(bid, 0, {{args}});
  unsigned i = 0;
  for ({{IDX}} r = bid; r < {{ROWS}}; r += ({{IDX}})gridDim.x, i++) {
    const int slot = {{STAGES}} == 2 ? (int)(i & 1) : 0;
    if ({{STAGES}} == 2 && threadIdx.x == 0) {{fn}}_stage(r + ({{IDX}})gridDim.x, slot ^ 1, {{args}});
    // the k-th use of a stage's barrier completes its phase of parity k & 1
    kf_mbar_wait<{{SLEEP}}>(&{{fn}}_bar[slot], ({{STAGES}} == 2 ? i >> 1 : i) & 1);
    {{fn}}_row<{{W}}>(r, lane, slot, {{args}});
  }
}
