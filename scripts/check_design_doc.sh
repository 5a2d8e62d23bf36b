#!/bin/sh
# docs/DESIGN.md against the code it describes, so the document cannot drift
# silently: the CSV header ("Result schema") against BENCH_CSV_HEADER
# (src/rows/result_csv.c); the members each ops table's bullet lists ("Ops
# tables") against the function pointers of its struct; the naming rule
# ("Names:") against what scripts/check_names.sh enforces (the headers that
# may declare coll_ names, the internal prefix, the C++ namespace). Exit 0, or
# 1 naming each difference.
# usage: check_design_doc.sh [SOURCE_ROOT]   (ctest: design/doc)
set -eu
root=${1:-$(dirname "$0")/..}
cd "$root"
doc=docs/DESIGN.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
say() { echo "check_design_doc: $*"; bad=1; }

# --- CSV header: the first line of the code block under "## Result schema".
awk '/^## Result schema/ { on = 1; next } /^## / { on = 0 }
     on && /^```/ { if (inblock) exit; inblock = 1; next } on && inblock { print; exit }' "$doc" > "$tmp/doc_csv"
# The concatenated string literals of BENCH_CSV_HEADER[] = "..." "...";
awk '/^const char BENCH_CSV_HEADER\[\] =/ { on = 1; next } on { print; if (/;/) exit }' \
    src/rows/result_csv.c | sed 's/^[^"]*"//; s/"[^"]*$//' | tr -d '\n' > "$tmp/code_csv"
echo >> "$tmp/code_csv"
[ -s "$tmp/doc_csv" ] || say "$doc: no CSV header in a code block under '## Result schema'"
[ "$(wc -c < "$tmp/code_csv")" -gt 1 ] || say "src/rows/result_csv.c: no BENCH_CSV_HEADER"
if ! cmp -s "$tmp/doc_csv" "$tmp/code_csv"; then
    say "$doc's CSV header differs from BENCH_CSV_HEADER (src/rows/result_csv.c):"
    echo "  doc:  $(cat "$tmp/doc_csv")"
    echo "  code: $(cat "$tmp/code_csv")"
fi

# --- Ops tables: "* `STRUCT` (`HEADER`): `m1`, `m2`, optional `m3`/`m4`, ..."
# up to the bullet's first sentence end, against STRUCT's "(*member)(".
ops_check() {
    struct=$1
    awk -v s="$struct" '/^## Ops tables/ { on = 1; next } /^## / { on = 0 }
        on && /^\* `/ { cur = index($0, "`" s "`") ? 1 : 0 }
        on && cur { printf "%s ", $0 }' "$doc" > "$tmp/bullet"
    [ -s "$tmp/bullet" ] || { say "$doc: no bullet for $struct under '## Ops tables'"; return; }
    header=$(sed -n 's/^[^(]*(`\([^`]*\)`).*/\1/p' "$tmp/bullet")
    [ -f "$header" ] || { say "$doc: $struct's header '$header' does not exist"; return; }
    # members: the backticked names after "): " up to the first ". "
    sed 's/^[^)]*)://; s/\. .*//' "$tmp/bullet" | grep -o '`[A-Za-z_][A-Za-z0-9_]*`' | tr -d '`' | sort -u > "$tmp/doc_m"
    awk -v s="$struct" '$0 ~ "^(typedef )?struct " s "( |$)" || $0 ~ "^typedef struct " s "_s" { on = 1 }
        on && /^}/ { exit } on { print }' "$header" |
        grep -o '(\*[A-Za-z_][A-Za-z0-9_]*)' | tr -d '(*)' | sort -u > "$tmp/code_m"
    [ -s "$tmp/code_m" ] || { say "$header: no function pointers found in struct $struct"; return; }
    comm -23 "$tmp/doc_m" "$tmp/code_m" | sed "s|^|$doc lists a member of $struct that $header lacks: |" > "$tmp/d"
    comm -13 "$tmp/doc_m" "$tmp/code_m" | sed "s|^|$header has a member of $struct that $doc does not list: |" >> "$tmp/d"
    if [ -s "$tmp/d" ]; then sed 's/^/check_design_doc: /' "$tmp/d"; bad=1; fi
}
ops_check coll__backend_ops
ops_check coll__transport_ops

# --- Naming rule: the paragraph starting "Names:" under "## Layers".
awk '/^Names:/ { on = 1 } on && /^$/ { exit } on { printf "%s ", $0 }' "$doc" > "$tmp/names"
[ -s "$tmp/names" ] || say "$doc: no 'Names:' paragraph"
checker=scripts/check_names.sh
# The headers whose coll_ names the checker accepts, and the rule's words.
grep -o 'include/[a-z_]*\.h' "$checker" | sort -u > "$tmp/code_h"
grep -o 'include/[a-z_]*\.h' "$tmp/names" | sort -u > "$tmp/doc_h"
cmp -s "$tmp/code_h" "$tmp/doc_h" ||
    say "the headers that may declare coll_ names: $doc says '$(tr '\n' ' ' < "$tmp/doc_h")', $checker reads '$(tr '\n' ' ' < "$tmp/code_h")'"
for word in '`coll__`' '`static`' '`static inline`' '`collgloo`' "\`$checker\`"; do
    grep -qF "$word" "$tmp/names" || say "$doc's naming rule does not say $word, which $checker enforces"
done
grep -q 'coll__\*' "$checker" && grep -q 'collgloo::' "$checker" && grep -q 'static inline' "$checker" ||
    say "$checker no longer checks coll__, collgloo:: and static inline as $doc says"
[ $bad = 0 ] || exit 1
echo "check_design_doc: ok (CSV header, coll__backend_ops, coll__transport_ops, naming rule)"
