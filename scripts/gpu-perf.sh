#!/usr/bin/env bash
# gpu-perf.sh - the performance measurements of docs/performance.md on a GPU
# machine, after scripts/gpu-check.sh has built build-gpu/ (CTEST=0
# SANITIZE=0 is enough): host overhead (bench_host), warm starts
# (bench_warm), the cold compile of every suite graph alone with an empty
# cache, the tuning sweeps (pointwise grid waves on chain8, threads per row
# on softmax_bf16 and layernorm_f32), then the suite against PyTorch (bench/suite.py, which
# writes perf.md and perf.json). Writes $OUT/perf.txt and the suite's files.
#   OUT=out scripts/gpu-perf.sh
set -uo pipefail
# shellcheck source=scripts/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
b=$root/build-gpu
status=0
{
  echo "== bench_host"
  "$b/bench/bench_host" || status=1
  echo "== bench_warm (fresh kf_ctx per start, warm disk cache)"
  "$b/bench/bench_warm" --runs 21 || status=1
  echo "== cold compile: each suite graph alone, empty cache, quiet machine"
  for f in bench/graphs/*.yaml; do
    d=$(mktemp -d)
    KFUSE_CACHE_DIR=$d kfuse compile "$f" --json || status=1
    rm -rf "$d"
  done
  echo "== pointwise grid waves (chain8): KFUSE_PW_WAVES"
  for w in 1 2 4 8 16 1024; do
    printf 'waves=%s ' "$w"
    KFUSE_PW_WAVES=$w kfuse bench bench/graphs/chain8.yaml --json || status=1
  done
  echo "== threads per row (softmax_bf16, layernorm_f32): KFUSE_ROW_THREADS"
  for g in softmax_bf16 layernorm_f32; do
    for t in 128 256 512; do
      printf '%s threads=%s ' "$g" "$t"
      KFUSE_ROW_THREADS=$t kfuse bench "bench/graphs/$g.yaml" --json || status=1
    done
  done
} >"$OUT/perf.txt" 2>&1
KFUSE_CACHE_DIR=$(mktemp -d) OUT=$OUT python3 bench/suite.py >"$OUT/suite.txt" 2>&1 || status=1
exit $status
