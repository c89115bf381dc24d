# termrl: two commands on a fresh machine.
#   make train   runs the main job on the embedded default (2 CPU ranks, SmolLM2-135M-Instruct, starter tasks)
#   make learn   trains it, then evaluates base vs trained with 95% intervals (runs/learn/learning.json)
#   make test    passes the test suite (real Docker, real HTTP on loopback, tiny real models)
PYTHON ?= python3
NPROC ?= 2
PRESET ?= cpu-smollm2
ARGS ?=

.PHONY: setup train learn test test-fast validate-tasks bench gpu-smoke clean-containers check-gpu-install

setup:
	@bash scripts/setup.sh

train: setup
	$(PYTHON) -m torch.distributed.run --standalone --nproc_per_node=$(NPROC) train.py --preset $(PRESET) $(ARGS)

# train the CPU default (preset cpu-learn), evaluate base vs trained: runs/learn/learning.json, learning.png, a verdict
learn: setup
	$(PYTHON) -m experiments.learn --nproc $(NPROC) $(ARGS)

# the GPU pins must keep resolving (pip's resolver, --dry-run; re-run only when a pin or the script changed)
check-gpu-install:
	@CACHED=1 bash scripts/check_gpu_install.sh

test: setup check-gpu-install
	$(PYTHON) -m pytest tests -q -ra --timeout=900 $(ARGS)

validate-tasks: setup
	$(PYTHON) -m tasks validate --tasks data/tasks $(ARGS)

bench: setup
	$(PYTHON) bench/bench_sandbox.py
	$(PYTHON) bench/bench_model.py
	$(PYTHON) bench/bench_generate.py
	$(PYTHON) bench/bench_step.py

gpu-smoke:
	bash scripts/gpu_smoke.sh

clean-containers:
	$(PYTHON) -c "import sandbox; print(sandbox.reap(), 'containers removed')"
