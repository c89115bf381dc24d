#!/usr/bin/env bash
# Build a base image termrl/base:<suite> without any image registry: debootstrap a minimal Debian
# into a temp folder, using the Debian mirror this machine's apt is configured with, then `docker import`.
# The image is labelled with a hash of this recipe and rebuilt only when the recipe changes.
#   scripts/base_image.sh            termrl/base:bookworm (Python 3.11), what termrl's own tasks build FROM
#   scripts/base_image.sh trixie     termrl/base:trixie (Python 3.13), the local stand-in for the
#                                    Terminal-Bench python-3-13 / ubuntu-24-04 images (images.py IMAGE_MAP)
# Like those images, a base has python and python3, pip (installing into the system Python: Debian's
# EXTERNALLY-MANAGED marker is removed), venv, pytest, and the usual tools; apt inside it uses the mirror
# it was bootstrapped from, so task builds that may use the network can apt-get install.
# BASE_IMAGE=<image> uses that image instead (any Debian/Ubuntu image with python3 and pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[base-image] %s\n' "$*"; }
fail() { printf '[base-image] ERROR: %s\n' "$*" >&2; exit 1; }

SUITE=${1:-${TERMRL_BASE_SUITE:-bookworm}}
case "$SUITE" in --*) SUITE=${TERMRL_BASE_SUITE:-bookworm} ;; esac
TAG=${TERMRL_BASE_TAG:-termrl/base:$SUITE}   # tests build a throwaway tag
PACKAGES=${TERMRL_BASE_PACKAGES:-"bash,coreutils,python3,python3-pytest,python3-pip,python3-venv,python-is-python3,procps,git,curl,wget,less,file,tmux,make,gcc,libc6-dev,ca-certificates,xz-utils,unzip,zip,python3-numpy,sqlite3,jq,bc"}
RECIPE_VERSION=2   # bump when the steps below change in a way the variables do not show
RECIPE_HASH=$(printf '%s|%s|%s|minbase' "$SUITE" "$PACKAGES" "$RECIPE_VERSION" | sha256sum | cut -c1-16)

[ "${1:-}" = "--print-recipe-hash" ] || [ "${2:-}" = "--print-recipe-hash" ] && { echo "$RECIPE_HASH"; exit 0; }

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

# A mirror serving the host's own suite serves the other Debian suites too.
HOST_SUITE=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
MIRROR=$(python3 scripts/apt_mirror.py "$SUITE" || python3 scripts/apt_mirror.py "$HOST_SUITE") \
  || fail "no Debian mirror for '$SUITE' (or '$HOST_SUITE') found in this machine's apt sources"
ROOTFS=$(mktemp -d /tmp/termrl-rootfs.XXXXXX)
trap 'rm -rf "$ROOTFS"' EXIT
log "debootstrap --variant=minbase $SUITE (mirror from apt sources)"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS" "$MIRROR" >/tmp/termrl-debootstrap-$SUITE.log 2>&1 \
  || { tail -n 20 /tmp/termrl-debootstrap-$SUITE.log >&2; fail "debootstrap failed (log: /tmp/termrl-debootstrap-$SUITE.log)"; }
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
rm -f "$ROOTFS"/usr/lib/python3*/EXTERNALLY-MANAGED   # pip installs into the system Python, as in python:3.x images
mkdir -p "$ROOTFS/app"
tar -C "$ROOTFS" -c . | docker import \
  --change "LABEL termrl.recipe=$RECIPE_HASH" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'WORKDIR /app' \
  --change 'CMD ["/bin/bash"]' \
  - "$TAG" >/dev/null
log "built $TAG"
