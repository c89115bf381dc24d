"""Suite-wide fixtures and the no-leak guarantee.

The suite is one session of runs: TERMRL_SESSION is set here, before sandbox.py is imported, and every
child process (evaluate.py, torchrun, the kill -9 children) inherits it, so every container, verifier
volume and snapshot image the suite starts carries the label termrl.session=<this session>. When the
session ends, whatever of this session remains is a leak: under CI (CI=true, or TERMRL_STRICT_LEAKS=1)
it is removed and the session fails, naming it; elsewhere it is only reported. Nothing of another run
on the same engine (a live training run beside `make test`) is ever looked at, let alone removed.
"""

import os
import secrets
import socket
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
SESSION = os.environ.setdefault(
    "TERMRL_SESSION", f"pytest-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}")


def session_leftovers(session: str) -> list[str]:
    """What of `session` is left on the engine: 'kind id name' per container, volume and image."""
    label = f"label=termrl.session={session}"
    out = []
    for kind, cmd in (("container", ["docker", "ps", "-aq", "--filter", label,
                                     "--format", "{{.ID}} {{.Names}}"]),
                      ("volume", ["docker", "volume", "ls", "-q", "--filter", label]),
                      ("image", ["docker", "images", "-q", "--filter", label])):
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


def pytest_sessionfinish(session, exitstatus):
    strict = os.environ.get("CI", "").lower() == "true" or os.environ.get("TERMRL_STRICT_LEAKS") == "1"
    if not strict:
        left = session_leftovers(SESSION)
        if left:
            print(f"\nWARNING: {len(left)} thing(s) of this test session (label termrl.session={SESSION}) "
                  f"remain: {left}")
        return
    left = sweep(SESSION)
    if left:
        print(f"\nLEAK: {len(left)} thing(s) of this test session were left and have now been "
              f"removed: {left}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The fixture tasks' own hidden tests (tests/fixtures/**/tests/test_*.py) run inside containers, not here.
collect_ignore_glob = ["fixtures/*"]
