// matmul.cu - a simple tiled GEMM: {{BATCH}} x ({{M}} x {{K}}) x ({{K}} x {{N}}),
// one 16x16 output tile per block of 256 threads, operands staged through
// shared memory 16 columns of K at a time, accumulated in {{ACC}} (f32 for
// f16/bf16/f32), with the operands' pointwise prologue applied on load and
// the epilogue fused before the store. NOT YET AT TENSOR-CORE SPEED: it is
// correct and general (batch broadcasting, any shape), not fast. A paired
// product (two products of one A, docs/matmul.md) stages its second B in
// kf_bs2 and accumulates it in acc2 (pair_decl, load_b2 and pair_acc; empty
// otherwise): the form it takes off the sm_90 template.
// Holes: fn, IDX, BATCH, M, N, K, MT, NT, ACC, LAUNCH, params, load_a,
// load_b, pair_decl, load_b2, pair_acc, epilogue.
KF_INLINE void {{fn}}({{BID}} bid, {{params}}) {
  if (threadIdx.x >= 256) return;
  __shared__ {{ACC}} kf_as[16][17];
  __shared__ {{ACC}} kf_bs[16][17];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const {{IDX}} bt = ({{IDX}})bid / ({{MT}} * {{NT}});
  const {{IDX}} rem = ({{IDX}})bid % ({{MT}} * {{NT}});
  const {{IDX}} row = rem / {{NT}} * 16 + ty, col = rem % {{NT}} * 16 + tx;
  (void)bt;
  {{ACC}} acc = ({{ACC}})0;
{{pair_decl}}  for ({{IDX}} k0 = 0; k0 < {{K}}; k0 += 16) {
    {
      const {{IDX}} ar = row, ak = k0 + tx;
      {{ACC}} v = ({{ACC}})0;
      if (ar < {{M}} && ak < {{K}}) {
{{load_a}}      }
      kf_as[ty][tx] = v;
    }
    {
      const {{IDX}} bk = k0 + ty, bc = col;
      {{ACC}} v = ({{ACC}})0;
      if (bk < {{K}} && bc < {{N}}) {
{{load_b}}      }
      kf_bs[ty][tx] = v;
    }
{{load_b2}}    kf_sync<256, {{LAUNCH}}>();
#pragma unroll
    for (int i = 0; i < 16; i++) acc = kf_add(acc, kf_mul(kf_as[ty][i], kf_bs[i][tx]));
{{pair_acc}}    kf_sync<256, {{LAUNCH}}>();
  }
  if (row < {{M}} && col < {{N}}) {
{{epilogue}}  }
}
