#!/usr/bin/env bash
# gpu-ncu.sh - Nsight Compute's view of the first kfuse kernel of each graph
# given (default: the three row workloads below 90% of copy or behind
# torch.compile): issue slots used, DRAM throughput, achieved occupancy,
# registers, instructions per element. What docs/performance.md needs to
# tell an instruction-bound kernel from a memory-bound one. Run after
# scripts/gpu-check.sh (build-gpu/ and its env.sh); writes $OUT/ncu.csv.
#   OUT=out scripts/gpu-ncu.sh [FILE.yaml ...]
# NCU_SECTIONS="WarpStateStats SpeedOfLight" collects those Nsight Compute
# sections instead of the metrics below (stall reasons per issued
# instruction, throughput against peak). NCU_METRICS="a,b,..." collects
# those raw metrics instead (e.g. the stall reasons
# smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio).
# NCU_ARGS="--clock-control none" adds options to ncu (there: boost clocks,
# as outside the profiler, instead of the base clocks ncu locks).
set -uo pipefail
# shellcheck source=scripts/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
metrics=smsp__issue_active.avg.pct_of_peak_sustained_active
metrics=$metrics,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,sm__warps_active.avg.pct_of_peak_sustained_active
metrics=$metrics,launch__registers_per_thread,smsp__inst_executed.sum,gpu__time_duration.sum
metrics=${NCU_METRICS:-$metrics}
graphs=("$@")
[ ${#graphs[@]} -gt 0 ] || graphs=(bench/graphs/softmax_bf16.yaml bench/graphs/layernorm_bf16.yaml
  bench/graphs/layernorm_f32.yaml)
: >"$OUT/ncu.csv"
status=0
for f in "${graphs[@]}"; do
  echo "== $f" >>"$OUT/ncu.csv"
  # the second launch of kf_*: the first may include module-load effects
  what=(--metrics "$metrics")
  if [ -n "${NCU_SECTIONS:-}" ]; then
    what=()
    for sec in $NCU_SECTIONS; do what+=(--section "$sec"); done
  fi
  # shellcheck disable=SC2086 # NCU_ARGS: extra options, split on spaces
  "$ncu" --csv ${NCU_ARGS:-} "${what[@]}" -k regex:^kf_ --launch-skip 1 --launch-count 1 \
    kfuse run "$f" --iters 3 >>"$OUT/ncu.csv" 2>&1 || status=1
done
cat "$OUT/ncu.csv"
exit $status
