#!/usr/bin/env bash
# gpu-row-tune.sh - the row kernels' tuning sweep on a GPU machine, after
# scripts/gpu-check.sh has built build-gpu/: each row graph of the suite
# timed by `kfuse bench` with KFUSE_ROW_MIN_BLOCKS (resident blocks per SM
# asked of ptxas for held rows; 0 = no bound, the default) and
# KFUSE_ROW_THREADS (threads per row; 0 = the default) and KFUSE_ROW_WAVES
# (waves of resident blocks before the grid strides; 0 = the default) over
# the values given. One line per setting: the fused median and its share of the copy
# ceiling. Writes $OUT/row-tune.txt.
#   OUT=out scripts/gpu-row-tune.sh
# Environment: BLOCKS ("0 4 5 6"), THREADS ("0"), WAVES ("0"), ITERS (50),
# KFUSE (the kfuse binary; default the one on PATH), DIR (where the graphs
# are: bench/graphs; bench/long_rows for the long rows), GRAPHS (the
# five row graphs of bench/graphs), VARIANTS (";"-separated settings, each
# space-separated VAR=VALUE pairs exported for its rows, e.g.
# "KFUSE_ROW_STAGE=0;KFUSE_ROW_STAGE=thread;KFUSE_ROW_STAGE=0": an A/B in
# one run, one table per variant; default one variant, the environment as
# it is).
set -uo pipefail
# shellcheck source=scripts/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
BLOCKS=${BLOCKS:-0 4 5 6}
THREADS=${THREADS:-0}
WAVES=${WAVES:-0}
KFUSE=${KFUSE:-kfuse}
ITERS=${ITERS:-50}
DIR=${DIR:-bench/graphs}
GRAPHS=${GRAPHS:-softmax_bf16 layernorm_bf16 add_rmsnorm_bf16 softmax_f32 layernorm_f32}
VARIANTS=${VARIANTS:-}
variant=""
status=0
tune() {
  printf '%-18s %7s %7s %7s %10s %8s\n' graph threads blocks waves fused_ms pct_copy
  for g in $GRAPHS; do
    for t in $THREADS; do
      for b in $BLOCKS; do
        for w in $WAVES; do
          # $variant (space-separated VAR=VALUE pairs) last: it overrides the sweep
          # shellcheck disable=SC2086
          j=$(env KFUSE_ROW_THREADS=$t KFUSE_ROW_MIN_BLOCKS=$b KFUSE_ROW_WAVES=$w $variant \
            "$KFUSE" bench "$DIR/$g.yaml" --json --iters "$ITERS" 2>&1) || status=1
          ms=$(printf '%s' "$j" | python3 -c 'import json, sys
d = json.load(sys.stdin)
print("%10.4f %7.1f%%" % (d["fused_ms"], d["pct_of_copy"]))' 2>/dev/null) ||
            ms="error: $(printf '%s' "$j" | head -c 200)"
          printf '%-18s %7s %7s %7s %s\n' "$g" "$t" "$b" "$w" "$ms"
        done
      done
    done
  done
}
{
  if [ -z "$VARIANTS" ]; then
    tune
  else
    IFS=';' read -ra variants <<<"$VARIANTS"
    for variant in "${variants[@]}"; do
      echo "== $variant"
      tune
    done
  fi
} >"$OUT/row-tune.txt"
cat "$OUT/row-tune.txt"
exit $status
