"""verifier.py against the real Docker engine: hidden tests nobody can forge, Terminal-Bench semantics, pytest outcomes.

Each attack runs in its own sandbox on the base image (one task image, one toolchain volume for all): the
agent's commands, then the hidden test `test_x` (which fails unless /app/answer.txt holds 42, and the agent
never writes it). An attack either has no effect (test_x is reported failed) or leaves a run that cannot be
scored (SandboxError: no reward, never a forged one).
"""

import asyncio
import concurrent.futures
import os
import resource
import textwrap
from pathlib import Path

import pytest

import reward
import sandbox
from sandbox import Sandbox, SandboxError
from sandboxing import images, toolchain, verifier

pytestmark = pytest.mark.docker  # all but the last three (pure) tests verify in containers

RUN_ID = f"test-verify-{os.getpid()}"
HIDDEN = {"test_hidden.py": "def test_x():\n    assert open('/app/answer.txt').read() == '42'\n"}

# A pytest plugin that turns every test into a pass.
FORCE_PASS = """
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    r = outcome.get_result()
    r.outcome, r.longrepr = 'passed', None
"""
# first site dir of the base image's python3, where its pytest and numpy are pip-installed
SITE = "/usr/local/lib/python3.11/dist-packages"
LIBDIR = "/usr/lib/x86_64-linux-gnu"
STARTUP = ["json/__init__.py"]  # stdlib modules every verifier run imports
PASS_XML = '<testsuites><testsuite><testcase classname="t" name="test_x"/></testsuite></testsuites>'

# Code the agent wants the verifier's pytest process to run: write an all-pass report where pytest's command
# line says the report goes (--junitxml=...) and exit 0 before any test runs.
FORGE = f"""
import os as _os
_a = open('/proc/self/cmdline', 'rb').read().replace(b'\\0', b' ').decode('utf-8', 'replace')
if '--junitxml=' in _a:
    _p = _a.split('--junitxml=', 1)[1].split('"')[0].split(' ')[0]
    open(_p, 'w').write({PASS_XML!r})
    _os._exit(0)
"""
# The same as a shared library's constructor (runs when the loader maps it, before main).
FORGE_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void forge(void) {
    static char buf[1 << 16], path[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    for (ssize_t i = 0; i < n; i++) if (!buf[i]) buf[i] = ' ';
    buf[n] = 0;
    char *p = strstr(buf, "--junitxml=");
    if (!p) return;
    p += 11;
    int k = 0;
    while (p[k] && p[k] != '"' && p[k] != ' ' && k < 4095) { path[k] = p[k]; k++; }
    path[k] = 0;
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs("PASS_XML", f);
    fclose(f);
    _exit(0);
}
""".replace("PASS_XML", PASS_XML.replace('"', '\\"'))


def build_so(out: str) -> str:
    """The agent's command that compiles /tmp/forge.c into the shared library `out`."""
    return f"gcc -shared -fPIC -o {out} /tmp/forge.c"


def run(coro):
    return asyncio.run(coro)


def write_tests(d: Path, files: dict[str, str]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for name, src in files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(textwrap.dedent(src))
    return d


async def _attacked(
    commands: list[str],
    files: dict[str, str],
    tests: Path,
    test_setup=None,
    timeout=60,
    agent_modules=(),
):
    async with await Sandbox.start(images.BASE_IMAGE, run_id=RUN_ID) as sb:
        for path, data in files.items():
            await sb.write_file(path, textwrap.dedent(data))
        for cmd in commands:
            r = await sb.exec(cmd, timeout=30)
            assert r.exit_code == 0, (cmd, r.output)
        return await sb.run_tests(
            tests, timeout=timeout, test_setup=test_setup, agent_modules=agent_modules
        )


def attacked(tmp_path, commands=(), files=None, hidden=None, **kw) -> verifier.TestReport:
    return run(
        _attacked(
            list(commands), files or {}, write_tests(tmp_path / "tests", hidden or HIDDEN), **kw
        )
    )


# ---- four attacks on the test run: a plugin, the interpreter, a report rewriter ------------------------


def test_entry_point_plugin_in_site_packages_has_no_effect(tmp_path, docker_client):
    report = attacked(
        tmp_path,
        [f"mkdir -p {SITE}/forcepass-1.0.dist-info"],
        {
            f"{SITE}/forcepass.py": FORCE_PASS,
            f"{SITE}/forcepass-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: forcepass\nVersion: 1.0\n",
            f"{SITE}/forcepass-1.0.dist-info/entry_points.txt": "[pytest11]\nforcepass = forcepass\n",
        },
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_python3_replaced_by_a_wrapper_has_no_effect(tmp_path, docker_client):
    wrapper = """#!/bin/sh
    for a in "$@"; do case "$a" in --junitxml=*) f="${a#--junitxml=}"; mkdir -p "$(dirname "$f")"
      echo '<testsuites><testsuite><testcase classname="t" name="test_x"/></testsuite></testsuites>' > "$f";; esac; done
    exit 0
    """
    report = attacked(
        tmp_path,
        ["rm /usr/bin/python3 && cp /tmp/w /usr/bin/python3 && chmod +x /usr/bin/python3"],
        {"/tmp/w": wrapper},
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_interpreter_overwritten_through_its_symlink_has_no_effect(tmp_path, docker_client):
    report = attacked(tmp_path, ["printf '#!/bin/sh\\nexit 0\\n' > /usr/bin/python3"])
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_background_process_rewriting_reports_has_no_effect(tmp_path, docker_client):
    loop = (
        "nohup sh -c 'while :; do for f in /tmp/*/*.xml /tmp/*.xml /*/*/report.xml; do "
        '[ -f "$f" ] && cp /tmp/pass.xml "$f"; done; sleep 0.01; done\' >/dev/null 2>&1 &'
    )
    report = attacked(
        tmp_path,
        [loop],
        {
            "/tmp/pass.xml": '<testsuites><testsuite><testcase name="test_x"/>'
            "</testsuite></testsuites>"
        },
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_edit_of_pytest_source_has_no_effect(tmp_path, docker_client):
    patch = (
        "printf '\\n_orig = pytest_runtest_makereport\\ndef pytest_runtest_makereport(item, call):\\n"
        '    r = _orig(item, call)\\n    r.outcome = "passed"\\n    return r\\n\' '
        f">> {SITE}/_pytest/runner.py"
    )
    report = attacked(tmp_path, [patch])
    assert (report.tests, report.tampered) == ({"test_x": False}, None)
    v = reward.verify(report, {"test_x": 1.0})
    assert (v.score, v.resolved) == (0.0, False)


# ---- variations ---------------------------------------------------------------------------------------


def test_sitecustomize_and_pth_import_lines_have_no_effect(tmp_path, docker_client):
    set_plugin = "import os; os.environ['PYTEST_PLUGINS'] = 'forcepass'\n"
    report = attacked(
        tmp_path,
        ["mkdir -p /root/.local/lib/python3.11/site-packages"],
        {
            f"{SITE}/forcepass.py": FORCE_PASS,
            f"{SITE}/sitecustomize.py": set_plugin,
            "/usr/lib/python3/dist-packages/zz.pth": set_plugin,
            "/root/.local/lib/python3.11/site-packages/usercustomize.py": set_plugin,
        },
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_conftest_in_root_and_app_and_environment_files_have_no_effect(tmp_path, docker_client):
    report = attacked(
        tmp_path,
        ["mkdir -p /opt/evil"],
        {
            "/conftest.py": FORCE_PASS,
            "/app/conftest.py": FORCE_PASS,
            "/app/pytest.ini": "[pytest]\naddopts = -p forcepass\n",
            "/opt/evil/forcepass.py": FORCE_PASS,
            "/opt/evil/sitecustomize.py": "import forcepass\n",
            "/etc/environment": "PYTHONPATH=/opt/evil\nPYTEST_PLUGINS=forcepass\n",
            "/root/.bashrc": "export PYTHONPATH=/opt/evil PYTEST_ADDOPTS='-p forcepass'\n",
            "/usr/local/bin/pytest": "#!/bin/sh\nexit 0\n",
        },
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_tests_dir_planted_by_agent_is_replaced_not_merged(tmp_path, docker_client):
    report = attacked(
        tmp_path,
        [],
        {
            "/tests/test_hidden.py": "def test_x():\n    pass\n",
            "/tests/test_more.py": "def test_more():\n    pass\n",
            "/tests/conftest.py": FORCE_PASS,
        },
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_stdlib_edit_has_no_effect(tmp_path, docker_client):
    report = attacked(
        tmp_path,
        [f"cat /tmp/forge.py >> /usr/lib/python3.11/{m}" for m in STARTUP],
        {"/tmp/forge.py": FORGE},
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_ld_so_preload_has_no_effect(tmp_path, docker_client):
    report = attacked(
        tmp_path,
        [build_so("/opt/libforge.so")],
        {"/tmp/forge.c": FORGE_C, "/etc/ld.so.preload": "/opt/libforge.so\n"},
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_module_shadowing_pluggy_in_an_earlier_site_dir_has_no_effect(tmp_path, docker_client):
    report = attacked(tmp_path, [], {f"{SITE}/pluggy/__init__.py": "raise SystemExit(0)\n"})
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_stdlib_module_planted_in_root_has_no_effect_when_tests_are_a_package(
    tmp_path, docker_client
):
    hidden = {"__init__.py": "", "test_hidden.py": "import csv\n" + HIDDEN["test_hidden.py"]}
    report = attacked(tmp_path, [], {"/csv.py": FORGE}, hidden=hidden)
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_pip_installed_package_is_not_tampering(tmp_path, docker_client):
    hidden = {"test_hidden.py": "import mylib\ndef test_x():\n    assert mylib.VALUE == 42\n"}
    report = attacked(
        tmp_path,
        ["mkdir -p /opt/src/mylib"],
        {"/opt/src/mylib/__init__.py": "VALUE = 42\n", f"{SITE}/mylib.pth": "/opt/src\n"},
        hidden=hidden,
    )
    assert (report.tests, report.tampered) == ({"test_x": True}, None)


# ---- files no list of guarded paths names ---------------------------------------------------------------


def test_pybuilddir_marker_beside_the_interpreter_has_no_effect(tmp_path, docker_client):
    # CPython reads <exe dir>/pybuilddir.txt as "this is a build tree": stdlib from <exe dir>/../Lib
    report = attacked(
        tmp_path,
        [
            "cp -a /usr/lib/python3.11 /usr/Lib && rm -r /usr/Lib/lib-dynload",
            "mkdir -p /usr/Modules",
            "touch /usr/Modules/Setup.local",
            "cat /tmp/forge.py >> /usr/Lib/json/__init__.py",
        ],
        {"/tmp/forge.py": FORGE, "/usr/bin/pybuilddir.txt": "../lib/python3.11/lib-dynload\n"},
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_soname_symlink_to_an_agent_built_shim_has_no_effect(tmp_path, docker_client):
    # libexpat.so.1 (what the loader cache names) -> a shim with expat's symbols and a forging constructor
    stubs = 'nm -D --undefined-only /usr/bin/python3.11 | awk \'/XML_/{print "void " $2 "(void){}"}\' >> /tmp/forge.c'
    report = attacked(
        tmp_path,
        [stubs, build_so("/opt/libshim.so"), f"ln -sf /opt/libshim.so {LIBDIR}/libexpat.so.1"],
        {"/tmp/forge.c": FORGE_C},
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_nsswitch_module_loaded_by_tmp_path_user_lookup_has_no_effect(tmp_path, docker_client):
    hidden = {
        "test_hidden.py": "def test_x(tmp_path):\n    assert open('/app/answer.txt').read() == '42'\n"
    }
    report = attacked(
        tmp_path,
        [build_so(f"{LIBDIR}/libnss_forge.so.2")],
        {
            "/tmp/forge.c": FORGE_C,
            "/etc/nsswitch.conf": "passwd: forge files\ngroup: forge files\n",
        },
        hidden=hidden,
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_patched_module_the_hidden_tests_import_has_no_effect(tmp_path, docker_client):
    hidden = {"test_hidden.py": "import numpy\n" + HIDDEN["test_hidden.py"]}
    report = attacked(
        tmp_path,
        [f"cat /tmp/forge.py >> {SITE}/numpy/__init__.py"],
        {"/tmp/forge.py": FORGE},
        hidden=hidden,
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_agent_module_declared_by_the_task_is_imported_from_the_agents_files(
    tmp_path, docker_client
):
    # the task is about the installed package (task.toml agent_modules = ["numpy"]): the agent's copy is used
    hidden = {"test_hidden.py": "import numpy\ndef test_x():\n    assert numpy.ANSWER == 42\n"}
    tests = write_tests(tmp_path / "tests", hidden)
    report = run(
        _attacked(
            [f"echo 'ANSWER = 42' >> {SITE}/numpy/__init__.py"], {}, tests, agent_modules=("numpy",)
        )
    )
    assert (report.tests, report.tampered) == ({"test_x": True}, None)


def test_stdlib_patched_between_check_and_snapshot_has_no_effect(tmp_path, docker_client):
    # The canary race: a daemon waits for a walk of the filesystem to reach a canary directory that sorts
    # after /usr (its atime moves), then patches the stdlib the walk has passed, before the snapshot.
    race = (
        "mkdir -p /var/canary/d && touch -a -d 2001-01-01 /var/canary /var/canary/d && "
        'nohup sh -c \'a=$(stat -c %X /var/canary/d); while [ "$(stat -c %X /var/canary/d)" = "$a" ]; do '
        "sleep 0.002; done; cat /tmp/forge.py >> /usr/lib/python3.11/json/__init__.py' >/dev/null 2>&1 &"
    )
    report = attacked(tmp_path, [race], {"/tmp/forge.py": FORGE, "/var/canary/d/f": "x"})
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


# ---- processes the tests start, and the report -----------------------------------------------------------

RUNS_PROGRAM = {
    "test_hidden.py": """
    import subprocess
    def test_x():
        subprocess.run(['sh', '/app/prog.sh'], timeout=30)
        assert open('/app/answer.txt').read() == '42'
    """
}
PYTEST_PID = "for p in /proc/[0-9]*; do grep -qa -- --junitxml= $p/cmdline 2>/dev/null && echo ${p#/proc/}; done"
REPORT = "/.termrl-verify/out/report.xml"


def test_program_under_test_writing_a_pass_report_and_killing_pytest_is_not_scored(
    tmp_path, docker_client
):
    prog = f"echo '{PASS_XML}' > {REPORT}\nkill -9 $({PYTEST_PID})\nsleep 5\n"
    with pytest.raises(SandboxError, match="pytest exited with code 137: not a test outcome"):
        attacked(tmp_path, [], {"/app/prog.sh": prog}, hidden=RUNS_PROGRAM)


def test_daemon_stripping_failures_from_the_report_has_no_effect(tmp_path, docker_client):
    daemon = f"while :; do grep -qs failure {REPORT} && cp /tmp/pass.xml {REPORT}.new && mv {REPORT}.new {REPORT}; done"
    prog = f"nohup sh -c '{daemon}' >/dev/null 2>&1 &\n"
    report = attacked(
        tmp_path, [], {"/app/prog.sh": prog, "/tmp/pass.xml": PASS_XML}, hidden=RUNS_PROGRAM
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


RUNS_CHECKER = {
    "check.py": "import sys\nsys.exit(open('/app/answer.txt').read() != '42')\n",
    "test_hidden.py": """
    import subprocess
    def test_x():
        assert subprocess.run(['python3', '/tests/check.py']).returncode == 0
    """,
}


def test_child_python3_of_the_tests_runs_the_pristine_interpreter(tmp_path, docker_client):
    report = attacked(
        tmp_path, ["echo -n 42 > /app/answer.txt", "rm /usr/bin/python3"], hidden=RUNS_CHECKER
    )
    assert (report.tests, report.tampered) == ({"test_x": True}, None)


def test_pth_import_line_run_by_a_child_python3_has_no_effect(tmp_path, docker_client):
    pth = "import os, sys; sys.argv[-1:] == ['/tests/check.py'] and os._exit(0)\n"
    report = attacked(tmp_path, [], {f"{SITE}/zz-forge.pth": pth}, hidden=RUNS_CHECKER)
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_wrapper_python3_earlier_on_path_has_no_effect(tmp_path, docker_client):
    report = attacked(
        tmp_path,
        ["chmod +x /usr/local/bin/python3"],
        {"/usr/local/bin/python3": "#!/bin/sh\nexit 0\n"},
        hidden=RUNS_CHECKER,
    )
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_bash_of_test_setup_replacing_the_report_by_a_directory_has_no_effect(
    tmp_path, docker_client
):
    fake_bash = f"#!/bin/dash\nmkdir -p {REPORT}\necho '{PASS_XML}' > {REPORT}/fake.xml\nexit 0\n"
    swap = (
        "chmod +x /tmp/bash && cp /tmp/bash /usr/bin/bash.new && mv /usr/bin/bash.new /usr/bin/bash"
    )
    report = attacked(tmp_path, [swap], {"/tmp/bash": fake_bash}, test_setup="true")
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_sparse_huge_report_is_refused_without_reading_it(tmp_path, docker_client):
    prog = f"truncate -s 256M {REPORT}\n"  # sparse: no disk cost to the agent
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(
        SandboxError, match="pytest exited with code 137|not a regular file|over the cap"
    ):
        attacked(
            tmp_path, [], {"/app/prog.sh": prog + f"kill -9 $({PYTEST_PID})\n"}, hidden=RUNS_PROGRAM
        )
    assert (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 64 << 10
    )  # KiB: far below 256 MiB


def test_file_turned_into_a_directory_under_a_verifier_mount_is_tampered(tmp_path, docker_client):
    report = attacked(tmp_path, ["rm /etc/nsswitch.conf && mkdir /etc/nsswitch.conf"])
    assert report.tests == {}
    assert report.tampered.startswith("the verifier cannot mount its files over the agent's: ")
    v = reward.verify(report, {"test_x": 1.0})
    assert (v.score, v.resolved) == (0.0, False)


def test_read_report_refuses_a_sparse_file_over_the_cap_and_a_directory(docker_client):
    api = docker_client.api
    cid = api.create_container(
        images.BASE_IMAGE,
        entrypoint=[],
        labels={"termrl": "1", "termrl.run_id": RUN_ID},
        command=[
            "sh",
            "-c",
            ("truncate -s 256M /big.xml && mkdir /dir.xml && echo '<testsuites/>' > /small.xml"),
        ],
    )["Id"]
    try:
        api.start(cid)
        api.wait(cid, timeout=60)
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with pytest.raises(
            verifier.VerifyError, match="has 268435456 bytes, over the cap of 16777216"
        ):
            verifier.read_report(api, cid, "/big.xml")
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 64 << 10  # KiB
        with pytest.raises(verifier.VerifyError, match="is not a regular file"):
            verifier.read_report(api, cid, "/dir.xml")
        assert verifier.read_report(api, cid, "/small.xml") == b"<testsuites/>\n"
    finally:
        api.remove_container(cid, force=True, v=True)


# ---- Terminal-Bench semantics ---------------------------------------------------------------------------


def test_tests_run_at_slash_tests_from_workdir_with_test_dir_and_package(tmp_path, docker_client):
    hidden = {
        "__init__.py": "",
        "helpers.py": "WANT = '42'\n",
        "test_outputs.py": """
        import os
        from tests.helpers import WANT
        def test_relative_path_from_workdir():
            assert open('answer.txt').read() == WANT
        def test_test_dir():
            assert os.environ['TEST_DIR'] == '/tests' and os.path.isfile('/tests/helpers.py')
        def test_setup_ran():
            assert open('/tmp/setup-done').read() == 'yes /app'
        """,
    }
    report = attacked(
        tmp_path,
        ["echo -n 42 > /app/answer.txt"],
        hidden=hidden,
        test_setup='echo -n "yes $PWD" > /tmp/setup-done',
    )
    assert report.tests == {
        "test_relative_path_from_workdir": True,
        "test_test_dir": True,
        "test_setup_ran": True,
    }
    assert (report.error, report.tampered) == (None, None)


def test_failing_test_setup_is_an_error_not_a_score(tmp_path, docker_client):
    with pytest.raises(SandboxError, match="test_setup exited 3; output tail:\nbroken\n$"):
        attacked(tmp_path, [], test_setup="echo broken; exit 3")


# ---- outcomes --------------------------------------------------------------------------------------------


def test_outcomes_keep_pytest_meaning_and_non_ascii_ids_match_weights(tmp_path, docker_client):
    hidden = {
        "test_o.py": """
        import pytest
        def test_pass():
            pass
        def test_fail():
            assert False
        @pytest.fixture
        def broken():
            raise RuntimeError('setup')
        def test_error(broken):
            pass
        def test_skip():
            pytest.skip('not here')
        @pytest.mark.xfail(reason='known bug')
        def test_xfail():
            assert False
        @pytest.mark.xfail(reason='fixed?')
        def test_xpass():
            pass
        @pytest.mark.xfail(strict=True)
        def test_xpass_strict():
            pass
        @pytest.mark.parametrize('w', ['café', 'naïve €'])
        def test_word(w):
            assert w != 'naïve €'
        """
    }
    report = attacked(tmp_path, [], hidden=hidden)
    assert report.tests == {
        "test_pass": True,
        "test_fail": False,
        "test_error": False,
        "test_skip": False,
        "test_xfail": True,
        "test_xpass": True,
        "test_xpass_strict": False,
        "test_word[caf\\xe9]": True,
        "test_word[na\\xefve \\u20ac]": False,
    }
    assert report.skipped == ["test_skip"]
    v = reward.verify(
        report,
        {"test_word[café]": 1.0, "test_word[naïve €]": 1.0, "test_skip": 1.0, "test_xfail": 1.0},
    )
    assert (v.passed, v.failed, v.skipped, v.missing) == (
        ["test_word[café]", "test_xfail"],
        ["test_word[naïve €]", "test_skip"],
        ["test_skip"],
        [],
    )


def test_a_hanging_program_fails_its_test_by_the_per_test_timeout_not_an_error(
    tmp_path, docker_client
):
    # the agent's program never ends; the test that runs it without a timeout of its own fails
    hidden = {
        "test_prog.py": """
        import subprocess
        def test_prog():
            subprocess.run(['sh', '/app/prog.sh'])
        def test_x():
            assert open('/app/answer.txt').read() == '42'
        """
    }
    cmds = ["echo 'sleep 1000' > /app/prog.sh", "printf 42 > /app/answer.txt"]
    report = attacked(tmp_path, cmds, hidden=hidden, timeout=10)
    assert (report.tests, report.timed_out, report.error) == (
        {"test_prog": False, "test_x": True},
        True,
        None,
    )
    v = reward.verify(report, {"test_prog": 1.0, "test_x": 1.0})
    assert (v.score, v.failed) == (0.5, ["test_prog"])


def test_the_verifiers_wall_clock_running_out_is_an_error_never_a_score(tmp_path, docker_client):
    # nothing hangs: a wall clock of 1 ms runs out while the pristine pytest starts (the machine "slow")
    async def go():
        limits = sandbox.Limits(verify_wall_s=0.001)
        async with await Sandbox.start(images.BASE_IMAGE, limits, run_id=RUN_ID) as sb:
            await sb.write_file("/app/answer.txt", "42")
            return await sb.run_tests(write_tests(tmp_path / "tests", HIDDEN), timeout=60)

    with pytest.raises(
        SandboxError, match="wall clock of 0.001 s .* ran out .* too slow, not scored"
    ):
        run(go())


def test_concurrent_verifications_of_one_image_share_one_toolchain_probe(
    docker_client, monkeypatch
):
    monkeypatch.setattr(toolchain, "_toolchains", {})  # as a fresh process: nothing probed yet
    before = toolchain.probes
    api, labels = sandbox.docker_api(), {"termrl": "1", "termrl.run_id": RUN_ID}
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        got = list(
            pool.map(
                lambda _: toolchain.prepare_toolchain(
                    api, images.BASE_IMAGE, sandbox.Limits(), labels
                ),
                range(6),
            )
        )
    assert toolchain.probes - before == 1
    assert all(tc is got[0] for tc in got)


def test_hidden_tests_are_written_once_into_a_read_only_volume_reaped_with_the_run(
    tmp_path, docker_client
):
    # the program under test tries to change the tests of later verifications: the volume is read-only
    hidden = {
        "test_ro.py": """
            import errno
            def test_x():
                assert open('/app/answer.txt').read() == '42'
            def test_tests_are_read_only():
                try:
                    open('/tests/test_ro.py', 'a').write('def test_y():\\n    pass\\n')
                except OSError as e:
                    assert e.errno == errno.EROFS
                else:
                    raise AssertionError('wrote into /tests')
        """
    }
    run_id = f"{RUN_ID}-tests-volume"
    tests = write_tests(tmp_path / "tests", hidden)
    label = {"label": ["termrl.tests", f"termrl.run_id={run_id}"]}

    async def verify():
        async with await Sandbox.start(images.BASE_IMAGE, run_id=run_id) as sb:
            await sb.write_file("/app/answer.txt", "42")
            return await sb.run_tests(tests, timeout=60)

    try:
        first, second = run(verify()), run(verify())
        volumes = docker_client.api.volumes(filters=label).get("Volumes") or []
        assert len(volumes) == 1  # one for both verifications of these tests
        sandbox.reap(run_id=run_id)  # the run's end removes it; a later verification makes it anew
        assert not docker_client.api.volumes(filters=label).get("Volumes")
        third = run(verify())
    finally:
        sandbox.reap(run_id=run_id)
    expected = {"test_x": True, "test_tests_are_read_only": True}
    assert first.tests == second.tests == third.tests == expected
    assert not docker_client.api.volumes(filters=label).get("Volumes")


# ---- pure parts ---------------------------------------------------------------------------------------------


def test_normalize_test_id_undoes_pytest_escapes():
    assert (
        reward.normalize_test_id("test_w[caf\\xe9-\\u20ac-\\U0001f600-a\\\\xe9]")
        == "test_w[café-€-😀-a\\xe9]"
    )


def test_a_pytest_usage_error_is_reported_with_pytests_exit_code(tmp_path, docker_client):
    # the hidden tests' own ini asks for an option pytest lacks: pytest stops before its session starts
    hidden = {**HIDDEN, "pytest.ini": "[pytest]\naddopts = --no-such-option\n"}
    with pytest.raises(SandboxError, match=r"pytest exited with code 4 \(usage error\)") as e:
        attacked(tmp_path, hidden=hidden)
    assert "outlived the sweep" not in str(e.value)
    assert "[termrl] pytest ended before its session finished, exit code 4" in str(e.value)
