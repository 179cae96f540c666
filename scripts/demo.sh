#!/usr/bin/env bash
# demo.sh BUILD_DIR - runs kfuse end to end as far as the project goes: the
# program's version, what it knows about this machine, and the basic example
# (build a graph, run it on the CPU reference, plan it). `make demo` calls it.
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

section "done"
echo "demo finished: the graph ran on the CPU reference interpreter."
