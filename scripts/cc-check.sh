#!/usr/bin/env bash
# cc-check.sh FILE.c... - compiles sources alone with the project's warning
# flags (no link), so a half-finished file never breaks the shared build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
for f in "$@"; do
  gcc -std=c11 -D_GNU_SOURCE -DKFUSE_BUILDING -DKFUSE_SOURCE_DIR=\"$root\" \
    -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror -fsyntax-only \
    -I"$root/include" -I"$root/src" -I"$root/tests" -I"$root/tools" -I/usr/local/cuda/include \
    -I"$root/build/generated" "$f"
done
