"""The verifier's isolation from the agent: attacking agents of our own against the real verifier.

Each class of attack meets an agent that solves nothing: the harness runs only what it brought
(modules the toolchain tries and lacks, a shadowing /app/pytest.py, an agent's /pytest.ini and /conftest.py,
trojan chmod, mkdir and pytest on the image's PATH, a writable /tests); no process of the agent's survives
into scoring and the test runner's memory is closed to the program under test (a child writing
/proc/<ppid>/mem); every exec of the harness has a time limit. The score is exactly what the honest tests
say of an agent that solved nothing (0), or a SandboxError where no score can be given. The pytest format
runs on the base image; the Harbor format on the hb-parts fixture with a test.sh of our own.
"""

import asyncio
import os
import textwrap
from pathlib import Path

import pytest

import reward
import sandbox
from sandbox import Sandbox, SandboxError
from sandboxing import images, toolchain
from tasks import load_tasks

RUN_ID = f"test-verify-r3-{os.getpid()}"
SITE = "/usr/local/lib/python3.11/dist-packages"  # the base image's first site dir (numpy, pytest)
HARBOR = Path(__file__).resolve().parent / "fixtures" / "harbor"

# the hidden test: fails unless the agent wrote 42 (no agent here does)
ANSWER = "def test_x():\n    assert open('/app/answer.txt').read() == '42'\n"
# Code an attacker wants run by the verifier: the test outcome forced to a pass, whatever the harness.
# As a module: it rewrites every report pytest makes into a pass and exits 0 (the pytest path), and writes
# a full Harbor reward.
FORGE = """
import os, sys
try:
    os.makedirs('/logs/verifier', exist_ok=True)
    open('/logs/verifier/reward.txt', 'w').write('1')
except OSError:
    pass
cmd = open('/proc/self/cmdline', 'rb').read().replace(b'\\0', b' ').decode()
if '--junitxml=' in cmd:
    path = cmd.split('--junitxml=', 1)[1].split()[0].strip('"')
    open(path, 'w').write('<testsuites><testsuite><testcase classname="t" name="test_x"/></testsuite></testsuites>')
os._exit(0)
"""
# A pytest plugin that turns every test into a pass.
FORCE_PASS = """
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    r = outcome.get_result()
    r.outcome, r.longrepr = 'passed', None
"""
# A program under test that rewrites its parent's memory (/proc/<ppid>/mem): every copy of the expected
# answer becomes what the agent "wrote" (same length), so the test's comparison holds.
MEM_WRITER = """
import os, re, sys
want, got = b'ANSWER-c0ffee!', b'missing-answer'
ppid = os.getppid()
try:
    mem = open('/proc/%d/mem' % ppid, 'r+b', buffering=0)
except OSError as e:
    sys.exit('cannot open the parent memory: %s' % e)
for line in open('/proc/%d/maps' % ppid):
    fields = line.split()
    if 'rw' not in fields[1]:
        continue
    lo, hi = (int(x, 16) for x in fields[0].split('-'))
    try:
        mem.seek(lo)
        data = mem.read(hi - lo)
    except OSError:
        continue
    for m in re.finditer(re.escape(want), data):
        mem.seek(lo + m.start())
        mem.write(got)
"""
MEM_TEST = """
import subprocess, sys
def test_x():
    want = ''.join(['ANSWER', '-', 'c0ffee!'])  # built at run time: one copy, in the heap
    try:
        got = open('/app/answer.txt').read()
    except OSError:
        got = 'missing-answer'
    subprocess.run([sys.executable, '/app/prog.py'], timeout=60)  # the program under test
    assert got == want
"""


def write_tests(d: Path, files: dict[str, str]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for name, src in files.items():
        (d / name).write_text(textwrap.dedent(src))
    return d


async def _verify(
    image: str, files: dict, commands: list, tests: Path, timeout=60, **kw
) -> sandbox.TestReport:
    async with await Sandbox.start(image, run_id=RUN_ID) as sb:
        for path, data in files.items():
            await sb.write_file(path, textwrap.dedent(data))
        for cmd in commands:
            r = await sb.exec(cmd, timeout=30)
            assert r.exit_code == 0, (cmd, r.output)
        return await sb.run_tests(tests, timeout=timeout, **kw)


def verify(tmp_path, hidden: dict[str, str], files=None, commands=(), **kw) -> sandbox.TestReport:
    tests = write_tests(tmp_path / "tests", hidden)
    return asyncio.run(_verify(images.BASE_IMAGE, files or {}, list(commands), tests, **kw))


def harbor(script: str, files=None, commands=()) -> sandbox.TestReport:
    """hb-parts (the agent must sort /app/numbers.txt; none here does) verified by our `script`."""
    task = {t.id: t for t in load_tasks(HARBOR)}["hb-parts"]
    task.verifier_script = script

    async def go():
        image = await asyncio.to_thread(images.build_image, task)
        return await _verify(
            image, files or {}, list(commands), task.tests_dir, script=task.verifier_script
        )

    return asyncio.run(go())


# test.sh as Harbor tasks write it: pytest from the WORKDIR, the reward from its exit status
HARBOR_PYTEST = """#!/bin/bash
cd /app
{pytest} /tests/test_correctness.py -rA && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
"""


@pytest.fixture(autouse=True)
def _reap(request):
    yield
    # the run's tests volumes and anything a failed test left (the docker tier only)
    if request.node.get_closest_marker("docker"):
        sandbox.reap(run_id=RUN_ID)


# ---- 1. the harness runs only what it brought ---------------------------------------------------------------


@pytest.mark.docker
def test_optional_modules_the_toolchain_tries_planted_by_the_agent_are_absent(
    tmp_path, docker_client
):
    # numpy's compat shim tries `pickle5`, the stdlib's copy `org.python.core`, others `_winapi`, `msvcrt`,
    # `nt`, `backports_abc`: planted in the agent's site dir, in /app, and /app put on sys.path by the tests
    hidden = {
        "test_hidden.py": "import sys\nsys.path.insert(0, '/app')\nimport copy, numpy, subprocess\n"
        + ANSWER
    }
    files = {}
    for where in (SITE, "/app"):
        for name in ("pickle5", "_winapi", "msvcrt", "nt", "backports_abc"):
            files[f"{where}/{name}.py"] = FORGE
        files[f"{where}/org/__init__.py"] = FORGE
    report = verify(tmp_path, hidden, files)
    assert (report.tests, report.error) == ({"test_x": False}, None)


@pytest.mark.docker
def test_the_tests_own_import_of_the_agents_module_still_finds_it(tmp_path, docker_client):
    # the honest side of the guard: the tests import the agent's solution (and it its helper) by name
    hidden = {
        "test_hidden.py": "import sys\nsys.path.insert(0, '/app')\nimport solution\n"
        "def test_x():\n    assert solution.answer() == 42\n"
    }
    files = {"/app/solution.py": "import helper\ndef answer():\n    return helper.VALUE\n"}
    files["/app/helper.py"] = "VALUE = 42\n"
    assert verify(tmp_path, hidden, files).tests == {"test_x": True}


@pytest.mark.docker
def test_harbor_pytest_shadowed_by_app_pytest_py_has_no_effect(docker_client):
    report = harbor(HARBOR_PYTEST.format(pytest="python3 -m pytest"), {"/app/pytest.py": FORGE})
    assert report.parts == {"reward": 0.0}


@pytest.mark.docker
def test_harbor_pytest_config_and_conftest_above_tests_have_no_effect(docker_client):
    files = {
        "/pytest.ini": "[pytest]\naddopts = -p no:terminal\n",
        "/conftest.py": FORCE_PASS,
        "/tests/conftest.py": FORCE_PASS,
    }
    report = harbor(HARBOR_PYTEST.format(pytest="python3 -m pytest"), files)
    assert report.parts == {"reward": 0.0}


@pytest.mark.docker
def test_harbor_pytest_console_script_replaced_by_the_agent_has_no_effect(docker_client):
    files = {"/usr/local/bin/pytest": "#!/usr/bin/python3\n" + FORGE}
    report = harbor(
        HARBOR_PYTEST.format(pytest="pytest"), files, ["/bin/chmod 755 /usr/local/bin/pytest"]
    )
    assert report.parts == {"reward": 0.0}


@pytest.mark.docker
def test_harbor_trojan_chmod_and_mkdir_on_the_path_are_never_run(docker_client):
    # each would keep rewriting reward.json, and hang the harness that ran it
    trojan = (
        "#!/bin/sh\n(while true; do echo '{\"reward\": 1}' > /logs/verifier/reward.json; "
        "sleep 0.05; done) >/dev/null 2>&1 &\nsleep 600\n"
    )
    files = {"/usr/local/bin/chmod": trojan, "/usr/local/bin/mkdir": trojan}
    commands = ["/bin/chmod 755 /usr/local/bin/chmod /usr/local/bin/mkdir"]
    report = harbor(HARBOR_PYTEST.format(pytest="python3 -m pytest"), files, commands)
    assert report.parts == {"reward": 0.0}


@pytest.mark.docker
def test_harbor_tests_are_read_only_to_the_program_under_test(docker_client):
    # the program test.sh runs first replaces the tests by passing ones
    prog = (
        "import os\nfor n in os.listdir('/tests'):\n    if n.endswith('.py'):\n"
        "        try:\n            open('/tests/' + n, 'w').write('def test_ok():\\n    pass\\n')\n"
        "        except OSError as e:\n            print('refused:', e)\n"
    )
    script = "#!/bin/bash\npython3 /app/prog.py\n" + HARBOR_PYTEST.format(
        pytest="python3 -m pytest"
    )
    report = harbor(script, {"/app/prog.py": prog})
    assert report.parts == {"reward": 0.0}
    assert "Read-only file system" in report.output


# ---- 2. no process of the agent's survives into scoring; the runner's memory is its own --------------------


@pytest.mark.docker
def test_program_under_test_writing_the_runners_memory_is_refused(tmp_path, docker_client):
    report = verify(tmp_path, {"test_hidden.py": MEM_TEST}, {"/app/prog.py": MEM_WRITER})
    assert report.tests == {"test_x": False}
    assert "cannot open the parent memory" in report.output


@pytest.mark.docker
def test_harbor_pytest_memory_is_closed_to_the_program_under_test(docker_client, tmp_path):
    # the same attack under a Harbor test.sh: its pytest is a guarded pristine interpreter
    task = {t.id: t for t in load_tasks(HARBOR)}["hb-parts"]
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_correctness.py").write_text(MEM_TEST)
    task.tests_dir = tests

    async def go():
        image = await asyncio.to_thread(images.build_image, task)
        return await _verify(
            image,
            {"/app/prog.py": MEM_WRITER},
            [],
            tests,
            script=HARBOR_PYTEST.format(pytest="python3 -m pytest"),
        )

    report = asyncio.run(go())
    assert report.parts == {"reward": 0.0}
    assert "cannot open the parent memory" in report.output


@pytest.mark.docker
def test_harbor_background_writer_left_by_the_agent_has_no_effect(docker_client):
    # started by the agent, still running when the agent stops: the verifier's container is a fresh one
    loop = (
        "nohup sh -c 'while true; do echo 1 > /logs/verifier/reward.txt; sleep 0.05; done' "
        ">/dev/null 2>&1 &"
    )
    report = harbor(
        HARBOR_PYTEST.format(pytest="python3 -m pytest"), commands=["mkdir -p /logs/verifier", loop]
    )
    assert report.parts == {"reward": 0.0}


# ---- 3. every exec of the harness has a time limit --------------------------------------------------------


@pytest.mark.docker
def test_a_hanging_test_setup_is_an_error_never_a_hang_or_a_zero(tmp_path, docker_client):
    with pytest.raises(SandboxError, match="test_setup timed out"):
        verify(tmp_path, {"test_hidden.py": ANSWER}, test_setup="sleep 600", timeout=3)


# ---- the toolchain cache ---------------------------------------------------------------------------------


@pytest.mark.docker
def test_images_with_the_same_toolchain_share_one_volume(docker_client, monkeypatch, tmp_path):
    # a task image FROM the base whose build touched the toolchain's mtimes and wrote bytecode: the
    # contents are the same, so is the volume
    monkeypatch.setattr(toolchain, "LEDGER", tmp_path / "toolchains.json")
    monkeypatch.setattr(toolchain, "_toolchains", {})
    # the ledger is written at most once a minute per volume and process: an earlier test's use of
    # the base's volume must not keep this test's ledger from being written
    monkeypatch.setattr(toolchain, "_touched", {})
    api = sandbox.docker_api(600)
    dockerfile = (
        f"FROM {images.BASE_IMAGE}\n"
        "RUN touch /usr/lib/python3.11/os.py /usr/lib/python3.11/json/*.py "
        "&& python3 -c 'import json, numpy'\n"
    )
    (tmp_path / "Dockerfile").write_text(dockerfile)
    tag = f"termrl/test-toolchain-share:{os.getpid()}"
    # rm/forcerm: docker-py keeps a build's intermediate containers unless told (one "Created"
    # container per step, labelled termrl=1 here, left on the engine)
    docker_client.images.build(
        path=str(tmp_path),
        tag=tag,
        labels={"termrl": "1"},
        network_mode="none",
        rm=True,
        forcerm=True,
    )
    try:
        labels = {"termrl": "1", "termrl.run_id": RUN_ID}
        base = toolchain.prepare_toolchain(api, images.BASE_IMAGE, sandbox.Limits(), labels)
        derived = toolchain.prepare_toolchain(api, tag, sandbox.Limits(), labels)
    finally:
        docker_client.images.remove(tag, force=True)
    assert derived.volume == base.volume
    assert tmp_path.joinpath("toolchains.json").is_file()


@pytest.mark.docker
def test_eviction_removes_the_least_recently_used_volumes_until_the_cache_fits(
    docker_client, monkeypatch, tmp_path
):
    monkeypatch.setattr(toolchain, "LEDGER", tmp_path / "toolchains.json")
    api = sandbox.docker_api()
    engine = toolchain._engine(api)
    names = [f"termrl-toolchain-test-{os.getpid()}-{i}" for i in range(3)]
    for name in names:
        api.create_volume(
            name, labels={"termrl": "1", "termrl.toolchain": name, "termrl.toolchain.bytes": "100"}
        )
    try:
        # used in the order 1, 0, 2: volume 1 is the least recently used
        for name, t in zip(names, (2.0, 1.0, 3.0), strict=True):
            toolchain._touch(engine, name, 100)
            with toolchain._ledger() as data:
                data[engine][name]["used"] = t
        # 300 held + 150 incoming over a cap of 300: two go, least recently used first
        removed = toolchain.evict(api, 150, cap=300, names=names)
        assert removed == [names[1], names[0]]
        left = {v["Name"] for v in api.volumes(filters={"label": "termrl.toolchain"})["Volumes"]}
        assert names[2] in left and names[0] not in left and names[1] not in left
    finally:
        for name in names:
            try:
                api.remove_volume(name)
            except Exception:  # noqa: BLE001 - removed by the test
                pass


def test_the_guard_compiles_and_names_the_toolchain_root():
    source = toolchain.guard_source()
    compile(source, "_termrl_guard.py", "exec")
    assert f"ROOT = {toolchain.ROOT!r}" in source
    assert f"TESTS = {toolchain.TESTS!r}" in source


# ---- the verifier's mount points: an agent's symlink there is tampering -------------------------------------


@pytest.mark.docker
@pytest.mark.parametrize(
    "target", ["/.termrl-toolchain/x", "/.termrl-toolchain/tc/t", "/etc", "/app/fake", "/nowhere/t"]
)
def test_tests_planted_as_a_symlink_is_tampering(tmp_path, docker_client, target):
    # /tests pointed into the toolchain's mount (pytest once found no folder: an error), into /etc (the
    # engine's mount failed: tampered), or to a folder of passing tests of the agent's own
    files = {"/app/fake/test_hidden.py": "def test_x():\n    pass\n", "/app/fake/conftest.py": ""}
    report = verify(
        tmp_path,
        {"test_hidden.py": ANSWER},
        files,
        [f"rm -rf /tests && ln -s {target} /tests"],
    )
    assert (report.tests, report.error) == ({}, None)
    assert report.tampered == (
        f"the agent replaced /tests, where the verifier mounts /tests, by a symlink to {target!r}"
    )
    v = reward.verify(report, {"test_x": 1.0})
    assert (v.score, v.resolved) == (0.0, False)


@pytest.mark.docker
@pytest.mark.parametrize(
    "command, why",
    [
        (
            "rm -rf /tests && ln -s /.termrl-toolchain/x /tests",
            "the agent replaced /tests, where the verifier mounts /tests, by a symlink to "
            "'/.termrl-toolchain/x'",
        ),
        # the reward folder's parent: Harbor's reward would be mounted where the agent pointed it
        (
            "rm -rf /logs && ln -s /tmp/x /logs",
            "the agent replaced /logs, where the verifier mounts /logs/verifier, by a symlink to '/tmp/x'",
        ),
        (
            "rm -rf /tests && echo 1 > /tests",
            "the agent replaced /tests, where the verifier mounts /tests, by a file that is not a folder",
        ),
    ],
    ids=["tests-symlink", "logs-symlink", "tests-file"],
)
def test_harbor_mount_points_planted_as_symlinks_or_files_are_tampering(
    docker_client, command, why
):
    report = harbor(HARBOR_PYTEST.format(pytest="python3 -m pytest"), {}, [command])
    assert (report.tests, report.parts, report.error, report.tampered) == ({}, {}, None, why)


@pytest.mark.parametrize(
    "host, why",
    [
        ("garbage", "Invalid bind address format: port is required: garbage"),
        (
            "unix:///tmp/termrl-no-such.sock",
            "Error while fetching server API version: ('Connection aborted.', "
            "FileNotFoundError(2, 'No such file or directory'))",
        ),
    ],
)
@pytest.mark.docker
def test_toolchain_remove_with_a_bad_host_says_so_in_one_line(capsys, host, why):
    # a docker client is made (the tier of such tests), but nothing is reached: a url that does not
    # parse, a socket that does not exist
    assert toolchain.main(["remove", "--host", host]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"error: --host {host}: {why}\n")
