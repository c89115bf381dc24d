#!/usr/bin/env bash
# Build a base image termrl/base:<suite> without any image registry: debootstrap a minimal Debian
# into a temp folder, using the Debian mirror this machine's apt is configured with, then `docker import`.
# The image is built under a content-addressed tag termrl/base:<suite>-<recipe hash> (labelled with the
# hash too), rebuilt only when the recipe changes; termrl/base:<suite> is then pointed at it
# (TERMRL_BASE_ALIAS=0: not, so runs using the old base keep it while a new one is tried).
#   scripts/base_image.sh            termrl/base:bookworm (Python 3.11), what termrl's own tasks build FROM
#                                    and the stand-in for python:3.11* images (configs image_map)
#   scripts/base_image.sh trixie     termrl/base:trixie (Python 3.13), the local stand-in for the
#                                    Terminal-Bench python-3-13 / ubuntu-24-04 and python:3.13 images
# Like python:3.x images, a base has python3, `python` in /usr/local/bin (none in /usr/bin, so a task's
# `ln -s /usr/bin/python3 /usr/bin/python` works), and pip, setuptools, wheel, pytest and numpy installed
# BY PIP into /usr/local (wheels fetched on the host with its own pip configuration): a task's
# `pip install pytest==X` replaces them (no Debian-owned copy pip cannot uninstall; Debian's
# EXTERNALLY-MANAGED marker is removed). apt inside it uses the mirror it was bootstrapped from, so task
# builds that may use the network can apt-get install.
# BASE_IMAGE=<image> uses that image instead (any Debian/Ubuntu image with python3 and pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[base-image] %s\n' "$*"; }
fail() { printf '[base-image] ERROR: %s\n' "$*" >&2; exit 1; }

SUITE=${1:-${TERMRL_BASE_SUITE:-bookworm}}
case "$SUITE" in --*) SUITE=${TERMRL_BASE_SUITE:-bookworm} ;; esac
PACKAGES=${TERMRL_BASE_PACKAGES:-"bash,coreutils,python3,python3-venv,procps,git,curl,wget,less,file,tmux,make,gcc,libc6-dev,ca-certificates,xz-utils,unzip,zip,sqlite3,jq,bc"}
# pip-installed, pinned to the versions Debian ships in the suite (what the base held before)
case "$SUITE" in
  bookworm) PIP_DEFAULT="pip==23.0.1 setuptools==66.1.1 wheel==0.38.4 pytest==7.2.1 numpy==1.24.2" ;;
  *) PIP_DEFAULT="pip==25.1.1 setuptools==78.1.1 wheel==0.46.1 pytest==8.3.5 numpy==2.2.4" ;;
esac
PIP_PACKAGES=${TERMRL_BASE_PIP-$PIP_DEFAULT}   # empty: no pip step (tests)
RECIPE_VERSION=3   # bump when the steps below change in a way the variables do not show
RECIPE_HASH=$(printf '%s|%s|%s|%s|minbase' "$SUITE" "$PACKAGES" "$PIP_PACKAGES" "$RECIPE_VERSION" | sha256sum | cut -c1-16)
ALIAS=""
if [ -n "${TERMRL_BASE_TAG:-}" ]; then
  TAG=$TERMRL_BASE_TAG   # tests build a throwaway tag
else
  TAG=termrl/base:$SUITE-$RECIPE_HASH
  [ "${TERMRL_BASE_ALIAS:-1}" = 0 ] || ALIAS=termrl/base:$SUITE
fi
alias_tag() {  # point termrl/base:<suite> at the content-addressed build
  if [ -n "$ALIAS" ] && [ "$(docker image inspect -f '{{.Id}}' "$ALIAS" 2>/dev/null)" != "$(docker image inspect -f '{{.Id}}' "$TAG")" ]; then
    docker tag "$TAG" "$ALIAS" && log "$ALIAS -> $TAG"
  fi
}

[ "${1:-}" = "--print-recipe-hash" ] || [ "${2:-}" = "--print-recipe-hash" ] && { echo "$RECIPE_HASH"; exit 0; }

if [ -n "${BASE_IMAGE:-}" ] && [ "$BASE_IMAGE" != "$TAG" ]; then
  docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 \
    || fail "BASE_IMAGE=$BASE_IMAGE is not present locally (no registry is reachable): build or load it first"
  log "using BASE_IMAGE=$BASE_IMAGE"
  exit 0
fi

have=$(docker image inspect -f '{{ index .Config.Labels "termrl.recipe" }}' "$TAG" 2>/dev/null || true)
if [ "$have" = "$RECIPE_HASH" ]; then
  alias_tag
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
ln -sf /usr/bin/python3 "$ROOTFS/usr/local/bin/python"   # python:3.x images: python in /usr/local/bin
if [ -n "$PIP_PACKAGES" ]; then
  # Wheels for the image's Python, fetched by the host's pip (its index, mirrors and CA), installed in the
  # rootfs by pip itself, run from its own wheel: nothing Debian-owned, all pip-replaceable, in /usr/local.
  PYV=$(chroot "$ROOTFS" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  mkdir -p "$ROOTFS/tmp/wheels"
  # shellcheck disable=SC2086
  python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --python-version "$PYV" \
    --implementation cp --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    -d "$ROOTFS/tmp/wheels" $PIP_PACKAGES >/tmp/termrl-base-pip-$SUITE.log 2>&1 \
    || { tail -n 20 /tmp/termrl-base-pip-$SUITE.log >&2; fail "pip download of '$PIP_PACKAGES' for Python $PYV failed (log: /tmp/termrl-base-pip-$SUITE.log)"; }
  PIPWHL=$(cd "$ROOTFS/tmp/wheels" && ls pip-*.whl | head -1)
  # shellcheck disable=SC2086
  chroot "$ROOTFS" env -i PATH=/usr/local/bin:/usr/bin:/bin PIP_CONFIG_FILE=/dev/null \
    python3 "/tmp/wheels/$PIPWHL/pip" install -q --no-index --find-links /tmp/wheels --no-cache-dir \
    --disable-pip-version-check --root-user-action=ignore $PIP_PACKAGES >>/tmp/termrl-base-pip-$SUITE.log 2>&1 \
    || { tail -n 20 /tmp/termrl-base-pip-$SUITE.log >&2; fail "pip install of '$PIP_PACKAGES' in the rootfs failed (log: /tmp/termrl-base-pip-$SUITE.log)"; }
  rm -rf "$ROOTFS/tmp/wheels" "$ROOTFS"/root/.cache
  chroot "$ROOTFS" python3 -c 'import pytest, numpy, pip; assert all(m.__file__.startswith("/usr/local/") for m in (pytest, numpy, pip)), "not in /usr/local"' \
    || fail "the pip-installed packages are not importable from /usr/local in the rootfs"
fi
mkdir -p "$ROOTFS/app"
tar -C "$ROOTFS" -c . | docker import \
  --change "LABEL termrl.recipe=$RECIPE_HASH" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'WORKDIR /app' \
  --change 'CMD ["/bin/bash"]' \
  - "$TAG" >/dev/null
log "built $TAG"
alias_tag
