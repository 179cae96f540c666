// row_staged.cu - the row kernel of row.cu (a block per row, the row held in
// registers) with its rows staged through shared memory, on sm_90: the grid
// is persistent (the runtime launches as many blocks as are resident, each
// striding over rows by gridDim.x) and thread 0 starts the bulk copy of the
// block's next row (one cp.async.bulk per held input, {{fn}}_stage) as soon
// as every thread has the current row in registers, so that the next row's
// bytes are in flight while the block reduces and stores this one. Without
// it a block has no load in flight between its rows; bf16 rows (16 KB, 4
// blocks per SM) then left DRAM idle for part of every row.
// Holes: as row.cu, plus stage (the shared buffers, the mbarrier and
// {{fn}}_stage).
{{stage}}
template <int W>
KF_INLINE void {{fn}}_row({{IDX}} r, int lane, {{params}}) {
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
  if (threadIdx.x == 0) kf_mbar_init(&{{fn}}_bar);
  __syncthreads();
  if (threadIdx.x == 0) {{fn}}_stage(bid, {{args}});
  unsigned parity = 0;
  for ({{IDX}} r = bid; r < {{ROWS}}; r += ({{IDX}})gridDim.x) {
    kf_mbar_wait(&{{fn}}_bar, parity);
    parity ^= 1;
    {{fn}}_row<{{W}}>(r, lane, {{args}});
  }
}
