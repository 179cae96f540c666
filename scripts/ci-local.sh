#!/usr/bin/env bash
# ci-local.sh - simulates CI: clones the committed main into a fresh temporary
# directory (so untracked or uncommitted files cannot hide a failure), runs
# `bash .ci/run` there and reports the result and the time it took.
#
#   scripts/ci-local.sh [-k] [-j N] [REF]
#     -k     keep the clone (default: removed on success, kept on failure)
#     -j N   parallel jobs for make/ctest (default: what CI uses, nproc)
#     REF    what to clone (default: main)
#
# The log is written to /tmp/kfuse-ci-<time>.log; its last lines are printed.
set -uo pipefail
keep=0
jobs=
while getopts "kj:" opt; do
  case $opt in
    k) keep=1 ;;
    j) jobs=$OPTARG ;;
    *) echo "usage: $0 [-k] [-j N] [REF]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
ref=${1:-main}
repo=$(cd "$(dirname "$0")/.." && pwd)
stamp=$(date +%Y%m%d-%H%M%S)
dir=/tmp/kfuse-ci-$stamp
log=/tmp/kfuse-ci-$stamp.log

git clone -q --branch "$ref" "$repo" "$dir" || { echo "ci-local: clone of $ref failed" >&2; exit 2; }
commit=$(git -C "$dir" rev-parse --short HEAD)
echo "ci-local: $ref at $commit in $dir, log $log"
start=$(date +%s)
(
  cd "$dir"
  # The same environment as CI: no GPU; JOBS only when asked for.
  if [ -n "$jobs" ]; then export JOBS=$jobs; fi
  bash .ci/run
) >"$log" 2>&1
rc=$?
secs=$(($(date +%s) - start))
tail -n 40 "$log"
echo "ci-local: commit $commit: $([ $rc -eq 0 ] && echo PASS || echo "FAIL (rc $rc)")" \
  "in $((secs / 60))m$((secs % 60))s; log $log"
if [ $rc -eq 0 ] && [ $keep -eq 0 ]; then
  rm -rf "$dir"
else
  echo "ci-local: clone kept in $dir"
fi
exit $rc
