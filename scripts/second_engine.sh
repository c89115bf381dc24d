#!/usr/bin/env bash
# A second Docker engine on this machine, for tests and benches of sandbox.docker_hosts.
# Own socket, data root, exec root and pidfile; the same --bridge=none --iptables=false set-up as the
# first engine (scripts/docker_engine.sh). Idempotent:
#   scripts/second_engine.sh start [N]   start engine N (default 2) if it does not answer; load the base
#                                        images from the first engine (docker save | docker load)
#   scripts/second_engine.sh stop [N]    stop it (SIGTERM, then wait for the pidfile to go)
#   scripts/second_engine.sh kill [N]    SIGKILL it (a crash; its containers' shims live on)
# Prints the endpoint (unix:///run/termrl-dockerN.sock) on success; one error line and exit 1 otherwise.
set -uo pipefail
cmd=${1:-start}
n=${2:-2}
sock=/run/termrl-docker$n.sock
data=/var/lib/termrl-docker$n
exec_root=/run/termrl-docker$n
pidfile=/run/termrl-docker$n.pid
logf=/var/log/termrl-docker$n.log
here=$(dirname "$0")   # the content-addressed base tags configs.BASE_TAGS names
bases=${TERMRL_SECOND_ENGINE_IMAGES:-termrl/base:bookworm-$(bash "$here/base_image.sh" --print-recipe-hash) termrl/base:trixie-$(bash "$here/base_image.sh" trixie --print-recipe-hash)}
fail() { printf '[engine%s] ERROR: %s\n' "$n" "$*" >&2; exit 1; }
up() { docker -H "unix://$sock" info >/dev/null 2>&1; }

case $cmd in
  start)
    [ "$(id -u)" = 0 ] || fail "must be root to start dockerd"
    if ! up; then
      mkdir -p "$data" "$exec_root"
      nohup dockerd --bridge=none --iptables=false --host "unix://$sock" --data-root "$data" \
        --exec-root "$exec_root" --pidfile "$pidfile" >>"$logf" 2>&1 &
      for _ in $(seq 1 60); do up && break; sleep 1; done
      up || fail "dockerd did not answer on $sock within 60 s: see $logf"
    fi
    for img in $bases; do
      docker image inspect "$img" >/dev/null 2>&1 || continue  # not built on the first engine
      id1=$(docker image inspect -f '{{.Id}}' "$img")
      id2=$(docker -H "unix://$sock" image inspect -f '{{.Id}}' "$img" 2>/dev/null || true)
      [ "$id1" = "$id2" ] && continue
      docker save "$img" | docker -H "unix://$sock" load -q >/dev/null \
        || fail "loading $img into $sock failed"
    done
    echo "unix://$sock"
    ;;
  stop|kill)
    [ -f "$pidfile" ] || exit 0
    pid=$(cat "$pidfile")
    if [ "$cmd" = kill ]; then kill -KILL "$pid" 2>/dev/null; else kill -TERM "$pid" 2>/dev/null; fi
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && fail "dockerd $pid did not stop within 30 s"
    rm -f "$pidfile"
    ;;
  *) fail "usage: $0 start|stop|kill [N]" ;;
esac
