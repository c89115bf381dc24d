"""The test tiers are enforced: under TERMRL_TEST_TIER=fast (make test-fast) conftest fails an
unmarked test that starts Docker, a model run or a server, naming the marker it needs."""

import os
import re
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = textwrap.dedent("""
    import subprocess, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    def test_docker():
        import docker
        docker.from_env()

    def test_model_run():
        subprocess.run([sys.executable, "train.py", "--help"])

    def test_server():
        ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)

    def test_pure():
        assert 1 + 1 == 2
""")


def test_fast_tier_fails_unmarked_tests_that_start_docker_a_model_run_or_a_server(tmp_path):
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {
        **os.environ,
        "TERMRL_TEST_TIER": "fast",
        "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "tests"), ROOT]),
    }
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "conftest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rf",
            "test_probe.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "3 failed, 1 passed" in out, out
    for test, marker in (
        ("test_docker", "docker"),
        ("test_model_run", "model_run"),
        ("test_server", "server"),
    ):
        reason = re.search(rf"_ {test} _+\n(.*)\n", out).group(1)  # the line under its header
        assert reason.startswith("TERMRL_TEST_TIER=fast: this test "), out
        assert reason.endswith(f"; mark it @pytest.mark.{marker}"), out
