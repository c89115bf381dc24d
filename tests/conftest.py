"""Suite-wide fixtures and the no-leak guarantee.

Every container termrl starts carries the label termrl=1. When the session ends, any such container
that was not there when it started is a leak: under CI (CI=true, or TERMRL_STRICT_LEAKS=1) it is removed,
so the machine stays clean even after a failed test, and the session fails, naming the containers.
Elsewhere (a developer's machine, where other work may be running containers at the same time) the
leak is only reported.
"""

import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _labelled_containers() -> list[str]:
    out = subprocess.run(["docker", "ps", "-aq", "--filter", "label=termrl=1", "--format", "{{.ID}} {{.Names}}"],
                         capture_output=True, text=True, timeout=60)
    return [line for line in out.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def docker_client():
    """A docker-py client for the running engine (`make setup` starts one)."""
    import docker

    client = docker.from_env(timeout=120)
    client.ping()
    yield client
    client.close()


def pytest_configure(config):
    config.addinivalue_line("markers", "model_run: a tiny real model end to end (tens of seconds)")


def pytest_sessionstart(session):
    session.config._termrl_leftover_at_start = set(_labelled_containers())


def pytest_sessionfinish(session, exitstatus):
    before = getattr(session.config, "_termrl_leftover_at_start", set())
    left = [c for c in _labelled_containers() if c not in before]
    if not left:
        return
    strict = os.environ.get("CI", "").lower() == "true" or os.environ.get("TERMRL_STRICT_LEAKS") == "1"
    if not strict:
        print(f"\nWARNING: {len(left)} container(s) labelled termrl=1 appeared during the session and remain: {left}")
        return
    ids = [c.split()[0] for c in left]
    subprocess.run(["docker", "rm", "-f", *ids], capture_output=True, timeout=120)
    print(f"\nLEAK: {len(left)} container(s) labelled termrl=1 were left by the suite and have now been removed: {left}")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The fixture tasks' own hidden tests (tests/fixtures/**/tests/test_*.py) run inside containers, not here.
collect_ignore_glob = ["fixtures/*"]
