#!/bin/sh
# A PNG of an HTML report, made by headless Chromium (Debian: apt-get install chromium).
#
#   scripts/report_screenshot.sh report.html [report.png] [WIDTH] [HEIGHT]
#
# Chromium runs with no network, no GPU and a throw-away profile; the page needs none of them.
set -eu

html=${1:?usage: scripts/report_screenshot.sh REPORT.html [OUT.png] [WIDTH] [HEIGHT]}
png=${2:-${html%.html}.png}
width=${3:-1100}
height=${4:-1800}

browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
    for candidate in chromium chromium-browser google-chrome; do
        if command -v "$candidate" >/dev/null 2>&1; then browser=$candidate; break; fi
    done
fi
if [ -z "$browser" ]; then
    echo "report_screenshot: no Chromium found; install it (apt-get install chromium) or set CHROMIUM." >&2
    exit 1
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
abs=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
case $png in /*) out=$png ;; *) out=$(pwd)/$png ;; esac

"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-extensions \
    --no-first-run --hide-scrollbars --force-device-scale-factor=1 --user-data-dir="$profile" \
    --window-size="$width,$height" --screenshot="$out" "file://$abs" >/dev/null 2>&1
test -s "$out" || { echo "report_screenshot: Chromium wrote no image." >&2; exit 1; }
echo "Wrote $png"
