#!/usr/bin/env bash
# Wheels for the lent GPU machine (the device tool's nvidia-h200: Python 3.12, torch 2.11,
# transformers, no package index): the packages that train.py's imports need and that machine's
# image lacks, at the versions installed here, into .wheels/ (git-ignored); there
# scripts/gpu_first_light.sh installs them with `pip install --no-index --target`. Run here,
# once, before the device call that carries `.wheels`.
#   bash scripts/gpu_wheels.sh            -> .wheels/*.whl (about 6 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS="tyro typeguard docstring-parser typing-extensions docker anthropic httpx2 httpcore2 jiter
opentelemetry-api pydantic pydantic-core annotated-types typing-inspection sniffio trio outcome
truststore gguf"
mkdir -p .wheels
for name in $PKGS; do
  version=$(python3 -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$name")
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .wheels "$name==$version"
done
ls .wheels | wc -l | xargs echo "gpu_wheels: wheels in .wheels:"
du -sh .wheels
