#!/usr/bin/env bash
# test_gen_ops.sh GEN_OPS SRC_DIR BUILT_COMMON - the generator of common.cuh
# (cmake/gen_ops.c): it reproduces the build's common.cuh from
# templates/common.cuh.in, writes a device function for every pointwise op
# of src/ir/ops.def, and refuses a malformed template (a missing, unknown or
# repeated section, an op in no float range) with a message and no output.
set -euo pipefail
gen=${1:?usage: test_gen_ops.sh GEN_OPS SRC_DIR BUILT_COMMON}
src=${2:?}
built=${3:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() { echo "test_gen_ops: $*" >&2; bad=1; }

"$gen" "$src/templates/common.cuh.in" "$tmp/common.cuh"
cmp -s "$tmp/common.cuh" "$built" || fail "output differs from the build's $built"
grep -q '^@@' "$tmp/common.cuh" && fail "a marker or note line was copied"
# every UNARY and BINARY op has its kf_<lname>, for float and double unless
# it is one template over every type
ops=$(sed -n 's/^\(UNARY\|BINARY\)(\([A-Z_0-9]*\), \([a-z_0-9]*\),.*/\3/p' "$src/src/ir/ops.def")
[ -n "$ops" ] || fail "no op rows found in ops.def"
for op in $ops; do
  if grep -q "^template <typename T> KF_INLINE [a-zT]* kf_$op(T " "$tmp/common.cuh"; then continue; fi
  grep -q "^KF_INLINE [a-z]* kf_$op(float " "$tmp/common.cuh" || fail "no float kf_$op"
  grep -q "^KF_INLINE [a-z]* kf_$op(double " "$tmp/common.cuh" || fail "no double kf_$op"
done

# broken templates: exit 1, the expected message, nothing written
expect_error() { # NAME SED-SCRIPT MESSAGE
  sed "$2" "$src/templates/common.cuh.in" > "$tmp/$1.in"
  if "$gen" "$tmp/$1.in" "$tmp/$1.cuh" 2> "$tmp/$1.err"; then
    fail "$1: accepted"
  else
    grep -qF "$3" "$tmp/$1.err" || fail "$1: message '$(cat "$tmp/$1.err")' lacks '$3'"
  fi
  [ ! -e "$tmp/$1.cuh" ] && [ ! -e "$tmp/$1.cuh.tmp" ] || fail "$1: output left behind"
}
expect_error missing '/^@@ops f64@@$/d' "no @@ops f64@@ line"
expect_error unknown 's/^@@ops bools@@$/@@ops bool@@/' "unknown section 'bool'"
expect_error twice 's/^@@ops ints@@$/@@ops ints@@\n@@ops ints@@/' "@@ops ints@@ twice"
expect_error gap '/^@@ops f32 MAXIMUM..@@$/d' "op MAXIMUM: its float function is in no @@ops f32@@ range"
expect_error overlap 's/^@@ops f32 MAXIMUM..@@$/@@ops f32 POW..@@/' "op POW: float function in two @@ops f32@@ ranges"
expect_error noop 's/^@@ops f32 MAXIMUM..@@$/@@ops f32 MAXIMUS..@@/' "no UNARY or BINARY op MAXIMUS"

[ $bad = 0 ] && echo "test_gen_ops: common.cuh generated from ops.def; malformed templates refused"
exit $bad
