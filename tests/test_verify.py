"""verifier.py against the real Docker engine: hidden tests nobody can forge, Terminal-Bench semantics, pytest outcomes.

Each attack runs in its own sandbox on the base image: the agent's commands, then the hidden test `test_x`
(which fails unless /app/answer.txt holds 42, and the agent never writes it). An attack either has no effect
(test_x is reported failed) or is caught (the report is `tampered`, reward 0).
"""

import asyncio
import os
import textwrap
from pathlib import Path
import pytest


from sandboxing import images
import reward
from sandboxing import verifier
from sandbox import Sandbox, SandboxError

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
SITE = "/usr/local/lib/python3.11/dist-packages"  # first site dir of the base image's python3


def run(coro):
    return asyncio.run(coro)


def write_tests(d: Path, files: dict[str, str]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for name, src in files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(textwrap.dedent(src))
    return d


async def _attacked(commands: list[str], files: dict[str, str], tests: Path, test_setup=None, timeout=60):
    async with await Sandbox.start(images.BASE_IMAGE, run_id=RUN_ID) as sb:
        for path, data in files.items():
            await sb.write_file(path, textwrap.dedent(data))
        for cmd in commands:
            r = await sb.exec(cmd, timeout=30)
            assert r.exit_code == 0, (cmd, r.output)
        return await sb.run_tests(tests, timeout=timeout, test_setup=test_setup)


def attacked(tmp_path, commands=(), files=None, hidden=None, **kw) -> verifier.TestReport:
    return run(_attacked(list(commands), files or {}, write_tests(tmp_path / "tests", hidden or HIDDEN), **kw))


# ---- the four attacks of issue 14 ---------------------------------------------------------------------


def test_entry_point_plugin_in_site_packages_has_no_effect(tmp_path, docker_client):
    report = attacked(tmp_path, [f"mkdir -p {SITE}/forcepass-1.0.dist-info"], {
        f"{SITE}/forcepass.py": FORCE_PASS,
        f"{SITE}/forcepass-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: forcepass\nVersion: 1.0\n",
        f"{SITE}/forcepass-1.0.dist-info/entry_points.txt": "[pytest11]\nforcepass = forcepass\n"})
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_python3_replaced_by_a_wrapper_has_no_effect(tmp_path, docker_client):
    wrapper = """#!/bin/sh
    for a in "$@"; do case "$a" in --junitxml=*) f="${a#--junitxml=}"; mkdir -p "$(dirname "$f")"
      echo '<testsuites><testsuite><testcase classname="t" name="test_x"/></testsuite></testsuites>' > "$f";; esac; done
    exit 0
    """
    report = attacked(tmp_path, ["rm /usr/bin/python3 && cp /tmp/w /usr/bin/python3 && chmod +x /usr/bin/python3"],
                      {"/tmp/w": wrapper})
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_interpreter_overwritten_through_its_symlink_is_tampered(tmp_path, docker_client):
    report = attacked(tmp_path, ["printf '#!/bin/sh\\nexit 0\\n' > /usr/bin/python3"])
    assert report.tests == {}
    assert report.tampered == "changed /usr/bin/python3.11 (test interpreter or a library it loads)"


def test_background_process_rewriting_reports_has_no_effect(tmp_path, docker_client):
    loop = ("nohup sh -c 'while :; do for f in /tmp/*/*.xml /tmp/*.xml /*/*/report.xml; do "
            "[ -f \"$f\" ] && cp /tmp/pass.xml \"$f\"; done; sleep 0.01; done' >/dev/null 2>&1 &")
    report = attacked(tmp_path, [loop], {"/tmp/pass.xml": '<testsuites><testsuite><testcase name="test_x"/>'
                                                          '</testsuite></testsuites>'})
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_edit_of_pytest_source_is_tampered(tmp_path, docker_client):
    patch = ("printf '\\n_orig = pytest_runtest_makereport\\ndef pytest_runtest_makereport(item, call):\\n"
             "    r = _orig(item, call)\\n    r.outcome = \"passed\"\\n    return r\\n' "
             ">> /usr/lib/python3/dist-packages/_pytest/runner.py")
    report = attacked(tmp_path, [patch])
    assert report.tampered == ("changed /usr/lib/python3/dist-packages/_pytest/runner.py "
                               "(pytest or a module it loads)")
    v = reward.verify(report, {"test_x": 1.0})
    assert (v.score, v.resolved, v.tampered) == (0.0, False, report.tampered)


# ---- variations ---------------------------------------------------------------------------------------


def test_sitecustomize_and_pth_import_lines_have_no_effect(tmp_path, docker_client):
    set_plugin = "import os; os.environ['PYTEST_PLUGINS'] = 'forcepass'\n"
    report = attacked(tmp_path, ["mkdir -p /root/.local/lib/python3.11/site-packages"], {
        f"{SITE}/forcepass.py": FORCE_PASS, f"{SITE}/sitecustomize.py": set_plugin,
        "/usr/lib/python3/dist-packages/zz.pth": set_plugin,
        "/root/.local/lib/python3.11/site-packages/usercustomize.py": set_plugin})
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_conftest_in_root_and_app_and_environment_files_have_no_effect(tmp_path, docker_client):
    report = attacked(tmp_path, ["mkdir -p /opt/evil"], {
        "/conftest.py": FORCE_PASS, "/app/conftest.py": FORCE_PASS, "/app/pytest.ini": "[pytest]\naddopts = -p forcepass\n",
        "/opt/evil/forcepass.py": FORCE_PASS, "/opt/evil/sitecustomize.py": "import forcepass\n",
        "/etc/environment": "PYTHONPATH=/opt/evil\nPYTEST_PLUGINS=forcepass\n",
        "/root/.bashrc": "export PYTHONPATH=/opt/evil PYTEST_ADDOPTS='-p forcepass'\n",
        "/usr/local/bin/pytest": "#!/bin/sh\nexit 0\n"})
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_tests_dir_planted_by_agent_is_replaced_not_merged(tmp_path, docker_client):
    report = attacked(tmp_path, [], {"/tests/test_hidden.py": "def test_x():\n    pass\n",
                                     "/tests/test_more.py": "def test_more():\n    pass\n",
                                     "/tests/conftest.py": FORCE_PASS})
    assert (report.tests, report.tampered) == ({"test_x": False}, None)


def test_stdlib_edit_is_tampered(tmp_path, docker_client):
    report = attacked(tmp_path, ["echo 'x = 1' >> /usr/lib/python3.11/json/__init__.py"])
    assert report.tampered == "changed /usr/lib/python3.11/json/__init__.py (the interpreter's standard library)"


def test_ld_so_preload_is_tampered(tmp_path, docker_client):
    report = attacked(tmp_path, [], {"/etc/ld.so.preload": "/nonexistent/libevil.so\n"})
    assert report.tampered == "added /etc/ld.so.preload (preloads a library into every process)"


def test_module_shadowing_pluggy_in_an_earlier_site_dir_is_tampered(tmp_path, docker_client):
    report = attacked(tmp_path, [], {f"{SITE}/pluggy/__init__.py": "raise SystemExit(0)\n"})
    assert report.tampered == f"added {SITE}/pluggy/__init__.py (shadows the module 'pluggy' the test run imports)"


def test_stdlib_module_planted_in_root_is_tampered_when_tests_are_a_package(tmp_path, docker_client):
    hidden = {"__init__.py": "", **HIDDEN}
    report = attacked(tmp_path, [], {"/csv.py": "raise SystemExit(0)\n"}, hidden=hidden)
    assert report.tampered == "added /csv.py (shadows the module 'csv' the test run imports)"


def test_pip_installed_package_is_not_tampering(tmp_path, docker_client):
    hidden = {"test_hidden.py": "import mylib\ndef test_x():\n    assert mylib.VALUE == 42\n"}
    report = attacked(tmp_path, ["mkdir -p /opt/src/mylib"], {"/opt/src/mylib/__init__.py": "VALUE = 42\n",
                                                                f"{SITE}/mylib.pth": "/opt/src\n"}, hidden=hidden)
    assert (report.tests, report.tampered) == ({"test_x": True}, None)


# ---- Terminal-Bench semantics ---------------------------------------------------------------------------


def test_tests_run_at_slash_tests_from_workdir_with_test_dir_and_package(tmp_path, docker_client):
    hidden = {"__init__.py": "", "helpers.py": "WANT = '42'\n", "test_outputs.py": """
        import os
        from tests.helpers import WANT
        def test_relative_path_from_workdir():
            assert open('answer.txt').read() == WANT
        def test_test_dir():
            assert os.environ['TEST_DIR'] == '/tests' and os.path.isfile('/tests/helpers.py')
        def test_setup_ran():
            assert open('/tmp/setup-done').read() == 'yes /app'
        """}
    report = attacked(tmp_path, ["echo -n 42 > /app/answer.txt"], hidden=hidden,
                      test_setup='echo -n "yes $PWD" > /tmp/setup-done')
    assert report.tests == {"test_relative_path_from_workdir": True, "test_test_dir": True, "test_setup_ran": True}
    assert (report.error, report.tampered) == (None, None)


def test_failing_test_setup_is_an_error_not_a_score(tmp_path, docker_client):
    with pytest.raises(SandboxError, match="test_setup exited 3; output tail:\nbroken\n$"):
        attacked(tmp_path, [], test_setup="echo broken; exit 3")


# ---- outcomes --------------------------------------------------------------------------------------------


def test_outcomes_keep_pytest_meaning_and_non_ascii_ids_match_weights(tmp_path, docker_client):
    hidden = {"test_o.py": """
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
        """}
    report = attacked(tmp_path, [], hidden=hidden)
    assert report.tests == {"test_pass": True, "test_fail": False, "test_error": False, "test_skip": False,
                            "test_xfail": True, "test_xpass": True, "test_xpass_strict": False,
                            "test_word[caf\\xe9]": True, "test_word[na\\xefve \\u20ac]": False}
    assert report.skipped == ["test_skip"]
    v = reward.verify(report, {"test_word[café]": 1.0, "test_word[naïve €]": 1.0, "test_skip": 1.0, "test_xfail": 1.0})
    assert (v.passed, v.failed, v.skipped, v.missing) == (["test_word[café]", "test_xfail"],
                                                         ["test_word[naïve €]", "test_skip"], ["test_skip"], [])


def test_timeout_fails_every_collected_test(tmp_path, docker_client):
    hidden = {"test_slow.py": "import time\ndef test_fast():\n    pass\ndef test_slow():\n    time.sleep(60)\n"}
    report = attacked(tmp_path, [], hidden=hidden, timeout=5)
    assert (report.tests, report.timed_out) == ({"test_fast": False, "test_slow": False}, True)


# ---- pure parts ---------------------------------------------------------------------------------------------


def toolchain(**kw) -> verifier.Toolchain:
    base = dict(python="/usr/bin/python3.11", stdlib=["/usr/lib/python311.zip", "/usr/lib/python3.11"],
                search=["/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages"],
                site_dirs=["/usr/lib/python3/dist-packages"], files=["/usr/bin/python3.11", "/lib64",
                                                                     "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13"],
                packages=["/usr/lib/python3/dist-packages/_pytest"], toplevel=["_pytest"], stdlib_names=["csv"],
                libnames=["libz.so.1.2.13"], plugins=[], env=[], workdir="/app")
    return verifier.Toolchain(**{**base, **kw})


def test_find_tampering_ignores_pycache_and_ordinary_work():
    changes = [{"Path": "/usr/lib/python3.11/__pycache__/json.cpython-311.pyc", "Kind": 1},
               {"Path": "/app/solution.py", "Kind": 1}, {"Path": "/usr/bin", "Kind": 0},
               {"Path": "/usr/local/lib/python3.11/dist-packages/numpy/__init__.py", "Kind": 1}]
    assert verifier.find_tampering(changes, toolchain()) == []


def test_find_tampering_names_loader_symlink_and_shadowing_library():
    changes = [{"Path": "/lib64", "Kind": 0}, {"Path": "/usr/local/lib/libz.so.1.2.13", "Kind": 1}]
    assert verifier.find_tampering(changes, toolchain()) == [
        "changed /lib64 (test interpreter or a library it loads)",
        "added /usr/local/lib/libz.so.1.2.13 (shadows the library libz.so.1.2.13 the test interpreter loads)"]


def test_normalize_test_id_undoes_pytest_escapes():
    assert reward.normalize_test_id("test_w[caf\\xe9-\\u20ac-\\U0001f600-a\\\\xe9]") == "test_w[café-€-😀-a\\xe9]"
