#!/bin/sh
# collbench(1) from the help text the tool prints (`collbench --help` and each
# command's `--help`), so the man page and the tool cannot disagree.
# usage: gen_man.sh COLLBENCH_BINARY OUTPUT_FILE
set -eu
bin=$1
out=$2
tmp=$out.tmp

# roff: a leading dot or quote is a request, a backslash an escape.
roff_text() {
    sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/'
}

version=$("$bin" --version | sed 's/^collbench //')
top=$("$bin" --help)
# the command table: "  NAME   description" lines after "commands:"
commands=$(printf '%s\n' "$top" | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z0-9]*\) .*/\1/p')
[ -n "$commands" ] || { echo "gen_man.sh: no commands in '$bin --help'" >&2; exit 1; }

{
    printf '.TH COLLBENCH 1 "" "collbench %s" "User Commands"\n' "$version"
    printf '.SH NAME\ncollbench \\- benchmarks of collective communication\n'
    printf '.SH SYNOPSIS\n.B collbench\n.I COMMAND\n[options]\n'
    printf '.SH DESCRIPTION\n.nf\n'
    printf '%s\n' "$top" | roff_text
    printf '.fi\n.SH COMMANDS\n'
    for c in $commands; do
        [ "$c" = help ] && continue
        printf '.SS %s\n.nf\n' "$c"
        "$bin" "$c" --help | roff_text
        printf '.fi\n'
    done
    printf '.SH EXIT STATUS\n0 ok; 1 a result was wrong; 2 bad usage; 3 runtime failure; 4 a backend or feature is not available here.\n'
} > "$tmp"
mv "$tmp" "$out"
