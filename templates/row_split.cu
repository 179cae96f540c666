// row_split.cu - row kernel for rows too long for one block's registers:
// {{ROWS}} rows of {{SPLIT}} x {{COLS}} columns, each row held by a thread block
// cluster of {{SPLIT}} blocks (sm_90, __cluster_dims__ on the entry), block
// rank q holding columns q * {{COLS}} .. + {{COLS}} - 1 in registers. Each
// reduction is a block reduction of the block's columns, then a cluster one:
// every block reads the {{SPLIT}} block results from the blocks' shared
// memory (distributed shared memory) and combines them in rank order, so
// every block of the cluster gets the same bits. Each element is read from
// memory once, where the looped form reads the row once per phase (the
// second read misses L2 when many long rows are in flight).
// Cluster c works on rows c, c + {{BLOCKS}} / {{SPLIT}}, ...; the unaligned
// fallback runs whole rows in the rank 0 block, one element per access.
// No block leaves before the others are done reading its shared memory (the
// cluster barrier at the end).
// Holes: fn, IDX, ROWS, COLS (the columns of one block), SPLIT, G, THREADS,
// BLOCKS, W, params, args, body, aligned, fallback, fallback_call.
template <int W>
KF_INLINE void {{fn}}_row({{IDX}} r, int lane, int kf_cb, {{params}}) {
  enum { G = {{G}}, COLS = {{COLS}}, NV = (COLS + G * W - 1) / (G * W),
         FULL = COLS % (G * W) == 0 };
{{body}}}

{{fallback}}
KF_INLINE void {{fn}}(unsigned bid, {{params}}) {
  const int lane = threadIdx.x;
  const int rank = (int)kf_cluster_rank();
  const bool vec = {{W}} > 1 && {{aligned}};
  for ({{IDX}} r = ({{IDX}})(bid / {{SPLIT}}); r < {{ROWS}}; r += ({{IDX}})({{BLOCKS}} / {{SPLIT}})) {
    if (vec)
      {{fn}}_row<{{W}}>(r, lane, rank * {{COLS}}, {{args}});
    else if (rank == 0)
      {{fallback_call}};
  }
  kf_cluster_sync();
}
