// pointwise.cu - one iteration space of {{NUMEL}} elements (every output has
// that many), computed by a grid-stride loop over groups of W consecutive
// elements: operands proved contiguous are loaded W at a time (16 bytes
// where possible) before the lane loop, the others per lane by index
// arithmetic; outputs are stored W at a time. The vector path runs only when
// every vector-accessed pointer is aligned (a uniform run-time branch); one
// scalar loop (W = 1) takes the tail, or everything when unaligned, so the
// body is compiled W + 1 times, not W + 2. A generic part (one body shared
// by identical parts of a horizontal launch) gets NUMEL and BLOCKS as the
// run-time arguments (the sizes hole declares them).
// Holes: fn, IDX, NUMEL, W, THREADS, BLOCKS, sizes, params, args, decl, pre,
// body, store, aligned.
template <int W>
KF_INLINE void {{fn}}_elems({{IDX}} i, {{params}}) {
{{decl}}  {
    const {{IDX}} e = i;
    (void)e;
{{pre}}  }
#pragma unroll
  for (int j = 0; j < W; j++) {
    const {{IDX}} e = i + j;
    (void)e;
{{body}}  }
{{store}}}

KF_INLINE void {{fn}}(unsigned bid, {{sizes}}{{params}}) {
  if (threadIdx.x >= {{THREADS}}) return;
  const {{IDX}} stride = ({{IDX}}){{BLOCKS}} * {{THREADS}};
  const {{IDX}} tid = ({{IDX}})bid * {{THREADS}} + threadIdx.x;
  {{IDX}} i0 = 0;
  if ({{W}} > 1 && {{aligned}}) {
    const {{IDX}} nv = {{NUMEL}} / {{W}};
    for ({{IDX}} v = tid; v < nv; v += stride) {{fn}}_elems<{{W}}>(v * {{W}}, {{args}});
    i0 = nv * {{W}};
  }
  for ({{IDX}} i = i0 + tid; i < {{NUMEL}}; i += stride) {{fn}}_elems<1>(i, {{args}});
}
