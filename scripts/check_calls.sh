#!/bin/sh
# Calls that go round within a folder (docs/DESIGN.md "Layers"): the include
# check sees a folder's files only through their headers, and two files that
# share one header may still call each other. From the built objects (nm): a
# file uses another of its folder when one of its undefined symbols (U) is
# defined (T, D, B, R, ...) by the other's object in the same target; every
# circle of that graph (A -> B -> A, or longer) is named. Exit 0 clean, 1 otherwise.
# usage: check_calls.sh BUILD_DIR [SOURCE_ROOT] [NM]   (ctest: design/calls)
set -eu
build=$1
root=${2:-$(dirname "$0")/..}
nm=${3:-nm}

# Known exceptions: "FROM TO  # why" per line, one call edge each (sources as
# the build names them). One that no longer occurs is reported, so the list
# cannot go stale.
EXCEPTIONS='
src/backend/gloo/gloo_context.cc src/backend/gloo/gloo_colls.cc  # to do: run_collective vs scratch/to_ms
'

# Objects of the project's own sources: CMakeFiles/TARGET.dir/{src,tools}/...o,
# of sources that still exist (a moved file's old object stays in the build).
objs=$(find "$build" -path '*/CMakeFiles/*.dir/*' \( -path '*.dir/src/*' -o -path '*.dir/tools/*' \) \
            -name '*.o' 2>/dev/null | sort | while read -r o; do
           s=${o#*.dir/}
           [ ! -f "$root/${s%.o}" ] || echo "$o"
       done)
[ -n "$objs" ] || { echo "check_calls: no objects of src/ or tools/ under $build" >&2; exit 1; }

# shellcheck disable=SC2086 # the object list is word-split on purpose
"$nm" -A $objs 2>/dev/null |
awk -v exceptions="$EXCEPTIONS" '
function dirname(path,   d) {
    d = path
    sub(/\/[^\/]*$/, "", d)
    return d
}
# Depth-first search for circles; state 1 on the stack, 2 done.
function visit(n, depth,   i, j, k, m, cyc) {
    state[n] = 1
    stack[depth] = n
    k = split(adj[n], m, " ")
    for (i = 1; i <= k; i++) {
        if (m[i] == "") continue
        if ((m[i] in state) && state[m[i]] == 1) {
            cyc = m[i]
            for (j = depth; j >= 1 && stack[j] != m[i]; j--) cyc = stack[j] " -> " cyc
            cyc = m[i] " -> " cyc
            print "check_calls: call circle: " cyc
            bad = 1
        } else if (!(m[i] in state)) {
            visit(m[i], depth + 1)
        }
    }
    state[n] = 2
}
BEGIN {
    n = split(exceptions, lines, "\n")
    for (i = 1; i <= n; i++)
        if (split(lines[i], w, " ") >= 2 && w[1] !~ /^#/) except[w[1] " " w[2]] = 1
}
NF >= 2 {
    obj = $1; sub(/:[^:]*$/, "", obj)
    type = $(NF - 1); name = $NF
    if (type !~ /^[A-Z]$/) next # local symbols: not reachable from another file
    target = obj; sub(/\.dir\/.*/, "", target)
    file = obj; sub(/.*\.dir\//, "", file); sub(/\.o$/, "", file)
    if (!(file in nobj)) { nobj[file] = 1; nfiles++ }
    if (type == "U") { nuse++; use_t[nuse] = target; use_f[nuse] = file; use_n[nuse] = name }
    else def[target, name] = file
}
END {
    for (u = 1; u <= nuse; u++) {
        if (!((use_t[u], use_n[u]) in def)) continue
        to = def[use_t[u], use_n[u]]
        from = use_f[u]
        if (to == from || dirname(to) != dirname(from) || ((from, to) in edge)) continue
        if ((from " " to) in except) { used[from " " to] = 1; continue }
        edge[from, to] = 1
        adj[from] = adj[from] " " to
        nedge++
    }
    for (e in except) if (!(e in used)) { print "check_calls: stale exception: " e; bad = 1 }
    for (f in adj) if (!(f in state)) visit(f, 1)
    if (bad) exit 1
    printf "check_calls: ok (%d files, %d calls between files of a folder)\n", nfiles, nedge
}'
