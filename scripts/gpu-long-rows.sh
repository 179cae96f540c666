#!/usr/bin/env bash
# gpu-long-rows.sh - rows too long for one block's registers on the GPU:
# each graph of bench/long_rows/ checked against the CPU reference (`kfuse
# run --check`) and timed (`kfuse bench --json`) in three forms: the default
# (on sm_90 the row held by a thread block cluster), the looped form with
# the paired one-pass phases (KFUSE_ROW_SPLIT=0: online softmax / Welford)
# and without them (KFUSE_ROW_ONLINE=0 too: one pass over memory per
# reduction). Run after scripts/gpu-check.sh, which builds build-gpu/ and
# writes the environment this sources.
#   scripts/gpu-long-rows.sh > long_rows.txt
set -uo pipefail
# shellcheck source=scripts/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
cache=$(mktemp -d)
export KFUSE_CACHE_DIR=$cache
status=0
for f in "$root"/bench/long_rows/*.yaml; do
  echo "== $(basename "$f")"
  kfuse run "$f" --check --iters 3 || status=1
  KFUSE_ROW_SPLIT=0 kfuse run "$f" --check --iters 3 || status=1
  for form in "KFUSE_ROW_SPLIT=1" "KFUSE_ROW_SPLIT=0" "KFUSE_ROW_SPLIT=0 KFUSE_ROW_ONLINE=0"; do
    printf '%s ' "$form"
    # shellcheck disable=SC2086
    env $form kfuse bench "$f" --json --iters 50 || status=1
  done
done
rm -rf "$cache"
exit $status
