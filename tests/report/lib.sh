# Helpers for the report tests (sourced). Arguments of every script:
# $1 collbench, $2 png_info (prints a PNG's IHDR size, --colours counts colours), $3 fixtures dir.
set -u
BIN=${1:?usage: $0 collbench png_info fixtures}
PNG_INFO=${2:?usage: $0 collbench png_info fixtures}
FIX=${3:?usage: $0 collbench png_info fixtures}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-report.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0
# Under AddressSanitizer: fontconfig's cache lives until exit; not our leak.
LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS

fail() {
    echo "FAIL: $*" >&2
    FAILED=1
}

# run_report WANT_EXIT ARGS...: runs collbench report, stderr in $WORK/err.
run_report() {
    want=$1
    shift
    "$BIN" report "$@" >"$WORK/out" 2>"$WORK/err"
    got=$?
    [ "$got" -eq "$want" ] || fail "collbench report $*: exit $got, want $want; stderr: $(cat "$WORK/err")"
}

# expect_in FILE TEXT: FILE holds the fixed string TEXT.
expect_in() {
    grep -qF -e "$2" "$1" || fail "$(basename "$1") lacks: $2"
}

have_plots() { ! grep -q "built without PLplot" "$1"; }

finish() {
    [ "$FAILED" -eq 0 ] && echo "PASS"
    exit "$FAILED"
}
