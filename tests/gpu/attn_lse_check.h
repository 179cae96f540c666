/* attn_lse_check.h - the logsumexp output of the attention GPU suites
 * (test_gpu_attention, test_gpu_attention_decode): every element of L
 * against the CPU reference. L = m + log(sum exp(s - m)) of scores that
 * the kernel computes as the graph does but for the order of the f32
 * product's accumulation (one rounding of a score to the input dtype may
 * flip, moving L by at most that score's ulp times its weight), so the
 * bound is the output's: tol + tol |want| with tol two units in the last
 * place near 1 of the q/k/v dtype (docs/attention.md). NaN must be where
 * the reference has NaN, and infinities (-inf: a row with no visible key)
 * equal. */
#ifndef KF_TEST_GPU_ATTN_LSE_CHECK_H
#define KF_TEST_GPU_ATTN_LSE_CHECK_H

#include <math.h>
#include <stdio.h>

#include "gpu_util.h"

static double G_lse_worst;

/* got and want: n elements of L's dtype ldt; dt: q, k and v's dtype. */
static int64_t attn_lse_compare(const void *got, const void *want, kf_dtype ldt, kf_dtype dt,
                                int64_t n, const char *what) {
  double tol = dt == KF_BF16 ? 1.0 / 64 : 1.0 / 512;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double g = load_elem(got, ldt, i), w = load_elem(want, ldt, i);
    bool ok;
    if (isnan(w))
      ok = isnan(g);
    else if (isinf(w))
      ok = g == w;
    else
      ok = fabs(g - w) <= tol + tol * fabs(w);
    if (isfinite(w) && isfinite(g) && fabs(g - w) > G_lse_worst) G_lse_worst = fabs(g - w);
    if (!ok && bad++ < 4)
      printf("MISMATCH %s logsumexp at %lld: got %.6g want %.6g\n", what, (long long)i, g, w);
  }
  return bad;
}

/* Output 1 of g (L, when the graph has one) against the reference. */
static void attn_lse_check(kf_graph *g, const run_io *io, kf_dtype dt, const char *what) {
  if (kf_graph_num_outputs(g) < 2) return;
  kf_value l = kf_graph_output(g, 1);
  int64_t n = kf_value_numel(g, l);
  int64_t bad =
      attn_lse_compare(io->hout[1].data, io->href[1].data, kf_value_dtype(g, l), dt, n, what);
  ck_assert_msg(bad == 0, "%s: %lld of %lld logsumexp elements off", what, (long long)bad,
                (long long)n);
}

#endif
