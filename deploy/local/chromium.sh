#!/usr/bin/env bash
# Debian's chromium headless shell, the browser the web console's tests drive with playwright-core
# (Playwright's own browser download does not work on our machines). It is the old headless
# mode, the one Playwright itself runs headless tests on: the full browser's new headless mode
# once stopped producing frames for a page in CI, so requestAnimationFrame never fired again and
# every click after that waited for "stable" until it timed out.
#
#   deploy/local/chromium.sh install   apt-get install chromium-headless-shell (once; nothing when it is there)
#   deploy/local/chromium.sh status    exit 0 when the browser runs (`chromium-headless-shell --version`)
#
# Environment (optional):
#   TRELLIS_CHROMIUM   the browser binary (default /usr/bin/chromium-headless-shell); the tests read it too
set -euo pipefail

PACKAGE=chromium-headless-shell
CHROMIUM="${TRELLIS_CHROMIUM:-/usr/bin/$PACKAGE}"
SERVICE=chromium
log() { printf '[%s] %s\n' "$SERVICE" "$*"; }
die() { printf '[%s] ERROR: %s\n' "$SERVICE" "$*" >&2; exit 1; }

as_root() {
  if [[ $EUID -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "need root (or sudo) to run: $*"
  fi
}

cmd_status() {
  [[ -x "$CHROMIUM" ]] && "$CHROMIUM" --version 2>/dev/null | grep -q .
}

cmd_install() {
  if cmd_status; then
    log "already installed: $("$CHROMIUM" --version 2>/dev/null)"
    return 0
  fi
  [[ "$CHROMIUM" == "/usr/bin/$PACKAGE" ]] || die "$CHROMIUM (TRELLIS_CHROMIUM) is not a working browser; only /usr/bin/$PACKAGE is installed from apt"
  local started=$SECONDS
  log "installing $PACKAGE from apt"
  # A fresh machine has no package lists yet.
  if ! apt-cache show "$PACKAGE" >/dev/null 2>&1; then
    as_root apt-get update -q
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$PACKAGE" \
    >"${TMPDIR:-/tmp}/trellis-chromium-apt.log" 2>&1 \
    || { tail -n 30 "${TMPDIR:-/tmp}/trellis-chromium-apt.log" >&2; die "apt-get install failed"; }
  cmd_status || die "$PACKAGE does not run after install"
  log "installed $("$CHROMIUM" --version 2>/dev/null) in $((SECONDS - started))s"
}

case "${1:-}" in
  install) cmd_install ;;
  status) cmd_status ;;
  *) echo "usage: $0 install|status" >&2; exit 2 ;;
esac
