#!/usr/bin/env bash
# deps.sh - installs the Debian packages kfuse builds and tests with, when
# they are missing. Run as root on Debian; elsewhere it lists what is missing.
# The CUDA toolkit (nvcc, NVRTC, headers) is expected under /usr/local/cuda.
set -euo pipefail
pkgs=(cmake make gcc pkg-config libyaml-dev check libsubunit-dev libxxhash-dev clang
      libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "deps.sh: missing packages: ${missing[*]} (install them as root)" >&2
    exit 1
  fi
  echo "deps.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -e /usr/local/cuda/include/nvrtc.h ] && ! command -v nvcc >/dev/null; then
  echo "deps.sh: the CUDA toolkit (nvrtc.h, libnvrtc) was not found under /usr/local/cuda" >&2
  exit 1
fi
# The Python suites (tests/python) compare the CPU reference with numpy and
# install the package into a venv, for the python3 that CMake finds first
# (the one on PATH): numpy from pip, else Debian's packages where pip may
# not install into the system Python (PEP 668), which also lacks ensurepip
# without python3-venv.
py_apt() {
  [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null || return 1
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "$@" >/dev/null
}
if command -v python3 >/dev/null; then
  if ! python3 -c "import numpy" 2>/dev/null; then
    echo "deps.sh: installing numpy for $(command -v python3)" >&2
    python3 -m pip install -q numpy >/dev/null 2>&1 || py_apt python3-numpy ||
      { echo "deps.sh: numpy is missing for python3 (pip install numpy)" >&2; exit 1; }
  fi
  if ! python3 -c "import ensurepip" 2>/dev/null; then
    py_apt python3-venv || { echo "deps.sh: python3 has no venv/ensurepip" >&2; exit 1; }
  fi
fi
