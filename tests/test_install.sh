#!/usr/bin/env bash
# test_install.sh BUILD_DIR [C_COMPILER] - installs a built tree into a
# temporary prefix and checks that an outside project can use it: the
# installed files, the installed `kfuse` program, find_package(kfuse) with
# kfuse::kfuse and kfuse::kfuse_static, and pkg-config (shared and static).
# Installed programs run with LD_LIBRARY_PATH minus any directory holding a
# libkfuse, so the RPATH is what finds libkfuse, while dependencies from a
# private prefix (scripts/gpu-check.sh) are still found.
set -euo pipefail
build=$(cd "${1:?usage: test_install.sh BUILD_DIR [CC]}" && pwd)
cc=${2:-cc}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kfuse-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "test_install: FAIL: $*" >&2; exit 1; }
step() { echo "test_install: $*"; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }

libdir=$(dirname "$(find "$prefix" -name "libkfuse.a" | head -n 1)")
[ -n "$libdir" ] || fail "no lib directory under $prefix"
for f in include/kfuse.h bin/kfuse; do
  [ -f "$prefix/$f" ] || fail "missing $f"
done
for f in libkfuse.so libkfuse.a pkgconfig/kfuse.pc cmake/kfuse/kfuseConfig.cmake \
  cmake/kfuse/kfuseConfigVersion.cmake cmake/kfuse/kfuseTargets.cmake; do
  [ -e "$libdir/$f" ] || fail "missing ${libdir#"$prefix"/}/$f"
done
ls "$libdir"/libkfuse.so.[0-9]* >/dev/null 2>&1 || fail "no versioned libkfuse.so.N"
# Only the public header is installed: internal headers stay in the tree.
extra=$(find "$prefix/include" -type f ! -name kfuse.h)
[ -z "$extra" ] || fail "unexpected installed headers: $extra"

step "installed kfuse --version (finds its library through its RPATH)"
# LD_LIBRARY_PATH loses every directory that holds a libkfuse (the build
# tree), so libkfuse can only come through the RPATH; the other directories
# stay, for dependencies in a private prefix (scripts/gpu-check.sh puts
# libyaml there).
ldpath=""
IFS=: read -r -a lddirs <<<"${LD_LIBRARY_PATH:-}"
for d in "${lddirs[@]}"; do
  [ -n "$d" ] || continue
  compgen -G "$d/libkfuse.so*" >/dev/null && continue
  ldpath="$ldpath${ldpath:+:}$d"
done
run_clean() { if [ -n "$ldpath" ]; then env LD_LIBRARY_PATH="$ldpath" "$@"; else env -u LD_LIBRARY_PATH "$@"; fi; }
out=$(run_clean "$prefix/bin/kfuse" --version) || fail "installed kfuse --version"
grep -q '0\.' <<<"$out" || fail "unexpected version output: $out"
loaded=$(run_clean ldd "$prefix/bin/kfuse" | sed -n 's/.*libkfuse\.so[^ ]* => \([^ ]*\) .*/\1/p')
[ -n "$loaded" ] && [ "$(realpath "$(dirname "$loaded")")" = "$(realpath "$libdir")" ] ||
  fail "installed kfuse loads '${loaded:-nothing}', not $libdir/libkfuse.so, through its RPATH"

step "find_package(kfuse): consumer and consumer_static"
cmake -S "$here/install_consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release ${CUDAToolkit_ROOT:+-DCUDAToolkit_ROOT=$CUDAToolkit_ROOT} \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configuring the consumer"; }
cmake --build "$tmp/cmake-build" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; fail "building the consumer"; }
run_clean "$tmp/cmake-build/consumer" || fail "consumer (kfuse::kfuse)"
run_clean "$tmp/cmake-build/consumer_static" || fail "consumer_static (kfuse::kfuse_static)"
# The shared consumer really uses the installed shared library.
# (ldd's output is captured first: `ldd | grep -q` can fail under pipefail
# when grep exits at the first match and ldd gets SIGPIPE.)
deps=$(run_clean ldd "$tmp/cmake-build/consumer")
grep -q "$libdir/libkfuse.so" <<<"$deps" || fail "consumer does not load $libdir/libkfuse.so: $deps"
deps=$(run_clean ldd "$tmp/cmake-build/consumer_static")
if grep -q libkfuse <<<"$deps"; then
  fail "consumer_static loads a shared libkfuse"
fi

step "pkg-config: shared and --static"
export PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
[ "$(pkg-config --modversion kfuse)" = "$(sed -n 's/^#define KFUSE_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/kfuse.h")" ] ||
  fail "pkg-config version differs from kfuse.h"
incdir=$(pkg-config --variable=includedir kfuse)
[ "$(realpath "$incdir")" = "$(realpath "$prefix/include")" ] ||
  fail "pkg-config includedir $incdir is not the prefix's include/"
# shellcheck disable=SC2046 # word splitting of the flags is intended
"$cc" -std=c11 -o "$tmp/pc_shared" "$here/install_consumer/consumer.c" \
  $(pkg-config --cflags --libs kfuse) -Wl,-rpath,"$libdir" || fail "pkg-config shared link"
run_clean "$tmp/pc_shared" || fail "pc_shared"
static_libs=$(pkg-config --static --libs kfuse | sed "s|-lkfuse|$libdir/libkfuse.a|")
# shellcheck disable=SC2086
"$cc" -std=c11 -o "$tmp/pc_static" "$here/install_consumer/consumer.c" \
  $(pkg-config --cflags kfuse) $static_libs || fail "pkg-config static link"
run_clean "$tmp/pc_static" || fail "pc_static"
step "PASS"
