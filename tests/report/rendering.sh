# What a person sees: on a `collbench suite --quick` run's results (the shape
# of a fresh `make run`: 5 backends, two buffer kinds, training) and on 3
# machines (CPU, GPU, a second CPU) x 6 backends, headless Chromium lays out
# every SVG plot: no text lies outside its image, no two texts overlap
# (svg_text_check.js); and no panel of a plot or interactive chart holds more
# than 8 series. Skipped (77) without chromium or without PLplot.
. "$(dirname "$0")/lib.sh"

CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "SKIP: chromium not installed (scripts/deps.sh --with-browser)"; exit 77; }
CHECK=$(dirname "$0")/svg_text_check.js

check() { # name, files...
    name=$1
    shift
    run_report 0 "$@" -o "$WORK/$name"
    have_plots "$WORK/err" || { echo "SKIP: built without PLplot: no plots to lay out"; exit 77; }
    page=$WORK/$name.html
    {
        echo '<!DOCTYPE html><html><body>'
        for f in "$WORK/$name"/*.svg; do
            echo "<div id=\"$(basename "$f")\">"
            sed 1d "$f" # the <?xml?> line
            echo '</div>'
        done
        echo '<script>'
        cat "$CHECK"
        echo '</script></body></html>'
    } >"$page"
    rm -rf "$WORK/profile"
    HOME=$WORK timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$WORK/profile" \
        --disable-background-networking --dump-dom "file://$page" >"$WORK/$name.dom" 2>"$WORK/$name.log"
    body=$(grep -o '<body data-texts[^>]*>' "$WORK/$name.dom")
    texts=$(echo "$body" | sed -n 's/.*data-texts="\([0-9]*\)".*/\1/p')
    problems=$(echo "$body" | sed -n 's/.*data-problems="\([0-9]*\)".*/\1/p')
    [ "${texts:-0}" -gt 20 ] || fail "$name: ${texts:-no} texts found in the SVGs: $(tail -3 "$WORK/$name.log")"
    [ "${problems:-1}" -eq 0 ] || fail "$name: $problems layout problems: $(echo "$body" | sed -n 's/.*data-report="\([^"]*\)".*/\1/p')"
    # the interactive charts' panels (when the page has them)
    json=$(sed -n 's/.*<script type="application\/json" id="collbench-charts">\(.*\)<\/script>.*/\1/p' "$WORK/$name/index.html")
    if [ -n "$json" ]; then
        most=$(printf '%s' "$json" | jq '[.[].panels[].lines | length] | max')
        [ "$most" -le 8 ] || fail "$name: an interactive panel holds $most series"
    fi
}

check quick "$FIX/suite_quick.csv" "$FIX/suite_quick_training.csv"
check machines "$FIX/three_machines.csv"
finish
