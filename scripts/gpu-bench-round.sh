#!/usr/bin/env bash
# gpu-bench-round.sh - the benchmarks of the open issues, in parts that each
# fit one device call (10 minutes), after scripts/gpu-verify.sh (or
# `CTEST=0 SANITIZE=0 bash scripts/gpu-check.sh`) built build-gpu/.
#
#   OUT=$OUT bash scripts/gpu-bench-round.sh PART...
#
# Parts (about how long each takes on the H200 host):
#   matmul    bench_matmul_compile (cold compiles, 2 pinned cores), then
#             bench_matmul_plan --quick and bench/gemm_peers.py   (~3 min)
#   attention bench_attention (prefill, causal, soft-cap and decode rows),
#             bench/sdpa.py and
#             bench/decode_sdpa.py                                  (~2 min)
#   membound  bench/membound.py --jobs 12, the whole family         (~6 min)
#   models    bench/models.py --small --profile, fresh caches       (~5 min)
# Each part writes $OUT/<part>.log; the command of every step is echoed into
# its log, so docs/performance.md can quote it.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/out}
mkdir -p "$OUT"
[ -f build-gpu/env.sh ] || { echo "gpu-bench-round: build first (scripts/gpu-verify.sh)" >&2; exit 1; }
# shellcheck disable=SC1091 # written by gpu-check.sh
. build-gpu/env.sh # also KFUSE_LIB and PYTHONPATH for the Python benches

step() { # step LOG CMD...: echo the command, run it, note its status
  local log=$1
  shift
  echo "\$ $*" >>"$log"
  "$@" >>"$log" 2>&1
  echo "(rc=$?)" >>"$log"
}

for part in "$@"; do
  log=$OUT/$part.log
  case $part in
    matmul)
      step "$log" taskset -c 14,15 build-gpu/bench/bench_matmul_compile
      step "$log" build-gpu/bench/bench_matmul_plan --quick
      step "$log" python3 bench/gemm_peers.py
      ;;
    attention)
      step "$log" build-gpu/bench/bench_attention
      step "$log" python3 bench/sdpa.py
      step "$log" python3 bench/decode_sdpa.py
      ;;
    membound)
      step "$log" python3 bench/membound.py --jobs 12
      ;;
    models)
      step "$log" taskset -c 0-11 python3 bench/models.py --small --profile
      ;;
    *)
      echo "gpu-bench-round: unknown part '$part' (matmul, attention, membound, models)" >&2
      exit 2
      ;;
  esac
done
