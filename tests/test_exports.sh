#!/usr/bin/env bash
# test_exports.sh LIBKFUSE.so KFUSE.h - checks that the shared library exports
# exactly the functions declared KF_API in the public header: nothing
# internal leaks out (everything else is hidden), and nothing the header
# promises is missing.
set -euo pipefail
lib=${1:?usage: test_exports.sh LIBKFUSE.so KFUSE.h}
header=${2:?usage: test_exports.sh LIBKFUSE.so KFUSE.h}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kfuse-exports.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Declared: the identifier before the first '(' of each KF_API declaration,
# read with comments removed and lines joined (declarations may wrap).
sed -e '/^[[:space:]]*#/d' -e 's://.*$::' "$header" | tr '\n' ' ' | sed -e 's:/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/: :g' |
  grep -oP 'KF_API\s[^;(]*?\b\K[A-Za-z_]\w*(?=\s*\()' | grep -v '^KF_API$' | sort -u >"$tmp/declared"
[ -s "$tmp/declared" ] || { echo "test_exports: no KF_API declarations found in $header" >&2; exit 1; }

# Exported: defined dynamic symbols, less what every linker adds.
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' |
  grep -vxE '_init|_fini|_edata|_end|__bss_start|_IO_stdin_used' | sort -u >"$tmp/exported"

status=0
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
bad_prefix=$(grep -v '^kf_' "$tmp/declared" || true)
if [ -n "$extra" ]; then
  echo "test_exports: FAIL: exported but not declared KF_API in kfuse.h (make them static or" \
    "keep them hidden):" >&2
  echo "$extra" | sed 's/^/  /' >&2
  status=1
fi
if [ -n "$missing" ]; then
  echo "test_exports: FAIL: declared KF_API in kfuse.h but not defined in the library:" >&2
  echo "$missing" | sed 's/^/  /' >&2
  status=1
fi
if [ -n "$bad_prefix" ]; then
  echo "test_exports: FAIL: public functions without the kf_ prefix:" >&2
  echo "$bad_prefix" | sed 's/^/  /' >&2
  status=1
fi
echo "test_exports: $(wc -l <"$tmp/declared") declared, $(wc -l <"$tmp/exported") exported"
exit $status
