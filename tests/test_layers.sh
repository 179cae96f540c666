#!/usr/bin/env bash
# test_layers.sh - the layering rules of docs/architecture.md, checked from
# the #include lines of src/ and from the symbol references of the
# library's objects (nm): each folder knows only the folders below it,
#   core < ir < fuser < codegen < runtime < pipeline,
# so no call goes up, and hence no loop of calls spans two folders (every
# call between folders goes down the ranks: a loop would need one going
# up); the runtime uses the fuser's plan structs only (it calls no fuser
# function); and no two files of src/ have one name (two plan.h were two
# different things).
# Usage: test_layers.sh SRC_DIR OBJECT...   (the objects of kfuse_obj)
set -uo pipefail
src=$1
shift
fail=0
declare -A rank=([core]=0 [ir]=1 [fuser]=2 [codegen]=3 [runtime]=4 [pipeline]=5)
# Known debt, to shrink only: each entry "FILE -> LAYER" is an include
# that breaks the rule today; the test fails when one is gone (delete the
# line) and on any include not listed. None is left.
known=()

# ---- includes -----------------------------------------------------------
found=()
while IFS= read -r line; do
  file=${line%%:*}
  text=${line#*:}
  text=${text#*:} # after FILE:LINE:
  re='^[[:space:]]*#[[:space:]]*include[[:space:]]*"([a-z_]+)/'
  [[ $text =~ $re ]] || continue
  inc=${BASH_REMATCH[1]}
  rel=${file#"$src"/}
  layer=${rel%%/*}
  lr=${rank[$layer]:--1} ir=${rank[$inc]:--1}
  [ "$lr" -ge 0 ] && [ "$ir" -ge 0 ] || continue
  [ "$ir" -le "$lr" ] && continue
  entry="src/$rel -> $inc"
  found+=("$entry")
  if printf '%s\n' "${known[@]}" | grep -qxF -- "$entry"; then continue; fi
  echo "layering: $entry: $layer may not include $inc (a higher layer)"
  fail=1
done < <(grep -rn --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$src")
for k in "${known[@]}"; do
  if ! printf '%s\n' "${found[@]}" | grep -qxF -- "$k"; then
    echo "layering: known debt '$k' is gone: delete it from the list in $0"
    fail=1
  fi
done

# ---- file names ---------------------------------------------------------
while read -r dup; do
  echo "layering: two files named $dup:" $(find "$src" -name "$dup" | sed "s|^$src/||")
  fail=1
done < <(find "$src" -name '*.[ch]' -printf '%f\n' | sort | uniq -d)

# ---- symbol references (nm) --------------------------------------------
[ $# -gt 0 ] || { echo "layering: no objects given"; exit 2; }
declare -A home # symbol -> defining layer
# nm -A prefixes each line with the object's path: .../src/LAYER/file.c.o:
layer_re='/src/([a-z_]+)/[^/:]+\.o:'
while read -r path _ sym; do # PATH:ADDRESS TYPE SYMBOL
  [[ $path =~ $layer_re ]] && [ -n "$sym" ] && home[$sym]=${BASH_REMATCH[1]}
done < <(nm -A -g --defined-only "$@" 2>/dev/null)
[ ${#home[@]} -gt 100 ] || { echo "layering: nm found too few symbols (${#home[@]})"; exit 2; }
while read -r path _ sym; do # PATH: U SYMBOL
  [[ $path =~ $layer_re ]] || continue
  l=${BASH_REMATCH[1]}
  to=${home[$sym]:-}
  [ -n "$to" ] && [ "$to" != "$l" ] || continue
  lr=${rank[$l]:--1} tr=${rank[$to]:--1}
  obj=${path##*/src/}
  if [ "$tr" -gt "$lr" ]; then
    echo "layering: ${obj%:} calls $sym of $to (a higher layer)"
    fail=1
  elif [ "$l" = runtime ] && [ "$to" = fuser ]; then
    echo "layering: ${obj%:} calls $sym of the fuser (the runtime reads its plan structs only)"
    fail=1
  fi
done < <(nm -A -u "$@" 2>/dev/null)
[ $fail -eq 0 ] && echo "layering: ok (${#home[@]} symbols)"
exit $fail
