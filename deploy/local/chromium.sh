#!/usr/bin/env bash
# Debian's chromium, the browser the web console's tests drive headless with playwright-core
# (Playwright's own browser download does not work on our machines).
#
#   deploy/local/chromium.sh install   apt-get install chromium (once; nothing when it is there)
#   deploy/local/chromium.sh status    exit 0 when the browser runs (`chromium --version`)
#
# Environment (optional):
#   TRELLIS_CHROMIUM   the browser binary (default /usr/bin/chromium); the tests read it too
set -euo pipefail

CHROMIUM="${TRELLIS_CHROMIUM:-/usr/bin/chromium}"
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
  [[ "$CHROMIUM" == /usr/bin/chromium ]] || die "$CHROMIUM (TRELLIS_CHROMIUM) is not a working browser; only /usr/bin/chromium is installed from apt"
  local started=$SECONDS
  log "installing chromium from apt"
  # A fresh machine has no package lists yet.
  if ! apt-cache show chromium >/dev/null 2>&1; then
    as_root apt-get update -q
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium \
    >"${TMPDIR:-/tmp}/trellis-chromium-apt.log" 2>&1 \
    || { tail -n 30 "${TMPDIR:-/tmp}/trellis-chromium-apt.log" >&2; die "apt-get install failed"; }
  cmd_status || die "chromium does not run after install"
  log "installed $("$CHROMIUM" --version 2>/dev/null) in $((SECONDS - started))s"
}

case "${1:-}" in
  install) cmd_install ;;
  status) cmd_status ;;
  *) echo "usage: $0 install|status" >&2; exit 2 ;;
esac
