#!/usr/bin/env bash
# fuzz.sh - builds the libFuzzer harness of the YAML loader with clang in
# build-fuzz, replays the seed corpus (examples, malformed files, extra
# seeds), then fuzzes for FUZZ_SECONDS (60). Exits non-zero on any crash,
# leak, sanitizer report, timeout or round-trip mismatch; the failing input
# is left in build-fuzz/artifacts/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
secs=${FUZZ_SECONDS:-60}
cuda=${CUDA_PATH:-/usr/local/cuda}

if ! command -v clang >/dev/null; then
  echo "fuzz.sh: clang is needed (apt-get install clang)" >&2
  exit 1
fi
CC=clang cmake -S "$root" -B "$build" -DKFUSE_FUZZ=ON -DKFUSE_TESTS=OFF -DKFUSE_WERROR=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT="$cuda" >/dev/null
cmake --build "$build" --target fuzz_yaml -j "${JOBS:-$(nproc)}"
bin=$build/tests/fuzz/fuzz_yaml
mkdir -p "$build/artifacts"
opts=(-timeout=5 -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$build/artifacts/"
      -dict="$root/tests/fuzz/yaml.dict")

seeds=("$root"/examples/graphs/*.yaml "$root"/tests/yaml_bad/*.yaml "$root"/tests/fuzz/corpus/*)
echo "fuzz.sh: replaying ${#seeds[@]} seeds"
"$bin" "${opts[@]}" "${seeds[@]}" 2>"$build/replay.log" || {
  tail -50 "$build/replay.log" >&2
  echo "fuzz.sh: a seed failed (log: $build/replay.log)" >&2
  exit 1
}

# New inputs go to a scratch folder, so the committed corpus only changes
# when someone copies a finding into it on purpose.
work="$build/corpus-new"
mkdir -p "$work"
echo "fuzz.sh: fuzzing for ${secs}s"
"$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 "$work" \
  "$root/examples/graphs" "$root/tests/yaml_bad" "$root/tests/fuzz/corpus" \
  2>"$build/fuzz.log" || {
  tail -60 "$build/fuzz.log" >&2
  echo "fuzz.sh: the fuzzer found a failure (log: $build/fuzz.log; input in $build/artifacts/)" >&2
  exit 1
}
grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "$build/fuzz.log" || true
echo "fuzz.sh: no failures"
