#!/usr/bin/env bash
# source-snapshot.sh KFUSE OUTDIR - what the code generator writes, for a
# before/after diff of a refactor that must not change it: `kfuse emit` and
# `kfuse compile` (its KFUSE_DUMP_DIR sources and CUBINs, sm_90, no GPU
# needed) of every graph in examples/graphs, bench/graphs, tests/check_graphs
# and four extra row graphs (rows split over a cluster, f64 and i32 rows, a
# long bf16 row), then `kfuse emit` under nine knob variants. Usage:
#   scripts/source-snapshot.sh build-old/kfuse /tmp/old
#   scripts/source-snapshot.sh build/kfuse /tmp/new
#   diff -r /tmp/old /tmp/new && echo identical
set -euo pipefail
kfuse=$(realpath "${1:?usage: source-snapshot.sh KFUSE OUTDIR}")
out=${2:?usage: source-snapshot.sh KFUSE OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
mkdir -p "$out/graphs"
out=$(realpath "$out")
export KFUSE_CACHE_DIR="$out/.cache" # fresh: every kernel compiled and dumped
graph() { # NAME DTYPE SHAPE NODES...
  local f="$out/graphs/extra_$1.yaml"
  printf 'kfuse: 1\nname: %s\ninputs:\n%s\nnodes:\n%s\noutputs: [%s]\n' "$1" "$2" "$3" "$4" > "$f"
}
graph split_softmax '  x: {dtype: f32, shape: [512, 131072]}' \
  '  - {name: y, op: softmax, args: [x], axis: -1}' y
graph split_ln '  x: {dtype: f32, shape: [512, 131072]}
  w: {dtype: f32, shape: [131072]}
  b: {dtype: f32, shape: [131072]}' '  - {name: y, op: layernorm, args: [x, w, b], eps: 1.0e-5}' y
graph f64_rows '  x: {dtype: f64, shape: [64, 3000]}
  i: {dtype: i32, shape: [64, 4096]}' '  - {name: y, op: softmax, args: [x], axis: -1}
  - {name: s, op: sum, args: [i], axes: [-1]}
  - {name: m, op: max, args: [i], axes: [-1]}' 'y, s, m'
graph bf16_long '  x: {dtype: bf16, shape: [256, 262144]}' \
  '  - {name: y, op: softmax, args: [x], axis: -1}' y
graphs=("$root"/examples/graphs/*.yaml "$root"/bench/graphs/*.yaml
        "$root"/tests/check_graphs/*.yaml "$out"/graphs/*.yaml)
name() { # examples_graphs_softmax.yaml, ..., extra_split_ln.yaml
  local d; d=$(dirname "$1")
  echo "$(basename "$(dirname "$d")")_$(basename "$d")_$(basename "$1")" | sed 's/^[^_]*_graphs_extra_/extra_/'
}
for g in "${graphs[@]}"; do
  n=$(name "$g")
  "$kfuse" emit "$g" --arch sm_90 > "$out/$n.emit" 2>&1 || echo "rc=$?" >> "$out/$n.emit"
  KFUSE_DUMP_DIR="$out/$n.dump" "$kfuse" compile "$g" --arch sm_90 2>&1 |
    sed -E "s/in [0-9.]+ ms/in X ms/; s|$out/||g" > "$out/$n.compile" || true
done
i=0
while read -r vars; do
  i=$((i + 1))
  mkdir -p "$out/v$i"
  echo "$vars" > "$out/v$i/vars"
  for g in "${graphs[@]}"; do
    n=$(name "$g")
    env $vars "$kfuse" emit "$g" --arch sm_90 > "$out/v$i/$n.emit" 2>&1 || echo "rc=$?" >> "$out/v$i/$n.emit"
  done
done <<'V'
KFUSE_MATH=strict
KFUSE_MATH=fast
KFUSE_ROW_HOLD=0 KFUSE_ROW_UNROLL=4 KFUSE_ROW_BARRIERS=2
KFUSE_ROW_ONLINE=0 KFUSE_ROW_UNROLL=0
KFUSE_ROW_RECOMPUTE=1 KFUSE_ROW_PREFETCH=1 KFUSE_ROW_L2PF=7 KFUSE_ROW_STREAM=evict_first
KFUSE_ROW_STAGE=1 KFUSE_ROW_PERSIST=1
KFUSE_ROW_PERSIST=dynamic KFUSE_ROW_THREADS=256 KFUSE_ROW_SMEM_PAD=80000 KFUSE_ROW_MIN_BLOCKS=2
KFUSE_ROW_SPLIT=0 KFUSE_ROW_WAVES=8 KFUSE_NO_HORIZONTAL=1
KFUSE_NO_FUSION=1
V
rm -rf "$out/.cache"
echo "source-snapshot: $(find "$out" -type f | wc -l) files in $out"
