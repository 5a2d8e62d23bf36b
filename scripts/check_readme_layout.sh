#!/bin/sh
# README.md's "Layout" paragraph names every folder of src/, src/backend/ and
# tests/, so that the list a newcomer reads cannot go stale: a folder added
# without a word in README fails here (ctest design/readme_layout).
# usage: check_readme_layout.sh [SOURCE_ROOT]   exit 0 clean, 1 otherwise
set -eu
root=${1:-$(dirname "$0")/..}
cd "$root"
# The paragraph: from the line that starts the source tour to the first blank line.
para=$(awk '/^The source tree:/ { on = 1 } on && /^$/ { exit } on' README.md)
[ -n "$para" ] || { echo "check_readme_layout: README.md has no paragraph starting 'The source tree:'" >&2; exit 1; }
bad=0
for d in src/*/ src/backend/*/; do
    d=${d%/}
    printf '%s\n' "$para" | grep -q "\`$d\`" || { echo "check_readme_layout: README.md does not name \`$d\`"; bad=1; }
done
# tests/ folders are listed by name inside the tests/ entry.
tests_entry=$(printf '%s\n' "$para" | tr '\n' ' ' | sed -n 's/.*`tests\/` (\([^)]*\)).*/\1/p')
[ -n "$tests_entry" ] || { echo "check_readme_layout: no \`tests/\` (folder, ...) entry in the paragraph"; exit 1; }
for d in tests/*/; do
    d=$(basename "$d")
    printf '%s\n' "$tests_entry" | tr -s ' ,' '\n\n' | grep -qx "$d" || { echo "check_readme_layout: README.md's tests/ entry does not name $d"; bad=1; }
done
exit $bad
