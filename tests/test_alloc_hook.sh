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
# One perl over every file: comments, string and character literals out,
# then calls of the family, printed as FILE:LINE: TEXT.
hits=$(find "$src" -name '*.[ch]' ! -name alloc.c -print0 | xargs -0 perl -e '
  my $re = qr/(?<![\w.>])(?:'"$fns"')\s*\(/;
  for my $f (@ARGV) {
    open(my $h, "<", $f) or die "$f: $!";
    local $/; my $t = <$h>; close $h;
    $t =~ s{/\*.*?\*/}{my $c = $&; $c =~ s/[^\n]//g; $c}gse;
    $t =~ s{//[^\n]*}{}g;
    $t =~ s{"(\\.|[^"\\\n])*"}{""}g;
    $t =~ s{'"'"'(\\.|[^'"'"'\\\n])*'"'"'}{0}g;
    my $n = 0;
    for my $l (split /\n/, $t, -1) { $n++; print "$f:$n: $l\n" if $l =~ $re; }
  }')
if [ -n "$hits" ]; then
  echo "calls of the C allocators outside src/core/alloc.c (use core_malloc & co. from core/alloc.h):" >&2
  echo "$hits" >&2
  bad=1
fi
if [ -n "$lib" ]; then
  # Every object but alloc.c's must leave these symbols undefined-free.
  hits=$(nm -A "$lib" 2>/dev/null | grep -E " U ($fns)\$" | grep -v 'alloc\.c\.o:' || true)
  if [ -n "$hits" ]; then
    echo "$lib: objects other than alloc.c.o reference the C allocators:" >&2
    echo "$hits" >&2
    bad=1
  fi
fi
[ $bad = 0 ] && echo "test_alloc_hook: every allocation in $src goes through core/alloc.h"
exit $bad
