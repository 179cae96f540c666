#!/usr/bin/env bash
# gpu-check.sh - builds kfuse and runs the whole suite (CPU + GPU), then
# compute-sanitizer memcheck and racecheck on the GPU suites, on a GPU
# machine with NO package registry: the build dependencies come from a
# folder of Debian packages unpacked into a private prefix.
#
#   scripts/gpu-check.sh [DEBS_DIR]        (default: .debs/ at the repo root)
#
# Environment: OUT (logs and summary; default ./out), CUDA_PATH
# (/usr/local/cuda), JOBS (nproc), KFUSE_DIFF_GRAPHS (random graphs in the
# differential test; 1000). Writes at most five files under $OUT:
# build.log, ctest.log, memcheck.log, racecheck.log, summary.txt.
# Budget: well under 10 minutes on a 16-core H200 host.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
debs=${1:-$root/.debs}
OUT=${OUT:-$root/out}
CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
JOBS=${JOBS:-$(nproc)}
build=$root/build-gpu
prefix=$build/prefix
mkdir -p "$OUT" "$build"
summary=$OUT/summary.txt
: >"$summary"
t_start=$(date +%s)
declare -a rows=()

row() { rows+=("$(printf '%-22s %-8s %6ss  %s' "$1" "$2" "$3" "$4")"); }
elapsed() { echo $(($(date +%s) - $1)); }

# ---- 1. dependencies from .deb files ----------------------------------------
t=$(date +%s)
mkdir -p "$prefix"
n_debs=0
for deb in "$debs"/*.deb; do
  [ -e "$deb" ] || continue
  if command -v dpkg >/dev/null; then
    dpkg -x "$deb" "$prefix"
  else # no dpkg: a .deb is an ar archive holding data.tar.*
    tmp=$(mktemp -d)
    (cd "$tmp" && ar x "$deb" && tar -xf data.tar.* -C "$prefix")
    rm -rf "$tmp"
  fi
  n_debs=$((n_debs + 1))
done
# The .pc files say prefix=/usr: point them at the private prefix.
pcdirs=""
for d in "$prefix"/usr/lib/*/pkgconfig "$prefix"/usr/lib/pkgconfig "$prefix"/usr/share/pkgconfig; do
  [ -d "$d" ] || continue
  sed -i -E "s#^(prefix|exec_prefix|libdir|includedir)=/usr#\1=$prefix/usr#" "$d"/*.pc 2>/dev/null
  pcdirs="$pcdirs${pcdirs:+:}$d"
done
libdirs=$(find "$prefix/usr/lib" -maxdepth 2 -type d 2>/dev/null | tr '\n' ':')
export PKG_CONFIG_PATH="$pcdirs${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export CMAKE_PREFIX_PATH="$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export LD_LIBRARY_PATH="$libdirs${LD_LIBRARY_PATH:-}"
export LIBRARY_PATH="$libdirs${LIBRARY_PATH:-}"
export C_INCLUDE_PATH="$prefix/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
export PATH="$CUDA_PATH/bin:$prefix/usr/bin:$PATH"
pkgconf_bin=$(command -v pkg-config || command -v pkgconf || true)
row "deps ($n_debs .debs)" "$([ -n "$pkgconf_bin" ] && echo ok || echo FAIL)" "$(elapsed "$t")" \
  "pkg-config: ${pkgconf_bin:-missing}"

# ---- 2. build (Release) -------------------------------------------------------
t=$(date +%s)
{
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT="$CUDA_PATH" -DKFUSE_WERROR=OFF \
    ${pkgconf_bin:+-DPKG_CONFIG_EXECUTABLE="$pkgconf_bin"} &&
    cmake --build "$build" -j "$JOBS"
} >"$OUT/build.log" 2>&1
build_rc=$?
row "build" "$([ $build_rc = 0 ] && echo ok || echo FAIL)" "$(elapsed "$t")" "build.log"

# ---- 3. the whole ctest suite ------------------------------------------------------
t=$(date +%s)
ctest_rc=1
if [ $build_rc = 0 ]; then
  (cd "$build" && ctest -j "$JOBS" --timeout 480 --output-on-failure) >"$OUT/ctest.log" 2>&1
  ctest_rc=$?
fi
ctest_line=$(grep -E "tests passed|tests failed" "$OUT/ctest.log" 2>/dev/null | tail -1)
row "ctest (CPU + GPU)" "$([ $ctest_rc = 0 ] && echo ok || echo FAIL)" "$(elapsed "$t")" \
  "${ctest_line:-not run}"

# ---- 4. compute-sanitizer on the GPU suites, small sizes ------------------------------
sanitizer=$(command -v compute-sanitizer || echo "$CUDA_PATH/bin/compute-sanitizer")
gpu_suites=$(ls "$build"/tests/test_gpu_* 2>/dev/null | grep -v '\.' || true)
for tool in memcheck racecheck; do
  t=$(date +%s)
  log=$OUT/$tool.log
  : >"$log"
  rc=0
  if [ $build_rc != 0 ] || [ ! -x "$sanitizer" ]; then
    row "$tool" "SKIP" 0 "no build or no compute-sanitizer"
    continue
  fi
  for suite in $gpu_suites; do
    echo "=== $(basename "$suite")" >>"$log"
    (cd "$root" && KFUSE_TEST_SMALL=1 KFUSE_DIFF_GRAPHS=${KFUSE_SANITIZE_GRAPHS:-20} \
      KFUSE_CACHE_DIR="$build/test-cache" timeout 200 \
      "$sanitizer" --tool "$tool" --error-exitcode 86 --print-limit 20 "$suite") >>"$log" 2>&1
    r=$?
    echo "=== exit $r" >>"$log"
    [ $r = 0 ] || [ $r = 77 ] || rc=$r
  done
  errs=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tr '\n' ' ')
  row "$tool" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(elapsed "$t")" "${errs:-$tool.log}"
done

# ---- 5. summary -------------------------------------------------------------------------
{
  echo "kfuse gpu-check $(git -C "$root" rev-parse --short HEAD 2>/dev/null) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  "$build/kfuse" info 2>/dev/null
  echo
  printf '%-22s %-8s %7s  %s\n' step status time detail
  for r in "${rows[@]}"; do echo "$r"; done
  echo
  echo "GPU suite figures:"
  grep -hE "^(examples:|example |differential|modes:|big tensor|.* worst error|MISMATCH|SKIP)" \
    "$OUT/ctest.log" "$build"/Testing/Temporary/LastTest.log 2>/dev/null | sort -u | head -60
  echo
  echo "total $(elapsed "$t_start")s"
} >"$summary"
cat "$summary"
[ $build_rc = 0 ] && [ $ctest_rc = 0 ] && ! grep -q "FAIL" <(printf '%s\n' "${rows[@]}")
