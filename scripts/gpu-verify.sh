#!/usr/bin/env bash
# gpu-verify.sh - a session's first GPU call: build, then every GPU suite,
# the suites of kernels that have not run on a GPU yet first, beside the
# CPU suite on other cores. One call of about 7 minutes on the H200 host.
#
#   OUT=$OUT bash scripts/gpu-verify.sh          (carry [".debs"])
#
# Environment: FIRST (the suites run first, one at a time, in this order;
# default below), GPU_CORES (taskset list for the GPU suites; 6-15),
# CPU_CORES (for `ctest -L cpu`; 0-5), KFUSE_GEMM80 etc. pass through.
# Writes under $OUT: summary.txt and build.log (gpu-check.sh), first.log
# (each first suite, timestamped per line), gpu.log (ctest -L gpu on the
# rest), cpu.log (ctest -L cpu). A run cut short still leaves what ended.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/out}
mkdir -p "$OUT"
# The suites whose kernels changed since they last passed on a GPU (see
# docs/status.md, "Next session"); the lead edits this list each session.
FIRST=${FIRST:-"test_gpu_gemm80 test_gpu_check test_gpu_matmul_lib test_gpu_gemm90
  test_gpu_attention test_gpu_attention_decode test_gpu_math"}
GPU_CORES=${GPU_CORES:-6-15}
CPU_CORES=${CPU_CORES:-0-5}

CTEST=0 SANITIZE=0 OUT=$OUT bash scripts/gpu-check.sh || {
  echo "gpu-verify: the build failed (build.log)" | tee -a "$OUT/summary.txt"
  exit 1
}
# shellcheck disable=SC1091 # written by gpu-check.sh
. build-gpu/env.sh

(cd build-gpu && taskset -c "$CPU_CORES" ctest -L cpu -j6 --output-on-failure >"$OUT/cpu.log" 2>&1
 echo "cpu suite rc=$?" >>"$OUT/cpu.log") &
cpu_pid=$!

# stamp: each line of a suite's output with the seconds since the start,
# so a suite killed by the call's limit still shows how far it got.
t0=$(date +%s)
stamp() { while IFS= read -r line; do printf '%4ds %s\n' $(($(date +%s) - t0)) "$line"; done; }
exclude=""
for t in $FIRST; do
  exclude="$exclude${exclude:+|}^$t\$"
  bin=build-gpu/tests/$t
  if [ ! -x "$bin" ]; then
    echo "== $t: no such binary" >>"$OUT/first.log"
    continue
  fi
  echo "== $t" >>"$OUT/first.log"
  # the environment ctest gives the suites (tests/CMakeLists.txt)
  (cd "$root" && KFUSE_CLI=$root/build-gpu/kfuse KFUSE_CACHE_DIR=$root/build-gpu/test-cache \
    taskset -c "$GPU_CORES" stdbuf -oL -eL "$bin" 2>&1) | stamp >>"$OUT/first.log"
  rc=${PIPESTATUS[0]}
  echo "== $t rc=$rc" >>"$OUT/first.log"
  printf '%-28s rc=%s\n' "$t" "$rc" >>"$OUT/summary.txt"
done

(cd build-gpu && taskset -c "$GPU_CORES" ctest -L gpu -E "$exclude" -j3 --output-on-failure \
  >"$OUT/gpu.log" 2>&1)
echo "ctest -L gpu (the rest): rc=$?" >>"$OUT/summary.txt"
wait "$cpu_pid"
tail -1 "$OUT/cpu.log" >>"$OUT/summary.txt"
grep -h "tests passed\|tests failed" "$OUT/gpu.log" "$OUT/cpu.log" >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
