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
