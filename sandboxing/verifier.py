"""Hidden-test verification the agent cannot forge: a frozen snapshot, a pristine toolchain, a report of our own.

The agent worked as root in its sandbox for the whole episode, so nothing in that container is trusted: not its
processes, not its `python3`, not pytest's files, not its libraries, loader config or environment files.

The rule: **the toolchain is only ever read from the pristine copy; the agent's filesystem is data.** Whatever
runs the tests (interpreter, stdlib, pytest and the modules the tests import, shared libraries, the loader,
the shell for test_setup, NSS config, locales) comes from a read-only copy of the untouched task image, and
the files the loader would read by absolute path in the container's root are replaced by the verifier's. So
no file the agent writes, in a path anyone has thought of or not, is executed by the toolchain. What the
tests themselves run (the program under test) and read (the agent's work) is the agent's, as it should be.

`run_tests_blocking`:

1. The pristine toolchain (toolchain.py), once per task image and engine: probed in a throwaway container of
   the task image, copied with its bytecode and the import guard (`toolchain.GUARD`) into a staging volume,
   read back and checked by termrl, which writes it into the read-only volume `termrl-toolchain-<digest>`
   (the digest of its contents: images with one toolchain share it; checked by content once per process;
   a cache of at most CACHE_BYTES per engine, least recently used evicted, `make clean-toolchains`).
2. Freeze, then snapshot: the agent's container is paused (or found stopped; killed when the cgroup freezer
   fails three times on a loaded host) and committed while frozen, then unpaused; nothing is compared against
   it any more, so there is no gap between a check and the snapshot.
3. A FRESH verifier container from the snapshot (`verifier_container`, shared with harbor_verifier.py: no
   agent process alive; docker-init PID 1, same limits and no network as the sandbox, a disk watchdog) with:
   the toolchain volume read-only at /.termrl-toolchain; /dev/null over /etc/ld.so.preload and the pristine
   nsswitch.conf over /etc/nsswitch.conf (read-only binds); the hidden tests read-only at /tests from the
   volume they were written to once per content, run and process (`verifier_box.tests_volume`, reaped
   with the run; replaced, not merged; TEST_DIR=/tests); the report and the generated ini in a new volume
   at /.termrl-verify (a volume: a large report is read from the stopped container, and the engine's
   archive API does not see into a tmpfs). A mount the engine cannot make over the agent's files (say
   /etc/nsswitch.conf turned into a directory) is `tampered` (score 0), and so is an agent's symlink or file
   where a mount point, or a folder on the way to one, should be (/tests -> /etc: the engine would mount
   through it; `verifier_box.mount_points_tampered`, checked on the frozen container).
4. Environment fixed by the verifier (`_env`): PATH starts with the copy's python3/python, then the image's
   PATH; HOME, USER and LOGNAME set (getpass and expanduser need no NSS lookup); LANG/LC_ALL=C.UTF-8 with
   LOCPATH and GCONV_PATH in the copy; LD_LIBRARY_PATH the copy's library dirs; PYTHONNOUSERSITE=1,
   PYTHONDONTWRITEBYTECODE=1; no other LD_*, PYTHON*, PYTEST_*, BASH_ENV from anywhere.
5. test_setup (Terminal-Bench's run-tests.sh) runs first with the copy's shell started through the copied
   loader (`ld.so --library-path ...`), from the image's WORKDIR; the container is then restarted (whatever
   it left running dies). Then the image's ENTRYPOINT runs in the background with `sleep infinity`, as in the
   agent's container (`verifier_box.start_entrypoint`: its services are up for the tests; the sweep of step 8
   kills it before the report is written).
6. pytest runs as `<copied loader> --library-path <copied lib dirs> <copied python> -I -S -B -X utf8 -c _BOOT`,
   started in `/`: sys.path is the copy's stdlib and site dirs (their .pth path lines, never import lines)
   only. The guard makes the process non-dumpable (the program under test cannot trace it nor write its
   memory) and decides every top-level import: a module the pristine image has comes from the copy, wherever
   else the name exists (numpy the tests import, `/csv.py` ahead on sys.path); one it lacks is absent to the
   toolchain's own code (numpy trying `pickle5`) and found, on sys.path as they shaped it and then in the
   agent's site dirs, by the tests and the agent's code they import; the names the task declares in
   `agent_modules` (task.toml `agent_modules = ["mypkg"]`: the task is about that module) come from the
   agent's files first. `-B`: nothing writes bytecode (the copy's was compiled once). The image's own pytest11
   plugins by `-p`; `-p no:cacheprovider`; `--rootdir=/tests --confcutdir=/tests`; `-c` the hidden tests' ini
   (or a generated empty one); `--continue-on-collection-errors` (a test module that fails to import fails its
   tests instead of interrupting the run); cwd the image's WORKDIR.
7. Time: a test past the per-test timeout (`timeout`, the task's test_timeout_s) fails: its program hung, the
   agent's fault. The verifier's wall clock (`wall_s`, default 3 x timeout) counts the run without the time
   of such tests; when it runs out, or pytest outlives 2 x wall_s + timeout (the backstop), the machine was
   too slow: a VerifyError (the episode is masked), never a 0.
8. The report belongs to the verifier: a hook that runs first at pytest's sessionfinish SIGKILLs every process
   in the container but docker-init, the main process and pytest (the program under test, its daemons), then
   empties the report directory; only then does the JUnit plugin write. After pytest the boot sweeps again and
   writes a small report (under INLINE_BYTES) as the last line of its own output (nothing else is alive to
   write after it); a larger one is read from the killed container, checked on the archive's stat header
   before a byte of it is read (one regular file under REPORT_BYTES). Only exit codes 0 and 1 are scored;
   anything else (killed, interrupted, internal or usage error, no tests, a process that outlived the sweep)
   is a VerifyError: no reward, with the reason, never a 0. Container and snapshot are removed after the
   verdict, off its path (`cleanup`: the sandbox's close waits for them); the toolchain volume stays, a cache.

Not covered, by construction, but fenced: tests that import the agent's code in-process (`agent_modules`) trust it
(it runs inside pytest): such a report carries `forgeable`, and loading a task set counts such tasks;
what a test's absolute path names (`/usr/bin/python3`, `/bin/sh` in a shebang) is the agent's file, so tests
use `sys.executable` or `python3` from PATH. Environment set by `test_setup` does not reach pytest.
A task image without pytest for `python3` cannot be verified this way (VerifyError). A test that sets its own
SIGALRM handler has no per-test timeout (the wall clock still holds).

Outcomes keep pytest's meaning (`parse_junit`): pass and xfail (the expected failure happened) and non-strict
xpass count as passed; failure, error and strict xpass as failed; skip as not passed, listed in `skipped`.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import docker.errors
import docker.types

from sandboxing import archive
from sandboxing.toolchain import ROOT, UNDUMPABLE, Toolchain, VerifyError, pristine
from sandboxing.verifier_box import (
    ENTRYPOINT_WAIT_S,
    INI_TEXT,
    PRIVATE,
    TESTS,
    Box,
    _env,
    _exec,
    hidden_ini,
    pytest_pins,
    start_box,
    start_entrypoint,
    stop,
    verifier_container,
)

__all__ = ["TestReport", "VerifyError", "parse_junit", "read_report", "run_tests_blocking"]

log = logging.getLogger("termrl.verifier")

WALL_FACTOR = 3.0  # the wall clock's default, in per-test timeouts


@dataclass
class TestReport:
    """Hidden-test outcome. tests maps JUnit `testcase@name` (e.g. `test_case[a-1]`, pytest's escaping kept) to
    passed (see the module docstring for xfail/xpass/skip); skipped lists the skipped names (False in tests)."""

    __test__ = False  # not a pytest test class despite the name

    tests: dict[str, bool]
    timed_out: bool  # a test ran past the per-test timeout (it failed: its program hung)
    error: str | None  # collection error, failing test_setup, ...; None when pytest ran normally
    duration_s: float
    output: str  # pytest's terminal output (capped); informational only, never parsed for results
    skipped: list[str] = field(default_factory=list)
    # the verifier could not put its files over the agent's; tests were not run
    tampered: str | None = None
    parts: dict[str, float] | None = None  # a Harbor test.sh's named rewards, else None
    # why the agent could have forged this report (its module imported into pytest's process by the
    # tests: `agent_modules`), else None
    forgeable: str | None = None
    # seconds of each step: toolchain, snapshot, create, start, run, report, removal (set when the
    # removal, after the verdict, is done)
    phases: dict[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------------
# JUnit XML


def parse_junit(xml: bytes) -> tuple[dict[str, bool], list[str], str | None]:
    """pytest's JUnit XML (xunit1 or xunit2) -> ({testcase@name: passed}, skipped names, collection error or None).

    Outcomes keep pytest's meaning: no child (pass, non-strict xpass) -> True; <skipped type="pytest.xfail">
    (the expected failure happened) -> True; <failure> (fail, strict xpass), <error> (setup/teardown error) ->
    False; other <skipped> (pytest.skip, skipif) -> False and listed in skipped. A module that fails to import
    is a testcase whose <error> message is "collection failure": it becomes the error string, not a test.
    A name seen twice (same test name in two files, or a teardown error) is ANDed.
    Raises ValueError when the XML does not parse.
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as e:
        raise ValueError(f"JUnit report does not parse: {e}") from e
    tests: dict[str, bool] = {}
    skipped = []
    errors = []
    for case in root.iter("testcase"):
        name = case.get("name", "")
        children = [c for c in case if c.tag in ("failure", "error", "skipped")]
        if any(
            c.tag == "error" and "collection failure" in (c.get("message") or "") for c in children
        ):
            detail = (children[0].text or "").strip().splitlines()
            errors.append(
                f"collection error in {case.get('classname') or name}: "
                + (detail[-1] if detail else "")
            )
            continue
        skips = [c for c in children if c.tag == "skipped" and c.get("type") != "pytest.xfail"]
        ok = not any(c.tag in ("failure", "error") for c in children) and not skips
        if skips and name not in skipped:
            skipped.append(name)
        tests[name] = tests.get(name, True) and ok
    return tests, skipped, ("; ".join(errors) if errors else None)


# ---------------------------------------------------------------------------------------------------------
# The verifier container

REPORT_DIR = PRIVATE + "/out"
REPORT = REPORT_DIR + "/report.xml"
REPORT_BYTES = 16 << 20  # largest JUnit report read, bytes (a big suite writes a few MB)
# a report up to this size comes back on the boot's output (fits the kept tail)
INLINE_BYTES = 16 << 10
SWEPT_INCOMPLETE = 70  # the boot's exit code when a process outlived the sweep (never scored)
SLOW = 71  # the boot's exit code when the wall clock ran out (never scored)
# pytest's own exit codes (pytest.ExitCode) and the boot's, for the error message
_EXIT_MEANINGS = {
    2: "interrupted",
    3: "internal error",
    4: "usage error",
    5: "no tests collected",
    SWEPT_INCOMPLETE: "a process of the tests outlived the sweep",
}
_BLOCK = re.compile(r"\nTERMRL_REPORT (inline [A-Za-z0-9+/=]*|file|missing)\n\Z")

# Runs as `<loader> --library-path <dirs> <python> -I -S -B -X utf8 -c _BOOT <json>`, everything from ROOT, in
# a process started in "/" (-I: no cwd, no user site, no PYTHON* variables). sys.path: the pristine stdlib and
# site dirs (and their .pth path lines, never import lines) only; the agent's site dirs are the guard's data.
# The guard (toolchain.GUARD) makes this process non-dumpable and decides every top-level import: a module
# the pristine image has comes from it, wherever else the name exists; one it lacks is absent to the
# toolchain's own code, and found by the tests' and the agent's code where they look (agent_modules: the
# agent's files first).
_BOOT = r"""
import json, os, sys
cfg = json.loads(sys.argv[1])
root = cfg['root']
pristine = [p for p in sys.path if p] + [root + d for d in cfg['site_dirs']]
data = list(cfg['site_dirs'])  # the agent's site dirs: what the task image lacks may come from there
def path_lines(d, at=''):  # the dirs named by the .pth files in `at + d` (their import lines never run)
    try:
        names = sorted(n for n in os.listdir(at + d) if n.endswith('.pth'))
    except OSError:
        return []
    out = []
    for n in names:
        try:
            lines = open(os.path.join(at + d, n), encoding='utf-8', errors='replace').read().splitlines()
        except OSError:
            continue
        out += [os.path.normpath(os.path.join(d, ln.rstrip())) for ln in lines
                if ln.strip() and not ln.startswith(('#', 'import ', 'import\t'))]
    return out
for d in cfg['site_dirs']:
    for p in path_lines(d, root):  # the task image's own .pth files
        if os.path.isdir(root + p):  # a dir of the copy
            pristine.append(root + p)
        else:  # outside the copy (an editable install under /app, say): the agent's files, as data
            data.append(p)
    data += [p for p in path_lines(d) if os.path.isdir(p)]  # the agent's (/app/src, say): data
sys.path[:] = pristine
# the guard (toolchain.GUARD): this process non-dumpable, every top-level import decided by it
import _termrl_guard
_termrl_guard.data[:] = data
_termrl_guard.allow.update(cfg['agent_modules'])
import base64, shutil, signal, stat, time
t0 = time.monotonic()
def others():
    procs = {}
    for n in os.listdir('/proc'):
        if n.isdigit() and int(n) not in (1, os.getpid()):
            try:
                s = open('/proc/%s/stat' % n).read()
            except OSError:
                continue
            f = s[s.rindex(')') + 2:].split()
            procs[int(n)] = (f[0], int(f[1]), int(f[19]))  # state, ppid, start time
    # the container's main process: the earliest child of docker-init (the tests' orphans come later)
    main = min((p for p, v in procs.items() if v[1] == 1), key=lambda p: procs[p][2], default=None)
    return [p for p, v in procs.items() if p != main and v[0] not in 'ZX']
def sweep():  # SIGKILL every process but docker-init, the main process and us; True when none is left
    for _ in range(500):
        pids = others()
        if not pids:
            return True
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.002)
    return False
swept = []
import pytest
class Owner:
    # Before the JUnit plugin writes: no process but pytest is left to touch the report, and the report's
    # directory is pytest's to fill (what the tests' processes left there is removed).
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus):
        if sweep():
            swept.append(True)
        out = cfg['report_dir']
        if os.path.islink(out) or os.path.lexists(out) and not os.path.isdir(out):
            os.unlink(out)
        elif os.path.isdir(out):
            shutil.rmtree(out)
        os.mkdir(out)
# Two clocks. A test (setup, call, teardown) past T fails: the program under test hung, the agent's fault.
# The wall clock W counts the run without the time of such tests: when it runs out the machine is too slow,
# which is nobody's verdict (the boot exits slow_rc: an error, never a 0). Hung tests get W in all; after
# that the remaining tests fail unrun, so the run ends within 2W + T.
T, W = cfg['test_timeout'], cfg['wall']
clock = {'hung': 0.0, 'slow': True, 'fired': False}
def left():
    return W - (time.monotonic() - t0 - clock['hung'])
def arm(seconds, slow):
    clock['slow'], clock['fired'] = slow, False
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
def alarm(signum, frame):
    if clock['slow']:
        os.write(1, b'\n[termrl] the verifier wall clock (%gs, hung tests not counted) ran out\n' % W)
        os._exit(cfg['slow_rc'])
    clock['fired'] = True
    pytest.fail('[termrl] per-test timeout: the test ran past %gs (the program under test hung?)' % T,
                pytrace=False)
class Clock:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        w, start = left(), time.monotonic()
        arm(min(T, w), w <= T)
        yield
        signal.setitimer(signal.ITIMER_REAL, 0)
        if clock['fired']:
            clock['hung'] += time.monotonic() - start
        arm(left(), True)
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        if clock['hung'] >= W:
            pytest.fail('[termrl] not run: the programs of earlier tests hung for %.0fs in all' % clock['hung'],
                        pytrace=False)
signal.signal(signal.SIGALRM, alarm)
try:
    os.chdir(cfg['workdir'])
except OSError as e:
    print('[termrl] cannot enter the working directory %r (%s); tests run from /' % (cfg['workdir'], e))
if cfg['ini_text'] is not None:
    with open(cfg['ini'], 'w') as f:
        f.write(cfg['ini_text'])
arm(left(), True)
rc = pytest.main(cfg['args'], plugins=[Owner(), Clock()])
signal.setitimer(signal.ITIMER_REAL, 0)
sys.stdout.flush()
if not sweep():
    print('[termrl] processes of the tests outlived the sweep: %s' % others(), flush=True)
    os._exit(cfg['swept_rc'])
if not swept:
    # pytest ended before its session finished (a usage or internal error, an interrupt): no report was
    # written under the sweep, and pytest's own exit code says what went wrong (never scored)
    print('[termrl] pytest ended before its session finished, exit code %d' % rc, flush=True)
    os._exit(rc if rc not in (0, 1) else cfg['swept_rc'])
# Nothing but us runs now: the report goes out as the last line of the stream, or the host reads it.
try:
    st = os.lstat(cfg['report'])
    small = stat.S_ISREG(st.st_mode) and st.st_size <= cfg['inline_bytes']
    block = b'inline ' + base64.b64encode(open(cfg['report'], 'rb').read()) if small else b'file'
except FileNotFoundError:
    block = b'missing'
os.write(1, b'\nTERMRL_REPORT ' + block + b'\n')
os._exit(rc)
"""


def _pytest_cmd(
    tc: Toolchain, ini: str, extra: list[str], agent_modules=(), clocks=(3600.0, 3600.0)
) -> list[str]:
    args = [*pytest_pins(tc, ini), "--color=no", "--continue-on-collection-errors", *extra, TESTS]
    cfg = {
        "root": ROOT,
        "site_dirs": tc.site_dirs,
        "workdir": tc.workdir,
        "args": args,
        "agent_modules": sorted(agent_modules),
        "report_dir": REPORT_DIR,
        "report": REPORT,
        "inline_bytes": INLINE_BYTES,
        "ini": ini,
        "ini_text": INI_TEXT if ini.startswith(PRIVATE) else None,
        "swept_rc": SWEPT_INCOMPLETE,
        "slow_rc": SLOW,
        "test_timeout": clocks[0],
        "wall": clocks[1],
    }
    return pristine(tc, tc.python, "-I", "-S", "-B", "-X", "utf8", "-c", _BOOT, json.dumps(cfg))


def read_report(api, cid: str, path: str = REPORT, cap: int = REPORT_BYTES) -> bytes:
    """The JUnit report at `path` in the (stopped) container `cid`: one regular file of at most `cap` bytes,
    read with a bounded read (archive.py: the headers' size and type checked before a byte of the body).

    Raises:
        VerifyError: no such file, not a regular file, larger than cap.
    """
    try:
        return archive.read_file(api, cid, path, cap, "the JUnit report")
    except FileNotFoundError as e:
        raise VerifyError(f"pytest wrote no JUnit report at {path}") from e
    except archive.EntryError as e:
        raise VerifyError(str(e)) from None


def wall_clock(timeout: float, wall_s: float | None = None) -> float:
    """The verifier's wall clock, seconds: wall_s, or WALL_FACTOR x the per-test timeout."""
    return float(wall_s) if wall_s else WALL_FACTOR * float(timeout)


def run_tests_blocking(
    api,
    container_id: str,
    name: str,
    labels: dict[str, str],
    limits,
    tests_dir: Path,
    timeout: float,
    test_setup: str | None = None,
    agent_modules=(),
    disk_budget: int | None = None,
    wall_s: float | None = None,
    cleanup: list | None = None,
    network_mode: str = "none",
) -> TestReport:
    """Verify the agent container `container_id` with the hidden tests in `tests_dir` (steps: module docstring).

    Args:
        api: docker-py APIClient with a socket timeout of a minute or more. labels: put on every container and
            image made here (termrl=1, run id, owner). limits: sandbox.Limits (memory, cpus, pids, cap_add).
        timeout: seconds per test (setup, call, teardown; past it the test fails) and for test_setup.
        test_setup: bash source or None. agent_modules: top-level module names the hidden tests import from
            the agent's files even where the task image has them (default none: the pristine image wins).
        disk_budget: bytes the verifier container's layer and volumes may hold (default
            limits.storage_bytes); past it the container is killed and the report's error starts "disk_limit".
        wall_s: the verifier's wall clock, seconds, without the time of tests that hung (`wall_clock`).
        cleanup: a list: removal after the verdict in the background, its Future appended (else at once).
        network_mode: "none", or "container:<id>" (a compose pod's namespace: sandboxing/compose.py).
    Returns:
        TestReport; timed_out when a test ran past `timeout` (that test failed). A failing test_setup: `error`
        says so. tampered: the verifier's mounts could not be made over the agent's files.
    Raises:
        VerifyError: the image has no usable pytest, the agent container is gone, Docker failed, the wall clock
            ran out (the machine is too slow), or pytest's run cannot be scored (exit code other than 0 or 1,
            no report, a report that is not one regular file under REPORT_BYTES, or one that does not parse).
    """
    t0 = time.monotonic()
    clocks = (float(timeout), wall_clock(timeout, wall_s))
    with verifier_container(
        api,
        container_id,
        name,
        labels,
        limits,
        # a volume, not a tmpfs: a report too big for the boot's output is read from the stopped
        # container, and the engine's archive API does not see into a tmpfs
        private="volume",
        disk_budget=disk_budget,
        cleanup=cleanup,
        network_mode=network_mode,
        tests_dir=tests_dir,
    ) as box:
        try:
            report = _verify_in(api, box, tests_dir, clocks, test_setup, tuple(agent_modules), t0)
        except (docker.errors.APIError, VerifyError):
            if box.watch.exceeded is None:
                raise
            report = (
                None  # the kill broke a step (or pytest: exit 137); the disk limit is the reason
            )
        box.watch.stop()
        if box.watch.exceeded is None:
            return report
        return TestReport(
            {},
            False,
            f"disk_limit: the verifier container {box.watch.reason}; killed",
            time.monotonic() - t0,
            report.output if report else "",
            phases=box.phases,
        )


def _verify_in(
    api,
    box: Box,
    tests_dir: Path,
    clocks: tuple[float, float],
    test_setup: str | None,
    agent_modules: tuple[str, ...],
    t0: float,
) -> TestReport:
    tc = box.tc
    env = _env(box.tc)
    output = ""
    why = start_box(api, box, [])
    if why is None and test_setup:
        if tc.shell is None:
            raise VerifyError("the task has a test_setup but its image has no bash or sh")
        cmd = pristine(tc, tc.shell, "-c", test_setup)
        rc, output = _exec(api, box.id, cmd, env, tc.workdir, clocks[0])
        if rc != 0:  # the task's own set-up broke: no verdict on the agent, never a 0.0
            raise VerifyError(
                f"test_setup {'timed out' if rc is None else f'exited {rc}'}; "
                f"output tail:\n{output[-2000:]}"
            )
        stop(api, box.id)  # whatever test_setup left running dies; its files stay
        why = start_box(api, box, [])
    if why is not None:
        return TestReport({}, False, None, time.monotonic() - t0, output, tampered=why)
    # the services the image's ENTRYPOINT starts are up for the tests, as in the agent's container
    start_entrypoint(api, box, time.monotonic() + ENTRYPOINT_WAIT_S)
    t1 = time.monotonic()
    ini = hidden_ini(tests_dir)
    cmd = _pytest_cmd(tc, ini, ["-q", "-rA", f"--junitxml={REPORT}"], agent_modules, clocks)
    backstop = 2 * clocks[1] + clocks[0] + 60.0
    rc, out = _exec(api, box.id, cmd, env, "/", backstop)
    box.phases["run_s"] = time.monotonic() - t1
    if rc is None:
        raise VerifyError(
            f"pytest did not end within the verifier's backstop of {backstop:.0f} s (the machine is too "
            f"slow or pytest is stuck): not scored; output tail:\n{out[-2000:]}"
        )
    if rc == UNDUMPABLE:
        raise VerifyError(
            f"the pristine interpreter could not make itself non-dumpable (its memory would be open to "
            f"the program under test): not scored; output tail:\n{out[-2000:]}"
        )
    if rc == SLOW:
        raise VerifyError(
            f"the verifier's wall clock of {clocks[1]:g} s (tests that hung not counted) ran out before "
            f"pytest ended: the machine is too slow, not scored; output tail:\n{out[-2000:]}"
        )
    xml, out = _take_report(api, box.id, out, rc)
    output += out
    try:
        tests, skipped, error = parse_junit(xml)
    except ValueError as e:
        raise VerifyError(f"{e}; pytest exit code {rc}") from e
    box.phases["report_s"] = time.monotonic() - t1 - box.phases["run_s"]
    timed_out = b"[termrl] per-test timeout" in xml
    return TestReport(
        tests,
        timed_out,
        error,
        time.monotonic() - t0,
        output,
        skipped,
        phases=box.phases,
        forgeable=forgeable(agent_modules),
    )


def forgeable(agent_modules) -> str | None:
    """Why a report of tests importing `agent_modules` is forgeable (None when they import none): that
    code runs in the process that writes the report."""
    if not agent_modules:
        return None
    return (
        f"the hidden tests import the agent's module(s) {sorted(agent_modules)} into pytest's "
        "process, where that code can rewrite the report: the reward is forgeable by the agent"
    )


def _take_report(api, vid: str, out: str, rc: int) -> tuple[bytes, str]:
    """(the JUnit report, pytest's output without the report line) of a pytest run that exited `rc`: from
    the boot's last line (nothing else lives to write after it), else read from the killed container."""
    m = _BLOCK.search(out)
    if rc not in (0, 1):  # interrupted, internal or usage error, no tests, killed, swept incomplete
        meaning = _EXIT_MEANINGS.get(rc)
        raise VerifyError(
            f"pytest exited with code {rc}{f' ({meaning})' if meaning else ''}: not a test outcome; "
            f"output tail:\n{out[-2000:]}"
        )
    if m is None:
        raise VerifyError(
            f"pytest exited {rc} without the verifier's report line; output tail:\n{out[-2000:]}"
        )
    block = m.group(1)
    out = out[: m.start()]
    if block == "missing":
        raise VerifyError(f"pytest wrote no JUnit report at {REPORT}; output tail:\n{out[-2000:]}")
    if block == "file":
        stop(api, vid)  # nothing may touch the report while it is read
        return read_report(api, vid), out
    try:
        return base64.b64decode(block[len("inline ") :], validate=True), out
    except binascii.Error as e:
        raise VerifyError(f"the report line of the verifier's boot does not decode: {e}") from e
