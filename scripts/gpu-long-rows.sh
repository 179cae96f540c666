#!/usr/bin/env bash
# gpu-long-rows.sh - the looped row variant on the GPU: each graph of
# bench/long_rows/ checked against the CPU reference (`kfuse run --check`)
# and timed (`kfuse bench --json`) with the paired one-pass phases (online
# softmax / Welford) and without them (KFUSE_ROW_ONLINE=0: one pass over
# memory per reduction). Run after scripts/gpu-check.sh, which builds
# build-gpu/ and writes the environment this sources.
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
  for online in 1 0; do
    printf 'KFUSE_ROW_ONLINE=%s ' "$online"
    KFUSE_ROW_ONLINE=$online kfuse bench "$f" --json || status=1
  done
done
rm -rf "$cache"
exit $status
