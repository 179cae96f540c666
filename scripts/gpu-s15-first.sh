#!/bin/bash
# The first GPU call after session 15: the unverified branches (s15-dual, s15-compile, s15-attn) and their benches.
#   OUT=$OUT bash scripts/gpu-s15-first.sh   (carry .debs)
set -u
cd "$(dirname "$0")/.."
L=$OUT/c4.log
CTEST=0 SANITIZE=0 OUT=$OUT/chk bash scripts/gpu-check.sh >/dev/null 2>&1
grep -E "build|total" $OUT/chk/summary.txt >> $L
. build-gpu/env.sh
B=build-gpu
export KFUSE_GEMM_PAIR=1
(cd $B && timeout 170 ctest -j6 -R 'test_gpu_gemm90|test_gpu_matmul_lib|test_gpu_attention$|test_gpu_runtime|test_gpu_gemm80|test_gpu_attention_decode' --output-on-failure -V) > /tmp/ct.log 2>&1
echo "ctest rc=$?" >> $L
grep -E "tests passed|tests failed|Failed|Passed|runs within|paired|Checks:|MISMATCH|Assertion|bad at|Timeout" /tmp/ct.log | grep -v "log (runtime)" | head -50 >> $L
cp /tmp/ct.log $OUT/ct.log
echo "== compile" >> $L; timeout 45 $B/bench/bench_matmul_compile --reps 1 >> $L 2>&1
echo "== swiglu" >> $L
timeout 60 python3 bench/swiglu_peers.py >> $L 2>&1
KFUSE_MATMUL=template timeout 30 python3 bench/swiglu_peers.py --no-torch >> $L 2>&1
echo "== attn knobs" >> $L; timeout 90 sh bench/attn_knobs.sh $B >> $L 2>&1
echo "== sdpa" >> $L; timeout 60 python3 bench/sdpa.py >> $L 2>&1
