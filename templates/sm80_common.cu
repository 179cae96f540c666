// sm80_common.cu - the mma.sync helpers the sm_80 kernels share
// (attention.cu, attention_decode.cu, gemm_sm80.cu): shared-window
// addresses, an operand's row tile by cp.async, cp.async groups, ldmatrix,
// the m16n8k16 product and 16-bit pairs. Runs on sm_80 and later. No holes.
#ifndef KF_SM80_COMMON
#define KF_SM80_COMMON
KF_INLINE unsigned kf_m80_saddr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
// Rows [r0, r0 + ROWS) of an operand (row r of batch entry bt starts at
// R::row(bt, r)) into a [ROWS][D] tile swizzled by 16-byte chunk, by NT
// threads; rows at or past n are zeros (v's zeros keep 0 * garbage out of
// the product). al: the operand's rows are 16-byte aligned (else copied
// element by element).
template <class R, typename T, int ROWS, int D, int NT>
KF_INLINE void kf_m80_rows(T *s, const T *__restrict__ g, long long bt, long long r0, long long n,
                          bool al) {
  constexpr int DC = D / 8;
  for (int i = threadIdx.x; i < ROWS * DC; i += NT) {
    const int row = i / DC, ch = i % DC;
    T *dst = s + row * D + ((ch ^ (row & 7)) * 8);
    const long long r = r0 + row;
    if (al) {
      const T *src = r < n ? g + R::row(bt, r) + ch * 8 : g;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(kf_m80_saddr(dst)),
                   "l"(src), "r"(r < n ? 16 : 0)
                   : "memory");
    } else {
      for (int e = 0; e < 8; e++) dst[e] = r < n ? g[R::row(bt, r) + ch * 8 + e] : T{0};
    }
  }
}
KF_INLINE void kf_m80_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
KF_INLINE void kf_m80_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
KF_INLINE void kf_m80_ldm4(unsigned (&r)[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(kf_m80_saddr(p)));
}
KF_INLINE void kf_m80_ldm4t(unsigned (&r)[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(kf_m80_saddr(p)));
}
// c += a b for one m16n8k16 tile (row-major a, column-major b).
template <bool BF>
KF_INLINE void kf_m80_mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  if (BF)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// Two floats as a pair of 16-bit values, lo in the low half.
template <bool BF>
KF_INLINE unsigned kf_m80_pack(float lo, float hi) {
  unsigned r;
  if (BF)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
#endif
