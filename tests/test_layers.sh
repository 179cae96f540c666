#!/usr/bin/env bash
# test_layers.sh - the layering rules of docs/architecture.md, checked from
# the #include lines of src/ and from the symbol references of the
# library's objects (nm): each folder knows only the folders below it,
#   core < ir < fuser < codegen < runtime < pipeline,
# so no call goes up, and hence no loop of calls spans two folders (every
# call between folders goes down the ranks: a loop would need one going
# up); the runtime uses the fuser's plan structs only (it calls no fuser
# function); and no two files of src/ have one name (two plan.h were two
# different things). And the one-header rule (docs/architecture.md,
# "Files"): each x.c has its x.h beside it, unless every name it defines
# is public (kf_, declared in include/); every function a src/ header
# declares is defined in the .c of the header's name; no function is
# declared in two headers; every name an object defines is declared in its
# own header and has the folder's prefix (core_ ir_ fuse_ cg_ rt_ pl_).
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
# ---- one header per file ------------------------------------------------
# Each object's defined names (nm), by the src/ path of its .c.
declare -A defs # "DIR/x" -> " sym sym ... "
obj_re='/src/([a-z_]+/[a-z0-9_]+)\.c\.o:'
while read -r path _ sym; do
  # reserved names are the compiler's (ASan's __odr_asan.NAME), not ours
  [[ $sym == __* || $sym == *.* ]] && continue
  [[ $path =~ $obj_re ]] && [ -n "$sym" ] && defs[${BASH_REMATCH[1]}]+=" $sym "
done < <(nm -A -g --defined-only "$@" 2>/dev/null)
# Each x.c has x.h, or defines public names only (include/ declares them).
api=$(cat "$src"/../include/*.h)
for c in $(cd "$src" && find . -name '*.c' | sed 's|^\./||; s|\.c$||' | sort); do
  [ -f "$src/$c.h" ] && continue
  for sym in ${defs[$c]:-}; do
    if [[ $sym != kf_* ]] || ! grep -qw -- "$sym" <<<"$api"; then
      echo "one header: src/$c.c defines $sym but has no $c.h"
      fail=1
    fi
  done
done
# Known exceptions to "declared in the header of the .c that defines it":
# "HEADER NAME reason". Names defined outside src/ (generated) only.
exempt=(
  "codegen/templates.h cg_templates the embedded templates, generated at build time (cmake/embed_templates.cmake)"
)
# The functions (and extern variables) each src/ header declares, from its
# text without comments (gcc -fpreprocessed) and without preprocessor lines:
# brace bodies dropped, statements split at ';', the name the one before
# the first '(' (or a function typedef's list, "ir_ref_eval_fn a, b;", the
# function typedefs collected from every header first).
declared() { # MODE(names|fntypes) HEADER... -> lines "NAME"
  local mode=$1
  shift
  for h in "$@"; do
    gcc -fpreprocessed -dD -E -P -x c "$h" 2>/dev/null |
      sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | grep -v '^[[:space:]]*#' | tr '\n' ' '
    echo
  done | awk -v mode="$mode" -v fntypes="${fntypes:-}" '
         BEGIN { n = split(fntypes, t, " "); for (k = 1; k <= n; k++) fnty[t[k]] = 1 }
         { d = 0; out = ""
           for (i = 1; i <= length($0); i++) { ch = substr($0, i, 1)
             if (ch == "{") { if (d++ == 0) out = out ";"; continue }
             if (ch == "}") { d--; continue }
             if (d == 0) out = out ch }
           n = split(out, st, ";")
           for (j = 1; j <= n; j++) { s = st[j]; gsub(/[[:space:]]+/, " ", s); sub(/^ /, "", s)
             if (s == "" || s ~ /^(typedef|static|struct [A-Za-z_0-9]+ ?$|enum|union)/) {
               if (s ~ /^typedef .*\(/ && match(s, /[A-Za-z_][A-Za-z_0-9]* ?\(/) && s !~ /\(\*/) {
                 f = substr(s, RSTART, RLENGTH); sub(/ ?\($/, "", f)
                 if (mode == "fntypes") print f }
               continue }
             if (mode == "fntypes") continue
             split(s, w, " ")
             if (w[1] in fnty) { sub(/^[^ ]+ /, "", s); gsub(/ /, "", s); m = split(s, nm, ",")
               for (k = 1; k <= m; k++) print nm[k]; continue }
             if (s ~ /^extern /) { if (match(s, /[A-Za-z_][A-Za-z_0-9]* ?(\[[^]]*\])? ?$/)) {
                 v = substr(s, RSTART, RLENGTH); sub(/ ?\[.*$/, "", v); sub(/ $/, "", v); print v }
               continue }
             if (match(s, /[A-Za-z_][A-Za-z_0-9]* ?\(/)) {
               f = substr(s, RSTART, RLENGTH); sub(/ ?\($/, "", f)
               if (f != "__attribute__") print f } } }'
}
declare -A decl_in # NAME -> first header
n_decl=0
fntypes=$(declared fntypes $(find "$src" -name '*.h') | tr '\n' ' ')
while read -r h; do
  rel=${h#"$src"/}
  base=${rel%.h}
  while read -r name; do
    [ -n "$name" ] || continue
    n_decl=$((n_decl + 1))
    if [ -n "${decl_in[$name]:-}" ]; then
      echo "one header: $name is declared in src/${decl_in[$name]} and in src/$rel"
      fail=1
    else
      decl_in[$name]=$rel
    fi
    [[ " ${defs[$base]:-} " == *" $name "* ]] && continue
    if printf '%s\n' "${exempt[@]}" | grep -q "^$rel $name "; then continue; fi
    where=${home[$name]:+ (defined in the ${home[$name]} layer)}
    echo "one header: src/$rel declares $name, which src/$base.c does not define$where"
    fail=1
  done < <(declared names "$h")
done < <(find "$src" -name '*.h' | sort)
[ $n_decl -gt 300 ] || { echo "layering: the header scan found too few declarations ($n_decl)"; exit 2; }
# And the other way: every name an object defines is public (kf_) or
# declared in its own header, and has its folder's prefix.
declare -A prefix=([core]=core_ [ir]=ir_ [fuser]=fuse_ [codegen]=cg_ [runtime]=rt_ [pipeline]=pl_)
for c in "${!defs[@]}"; do
  dir=${c%%/*}
  for sym in ${defs[$c]}; do
    [[ $sym == kf_* ]] && continue
    # NVTX v3 is header-only: nvtx.c compiles its implementation, whose
    # functions are NVTX's names, not ours.
    [[ $c == runtime/nvtx && ($sym == nvtx* || $sym == InitializeInjectionNvtx2*) ]] && continue
    if [[ $sym != "${prefix[$dir]:-?}"* ]]; then
      echo "one header: src/$c.c defines $sym, without the prefix ${prefix[$dir]:-?} of $dir"
      fail=1
    fi
    if [ "${decl_in[$sym]:-}" != "$c.h" ]; then
      echo "one header: src/$c.c defines $sym, not declared in src/$c.h (static, or declare it there)"
      fail=1
    fi
  done
done

[ $fail -eq 0 ] && echo "layering: ok (${#home[@]} symbols, $n_decl declarations)"
exit $fail
