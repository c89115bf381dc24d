#!/usr/bin/env bash
# Make sure a Docker engine answers. Use a running one; else, as root, install Debian's docker.io and
# start `dockerd --bridge=none --iptables=false` (no outside network here, so no bridge is needed).
# Prints one actionable error line and exits 1 when that is impossible.
set -uo pipefail
log() { printf '[docker] %s\n' "$*"; }
fail() { printf '[docker] ERROR: %s\n' "$*" >&2; exit 1; }

docker info >/dev/null 2>&1 && exit 0

if [ "$(id -u)" != 0 ]; then
  fail "no Docker engine answers and we are not root: start dockerd (or run 'sudo make setup'), or add yourself to the docker group"
fi
if ! command -v dockerd >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || fail "no Docker engine and no apt-get to install Debian's docker.io: install Docker and start dockerd"
  log "installing Debian's docker.io"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq docker.io >/dev/null; } \
    || fail "apt-get install docker.io failed: check the apt sources, or install Docker and start dockerd yourself"
fi
log "starting dockerd --bridge=none --iptables=false (log: /var/log/termrl-dockerd.log)"
nohup dockerd --bridge=none --iptables=false >/var/log/termrl-dockerd.log 2>&1 &
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && { log "engine is up"; exit 0; }
  sleep 1
done
fail "dockerd did not answer within 60 s: see the last lines of /var/log/termrl-dockerd.log"
