/* matmul_floor.c - the least time a plan's products can take as template
 * kernels (docs/matmul.md, "A template that cannot win"): each product at
 * the stated ceiling of the kernel that may run it, the rest free. */
#include "pipeline/matmul_floor.h"

#include "codegen/gemm_sm90.h"
#include "fuser/fuse.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

/* The simple template's (templates/matmul.cu) ceiling, GFLOP/s per SM:
 * twice the best it measured on the H200, 6.4 TFLOP/s on 132 SMs (4096^3
 * in 21.7 ms, 8192^3 in 173.7 ms). */
enum { TEMPLATE_SM_GFLOPS = 100 };
/* The sm_90 template's (templates/gemm_sm90.cu, 16-bit products on sm_90),
 * per SM and per block tile (one block per SM, tiles in waves): above the
 * best it measured, 6.5 TFLOP/s per busy SM (33x4096x4096: 16 tiles of
 * 128x256x4096 in 0.041 ms; 5.2 at 8192^3 with every SM busy). It is a
 * measured ceiling, not the hardware's (7.5 per SM dense bf16): a faster
 * template must raise it, or the rule skips a template that can win. */
enum { TEMPLATE90_SM_GFLOPS = 7000 };
/* The mma.sync template's (templates/gemm_sm80.cu, 16-bit products on
 * sm_80 to sm_89): the A100's dense bf16 peak per SM (312 TFLOP/s on 108
 * SMs), the highest of those GPUs. On sm_90 it takes what the sm_90
 * template does not, held to the H200's dense peak per SM (a bound, not
 * a measurement). */
enum { TEMPLATE80_SM_GFLOPS = 2900, H200_SM_GFLOPS = 7500 };

/* One product's least time on the sm_90 template, in seconds: its tiles
 * in waves of one per SM, each at the ceiling. */
static double gemm90_seconds(const fuse_gemm *g, int sms) {
  double tile_flops = 0;
  int64_t tiles = cg_gemm90_tiles(g->m, g->n, g->k, &tile_flops);
  int64_t waves = (tiles + sms - 1) / sms;
  return (double)waves * tile_flops / (TEMPLATE90_SM_GFLOPS * 1e9);
}

/* The 16-bit tensor-core floor of one product in seconds, or -1 when no
 * tensor-core template may take it. On sm_90 a product whose shape the
 * sm_90 template takes (no batch, K and N multiples of 8; cg_gemm90_fits
 * decides at emit) is held to its tiles; any other goes to the mma.sync
 * template. */
static double h16_seconds(const fuse_gemm *g, double flop, int cc, const core_knobs *kn, int sms) {
  if (g->ab_type != KF_BF16 && g->ab_type != KF_F16) return -1;
  if (cc == 90 && kn->gemm90 != 0 && g->batch == 1 && g->k % 8 == 0 && g->n % 8 == 0)
    return gemm90_seconds(g, sms);
  if (kn->gemm80 == 0 || cc < 80 || cc > 90) return -1;
  return flop / ((cc == 90 ? H200_SM_GFLOPS : TEMPLATE80_SM_GFLOPS) * 1e9) / sms;
}

bool pl_template_floor(kf_plan *plan, pl_mm_floor *out) {
  rt_state *rt = NULL;
  *out = (pl_mm_floor){0, 0, TEMPLATE_SM_GFLOPS, 0};
  if (rt_state_get(plan->ctx, &rt) != KF_OK || !rt || rt->info.sm_count <= 0) return false;
  int sms = rt->info.sm_count, cc = rt->info.cc_major * 10 + rt->info.cc_minor;
  double seconds = 0;
  for (int i = 0; i < plan->fuse->n_kernels; i++) {
    const fuse_kernel *k = &plan->fuse->kernels[i];
    if (!k->library) continue;
    const fuse_gemm *g = &k->gemm;
    double flop = 2.0 * (double)g->batch * (double)g->m * (double)g->n * (double)g->k;
    double s = flop / (TEMPLATE_SM_GFLOPS * 1e9) / sms; /* the simple kernel, spread evenly */
    double t = h16_seconds(g, flop, cc, plan->knobs, sms);
    if (t >= 0 && t < s) s = t; /* the lower floor: never above the kernel that runs */
    out->gflop += flop * 1e-9;
    seconds += s;
  }
  out->sms = sms;
  out->ms = seconds * 1e3;
  if (seconds > 0) out->rate = out->gflop / (seconds * sms);
  return true;
}
