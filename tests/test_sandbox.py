"""sandbox.py against the real Docker engine: one behaviour per test, exact expected values.

Tests that do not change shared state use one module-wide sandbox; tests that break their sandbox
(bombs, kill -9 -1, rm -rf /) get their own and check the shared one still works afterwards.
"""

import asyncio
import dataclasses
import logging
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import uuid
from pathlib import Path

import docker.errors
import pytest

import sandbox
from sandbox import ExecResult, Limits, Sandbox, SandboxError
from sandboxing import images
from sandboxing.images import ImageBuildError
from tasks import Task

pytestmark = pytest.mark.docker  # all but a few pure tests (parse_junit, limits) run a container

ROOT = Path(__file__).resolve().parents[1]
RUN_ID = f"test-sandbox-{os.getpid()}"


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def sb(docker_client):
    box = run(Sandbox.start(images.BASE_IMAGE, run_id=RUN_ID))
    yield box
    run(box.close())


def own_sandbox(**limits) -> Sandbox:
    return run(Sandbox.start(images.BASE_IMAGE, limits=Limits(**limits), run_id=RUN_ID))


def sh(box: Sandbox, cmd: str, timeout: float = 30) -> ExecResult:
    return run(box.exec(cmd, timeout=timeout))


def status(client, cid: str) -> str:
    try:
        return client.api.inspect_container(cid)["State"]["Status"]
    except docker.errors.NotFound:
        return "gone"


def wait_status(client, cid: str, want: str, within_s: float = 30) -> str:
    end = time.monotonic() + within_s
    while status(client, cid) != want and time.monotonic() < end:
        time.sleep(0.2)
    return status(client, cid)


# ---- shell state and results ---------------------------------------------------------------------------


def test_fresh_sandbox_works_in_app(sb):
    assert sh(sb, "cd /app 2>/dev/null; pwd").output == "/app\n"


def test_cd_persists_across_exec(sb):
    sh(sb, "cd /tmp")
    assert sh(sb, "pwd").output == "/tmp\n"
    sh(sb, "cd /app")


def test_exported_variable_persists_across_exec(sb):
    sh(sb, "export GREETING='hello world'")
    assert sh(sb, 'echo "$GREETING"').output == "hello world\n"


def test_unset_variable_stays_unset(sb):
    sh(sb, "export DOOMED=1")
    sh(sb, "unset DOOMED")
    assert sh(sb, 'echo "[${DOOMED-unset}]"').output == "[unset]\n"


def test_exit_code_is_returned(sb):
    r = sh(sb, "echo before; exit 7")
    assert (r.exit_code, r.output, r.timed_out, r.truncated) == (7, "before\n", False, False)


def test_stdout_and_stderr_are_interleaved_in_order(sb):
    assert (
        sh(sb, "echo one; echo two >&2; echo three; echo four >&2").output
        == "one\ntwo\nthree\nfour\n"
    )


def test_ansi_escapes_are_stripped(sb):
    assert sh(sb, r"printf '\033[1;31mred\033[0m \033]0;title\007plain\n'").output == "red plain\n"


def test_invalid_utf8_is_replaced(sb):
    assert sh(sb, r"printf 'caf\xc3\xa9 \xff\xfe!\n'").output == "café \ufffd\ufffd!\n"


def test_output_keeps_head_and_tail_with_cut_marker(sb):
    r = sh(sb, "seq 1 100000")
    data = "".join(f"{i}\n" for i in range(1, 100001)).encode()
    head, tail = data[:8192].decode(), data[-8192:].decode()
    assert r.truncated is True
    assert r.output == head + f"\n[... {len(data) - 16384} bytes of output cut ...]\n" + tail


def test_binary_output_from_urandom_is_text_with_exact_cut(sb):
    r = sh(sb, "head -c 100000 /dev/urandom")
    assert r.exit_code == 0 and r.truncated is True
    assert "\n[... 83616 bytes of output cut ...]\n" in r.output
    assert re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", r.output) is None


def test_output_flood_keeps_memory_bounded(sb):
    tracemalloc.start()
    try:
        r = sh(sb, "yes", timeout=5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.timed_out is True and r.truncated is True
    assert r.output.startswith("y\ny\ny\n")
    assert peak < 4 * 2**20, f"peak traced memory {peak} bytes while streaming a yes flood"


def test_background_job_keeps_running_and_its_output_reaches_the_next_command(sb):
    r = sh(sb, "(sleep 0.5; echo late) & sleep 300 >/dev/null 2>&1 & echo started")
    assert (r.exit_code, r.output) == (0, "started\n")
    assert sh(sb, "sleep 1.5; pgrep -c -f 'sleep 300'; echo now").output == "late\n1\nnow\n"
    sh(sb, "pkill -f 'sleep 300'")


def test_exec_rejects_bad_arguments(sb):
    with pytest.raises(ValueError, match="timeout"):
        run(sb.exec("true", timeout=0))
    with pytest.raises(ValueError, match="NUL"):
        run(sb.exec("echo a\x00b"))
    with pytest.raises(ValueError, match="cmd must be str"):
        run(sb.exec(b"true"))


# ---- one persistent shell: what a terminal keeps ---------------------------------------------------------


def test_unexported_variable_persists_across_exec(sb):
    sh(sb, "COUNT=7")
    assert sh(sb, "echo $COUNT").output == "7\n"


def test_function_and_alias_persist_across_exec(sb):
    sh(sb, "greet() { echo \"hi $1\"; }; alias ll='echo aliased'")
    assert sh(sb, "greet bob; ll").output == "hi bob\naliased\n"


def test_shell_options_persist_across_exec(sb):
    sh(sb, "set -o pipefail; shopt -s globstar")
    assert sh(sb, "false | true; echo $?; shopt -p globstar").output == "1\nshopt -s globstar\n"
    sh(sb, "set +o pipefail; shopt -u globstar")


def test_directory_stack_persists_across_exec(sb):
    sh(sb, "dirs -c; cd /app; pushd /tmp; pushd /usr")
    assert sh(sb, "dirs; pwd").output == "/usr /tmp /app\n/usr\n"
    assert sh(sb, "popd; popd").output == "/tmp /app\n/app\n"


def test_sourced_script_keeps_its_functions(sb):
    run(
        sb.write_file(
            "/tmp/venv/bin/activate",
            "export VIRTUAL_ENV=/tmp/venv\n"
            "deactivate() { unset VIRTUAL_ENV; unset -f deactivate; }\n",
        )
    )
    sh(sb, "source /tmp/venv/bin/activate")
    assert sh(sb, "echo $VIRTUAL_ENV; type -t deactivate").output == "/tmp/venv\nfunction\n"
    assert sh(sb, 'deactivate; echo "${VIRTUAL_ENV-unset}"').output == "unset\n"


def test_commands_have_no_stdin(sb):
    r = sh(sb, 'cat; read x; echo "read rc=$?"')
    assert (r.exit_code, r.output) == (0, "read rc=1\n")


def test_background_job_does_not_hold_the_call_and_stays_a_job(sb):
    sh(sb, "disown -a")  # jobs of earlier tests
    r = sh(
        sb, "sleep 1003 & echo started"
    )  # its stdout is the shell's: the call must not wait for it to close
    assert (r.exit_code, r.output) == (0, "started\n")
    assert (
        sh(sb, "jobs; ps -eo args | grep -c '^sleep 1003$'").output
        == "[1]+  Running                 sleep 1003 &\n1\n"
    )
    sh(sb, "kill %1; wait")


def test_exit_replaces_the_shell_and_keeps_its_state(sb):
    sh(sb, "EXITVAR=5; exitfn() { echo fx; }; alias exa='echo ea'")
    r = sh(sb, "echo bye; exit 3")
    assert (r.exit_code, r.output, r.timed_out) == (3, "bye\n", False)
    assert sh(sb, "echo $EXITVAR; exitfn; exa").output == "5\nfx\nea\n"


# ---- timeouts ------------------------------------------------------------------------------------------


def test_timeout_stops_command_and_leaves_no_process(sb):
    r = sh(sb, "sleep 1000", timeout=2)
    assert (r.timed_out, r.exit_code) == (True, None)
    assert "sleep 1000" not in sh(sb, "ps -eo args").output
    assert sh(sb, "echo still usable").output == "still usable\n"


def test_command_ignoring_sigterm_is_killed_with_its_children(sb):
    r = sh(sb, "trap '' TERM; (trap '' TERM; sleep 1001) & sleep 1002", timeout=1)
    assert r.timed_out is True
    procs = sh(sb, "ps -eo args").output
    assert "sleep 1001" not in procs and "sleep 1002" not in procs


def test_timeout_stops_a_builtin_loop_of_the_shell_itself_and_keeps_state(sb):
    sh(sb, "LOOPVAR=1; loopfn() { echo lf; }; alias lpa='echo la'; sleep 1004 & echo bg")
    r = sh(
        sb, "trap '' INT TERM; while :; do :; done", timeout=2
    )  # the shell itself spins and ignores signals
    assert (r.timed_out, r.exit_code) == (True, None)
    assert (
        "did not stop after its timeout" not in r.output
    )  # the server stopped it, not the host's fallback
    assert sh(sb, "echo $LOOPVAR; loopfn; lpa").output == "1\nlf\nla\n"
    assert (
        sh(sb, "ps -eo args | grep -c '^sleep 1004$'").output == "1\n"
    )  # an earlier command's job lives on
    sh(sb, "pkill -f 'sleep 1004'")


def test_timeout_of_a_term_ignoring_loop_in_the_shell_keeps_state(sb):
    sh(sb, "TERMVAR=2")
    r = sh(sb, "trap '' TERM; while :; do :; done", timeout=2)
    assert (r.timed_out, r.exit_code) == (True, None)
    assert sh(sb, "echo $TERMVAR").output == "2\n"


def test_own_exit_124_is_not_a_timeout(sb):
    r = sh(sb, "exit 124", timeout=10)
    assert (r.exit_code, r.timed_out) == (124, False)


# ---- isolation -----------------------------------------------------------------------------------------


def test_isolation_defaults_are_applied(sb, docker_client):
    info = docker_client.api.inspect_container(sb.id)
    hc, labels = info["HostConfig"], info["Config"]["Labels"]
    assert hc["NetworkMode"] == "none"
    assert hc["Memory"] == hc["MemorySwap"] == 1 << 30
    assert hc["NanoCpus"] == 1_000_000_000
    assert hc["PidsLimit"] == 256
    assert hc["CapDrop"] == ["ALL"]
    assert sorted(hc["CapAdd"]) == sorted(sandbox.DEFAULT_CAPS)
    assert hc["SecurityOpt"] == ["no-new-privileges"]
    assert hc["Init"] is True
    assert (labels["termrl"], labels["termrl.run_id"]) == ("1", RUN_ID)
    assert abs(float(labels["termrl.started"]) - time.time()) < 3600


def test_only_loopback_interface_exists(sb):
    assert sh(sb, "ls /sys/class/net").output == "lo\n"
    ifaces = [
        ln.split(":")[0].strip() for ln in sh(sb, "cat /proc/net/dev").output.splitlines()[2:]
    ]
    assert ifaces == ["lo"]


def test_network_access_fails(sb):
    r = sh(sb, "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)\"")
    assert r.exit_code == 1
    assert r.output.rstrip().endswith("OSError: [Errno 101] Network is unreachable")


def test_fork_bomb_is_contained(sb):
    box = own_sandbox(pids=64)
    try:
        # The bomb runs in the background of a foreground sleep, so the timeout is what ends it.
        r = sh(box, "bomb() { bomb | bomb & }; bomb; sleep 100", timeout=3)
        assert r.timed_out is True
        assert "fork: retry: Resource temporarily unavailable" in r.output  # the pids limit held it
        assert (
            sh(box, "ps -e -o comm= > /tmp/p; grep -c '^bash$' /tmp/p").output == "2\n"
        )  # the server and this command
    finally:
        run(box.close())
    assert sh(sb, "echo unaffected").output == "unaffected\n"


def test_memory_bomb_is_killed_and_sandbox_survives(sb):
    box = own_sandbox(memory_bytes=128 << 20)
    try:
        r = sh(box, "python3 -c \"s = 'x' * (512 * 2**20)\"")
        assert (r.exit_code, r.timed_out) == (137, False)
        assert sh(box, "echo alive").output == "alive\n"
    finally:
        run(box.close())
    assert sh(sb, "echo unaffected").output == "unaffected\n"


def test_kill_all_processes_is_reported_and_sandbox_restarts(sb):
    box = own_sandbox()
    try:
        run(box.write_file("/app/keep.txt", "kept"))
        sh(box, "KEEP=9; cd /tmp")
        r = sh(box, "kill -9 -1")
        assert r.exit_code is None
        assert "every process in it was killed" in r.output
        assert sh(box, "cat /app/keep.txt").output == "kept"
        assert (
            sh(box, "echo $KEEP; pwd").output == "9\n/tmp\n"
        )  # the shell state came back from its snapshot
    finally:
        run(box.close())
        run(box.close())
    assert sh(sb, "echo unaffected").output == "unaffected\n"


def test_rm_rf_root_is_reported_and_close_still_works(sb, docker_client):
    box = own_sandbox()
    try:
        r = sh(box, "rm -rf --no-preserve-root / >/dev/null 2>&1; echo rc=$?", timeout=60)
        assert r.output.startswith("rc=1\n")  # /proc, /sys and mounts cannot go
        r = sh(box, "ls /")  # the persistent shell outlives its binaries; ls is gone
        assert (r.exit_code, r.output.endswith("ls: command not found\n")) == (127, True)
    finally:
        run(box.close())
    assert status(docker_client, box.id) == "gone"
    assert sh(sb, "ls /usr/bin/bash").output == "/usr/bin/bash\n"
    assert Path("/usr/bin/env").exists()


# ---- files ---------------------------------------------------------------------------------------------


def test_write_and_read_file_with_spaces_and_non_ascii_path(sb):
    path = "/app/my dir/ünï cödé 文件.txt"
    run(sb.write_file(path, "héllo\n"))
    assert run(sb.read_file(path)) == "héllo\n".encode()
    assert sh(sb, f"cat '{path}'").output == "héllo\n"


def test_write_file_bytes_roundtrip(sb):
    data = bytes(range(256)) * 4
    run(sb.write_file("/tmp/bin/blob.bin", data))
    assert run(sb.read_file("/tmp/bin/blob.bin")) == data


def test_read_missing_file_raises_clear_error(sb):
    with pytest.raises(FileNotFoundError, match="no such file in sandbox .*'/app/missing.txt'"):
        run(sb.read_file("/app/missing.txt"))


def test_read_file_larger_than_max_bytes_raises(sb):
    run(sb.write_file("/tmp/big.txt", "x" * 1000))
    with pytest.raises(ValueError, match="is 1000 bytes, more than max_bytes=100"):
        run(sb.read_file("/tmp/big.txt", max_bytes=100))


def test_read_directory_raises(sb):
    with pytest.raises(IsADirectoryError, match="'/app' is a directory"):
        run(sb.read_file("/app"))


# ---- hidden tests --------------------------------------------------------------------------------------


def write_tests(d: Path, files: dict[str, str]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for name, src in files.items():
        (d / name).write_text(textwrap.dedent(src))
    return d


def test_run_tests_reports_each_test_with_parametrized_ids(sb, tmp_path):
    tests = write_tests(
        tmp_path / "tests",
        {
            "test_task.py": """
        import pytest
        def test_pass():
            assert open('/app/answer.txt').read() == '42'
        def test_fail():
            assert 1 == 2
        @pytest.mark.parametrize('x,y', [(1, 'a'), (2, 'b c')])
        def test_case(x, y):
            assert x == 1
        """
        },
    )
    run(sb.write_file("/app/answer.txt", "42"))
    report = run(sb.run_tests(tests, timeout=60))
    assert report.tests == {
        "test_pass": True,
        "test_fail": False,
        "test_case[1-a]": True,
        "test_case[2-b c]": False,
    }
    assert (report.timed_out, report.error) == (False, None)


def test_run_tests_a_test_past_its_timeout_fails_and_the_others_are_scored(sb, tmp_path):
    tests = write_tests(
        tmp_path / "tests",
        {
            "test_slow.py": """
        import time
        import pytest
        def test_fast():
            pass
        @pytest.mark.parametrize('v', ['a b'])
        def test_slow(v):
            time.sleep(600)
        """
        },
    )
    report = run(sb.run_tests(tests, timeout=5))
    assert report.tests == {"test_fast": True, "test_slow[a b]": False}
    assert report.timed_out is True and report.error is None
    assert "[termrl] per-test timeout: the test ran past 5s" in report.output


def test_run_tests_collection_error_is_reported(sb, tmp_path):
    tests = write_tests(
        tmp_path / "tests",
        {
            "test_ok.py": "def test_ok():\n    pass\n",
            "test_broken.py": "import nonexistent_mod_xyz\n",
        },
    )
    report = run(sb.run_tests(tests, timeout=60))
    assert report.tests == {
        "test_ok": True
    }  # the other module still runs (--continue-on-collection-errors)
    assert report.error == (
        "collection error in test_broken: "
        "E   ModuleNotFoundError: No module named 'nonexistent_mod_xyz'"
    )


def test_run_tests_ignores_conftest_planted_by_agent(sb, tmp_path):
    run(
        sb.write_file(
            "/tmp/conftest.py",
            textwrap.dedent("""
        import pytest
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            outcome.get_result().outcome = 'passed'
        """),
        )
    )
    run(sb.write_file("/tmp/pytest.ini", "[pytest]\n"))
    tests = write_tests(tmp_path / "tests", {"test_x.py": "def test_x():\n    assert False\n"})
    assert run(sb.run_tests(tests, timeout=60)).tests == {"test_x": False}


def test_run_tests_missing_dir_raises(sb, tmp_path):
    with pytest.raises(FileNotFoundError, match="tests_dir .*nope.* is not a directory"):
        run(sb.run_tests(tmp_path / "nope"))


def test_parse_junit_ands_duplicate_names():
    xml = b"""<testsuites><testsuite>
      <testcase classname="a" name="test_same"/><testcase classname="b" name="test_same"><failure/></testcase>
      <testcase classname="a" name="test_skip"><skipped/></testcase><testcase classname="a" name="test_ok"/>
    </testsuite></testsuites>"""
    assert sandbox.parse_junit(xml) == (
        {"test_same": False, "test_skip": False, "test_ok": True},
        ["test_skip"],
        None,
    )


# ---- lifecycle -----------------------------------------------------------------------------------------


def test_close_is_idempotent_and_removes_container(docker_client):
    box = own_sandbox()
    run(box.close())
    run(box.close())
    assert status(docker_client, box.id) == "gone"
    with pytest.raises(SandboxError, match="is closed"):
        run(box.exec("true"))


def test_start_with_missing_image_raises():
    with pytest.raises(SandboxError, match="image 'termrl/no-such-image:nope' not found"):
        run(Sandbox.start("termrl/no-such-image:nope", run_id=RUN_ID))


def test_reap_by_run_id_and_age(docker_client):
    a, b = f"reap-a-{uuid.uuid4().hex[:8]}", f"reap-b-{uuid.uuid4().hex[:8]}"

    async def start_three():
        return await asyncio.gather(
            Sandbox.start(images.BASE_IMAGE, run_id=a),
            Sandbox.start(images.BASE_IMAGE, run_id=a),
            Sandbox.start(images.BASE_IMAGE, run_id=b),
        )

    boxes = run(start_three())
    try:
        assert sandbox.reap(run_id=a) == 2
        assert sandbox.reap(run_id=b, older_than_s=3600) == 0
        assert sandbox.reap(run_id=b, older_than_s=0) == 1
        assert [status(docker_client, x.id) for x in boxes] == ["gone"] * 3
        with pytest.raises(SandboxError, match="no longer exists"):
            run(boxes[0].exec("true"))
    finally:
        for x in boxes:
            run(x.close())


def test_drain_calls_waits_for_a_start_whose_caller_was_cancelled_so_a_reap_then_finds_it(
    docker_client,
):
    # a cancelled coroutine's Docker call goes on in its thread (training/setup.py's teardown: reap, drain, reap)
    run_id = f"drain-{uuid.uuid4().hex[:8]}"
    f = {"label": [f"termrl.run_id={run_id}"]}

    async def cancelled_start():
        start = asyncio.ensure_future(Sandbox.start(images.BASE_IMAGE, run_id=run_id))
        while not docker_client.api.containers(all=True, filters=f):  # the thread is at work
            await asyncio.sleep(0.01)
        start.cancel()
        with pytest.raises(asyncio.CancelledError):
            await start

    try:
        run(cancelled_start())
        sandbox.drain_calls()
        assert [t for t in threading.enumerate() if t.name.startswith("sandbox")] == []
        assert len(docker_client.api.containers(all=True, filters=f)) == 1
        assert sandbox.reap(run_id=run_id) == 1
        assert docker_client.api.containers(all=True, filters=f) == []
    finally:
        sandbox.reap(run_id=run_id)


CHILD = """
import sys, time, asyncio, sandbox
from sandboxing import images
run_id, mode = sys.argv[1], sys.argv[2]
async def main():
    box = await sandbox.Sandbox.start(images.BASE_IMAGE, run_id=run_id)
    print(box.id, flush=True)
    if mode == "verify":  # the hidden test sleeps: the parent kills this process mid-verification
        await box.run_tests(sys.argv[3], timeout=300)
    time.sleep(120)
asyncio.run(main())
"""


def start_child(
    mode: str, *args: str, env: dict | None = None
) -> tuple[subprocess.Popen, str, str]:
    run_id = f"child-{mode}-{uuid.uuid4().hex[:8]}"
    p = subprocess.Popen(
        [sys.executable, "-c", CHILD, run_id, mode, *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    return p, run_id, p.stdout.readline().strip()


def things_of(client, run_id: str) -> dict[str, int]:
    """Containers, volumes and snapshot images labelled with run_id."""
    f = {"label": [f"termrl.run_id={run_id}"]}
    return {
        "containers": len(client.api.containers(all=True, filters=f)),
        "volumes": len(client.api.volumes(filters=f).get("Volumes") or []),
        "images": len(client.api.images(all=True, filters=f)),
    }


def test_reap_removes_what_a_harness_killed_mid_verification_left(docker_client, tmp_path):
    write_tests(
        tmp_path / "tests", {"test_slow.py": "import time\ndef test_slow():\n    time.sleep(200)\n"}
    )
    p, run_id, cid = start_child("verify", str(tmp_path / "tests"))
    try:
        deadline = time.monotonic() + 120
        # the sandbox, the verifier container with its tests and private volumes, the snapshot
        while things_of(docker_client, run_id) != {"containers": 2, "volumes": 2, "images": 1}:
            assert time.monotonic() < deadline, things_of(docker_client, run_id)
            time.sleep(0.5)
    finally:
        p.kill()  # SIGKILL: no finally of the harness runs
        p.wait()
    # no filter: the dead owner's two containers (their volumes go with them) and the snapshot image
    assert sandbox.reap() >= 3
    assert things_of(docker_client, run_id) == {"containers": 0, "volumes": 0, "images": 0}


def test_the_suite_sweep_removes_its_own_session_and_leaves_a_live_run_alone(docker_client):
    from conftest import session_leftovers, sweep

    ours, theirs = f"sweep-ours-{uuid.uuid4().hex[:8]}", f"sweep-theirs-{uuid.uuid4().hex[:8]}"
    p1, _, own_cid = start_child("ours", env={"TERMRL_SESSION": ours})
    p2, their_run, their_cid = start_child(
        "theirs", env={"TERMRL_SESSION": theirs}
    )  # a live training run
    try:
        assert [x.split()[:2] for x in sweep(ours)] == [["container", own_cid[:12]]]
        assert status(docker_client, own_cid) == "gone" and session_leftovers(ours) == []
        assert status(docker_client, their_cid) == "running"
    finally:
        for p in (p1, p2):
            p.kill()
            p.wait()
        sandbox.reap(run_id=their_run)
    assert status(docker_client, their_cid) == "gone"


def test_container_stops_when_owner_dies_and_reap_removes_it(docker_client):
    p, run_id, cid = start_child("deadman")
    assert status(docker_client, cid) == "running"
    p.kill()
    p.wait()
    assert wait_status(docker_client, cid, "exited") == "exited"
    assert sandbox.reap() >= 1  # no filter: containers of dead owners only
    assert status(docker_client, cid) == "gone"
    assert sandbox.reap(run_id=run_id) == 0


def test_container_stops_after_max_lifetime(docker_client):
    box = own_sandbox(max_lifetime_s=2)
    try:
        assert wait_status(docker_client, box.id, "exited") == "exited"
    finally:
        run(box.close())


def test_reap_without_filter_keeps_live_sandboxes(sb, docker_client):
    sandbox.reap()
    assert status(docker_client, sb.id) == "running"


def test_reap_without_filter_keeps_a_live_owners_stopped_container(docker_client):
    box = own_sandbox(max_lifetime_s=2)  # stops by itself; its owner (this process) is alive
    try:
        assert wait_status(docker_client, box.id, "exited") == "exited"
        sandbox.reap()
        assert status(docker_client, box.id) == "exited"
    finally:
        run(box.close())
    assert status(docker_client, box.id) == "gone"


# ---- images --------------------------------------------------------------------------------------------


def task_in(task_id: str, d: Path) -> Task:
    """The Task of folder d: its Dockerfile, d as the build context, d/tests its hidden tests."""
    return Task(
        id=task_id,
        instruction="",
        difficulty="easy",
        category="test",
        tags=[],
        path=d,
        dockerfile=d / "Dockerfile",
        context_dir=d,
        tests_dir=d / "tests",
        weights={"test_hidden": 1.0},
        solution=None,
        agent_timeout_s=60.0,
        test_timeout_s=60.0,
    )


def make_task(tmp_path: Path, dockerfile: str, files: dict[str, str]) -> Task:
    task_id = f"t-{uuid.uuid4().hex[:10]}"
    d = tmp_path / task_id
    (d / "tests").mkdir(parents=True)
    (d / "tests" / "test_hidden.py").write_text("def test_hidden():\n    pass\n")
    (d / "Dockerfile").write_text(dockerfile)
    for name, text in files.items():
        (d / name).write_text(text)
    return task_in(task_id, d)


BUILD_CHILD = """
import sys, logging
from sandboxing import images
from pathlib import Path
from tasks import Task
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
d = Path(sys.argv[2])
task = Task(sys.argv[1], "", "easy", "test", [], d, d / "Dockerfile", d, d / "tests", {}, None, 60.0, 60.0)
print(images.build_image(task))
"""


def test_concurrent_build_image_builds_once_and_hides_tests(tmp_path, caplog, docker_client):
    task = make_task(
        tmp_path,
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY . /ctx/\nRUN sleep 1\n",
        {"hello.txt": f"hello {uuid.uuid4().hex}\n"},
    )
    caplog.set_level(logging.INFO, logger="termrl.images")
    child = subprocess.Popen(
        [sys.executable, "-c", BUILD_CHILD, task.id, str(task.context_dir)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    tags = []
    threads = [
        threading.Thread(target=lambda: tags.append(images.build_image(task))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out, err = child.communicate(timeout=300)
    try:
        builds = sum("building image" in r.getMessage() for r in caplog.records) + err.count(
            "building image"
        )
        assert builds == 1
        assert len(set(tags + [out.strip()])) == 1
        assert re.fullmatch(rf"termrl/task-{task.id}:[0-9a-f]{{12}}", tags[0])
        assert images.build_image(task) == tags[0]  # reused, not rebuilt
        box = run(Sandbox.start(tags[0], run_id=RUN_ID))
        try:
            assert (
                sh(box, "ls -A /ctx").output == "Dockerfile\nhello.txt\n"
            )  # no tests/, no helper files
        finally:
            run(box.close())
    finally:
        docker_client.images.remove(tags[0], force=True) if tags else None


def test_build_failure_raises_with_log_tail(tmp_path):
    task = make_task(
        tmp_path, "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo boom-marker-42 && exit 3\n", {}
    )
    with pytest.raises(ImageBuildError) as e:
        images.build_image(task)
    assert "boom-marker-42" in e.value.log_tail
    assert "returned a non-zero code: 3" in str(e.value)
    assert task.id in str(e.value)


def test_build_image_rejects_bad_task_id(tmp_path):
    task = make_task(tmp_path, "FROM scratch\n", {})
    task.id = "Bad Id"
    with pytest.raises(ValueError, match="task.id = 'Bad Id'"):
        images.build_image(task)


def test_start_sandbox_builds_an_image_that_failed_elsewhere_and_takes_the_configs_limits(
    tmp_path, docker_client
):
    from configs import SandboxConfig

    base = make_task(
        tmp_path,
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY hello.txt /ctx/\n",
        {"hello.txt": "hi\n"},
    )
    task = dataclasses.replace(base, memory_mb=256)  # the task's own request
    cfg = SandboxConfig(pids=64, build_network="none")
    # the rollout's build of this image failed on another engine: built here, on this one
    failed = ImageBuildError(f"task {task.id}: the build failed on another engine")
    box = run(sandbox.start_sandbox(task, failed, run_id=RUN_ID, cfg=cfg))
    tag = images.build_image(task, cfg.base_image, cfg.image_map, cfg.build_network)
    try:
        assert sh(box, "cat /ctx/hello.txt").output == "hi\n"
        info = docker_client.api.inspect_container(box.id)
        assert info["Config"]["Image"] == tag
        # the config's limits, with the task's own memory request
        assert info["HostConfig"]["Memory"] == 256 << 20 and info["HostConfig"]["PidsLimit"] == 64
        assert box.limits == Limits.from_config(cfg).for_task(task)
        assert box.start_s > 0
    finally:
        run(box.close())
        docker_client.images.remove(tag, force=True)


def test_limits_from_sandbox_config():
    from configs import SandboxConfig

    cfg = SandboxConfig(
        memory_mb=512,
        cpus=0.5,
        pids=128,
        output_limit_bytes=4096,
        exec_timeout_s=30,
        verify_wall_s=9,
    )
    assert Limits.from_config(cfg) == Limits(
        memory_bytes=512 << 20,
        cpus=0.5,
        pids=128,
        output_bytes=4096,
        exec_timeout_s=30.0,
        verify_wall_s=9.0,
    )
