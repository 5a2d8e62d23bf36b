#!/bin/sh
# src/core, the base every layer sits on, names no backend: each name of the
# table of backends (the X(name) lines of src/backend/backends.c) is looked for
# as a word, in any case, in every file of src/core but on `#include <...>`
# lines (<netinet/tcp.h> is the system's). Exit 0, or 1 naming FILE:LINE of
# each mention.
# usage: check_core_names.sh [SOURCE_ROOT]   (ctest: design/core_names_no_backend)
set -eu
root=${1:-$(dirname "$0")/..}
cd "$root"
table=src/backend/backends.c
names=$(sed -n 's/^[[:space:]]*X(\([a-z0-9_]*\)).*/\1/p' "$table" | tr '\n' '|' | sed 's/|$//')
[ -n "$names" ] || { echo "check_core_names: no X(name) line in $table"; exit 1; }
hits=$(grep -rnwiE "$names" src/core | grep -vE '^[^:]*:[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*<' || true)
if [ -n "$hits" ]; then
    echo "check_core_names: src/core names a backend ($names); say what it needs in its own terms:"
    echo "$hits" | sed 's/^/  /'
    exit 1
fi
echo "check_core_names: ok ($(echo "$names" | tr '|' ' ') absent from src/core)"
