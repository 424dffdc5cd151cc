#!/usr/bin/env bash
# Headless Chromium for the live view's browser test (test/browser):
# Debian's `chromium` package, installed when missing (as root), or a clear
# message saying what to run.
#
#   hack/chromium.sh path     print the path of the chromium binary on stdout
#                             (install it first if needed)
#
# hack/test.sh exports the path as INFORMER_ANATOMY_CHROMIUM for the test.
# The test drives it over the DevTools protocol (chromedp): no display, no
# network beyond loopback.
set -euo pipefail

log() { echo "chromium: $*" >&2; }
die() { log "$*"; exit 1; }

# find_chromium prints the first chromium on PATH; Debian's package installs
# /usr/bin/chromium (a launcher script), other systems name it differently.
find_chromium() {
  local c
  for c in chromium chromium-browser google-chrome-stable google-chrome; do
    if command -v "$c" >/dev/null; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

ensure_chromium() {
  find_chromium >/dev/null && return
  [ "$(id -u)" = 0 ] || die "Chromium is not installed; run: sudo apt-get install chromium"
  log "installing chromium from Debian (about 100 MB)"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  find_chromium >/dev/null || die "apt-get install chromium succeeded but no chromium is on PATH"
}

case "${1:-}" in
  path) ensure_chromium; find_chromium ;;
  *) echo "usage: $0 path" >&2; exit 2 ;;
esac
