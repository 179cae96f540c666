#!/usr/bin/env bash
# test_py_package.sh SRC_DIR - the Python package as a user gets it: `pip
# install SRC_DIR` into a clean venv (pip fetches scikit-build-core; CMake
# builds libkfuse), then, from a directory outside the repository, with no
# KFUSE_LIB, PYTHONPATH or CUDA directory on PATH: import kfuse (the
# library inside the installed package, NVRTC found on its own), build a
# graph, compile it for sm_90 with NVRTC and run the CPU reference.
set -euo pipefail
src=$(cd "${1:?usage: test_py_package.sh SRC_DIR}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kfuse-pip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_py_package: FAIL: $*" >&2; exit 1; }
step() { echo "test_py_package: $*"; }

# PATH without the CUDA toolkit's bin (no nvcc): the build must find the
# toolkit itself, and the package NVRTC
path=$(echo "$PATH" | tr ':' '\n' | grep -v cuda | paste -sd:)
run() { env -u KFUSE_LIB -u KFUSE_BUILD -u PYTHONPATH -u LD_LIBRARY_PATH -u CUDA_HOME \
  -u CUDA_PATH -u CUDAToolkit_ROOT PATH="$tmp/venv/bin:$path" "$@"; }

step "python3 -m venv"
python3 -m venv "$tmp/venv"
cd "$tmp"
step "pip install $src"
start=$(date +%s)
if ! run pip install --no-cache-dir "$src" >"$tmp/pip.log" 2>&1; then
  # a machine with no package index (the GPU machine): the build backend
  # cannot be fetched, which says nothing about kfuse; 77 is CTest's skip
  if grep -q "No matching distribution found for scikit-build-core" "$tmp/pip.log"; then
    echo "test_py_package: skipped: scikit-build-core cannot be fetched (no package index;"
    echo "  PIP_FIND_LINKS=DIR with its wheels, or PIP_INDEX_URL, makes it available)"
    exit 77
  fi
  tail -n 40 "$tmp/pip.log"
  fail "pip install"
fi
step "built and installed in $(( $(date +%s) - start )) s"
run pip install -q numpy >"$tmp/numpy.log" 2>&1 || { cat "$tmp/numpy.log"; fail "pip install numpy"; }

step "import, compile, reference run from $tmp"
run python - "$tmp/venv" <<'PY' || fail "the installed package"
import os, sys
import kfuse
venv = os.path.realpath(sys.argv[1])
assert os.path.realpath(kfuse.__file__).startswith(venv), kfuse.__file__
assert os.path.realpath(kfuse.lib_path).startswith(venv), kfuse.lib_path
assert "numpy" not in sys.modules and "torch" not in sys.modules
g = kfuse.Graph()
x = g.input("x", "f32", [4, 8])
g.output(g.softmax(x * 2.0, -1))
plan = g.compile(arch="sm_90")
assert plan.compile_stats()["kernels"] == plan.launches >= 1
import numpy as np
a = np.linspace(-2, 2, 32, dtype=np.float32).reshape(4, 8)
(y,) = g.run_reference(a)
e = np.exp(2.0 * a.astype(np.float64))
np.testing.assert_allclose(y, e / e.sum(-1, keepdims=True), rtol=1e-6)
p = kfuse.compile_yaml_string(g.to_yaml(), arch="sm_90")
assert p.inputs == [("f32", (4, 8))]
print("test_py_package: kfuse", kfuse.__version__, "from", kfuse.lib_path)
PY
[ ! -e "$src/python/kfuse/libkfuse.so" ] || fail "pip left a libkfuse.so in the source tree"
step "ok"
