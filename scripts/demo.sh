#!/usr/bin/env bash
# demo.sh BUILD_DIR - runs kfuse end to end as far as the project goes: the
# program's version, what it knows about this machine, the basic example
# (build a graph in C, run it on the CPU reference, plan it), then a YAML
# graph checked, planned, compiled with NVRTC and run (on the GPU when there
# is one, checked against the CPU reference). `make demo` calls it.
# Exits non-zero when the example fails.
set -uo pipefail

build=${1:-build}
if [ ! -d "$build" ]; then
  echo "demo.sh: build directory '$build' not found (run 'make build' first)" >&2
  exit 2
fi

section() {
  printf '\n==== %s ====\n' "$1"
}

section "kfuse --version"
if ! "$build/kfuse" --version; then
  echo "demo.sh: '$build/kfuse --version' failed" >&2
  exit 1
fi

section "kfuse info"
# Tolerated: without a GPU or driver info may report an error; that is
# information, not a failure of the demo.
"$build/kfuse" info || echo "(kfuse info exited with status $?; continuing)"

section "examples/basic.c: build a graph, run the CPU reference, plan it"
if ! "$build/example_basic"; then
  echo "demo.sh: the basic example failed" >&2
  exit 1
fi

g=examples/graphs/rmsnorm_residual.yaml
section "kfuse check $g"
"$build/kfuse" check "$g" || exit 1

section "kfuse plan $g: one launch for the residual add and the rmsnorm, both outputs"
"$build/kfuse" plan "$g" | head -20

section "kfuse run $g --check: NVRTC-compiled kernels, run on the GPU when there is one"
# With a GPU: the fused kernels run and are checked against the CPU
# reference. Without one: the kernels are compiled for sm_90 and the CPU
# reference runs, and the command says so.
"$build/kfuse" run "$g" --check || exit 1

section "done"
echo "demo finished."
