#!/bin/sh
# libcoll.so exports exactly the functions the installed header declares
# (docs/DESIGN.md "Names and visibility"): the defined text symbols of its
# dynamic symbol table against the function declarations of the preprocessed
# header. Any other defined dynamic symbol but the C++ runtime's weak ones is
# named too. Exit 0 when they match, 1 naming each difference.
# usage: check_exports.sh LIBCOLL_SO HEADER [CC] [NM]   (ctest: design/exports)
set -eu
lib=$1
hdr=$2
cc=${3:-cc}
nm=${4:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -f "$lib" ] || { echo "check_exports: no library $lib" >&2; exit 1; }

"$nm" -D --defined-only "$lib" > "$tmp/dynsym"
awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' "$tmp/dynsym" | sort -u > "$tmp/exported"

# Declarations end in ';': one per line, attributes and typedefs (enums,
# structs) dropped; a function's name is the identifier before its first '('.
"$cc" -E -P -x c '-D__attribute__(x)=' "$hdr" | tr '\n' ' ' | tr ';' '\n' |
    grep -v '^[[:space:]]*typedef' |
    sed -n 's/^[^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*(.*/\1/p' |
    sort -u > "$tmp/declared"
[ -s "$tmp/declared" ] || { echo "check_exports: no function declarations read from $hdr" >&2; exit 1; }

bad=0
comm -13 "$tmp/declared" "$tmp/exported" > "$tmp/extra"
comm -23 "$tmp/declared" "$tmp/exported" > "$tmp/missing"
if [ -s "$tmp/extra" ]; then
    echo "check_exports: $lib exports $(wc -l < "$tmp/extra") functions $hdr does not declare:"
    sed 's/^/  /' "$tmp/extra"
    bad=1
fi
if [ -s "$tmp/missing" ]; then
    echo "check_exports: $hdr declares $(wc -l < "$tmp/missing") functions $lib does not export:"
    sed 's/^/  /' "$tmp/missing"
    bad=1
fi
# Data and other symbols: none are API. Weak symbols (W, V, u) are the C++
# runtime's template instances from libstdc++'s headers (gloo layer), which
# keep default visibility by design.
awk '$2 !~ /^[TWVu]$/ { print "  " $2 " " $3 }' "$tmp/dynsym" > "$tmp/other"
if [ -s "$tmp/other" ]; then
    echo "check_exports: $lib exports symbols that are not functions of $hdr:"
    cat "$tmp/other"
    bad=1
fi
[ $bad = 0 ] || exit 1
echo "check_exports: ok ($(wc -l < "$tmp/exported") functions, as declared)"
