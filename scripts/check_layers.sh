#!/bin/sh
# Layers that only point down (docs/DESIGN.md "Layers"): every `#include "dir/x.h"`
# in src/ and tools/ must follow an edge of the list below; a file whose include
# does not is named with the include, and circles among the modules or among
# the files are reported. Exit 0 clean, 1 otherwise.
# usage: check_layers.sh [SOURCE_ROOT]   (ctest: design/layers)
set -eu
root=${1:-$(dirname "$0")/..}
cd "$root"

# module: the modules it may include (its own is always allowed; include/coll.h,
# the public API, and include/coll_tool.h, the tool's, are allowed everywhere).
# Bottom to top.
ALLOWED='
core:
bootstrap: core
transport: core bootstrap
algo: core transport
backend: core bootstrap transport algo
comm: core bootstrap transport algo backend
launch: core
rows: core
engine: core launch rows
train: core engine rows
report: core rows costmodel
costmodel: core engine rows
replay: core engine rows
bindings:
tools: core launch rows engine train report costmodel replay
'
# bindings (the torch backend, bindings/torch) include no project header but
# coll.h and coll_tool.h.
# Above libcoll (launch, rows, engine, train, report, tools) only core, the base
# library coll_base, besides coll.h and coll_tool.h: what they need of libcoll
# proper is declared there. The build enforces the same (src/ is private to libcoll; each module sees
# only the headers of the targets it links).

# Bottom files of a folder: "FOLDER: FILE..." (name without .c/.h). They include
# no other file of their folder, so the rest of it sits on them. src/backend/shm:
# the segment, mailbox layout, heap, CMA, liveness and waiting under the
# dispatcher (shm.c) and the strategies.
BOTTOM='
src/backend/shm: shm_layout shm_segment shm_heap shm_cma shm_liveness shm_wait shm_page_kind
'

# Known exceptions: "FILE INCLUDE  # why" per line (none now). One that no
# longer occurs is reported, so the list cannot go stale.
EXCEPTIONS='
'

files=$(find src tools bindings -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.cpp' -o -name '*.hpp' \) | sort)
[ -n "$files" ] || { echo "check_layers: no sources under $root" >&2; exit 1; }

# One line per include: FILE INCLUDED (INCLUDED as written, "dir/x.h" or "x.h").
# shellcheck disable=SC2086 # the file list is word-split on purpose
grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $files |
    sed 's/^\([^:]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
awk -v allowed="$ALLOWED" -v bottom="$BOTTOM" -v exceptions="$EXCEPTIONS" '
function dirname(path,   d) {
    d = path
    sub(/\/[^\/]*$/, "", d)
    return d
}
function module(path,   p) {
    p = path
    if (p ~ /^tools\//) return "tools"
    if (p ~ /^bindings\//) return "bindings"
    sub(/^src\//, "", p)
    sub(/\/.*/, "", p)
    return p
}
# Depth-first search for circles; state 1 on the stack, 2 done.
function visit(n, adj, state, stack, depth, kind,   i, j, k, m, cyc) {
    state[n] = 1
    stack[depth] = n
    k = split(adj[n], m, " ")
    for (i = 1; i <= k; i++) {
        if (m[i] == "") continue
        if ((m[i] in state) && state[m[i]] == 1) {
            cyc = m[i]
            for (j = depth; j >= 1 && stack[j] != m[i]; j--) cyc = stack[j] " -> " cyc
            cyc = m[i] " -> " cyc
            print "check_layers: " kind " circle: " cyc
            bad = 1
        } else if (!(m[i] in state)) {
            visit(m[i], adj, state, stack, depth + 1, kind)
        }
    }
    state[n] = 2
}
BEGIN {
    n = split(allowed, lines, "\n")
    for (i = 1; i <= n; i++) {
        if (lines[i] !~ /:/) continue
        mod = lines[i]; sub(/:.*/, "", mod)
        rest = lines[i]; sub(/^[^:]*:/, "", rest)
        known[mod] = 1
        k = split(rest, dst, " ")
        for (j = 1; j <= k; j++) ok[mod, dst[j]] = 1
    }
    n = split(bottom, lines, "\n")
    for (i = 1; i <= n; i++) {
        if (lines[i] !~ /:/) continue
        dir = lines[i]; sub(/:.*/, "", dir)
        rest = lines[i]; sub(/^[^:]*:/, "", rest)
        k = split(rest, w, " ")
        for (j = 1; j <= k; j++) low[dir "/" w[j]] = 1
    }
    n = split(exceptions, lines, "\n")
    for (i = 1; i <= n; i++)
        if (split(lines[i], w, " ") >= 2 && w[1] !~ /^#/) except[w[1] " " w[2]] = 1
}
{
    file = $1; inc = $2
    if (inc == "coll.h" || inc == "coll_tool.h") next
    from = module(file)
    if (inc ~ /\//) { target = "src/" inc; to = module(target) }
    else { target = file; sub(/[^\/]*$/, inc, target); to = from }
    if (!(from in known)) { print "check_layers: " file ": module " from " is not in the layer list"; bad = 1; next }
    # the file graph (for circles): only files that exist
    if ((getline tmp < target) >= 0) { close(target); fadj[file] = fadj[file] " " target }
    # a bottom file includes no file of its folder above the bottom
    f = file; sub(/\.[ch]$/, "", f); t = target; sub(/\.[ch]$/, "", t)
    if ((f in low) && !(t in low) && dirname(f) == dirname(t)) {
        printf "check_layers: %s includes \"%s\": a bottom file of %s includes one above it\n", file, inc, dirname(f)
        bad = 1
    }
    if (from == to) next
    if (!((from, to) in medge)) { medge[from, to] = 1; madj[from] = madj[from] " " to }
    if ((from, to) in ok) next
    if ((file " " inc) in except) { used[file " " inc] = 1; next }
    printf "check_layers: %s includes \"%s\": %s -> %s is not an allowed edge\n", file, inc, from, to
    bad = 1
}
END {
    for (e in except) if (!(e in used)) { print "check_layers: stale exception: " e; bad = 1 }
    for (m in madj) if (!(m in mstate)) visit(m, madj, mstate, mstack, 1, "module")
    for (f in fadj) if (!(f in fstate)) visit(f, fadj, fstate, fstack, 1, "include")
    if (bad) exit 1
    print "check_layers: ok"
}'
