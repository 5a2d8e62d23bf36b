# Interactive plots: with Chart.js (libjs-chart.js) inlined, headless Chromium
# draws one chart per small-multiples panel (the time panels with the cost
# model's dashed curve), logs nothing to the console and
# requests nothing from the network; without the library (COLLBENCH_CHARTJS
# pointing nowhere) the page says how to get it, keeps the images, and is as
# quiet. Skipped (77) without chromium or libjs-chart.js.
. "$(dirname "$0")/lib.sh"

CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "SKIP: chromium not installed (scripts/deps.sh --with-browser)"; exit 77; }
LIB=/usr/share/javascript/chart.js/chart.min.js
[ -r "$LIB" ] || { echo "SKIP: $LIB missing (apt-get install libjs-chart.js)"; exit 77; }

# load NAME: dumps the DOM after the scripts ran; console and network in $WORK/NAME.*
load() {
    rm -rf "$WORK/profile"
    HOME=$WORK timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$WORK/profile" \
        --disable-background-networking --disable-component-update --disable-sync --no-first-run \
        --enable-logging=stderr --v=0 --log-net-log="$WORK/$1.net" --virtual-time-budget=5000 \
        --dump-dom "file://$WORK/$1/index.html" >"$WORK/$1.dom" 2>"$WORK/$1.log"
    [ -s "$WORK/$1.dom" ] || fail "$1: chromium loaded nothing: $(tail -3 "$WORK/$1.log")"
    if grep -q ':CONSOLE' "$WORK/$1.log"; then fail "$1: console: $(grep ':CONSOLE' "$WORK/$1.log" | head -3)"; fi
    # every URL the browser fetched, less its own background services
    grep -o '"url":"[^"]*"' "$WORK/$1.net" | sed 's/^"url":"//; s/"$//' | sort -u |
        grep -Ev '^(file:|data:|chrome|about:)|^https?://([a-z0-9.-]*\.)?(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)/' \
        >"$WORK/$1.urls" || true
    [ ! -s "$WORK/$1.urls" ] || fail "$1: the page made network requests: $(head -3 "$WORK/$1.urls")"
}

run_report 0 "$FIX/comm_cpu.csv" -o "$WORK/with"
canvases=$(grep -o '<canvas id=' "$WORK/with/index.html" | wc -l)
[ "$canvases" -gt 0 ] || fail "with the library: no chart in index.html"
grep -qF "$(head -c 60 "$LIB" | tail -c 40)" "$WORK/with/index.html" || fail "with the library: Chart.js is not inlined"
# the cost model's curve joins the time panels, dashed and labelled a prediction
grep -q '{"label":"model prediction: [a-z]*","colour":"#[0-9a-f]*","marker":false,"dashed":1,"pts":\[{"x":' "$WORK/with/index.html" ||
    fail "with the library: no model curve in the charts' data"
load with
drawn=$(grep -o 'data-charts="[0-9]*"' "$WORK/with.dom" | tr -dc 0-9)
[ "${drawn:-0}" = "$canvases" ] || fail "with the library: ${drawn:-no} charts drawn, want $canvases"

COLLBENCH_CHARTJS=$WORK/nowhere.js run_report 0 "$FIX/comm_cpu.csv" -o "$WORK/without"
expect_in "$WORK/without/index.html" "apt-get install libjs-chart.js, then rerun collbench report"
if grep -q '<canvas' "$WORK/without/index.html"; then fail "without the library: charts in the page"; fi
if have_plots "$WORK/err"; then
    expect_in "$WORK/without/index.html" 'src="data:image/png;base64,'
fi
load without
finish
