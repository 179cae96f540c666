# gpu-common.sh - sourced by the scripts that run after scripts/gpu-check.sh
# on a GPU machine (gpu-perf.sh, gpu-ncu.sh, gpu-long-rows.sh): the repo
# root as working directory ($root), $OUT created, and build-gpu/env.sh
# sourced (private-prefix libraries, kfuse on PATH, KFUSE_LIB, PYTHONPATH).
# shellcheck shell=bash
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/out}
mkdir -p "$OUT"
if [ ! -f "$root/build-gpu/env.sh" ]; then
  echo "${0##*/}: no build-gpu/env.sh: run scripts/gpu-check.sh first" >&2
  exit 1
fi
# shellcheck source=/dev/null
. "$root/build-gpu/env.sh"
