# Shared by kafka.sh, mariadb.sh and tidb.sh: logging, the pid file and a graceful stop.
# The sourcing script sets SERVICE (the log prefix) and PID_FILE before sourcing this file.

log() { printf '[%s] %s\n' "$SERVICE" "$*"; }
die() { printf '[%s] ERROR: %s\n' "$SERVICE" "$*" >&2; exit 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Prints the pid in $PID_FILE when it is a live process whose command line matches $1 (grep -E),
# so a stale pid file reused by another process is never signalled.
pid_matching() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -Eq "$1" || return 1
  echo "$pid"
}

# "123 MB RSS" of a pid.
rss_of() { ps -o rss= -p "$1" | awk '{printf "%d MB RSS", $1/1024}'; }

# SIGTERM (a clean shutdown), up to 30 s of waiting, then SIGKILL. Needs running_pid().
cmd_stop() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$PID_FILE"
    log "not running"
    return 0
  fi
  log "stopping pid $pid (SIGTERM)"
  kill -TERM "$pid" 2>/dev/null || true
  local waited=0
  while kill -0 "$pid" 2>/dev/null && (( waited < 30 )); do
    sleep 1
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "still alive after ${waited}s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PID_FILE"
  log "stopped"
}
