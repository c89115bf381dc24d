# termrl: two commands on a fresh machine.
#   make train   runs the main job on the embedded default (2 CPU ranks, SmolLM2-135M-Instruct, starter tasks)
#   make learn   multi-turn: warm start -> GRPO -> held-out evaluation with 95% intervals (runs/learn/learning.json)
#   make learn-single  the one-turn experiment: trains the CPU default, evaluates base vs trained (runs/learn-single)
#   make test    lints (ruff) and passes the whole test suite (real Docker, real HTTP on loopback, tiny real models)
#   make test-fast  the tier without containers, model-run subprocesses or servers (a couple of minutes)
PYTHON ?= python3
NPROC ?= 2
PRESET ?= cpu-smollm2
ARGS ?=

.PHONY: setup train learn learn-single lint test test-fast validate-tasks bench gpu-smoke clean-containers clean-toolchains check-gpu-install harbor-venv

setup:
	@bash scripts/setup.sh

# the config, the task set and what the start continues checked once first: a bad knob is one line, not one per
# rank under torchrun's traceback. torchrun runs under bookkeeping/launch.py, which owns Ctrl-C: the step in flight
# is cut short, the last completed step checkpointed, and make exits 0 after such a clean stop; the torchrun it
# starts names a rank the kernel killed for memory; after a failed torchrun the launcher removes the containers
# its ranks left. A --resume of a run that trained all its steps is said by the check
# (exit status 3, train.RUN_COMPLETE), and make exits 0 without starting torchrun
train: setup
	@$(PYTHON) train.py --check-config --preset $(PRESET) $(ARGS) || { status=$$?; [ $$status = 3 ] && exit 0; exit $$status; }; \
	TERMRL_RESUME_CMD='make train PRESET=$(PRESET) NPROC=$(NPROC) ARGS="$(strip $(filter-out --resume,$(ARGS)) --resume)"' \
	  $(PYTHON) -m bookkeeping.launch --nproc $(NPROC) train.py --preset $(PRESET) $(ARGS)

# multi-turn learning (preset cpu-learn-multiturn): the generated family's train and held-out instances, a warm
# start from demonstrations, GRPO from it, both judged on held-out instances: runs/learn/learning.json, a verdict
learn: setup
	$(PYTHON) -m experiments.learn --nproc $(NPROC) $(ARGS)

# the one-turn experiment (preset cpu-learn): base vs trained on the trained tasks, runs/learn-single/learning.json
learn-single: setup
	$(PYTHON) -m experiments.learn_single --nproc $(NPROC) $(ARGS)

lint:
	$(PYTHON) -m ruff check .

# the GPU pins must keep resolving (pip's resolver, --dry-run; re-run only when a pin or the script changed)
check-gpu-install:
	@CACHED=1 bash scripts/check_gpu_install.sh

# Harbor's own harness in a venv of its own, for the parity test (tests/test_harbor_parity.py); never a
# dependency of termrl; a machine without Python >= 3.12 skips that test, saying so
harbor-venv:
	@bash scripts/harbor_venv.sh

# the lint runs first and fails the target, but the suite runs either way
test: setup check-gpu-install harbor-venv
	@status=0; $(PYTHON) -m ruff check . || status=1; \
	$(PYTHON) -m pytest tests -q -ra --timeout=900 $(ARGS) || status=1; exit $$status

# the unmarked tier (markers in pyproject.toml); conftest fails any test here that starts Docker,
# a model-run subprocess or a server (TERMRL_TEST_TIER=fast)
test-fast: setup
	TERMRL_TEST_TIER=fast $(PYTHON) -m pytest tests -q -ra --timeout=900 \
	  -m "not docker and not model_run and not server and not slow" $(ARGS)

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

# the verifier's toolchain cache (volumes termrl-toolchain-<digest>, made again by the next verification);
# ARGS="--host URL" for another engine
clean-toolchains:
	$(PYTHON) -m sandboxing.toolchain remove $(ARGS)
