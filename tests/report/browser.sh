# index.html renders offline in headless Chromium: the screenshot exists, has
# the requested size and is not blank. Skipped (77) without chromium.
. "$(dirname "$0")/lib.sh"

CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
    echo "SKIP: chromium not installed (scripts/deps.sh --with-browser installs it)"
    exit 77
fi

OUT=$WORK/report
run_report 0 "$FIX/comm_cpu.csv" "$FIX/gpu_and_train.json" -o "$OUT"
[ "$FAILED" -eq 0 ] || finish

SHOT=$WORK/shot.png
# Its own profile and HOME: no state from (or into) the user's browser.
HOME=$WORK timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$WORK/profile" --window-size=1200,1600 --screenshot="$SHOT" \
    "file://$OUT/index.html" >"$WORK/chrome.log" 2>&1
[ -s "$SHOT" ] || { fail "no screenshot: $(tail -5 "$WORK/chrome.log")"; finish; }
size=$("$PNG_INFO" "$SHOT") || fail "screenshot is not a PNG"
[ "$size" = "1200 1600" ] || fail "screenshot is $size, want 1200 1600"
colours=$("$PNG_INFO" --colours "$SHOT")
case $? in
0) [ "$colours" -gt 100 ] || fail "screenshot has $colours colours: blank page?" ;;
77) # no decoder: a blank 1200x1600 PNG compresses to a few kB
    [ "$(wc -c <"$SHOT")" -gt 30000 ] || fail "screenshot is tiny: blank page?" ;;
*) fail "cannot decode the screenshot" ;;
esac
finish
