// pointwise_groups.cu - pointwise.cu with G W-element groups per thread and
// grid-stride step (KFUSE_PW_GROUPS=G, a tuning knob): a group's loads (its
// pre block) are a struct's load() and its lanes and stores its run(), so
// that a thread's G groups have their loads in flight together before any
// of them computes (as Inductor's kernels hold two 16-byte words per
// thread and input). Thread t of a block takes groups base + t + g *
// THREADS, g < G: each load instruction stays coalesced over the warp. The
// scalar tail is pointwise.cu's.
// Holes: pointwise.cu's, and G.
template <int W>
struct {{fn}}_grp {
{{decl}}
  KF_INLINE void load({{IDX}} i, {{params}}) {
    const {{IDX}} e = i;
    (void)e;
{{pre}}  }

  KF_INLINE void run({{IDX}} i, {{params}}) {
#pragma unroll
    for (int j = 0; j < W; j++) {
      const {{IDX}} e = i + j;
      (void)e;
{{body}}    }
{{store}}  }
};

template <int W>
KF_INLINE void {{fn}}_elems({{IDX}} i, {{params}}) {
  {{fn}}_grp<W> g;
  g.load(i, {{args}});
  g.run(i, {{args}});
}

KF_INLINE void {{fn}}(unsigned bid, {{sizes}}{{params}}) {
  if (threadIdx.x >= {{THREADS}}) return;
  const {{IDX}} stride = ({{IDX}}){{BLOCKS}} * {{THREADS}};
  const {{IDX}} tid = ({{IDX}})bid * {{THREADS}} + threadIdx.x;
  {{IDX}} i0 = 0;
  if ({{W}} > 1 && {{aligned}}) {
    const {{IDX}} nv = {{NUMEL}} / {{W}};
    for ({{IDX}} v = ({{IDX}})bid * ({{THREADS}} * {{G}}) + threadIdx.x; v < nv; v += stride * {{G}}) {
      {{fn}}_grp<{{W}}> g[{{G}}];
#pragma unroll
      for (int k = 0; k < {{G}}; k++)
        if (v + k * {{THREADS}} < nv) g[k].load((v + k * {{THREADS}}) * {{W}}, {{args}});
#pragma unroll
      for (int k = 0; k < {{G}}; k++)
        if (v + k * {{THREADS}} < nv) g[k].run((v + k * {{THREADS}}) * {{W}}, {{args}});
    }
    i0 = nv * {{W}};
  }
  for ({{IDX}} i = i0 + tid; i < {{NUMEL}}; i += stride) {{fn}}_elems<1>(i, {{args}});
}
