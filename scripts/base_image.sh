#!/usr/bin/env bash
# Build the base image termrl/base:bookworm without any image registry: debootstrap a minimal Debian
# into a temp folder, using the Debian mirror this machine's apt is configured with, then `docker import`.
# The image is labelled with a hash of this recipe and rebuilt only when the recipe changes.
# BASE_IMAGE=<image> uses that image instead (any Debian/Ubuntu image with python3 and pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[base-image] %s\n' "$*"; }
fail() { printf '[base-image] ERROR: %s\n' "$*" >&2; exit 1; }

TAG=${TERMRL_BASE_TAG:-termrl/base:bookworm}   # tests build a throwaway tag
SUITE=bookworm
PACKAGES=${TERMRL_BASE_PACKAGES:-"bash,coreutils,python3,python3-pytest,procps,git,curl,less,file,tmux,make,gcc,libc6-dev,ca-certificates"}
RECIPE_VERSION=1   # bump when the steps below change in a way the variables do not show
RECIPE_HASH=$(printf '%s|%s|%s|minbase' "$SUITE" "$PACKAGES" "$RECIPE_VERSION" | sha256sum | cut -c1-16)

[ "${1:-}" = "--print-recipe-hash" ] && { echo "$RECIPE_HASH"; exit 0; }

if [ -n "${BASE_IMAGE:-}" ] && [ "$BASE_IMAGE" != "$TAG" ]; then
  docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 \
    || fail "BASE_IMAGE=$BASE_IMAGE is not present locally (no registry is reachable): build or load it first"
  log "using BASE_IMAGE=$BASE_IMAGE"
  exit 0
fi

have=$(docker image inspect -f '{{ index .Config.Labels "termrl.recipe" }}' "$TAG" 2>/dev/null || true)
if [ "$have" = "$RECIPE_HASH" ]; then
  exit 0
fi
[ -n "$have" ] && log "recipe changed ($have -> $RECIPE_HASH): rebuilding $TAG" || log "building $TAG (recipe $RECIPE_HASH)"

[ "$(id -u)" = 0 ] || fail "building $TAG needs root (debootstrap); run 'sudo make setup' or set BASE_IMAGE to a local Debian/Ubuntu image with python3 and pytest"
if ! command -v debootstrap >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; } || fail "could not install debootstrap with apt-get"
fi

MIRROR=$(python3 scripts/apt_mirror.py "$SUITE") || fail "no Debian mirror for '$SUITE' found in this machine's apt sources"
ROOTFS=$(mktemp -d /tmp/termrl-rootfs.XXXXXX)
trap 'rm -rf "$ROOTFS"' EXIT
log "debootstrap --variant=minbase $SUITE (mirror from apt sources)"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS" "$MIRROR" >/tmp/termrl-debootstrap.log 2>&1 \
  || { tail -n 20 /tmp/termrl-debootstrap.log >&2; fail "debootstrap failed (log: /tmp/termrl-debootstrap.log)"; }
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
mkdir -p "$ROOTFS/app"
tar -C "$ROOTFS" -c . | docker import \
  --change "LABEL termrl.recipe=$RECIPE_HASH" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'WORKDIR /app' \
  --change 'CMD ["/bin/bash"]' \
  - "$TAG" >/dev/null
log "built $TAG"
