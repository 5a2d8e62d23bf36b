# Findings first: the top of analysis.txt and index.html says which backend is
# fastest per size range and process count, with its margin or "within
# noise": a clear winner, two backends within noise, two within noise of each
# other and ahead of a third, a winner that changes with size. The sentences come before every plot, and the detailed analysis
# is below them, collapsed.
. "$(dirname "$0")/lib.sh"

check() { # fixture, sentence, table row
    OUT=$WORK/$1
    run_report 0 "$FIX/findings_$1.csv" -o "$OUT"
    A=$OUT/analysis.txt
    [ "$(sed -n 1p "$A")" = "Findings" ] || fail "$1: analysis.txt does not start with the findings"
    [ "$(sed -n 2p "$A")" = "$2" ] || fail "$1: analysis.txt's first finding is '$(sed -n 2p "$A")', want '$2'"
    expect_in "$A" "$3"
    expect_in "$OUT/index.html" "<p>$2</p>"
    # the findings above the plots; the analysis collapsed below them
    f=$(grep -n '<h2>Findings</h2>' "$OUT/index.html" | cut -d: -f1)
    p=$(grep -n '<h2>Plots</h2>' "$OUT/index.html" | cut -d: -f1)
    [ -n "$f" ] && [ -n "$p" ] && [ "$f" -lt "$p" ] || fail "$1: index.html: findings (line $f) not above the plots (line $p)"
    grep -A1 '<h2>Analysis</h2>' "$OUT/index.html" | grep -q '<details><summary>' ||
        fail "$1: index.html: the analysis is not under a collapsed <details>"
    n=$(sed -n '/^Findings$/,/^$/p' "$A" | grep -c '\.$')
    [ "$n" -le 8 ] || fail "$1: $n sentences in the findings, want 8 or fewer"
}

check clear "On box (cpu, malloc buffers), allreduce: with 2 processes, shm is fastest from 1 MiB to 10 MiB (3.0x over tcp)." \
    "| box (cpu) | malloc | 2 | 1 MiB to 10 MiB | shm | tcp | 3.0x |"
check noise "On box (cpu, malloc buffers), allreduce: with 2 processes, no backend is faster beyond noise from 1 MiB to 10 MiB." \
    "| box (cpu) | malloc | 2 | 1 MiB to 10 MiB | shm, tcp (within noise) | - | within noise |"
check tie "On box (cpu, malloc buffers), allreduce: with 2 processes, shm and auto are within noise of each other and fastest from 1 MiB to 10 MiB (4.0x over tcp)." \
    "| box (cpu) | malloc | 2 | 1 MiB to 10 MiB | shm, auto (within noise) | tcp | 4.0x |"
check changes "On box (cpu, malloc buffers), allreduce: with 2 processes, tcp is fastest at 1 KiB (2.0x over shm), shm is fastest at 1 MiB (3.0x over tcp)." \
    "| box (cpu) | malloc | 2 | 1 KiB | tcp | shm | 2.0x |"
expect_in "$WORK/changes/analysis.txt" "| box (cpu) | malloc | 2 | 1 MiB | shm | tcp | 3.0x |"
finish
