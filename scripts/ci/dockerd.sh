#!/usr/bin/env bash
# Start or stop a Docker engine for CI and for faultkit's image builds on a machine without systemd.
#
#   scripts/ci/dockerd.sh start   # starts dockerd in the background unless `docker info` already answers
#   scripts/ci/dockerd.sh stop    # stops the dockerd this script started, and nothing else
#
# The pid of the dockerd it started is kept in $FAULTKIT_DOCKERD_STATE (default: a file under
# ${TMPDIR:-/tmp}); an engine that was already running is never recorded, so `stop` leaves it alone.
# Several callers may run `start` at once: a lock makes the check-and-start one step.
set -euo pipefail

state=${FAULTKIT_DOCKERD_STATE:-${TMPDIR:-/tmp}/faultkit-dockerd}
pidfile=$state.pid
logfile=$state.log
lockfile=$state.lock
wait_s=${FAULTKIT_DOCKERD_WAIT:-60}

answers() { docker info >/dev/null 2>&1; }

start() {
  exec 9>"$lockfile"
  flock 9
  if answers; then
    echo "dockerd.sh: a Docker engine already answers; not starting one" >&2
    return 0
  fi
  command -v dockerd >/dev/null || { echo "Error: dockerd.sh: dockerd not found; install docker.io" >&2; return 1; }
  # setsid: the engine must outlive this shell and must not get the caller's Ctrl-C
  setsid dockerd >"$logfile" 2>&1 </dev/null 9>&- &
  local pid=$!
  echo "$pid" >"$pidfile"
  for _ in $(seq "$wait_s"); do
    if answers; then
      echo "dockerd.sh: started dockerd (pid $pid, log $logfile)" >&2
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$pidfile"
      if answers; then return 0; fi   # another engine won the race for the socket
      echo "Error: dockerd.sh: dockerd exited; see $logfile" >&2
      tail -n 5 "$logfile" >&2 || true
      return 1
    fi
    sleep 1
  done
  echo "Error: dockerd.sh: dockerd (pid $pid) did not answer within ${wait_s}s; see $logfile" >&2
  return 1
}

stop() {
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile")
  # only a live dockerd with the recorded pid is ours; a reused pid belongs to someone else
  if kill -0 "$pid" 2>/dev/null && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = dockerd ]; then
    kill -TERM "$pid"
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "dockerd.sh: dockerd (pid $pid) still running after 30s; sending KILL" >&2
      kill -KILL "$pid" || true
    fi
    echo "dockerd.sh: stopped dockerd (pid $pid)" >&2
  fi
  rm -f "$pidfile"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
