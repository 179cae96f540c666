// transpose.cu - a pointwise kernel whose transposes move the innermost axis:
// the iteration space is cut into {{T}} x {{T}} tiles of its axes b (where the
// transposed values' innermost axis goes) and a (the innermost), over a batch
// of the other axes. Phase 1 computes each tiled transpose's operand over the
// tile in the operand's own order (loads coalesced, {{V1}} lanes per thread)
// into a padded shared tile kf_s<i>[a][b]; phase 2 computes the rest in the
// iteration's order ({{V2}} lanes, stores and other loads coalesced), reading
// the transposes from the tile. A warp covers V rows of 32 / V chunks of V
// lanes, so the padded row stride (TC + 1 words) puts its 32 words of one lane
// in 32 banks on both sides. Each thread takes T / S rows of a tile (S the
// rows all threads cover at once). A whole tile inside the extents, with
// every vector-accessed pointer aligned, runs them unrolled without tests, so
// their loads are in flight together; a partial tile tests each row and
// chunk, and runs a partial chunk (or every chunk, when unaligned) lane by
// lane, each lane predicated. A whole tile issues phase 2's loads that do not
// read the tile (its vector loads of other inputs) before phase 1, so they
// are in flight with phase 1's and across the barrier: a tile waits for one
// memory latency, not two.
// A tile element is C values: the run of trailing axes that the transposes
// keep (kf_ic; C = 1 when they move the innermost axis), so a tile row is
// TC = T * C values, and rows, chunks and lanes count values (kf_ub along b
// and the run in phase 1, kf_ua along a and the run in phase 2).
// Holes: fn, BID, IDX, T, TC, C, V1, V2, S1, S2, EA, EB, EAC, EBC, NTA, NTB, NTILES, THREADS,
// BLOCKS, LAUNCH, params, args, smem, sparams, sargs, decl1, pre1, body1,
// decl2, pre2, body2, store2, aligned1, aligned2.
template <int W>
KF_INLINE void {{fn}}_in(const {{IDX}} kf_bt, const {{IDX}} kf_ia, const {{IDX}} kf_ub0,
                         const int kf_ra, const int kf_cb, {{sparams}}, {{params}}) {
  (void)kf_bt; (void)kf_ia;
{{decl1}}  {
    const {{IDX}} kf_ib = kf_ub0 / {{C}};
    const int kf_ic = (int)(kf_ub0 % {{C}});
    (void)kf_ib; (void)kf_ic;
{{pre1}}  }
#pragma unroll
  for (int j = 0; j < W; j++) {
    const {{IDX}} kf_ib = (kf_ub0 + j) / {{C}};
    const int kf_ic = (int)((kf_ub0 + j) % {{C}});
    (void)kf_ib; (void)kf_ic;
{{body1}}  }
}

// Phase 2 of W lanes at one row: its registers (decl2) are members, so a
// whole tile's rows can be loaded before the barrier (load: the loads that do
// not read the tile) and computed after it (run).
template <int W> struct {{fn}}_out {
{{decl2}}
  KF_INLINE void load(const {{IDX}} kf_bt, const {{IDX}} kf_ua0, const {{IDX}} kf_ib, {{params}}) {
    (void)kf_bt; (void)kf_ib;
    const {{IDX}} kf_ia = kf_ua0 / {{C}};
    const int kf_ic = (int)(kf_ua0 % {{C}});
    (void)kf_ia; (void)kf_ic;
{{pre2}}  }
  KF_INLINE void run(const {{IDX}} kf_bt, const {{IDX}} kf_ua0, const {{IDX}} kf_ib,
                     const int kf_ca, const int kf_rb, {{sparams}}, {{params}}) {
    (void)kf_bt; (void)kf_ib; (void)kf_ca; (void)kf_rb;
#pragma unroll
    for (int j = 0; j < W; j++) {
      const {{IDX}} kf_ia = (kf_ua0 + j) / {{C}};
      const int kf_ic = (int)((kf_ua0 + j) % {{C}});
      (void)kf_ia; (void)kf_ic;
{{body2}}    }
    {
      const {{IDX}} kf_ia = kf_ua0 / {{C}};
      const int kf_ic = (int)(kf_ua0 % {{C}});
      (void)kf_ia; (void)kf_ic;
{{store2}}    }
  }
};

KF_INLINE void {{fn}}({{BID}} bid, {{params}}) {
{{smem}}  if (threadIdx.x >= {{THREADS}}) return;
  const int kf_w = threadIdx.x >> 5, kf_l = threadIdx.x & 31;
  const int kf_c1 = kf_w % ({{TC}} / 32) * (32 / {{V1}}) + kf_l % (32 / {{V1}});
  const int kf_r1 = kf_w / ({{TC}} / 32) * {{V1}} + kf_l / (32 / {{V1}});
  const int kf_c2 = kf_w % ({{TC}} / 32) * (32 / {{V2}}) + kf_l % (32 / {{V2}});
  const int kf_r2 = kf_w / ({{TC}} / 32) * {{V2}} + kf_l / (32 / {{V2}});
  // aligned (or scalar): whole chunks may take the W = V path
  const bool kf_al1 = {{V1}} == 1 || {{aligned1}};
  const bool kf_al2 = {{V2}} == 1 || {{aligned2}};
  for ({{IDX}} kf_t = bid; kf_t < {{NTILES}}; kf_t += {{BLOCKS}}) {
    const {{IDX}} kf_bt = kf_t / ({{NTA}} * {{NTB}});
    const {{IDX}} kf_a0 = kf_t % {{NTA}} * {{T}};
    const {{IDX}} kf_b0 = kf_t / {{NTA}} % {{NTB}} * {{T}};
    // a whole tile inside the extents: no test per row or lane, so the
    // unrolled rows' loads are in flight together
    const bool kf_whole = kf_a0 + {{T}} <= {{EA}} && kf_b0 + {{T}} <= {{EB}};
    // a whole tile's phase-2 loads go first: they are in flight with phase
    // 1's and through the barrier, one memory latency per tile, not two
    const bool kf_pre = kf_whole && kf_al2;
    {{fn}}_out<{{V2}}> kf_o[{{T}} / {{S2}}];
    if (kf_pre) {
#pragma unroll
      for (int q = 0; q < {{T}} / {{S2}}; q++)
        kf_o[q].load(kf_bt, kf_a0 * {{C}} + kf_c2 * {{V2}}, kf_b0 + kf_r2 + q * {{S2}}, {{args}});
    }
    if (kf_whole && kf_al1) {
#pragma unroll
      for (int q = 0; q < {{T}} / {{S1}}; q++) {
        const int r = kf_r1 + q * {{S1}};
        {{fn}}_in<{{V1}}>(kf_bt, kf_a0 + r, kf_b0 * {{C}} + kf_c1 * {{V1}}, r, kf_c1 * {{V1}}, {{sargs}}, {{args}});
      }
    } else {
      for (int r = kf_r1; r < {{T}}; r += {{S1}}) {
        const {{IDX}} ia = kf_a0 + r, ub = kf_b0 * {{C}} + kf_c1 * {{V1}};
        if (ia >= {{EA}}) break;
        if ({{V1}} > 1 && kf_al1 && ub + {{V1}} <= {{EBC}}) {{fn}}_in<{{V1}}>(kf_bt, ia, ub, r, kf_c1 * {{V1}}, {{sargs}}, {{args}});
        else
          for (int j = 0; j < {{V1}}; j++)
            if (ub + j < {{EBC}}) {{fn}}_in<1>(kf_bt, ia, ub + j, r, kf_c1 * {{V1}} + j, {{sargs}}, {{args}});
      }
    }
    kf_sync<{{THREADS}}, {{LAUNCH}}>();
    if (kf_pre) {
#pragma unroll
      for (int q = 0; q < {{T}} / {{S2}}; q++) {
        const int r = kf_r2 + q * {{S2}};
        kf_o[q].run(kf_bt, kf_a0 * {{C}} + kf_c2 * {{V2}}, kf_b0 + r, kf_c2 * {{V2}}, r, {{sargs}}, {{args}});
      }
    } else {
      for (int r = kf_r2; r < {{T}}; r += {{S2}}) {
        const {{IDX}} ib = kf_b0 + r, ua = kf_a0 * {{C}} + kf_c2 * {{V2}};
        if (ib >= {{EB}}) break;
        if ({{V2}} > 1 && kf_al2 && ua + {{V2}} <= {{EAC}}) {
          {{fn}}_out<{{V2}}> o;
          o.load(kf_bt, ua, ib, {{args}});
          o.run(kf_bt, ua, ib, kf_c2 * {{V2}}, r, {{sargs}}, {{args}});
        } else
          for (int j = 0; j < {{V2}}; j++)
            if (ua + j < {{EAC}}) {
              {{fn}}_out<1> o;
              o.load(kf_bt, ua + j, ib, {{args}});
              o.run(kf_bt, ua + j, ib, kf_c2 * {{V2}} + j, r, {{sargs}}, {{args}});
            }
      }
    }
    kf_sync<{{THREADS}}, {{LAUNCH}}>();
  }
}
