#!/usr/bin/env bash
# Checks, from any Linux x86_64 machine (no GPU needed), that requirements-gpu.txt resolves for a GPU machine:
# runs pip's resolver in dry-run mode for CPython 3.12 / manylinux x86_64 wheels, prints the resolved vllm,
# torch and transformers (and a few neighbours), and exits non-zero if pip cannot resolve.
# Installs nothing: `pip install --dry-run --target <empty temp dir>` (pip needs --target to accept
# --platform/--python-version); the temp dir is removed on exit. Only pip's configured indexes are contacted.
#
# Usage: bash scripts/check_gpu_install.sh [REQUIREMENTS_FILE]      (default requirements-gpu.txt)
# Env:   PYTHON=...        interpreter whose pip resolves (default: python3.12 if found, else python3). pip
#                          evaluates environment markers (python_version, platform_system) with the RUNNING
#                          interpreter, so a 3.12 interpreter on Linux x86_64 gives the exact GPU-machine answer.
#        FAST_DEPS=0       don't use pip's fast-deps (HTTP range reads of wheel metadata); an index without
#                          PEP 658 metadata then makes pip download every wheel in full (torch alone ~900 MB).
#        REPORT=path       also keep pip's JSON install report there.
#        CACHED=1          skip the resolve when requirements-gpu.txt, requirements-common.txt and this script are
#                          unchanged since the last OK here (stamp in ~/.cache/termrl; `make test` runs it so: a
#                          changed pin is always resolved again, an unchanged one costs nothing).
# flash-attn is not checked here: it is sdist-only, its setup.py imports torch (so it needs torch installed
# first and --no-build-isolation), and termrl treats it as optional (model.py import-guards it).
set -euo pipefail
cd "$(dirname "$0")/.."

req=${1:-requirements-gpu.txt}
[ -f "$req" ] || { echo "check_gpu_install: no such file: $req" >&2; exit 2; }

stamp_dir=${TERMRL_CACHE:-$HOME/.cache/termrl}
stamp_hash=$(cat "$req" requirements-common.txt scripts/check_gpu_install.sh | sha256sum | cut -c1-16)
if [ "${CACHED:-0}" = 1 ] && [ "$(cat "$stamp_dir/gpu_install.sha" 2>/dev/null)" = "$stamp_hash" ]; then
    echo "check_gpu_install: OK ($req resolved before with these exact pins; CACHED=1)"
    exit 0
fi

target_py=3.12
if [ -z "${PYTHON:-}" ]; then
    PYTHON=python3
    for cand in python3.12 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12; do  # a pyenv shim may not run
        if "$cand" -c 'import pip' >/dev/null 2>&1; then PYTHON=$cand; break; fi
    done
fi
run_py=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
pip_ver=$("$PYTHON" -m pip --version | awk '{print $2}')
echo "check_gpu_install: $req for CPython $target_py, manylinux x86_64 (pip $pip_ver on $("$PYTHON" -c 'import sys; print(sys.executable)'))"
"$PYTHON" - "$pip_ver" <<'EOF' || { echo "check_gpu_install: pip >= 22.2 needed (--dry-run --report)" >&2; exit 2; }
import sys
v = tuple(int(x) for x in sys.argv[1].split(".")[:2] if x.isdigit())
sys.exit(0 if v >= (22, 2) else 1)
EOF
if [ "$run_py" != "$target_py" ]; then
    echo "check_gpu_install: WARNING: running Python $run_py; markers such as python_version<\"3.15\" are evaluated for" \
         "$run_py, not $target_py (set PYTHON=python$target_py for the exact answer)" >&2
fi
case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) echo "check_gpu_install: WARNING: not Linux x86_64; platform_system/platform_machine markers follow this machine" >&2 ;;
esac
constraints=$({ "$PYTHON" -m pip config list 2>/dev/null || true; } | grep -i constraint | tr '\n' ' ' || true)
if [ -n "$constraints${PIP_CONSTRAINT:-}" ]; then  # e.g. a local cap on torch; it applies to this check too
    echo "check_gpu_install: note: this machine's pip configuration adds constraints: $constraints${PIP_CONSTRAINT:-}" >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
report=$tmp/report.json

plat=()
for minor in $(seq 17 35); do plat+=(--platform "manylinux_2_${minor}_x86_64"); done  # glibc 2.17 .. 2.35 (Ubuntu 22.04)
plat+=(--platform manylinux2014_x86_64)                                              # + manylinux2010/1 (pip expands)
feature=()
if [ "${FAST_DEPS:-1}" != 0 ] && "$PYTHON" -m pip install --help 2>/dev/null | grep -q fast-deps; then
    feature=(--use-feature=fast-deps)
fi

set +e
"$PYTHON" -m pip install --dry-run --ignore-installed --quiet "${feature[@]}" \
    --target "$tmp/target" --report "$report" \
    --only-binary=:all: --implementation cp --python-version "$target_py" "${plat[@]}" \
    -r "$req" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
rc=$?
set -e
[ -n "${REPORT:-}" ] && [ -f "$report" ] && cp "$report" "$REPORT"
if [ $rc -ne 0 ] || [ ! -s "$report" ]; then
    echo "check_gpu_install: FAILED: pip could not resolve $req (exit $rc)" >&2
    exit 1
fi

"$PYTHON" - "$report" <<'EOF'
import json, re, sys
report = json.load(open(sys.argv[1]))
meta = {it["metadata"]["name"].lower().replace("_", "-"): it["metadata"] for it in report["install"]}
def ver(name):
    m = meta.get(name)
    return m["version"] if m else None
print(f"resolved {len(meta)} distributions")
missing = []
for name in ("vllm", "torch", "transformers"):
    v = ver(name)
    print(f"  {name:<17} {v}")
    if v is None:
        missing.append(name)
for name in ("tokenizers", "safetensors", "huggingface-hub", "torchvision", "torchaudio", "triton",
             "flashinfer-python", "numpy", "nvidia-nccl-cu13", "nvidia-cudnn-cu13", "cuda-toolkit"):
    if name in meta:
        print(f"  {name:<17} {ver(name)}")
if missing:
    print(f"check_gpu_install: FAILED: not in the resolution: {', '.join(missing)}", file=sys.stderr)
    sys.exit(1)
# What vllm itself asks of torch and transformers (so a reader sees why these versions go together).
want = [r for r in meta["vllm"].get("requires_dist", [])
        if re.match(r"(torch|transformers)\b", r) and "extra ==" not in r]
print("vllm requires: " + ", ".join(want))
EOF
mkdir -p "$stamp_dir" && echo "$stamp_hash" > "$stamp_dir/gpu_install.sha"
echo "check_gpu_install: OK ($req resolves; nothing was installed)"
