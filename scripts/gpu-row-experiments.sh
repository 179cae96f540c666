#!/usr/bin/env bash
# gpu-row-experiments.sh - session 4's row-kernel knobs, all measured in one
# run on a GPU machine after scripts/gpu-check.sh has built build-gpu/
# (CTEST=0 SANITIZE=0 is enough; run test_gpu_rows first: its row_knobs and
# dynamic_rows cases check these knobs' results). Each knob is read at code
# generation, so one binary serves every variant; the plain kernel runs
# first, in the middle and last, to show the run's noise. Then the Triton
# code torch.compile writes for the same workloads (bench/inductor_code.py).
# Writes $OUT/row-tune.txt (one table per variant), $OUT/inductor.txt and
# $OUT/inductor_<workload>.py.
#   OUT=out scripts/gpu-row-experiments.sh
# Environment: ITERS (100), GRAPHS (the five row graphs), VARIANTS (the list
# below, ";"-separated).
set -uo pipefail
# shellcheck source=scripts/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
plain="KFUSE_ROW_STAGE=0"
default="$plain;KFUSE_ROW_RECOMPUTE=1;KFUSE_ROW_RECOMPUTE=1 KFUSE_ROW_MIN_BLOCKS=6"
default="$default;KFUSE_ROW_STREAM=evict_first;KFUSE_ROW_PREFETCH=1"
default="$default;KFUSE_ROW_PREFETCH=1 KFUSE_ROW_STREAM=evict_first;$plain"
default="$default;KFUSE_ROW_PERSIST=1;KFUSE_ROW_PERSIST=dynamic"
default="$default;KFUSE_ROW_PERSIST=dynamic KFUSE_ROW_STAGE=2"
default="$default;KFUSE_ROW_PERSIST=1 KFUSE_PERSIST_WAVES=2;$plain"
VARIANTS=${VARIANTS:-$default}
status=0
VARIANTS=$VARIANTS BLOCKS=0 ITERS=${ITERS:-100} OUT=$OUT bash "$root/scripts/gpu-row-tune.sh" ||
  status=1
python3 "$root/bench/inductor_code.py" --out "$OUT" >"$OUT/inductor.txt" 2>&1 || status=1
cat "$OUT/inductor.txt"
exit $status
