#!/bin/sh
# attn_knobs.sh - the A/B of the sm_90 attention kernel's knobs
# (docs/attention.md, "Knobs of the Hopper kernel"): bench_attention's
# prefill lines with the defaults, each knob alone, then all of them, in
# one process run each (the knobs are read at code generation).
# Usage: bench/attn_knobs.sh [BUILD_DIR]   (default build-gpu)
b=${1:-build-gpu}
all="KFUSE_ATTN90_EX2=1 KFUSE_ATTN90_EDGE=1 KFUSE_ATTN90_LAZY=1 KFUSE_ATTN90_DESC=1 KFUSE_ATTN90_PINGPONG=1 KFUSE_ATTN_FAST_TANH=1"
for v in "" KFUSE_ATTN90_EX2=1 KFUSE_ATTN90_EDGE=1 KFUSE_ATTN90_LAZY=1 KFUSE_ATTN90_DESC=1 \
  KFUSE_ATTN90_PINGPONG=1 KFUSE_ATTN_FAST_TANH=1 "$all" "$all KFUSE_ATTN90_PINGPONG=0"; do
  echo "== ${v:-defaults}"
  # shellcheck disable=SC2086 # $v is a list of assignments
  env $v "$b/bench/bench_attention" --prefill || exit 1
done
