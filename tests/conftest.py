"""Suite-wide fixtures, the test tiers, and the no-leak guarantee.

Tiers (markers registered in pyproject.toml): `docker` (starts a container or builds an image),
`model_run` (runs train.py, evaluate.py, experiments.learn or torchrun in a subprocess, or spawns
distributed ranks), `server` (starts an HTTP server: the judge or OpenAI test servers, `transformers
serve`), `slow` (none of those, but long: real-model decoding). `make test-fast` runs the unmarked
rest with TERMRL_TEST_TIER=fast, under which an unmarked test that starts Docker, a model run or a
server fails, naming its missing marker: the tiering is enforced, not hoped.

The suite is one session of runs: TERMRL_SESSION is set here, before sandbox.py is imported, and every
child process (evaluate.py, torchrun, the kill -9 children) inherits it, so every container, verifier
volume and snapshot image the suite starts carries the label termrl.session=<this session>. When the
session ends, whatever of this session remains is a leak: under CI (CI=true, or TERMRL_STRICT_LEAKS=1)
it is removed and the session fails, naming it; elsewhere it is only reported. Nothing of another run
on the same engine (a live training run beside `make test`) is ever looked at, let alone removed.
"""

import multiprocessing.process
import os
import secrets
import socket
import socketserver
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = os.path.join(ROOT, "data", "tasks")  # the shipped dataset
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
FAST_TIER = os.environ.get("TERMRL_TEST_TIER") == "fast"
SESSION = os.environ.setdefault(
    "TERMRL_SESSION", f"pytest-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
)


def session_leftovers(session: str) -> list[str]:
    """What of `session` is left on the engine: 'kind id name' per container, volume and image."""
    label = f"label=termrl.session={session}"
    out = []
    for kind, cmd in (
        ("container", ["docker", "ps", "-aq", "--filter", label, "--format", "{{.ID}} {{.Names}}"]),
        ("volume", ["docker", "volume", "ls", "-q", "--filter", label]),
        ("image", ["docker", "images", "-q", "--filter", label]),
    ):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        out += [f"{kind} {line}" for line in r.stdout.splitlines() if line.strip()]
    return out


def sweep(session: str) -> list[str]:
    """Remove every container, volume and snapshot image of `session` (and only those); return them."""
    import sandbox

    left = session_leftovers(session)
    if left:
        sandbox.reap(session=session)
    return left


@pytest.fixture(scope="session")
def docker_client():
    """A docker-py client for the running engine (`make setup` starts one)."""
    import docker

    client = docker.from_env(timeout=120)
    client.ping()
    yield client
    client.close()


@pytest.fixture(scope="session")
def smol_dir():
    """The embedded default model's HF folder (SmolLM2-135M-Instruct, imported from its GGUF
    once)."""
    from hf import weights

    return weights.default_model_dir()


@pytest.fixture(scope="module")
def tok(smol_dir):
    """The embedded default model's tokenizer."""
    from hf import weights

    return weights.load_tokenizer(smol_dir)


@pytest.fixture(scope="module")
def smol(smol_dir):
    """The embedded SmolLM2-135M-Instruct as model.Transformer, fp32, eval mode."""
    from hf import weights

    return weights.load_hf(smol_dir).eval()


@pytest.fixture(scope="module")
def tasks():
    """The starter tasks the rollout, engine and evaluation tests use (rollout_helpers.USED), by id."""
    from rollout_helpers import TASKS, USED

    from tasks import load_tasks

    return {i: load_tasks(os.path.join(TASKS, i))[0] for i in USED}


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    """A tiny random Qwen3 HF folder (hf.weights.save_tiny_random, seed 0)."""
    from hf import weights

    return weights.save_tiny_random(
        tmp_path_factory.mktemp("tiny") / "qwen3", family="qwen3", seed=0
    )


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    """TERMRL_CACHE in the test's tmp_path: image-build and dataset caches start empty."""
    monkeypatch.setenv("TERMRL_CACHE", str(tmp_path / "cache"))


# ----------------------------------------------------------------------------- tiers, enforced

_MODEL_RUNS = (
    "torch.distributed.run",
    "torchrun",
    "train.py",
    "evaluate.py",
    "experiments.learn",
    "experiments.warm_start",
    "bookkeeping.launch",
)


def _refuse(what: str, marker: str):
    pytest.fail(
        f"TERMRL_TEST_TIER=fast: this test {what}; mark it @pytest.mark.{marker}", pytrace=False
    )


class _TierPopen(subprocess.Popen):
    """subprocess.Popen that refuses, in the fast tier, the commands of the marked tiers."""

    def __init__(self, args, *a, **kw):
        argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
        words = [os.path.basename(str(w)) for w in argv]
        if words and words[0] == "docker":
            _refuse("runs the docker CLI", "docker")
        if any(w in _MODEL_RUNS for w in words):
            _refuse(f"runs a model in a subprocess ({' '.join(map(str, argv))[:120]})", "model_run")
        if "serve" in words:
            _refuse("starts a server in a subprocess", "server")
        if "tasks" in words and "validate" in words:
            _refuse("validates tasks in containers (python -m tasks validate)", "docker")
        super().__init__(args, *a, **kw)


@pytest.fixture(scope="module")
def one_thread():
    """torch on one thread for a module's in-process model tests: on 2 shared cores a second OpenMP
    thread spins whenever the other core is busy (10x slower). Restored after the module."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session", autouse=True)
def _enforce_tier():
    """Under TERMRL_TEST_TIER=fast: no Docker client (in this process or, through DOCKER_HOST, in a
    child), no model-run or server subprocess, no spawned process, no socket server. Session-wide,
    so module-scoped fixtures are covered too."""
    if not FAST_TIER:
        yield
        return
    import docker

    mp = pytest.MonkeyPatch()
    mp.setenv("DOCKER_HOST", "unix:///nonexistent/termrl-fast-tier-refuses-docker.sock")
    mp.setattr(
        docker.APIClient, "__init__", lambda *a, **kw: _refuse("starts a Docker client", "docker")
    )
    mp.setattr(subprocess, "Popen", _TierPopen)
    mp.setattr(
        socketserver.BaseServer, "__init__", lambda *a, **kw: _refuse("starts a server", "server")
    )
    mp.setattr(
        multiprocessing.process.BaseProcess,
        "start",  # the FSDP tests' spawned ranks
        lambda *a, **kw: _refuse("spawns worker processes (a distributed model run)", "model_run"),
    )
    yield
    mp.undo()


def _toolchain_volumes() -> set[str]:
    """The verifier's toolchain caches on the engine (label termrl.toolchain; sandboxing/verifier.py)."""
    r = subprocess.run(
        ["docker", "volume", "ls", "-q", "--filter", "label=termrl.toolchain"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return {line for line in r.stdout.split() if line}


def pytest_sessionstart(session):
    session.config._termrl_toolchains = set() if FAST_TIER else _toolchain_volumes()


def pytest_sessionfinish(session, exitstatus):
    if FAST_TIER:  # no container could start
        return
    # The toolchain copies this session made are a cache shared by runs (no session label): removed
    # here so the suite ends with nothing of its own left; those that were there before stay.
    made = _toolchain_volumes() - getattr(session.config, "_termrl_toolchains", set())
    # TERMRL_KEEP_TOOLCHAINS=1: a developer running several pytest sessions at once keeps the shared
    # cache, since one session's removal would pull a copy from under another's checked identity
    if made and os.environ.get("TERMRL_KEEP_TOOLCHAINS") != "1":
        subprocess.run(["docker", "volume", "rm", *sorted(made)], capture_output=True, timeout=120)
    # the hidden tests' volumes (label termrl.tests) are this process's cache, kept for the whole
    # session as a run keeps them until its end (reap by run id): removed here like a run's
    r = subprocess.run(
        ["docker", "volume", "ls", "-q", "--filter", "label=termrl.tests"]
        + ["--filter", f"label=termrl.session={SESSION}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if r.stdout.split():
        subprocess.run(
            ["docker", "volume", "rm", *r.stdout.split()], capture_output=True, timeout=120
        )
    strict = (
        os.environ.get("CI", "").lower() == "true" or os.environ.get("TERMRL_STRICT_LEAKS") == "1"
    )
    if not strict:
        left = session_leftovers(SESSION)
        if left:
            print(
                f"\nWARNING: {len(left)} thing(s) of this test session (label termrl.session={SESSION}) "
                f"remain: {left}"
            )
        return
    left = sweep(SESSION)
    if left:
        print(
            f"\nLEAK: {len(left)} thing(s) of this test session were left and have now been "
            f"removed: {left}"
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The fixture tasks' hidden tests (tests/fixtures/**/tests/test_*.py) run in containers, not here.
collect_ignore_glob = ["fixtures/*"]
