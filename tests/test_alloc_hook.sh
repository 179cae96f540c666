#!/usr/bin/env bash
# test_alloc_hook.sh SRC_DIR [LIBKFUSE.a] - fails if any kfuse source calls
# the C allocators directly instead of the hook in src/core/alloc.c, so the
# fault-injection sweep (tests/test_oom.c) keeps seeing every allocation.
# Two views: the sources with comments and strings removed, and the static
# library's undefined symbols (which also catches a call hidden in a macro).
set -euo pipefail
src=${1:?usage: test_alloc_hook.sh SRC_DIR [LIBKFUSE.a]}
lib=${2:-}
fns='malloc|calloc|realloc|reallocarray|strdup|strndup|asprintf|vasprintf|open_memstream|aligned_alloc|posix_memalign'
bad=0
while IFS= read -r -d '' f; do
  [ "$(basename "$f")" = alloc.c ] && continue
  # Comments, string and character literals out; then calls of the family.
  hits=$(perl -0777 -pe 's{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g; s{"(\\.|[^"\\])*"}{""}g; s{'\''(\\.|[^'\''\\])*'\''}{0}g' "$f" |
    grep -nP "(?<![\w.>])($fns)\s*\(" || true)
  if [ -n "$hits" ]; then
    echo "$f: calls an allocator directly (use core_malloc & co. from core/alloc.h):" >&2
    echo "$hits" >&2
    bad=1
  fi
done < <(find "$src" -name '*.[ch]' -print0)
if [ -n "$lib" ]; then
  # Every object but alloc.c's must leave these symbols undefined-free.
  hits=$(nm -A "$lib" 2>/dev/null | grep -E " U ($fns)\$" | grep -v '/alloc\.c\.o:\|alloc\.c\.o:' || true)
  if [ -n "$hits" ]; then
    echo "$lib: objects other than alloc.c.o reference the C allocators:" >&2
    echo "$hits" >&2
    bad=1
  fi
fi
[ $bad = 0 ] && echo "test_alloc_hook: every allocation in $src goes through core/alloc.h"
exit $bad
