"""Hidden-test verification the agent cannot forge: snapshot, tamper check, a fresh verifier container, JUnit XML.

The agent worked as root in its sandbox for the whole episode, so nothing in that container is trusted: not its
processes, not its `python3`, not pytest's files, not its environment files. `run_tests_blocking` therefore:

1. Probes the *task image* (never the agent's container) once per image id: which interpreter `python3` is
   (its real path), its stdlib entries, site dirs, the files pytest and its plugins load, the shared libraries
   the process maps, its dynamic loader. That is the trusted toolchain (`Toolchain`).
2. Asks the Docker engine for the agent container's changes against the image (`docker diff`, computed by the
   engine from the overlay layer, out of the agent's reach) and commits the container to a snapshot image.
3. Tamper verdict (`find_tampering`): the episode is `tampered` (reward 0, no tests run) when the agent added,
   changed or deleted any of: the interpreter's real file, loader or mapped libraries (or a symlink on their
   way), a file with the basename of a mapped library anywhere, /etc/ld.so.preload, anything in the stdlib
   entries or in the package dirs of pytest and the modules it loads (pytest, _pytest, pluggy, iniconfig, ...),
   a module or package that shadows one of those in a site dir (or a stdlib module in `/` when the hidden tests
   are a package, as pytest then puts `/` first on sys.path), `pyvenv.cfg`/`._pth` beside the interpreter;
   or turned a directory on the way to any of them into something else. `__pycache__` is ignored: the
   verifier compiles into its own `-X pycache_prefix`, so planted .pyc files are never read.
4. Runs the tests in a FRESH container from the snapshot, so no agent process is alive: main process the
   trusted interpreter sleeping (docker-init as PID 1), same limits and no network as the sandbox. The hidden
   tests go into a new volume at `/tests` (no copy of what the agent left at /tests: replaced, not merged),
   `TEST_DIR=/tests`; the report, the generated ini and the bytecode cache into a second new volume at
   /.termrl-verify that no other container ever mounts. Optionally the task's `test_setup` script (from
   Terminal-Bench's run-tests.sh) runs first with `bash`, from the image's WORKDIR; the container is then
   restarted (whatever it left running dies) and its own changes pass the same tamper check.
5. pytest runs as `<real python> -I -S -X pycache_prefix=... -c <bootstrap>`: no user site, no PYTHON* variables,
   no site.py, so no sitecustomize/usercustomize and no `import` lines of .pth files (their path lines are
   honoured, after the image's own search path); PYTEST_ADDOPTS and PYTEST_PLUGINS cleared,
   PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 with the image's own pytest11 plugins loaded by `-p`; `-p no:cacheprovider`;
   `--rootdir=/tests --confcutdir=/tests` and `-c` the hidden tests' own ini (or a generated empty one), so a
   conftest.py or ini the agent left in `/`, /app or elsewhere is never read; cwd the image's WORKDIR (/app).
6. When pytest exits the verifier container is killed (nothing can touch the report afterwards), the JUnit
   XML is fetched with `get_archive` from the stopped container, and container, volumes and snapshot removed.

Not covered, by construction: code the tests themselves run (the agent's program under test) runs inside the
verifier with the tests' rights; tests that import the agent's code in-process trust it. Environment set by
`test_setup` does not reach pytest (separate processes). A task image without pytest for `python3` cannot be
verified this way (VerifyError): install test dependencies at build time (sandboxes have no network).

Outcomes keep pytest's meaning (`parse_junit`): pass and xfail (the expected failure happened) and non-strict
xpass count as passed; failure, error and strict xpass as failed; skip as not passed, listed in `skipped`.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import posixpath
import tarfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import docker.errors
import docker.types

log = logging.getLogger("termrl.verifier")

TESTS = "/tests"  # Terminal-Bench's hidden tests directory (TEST_DIR)
PRIVATE = "/.termrl-verify"  # the verifier's own volume: report, ini, bytecode cache
DEFAULT_WORKDIR = "/app"
OUTPUT_BYTES = 65536  # pytest output kept (head + tail), bytes
_KINDS = {0: "changed", 1: "added", 2: "deleted"}  # docker diff Kind
_MODE_DIR, _MODE_SYMLINK = 1 << 31, 1 << 27  # Go os.FileMode bits in the archive stat header


class VerifyError(RuntimeError):
    """Verification could not run (image without pytest, Docker failure): an infrastructure error, not a score."""


@dataclass
class TestReport:
    """Hidden-test outcome. tests maps JUnit `testcase@name` (e.g. `test_case[a-1]`, pytest's escaping kept) to
    passed (see the module docstring for xfail/xpass/skip); skipped lists the skipped names (False in tests)."""

    __test__ = False  # not a pytest test class despite the name

    tests: dict[str, bool]
    timed_out: bool  # pytest ran past its timeout: every known test is False
    error: str | None  # collection error, no tests, no report, ...; None when pytest ran normally
    duration_s: float
    output: str  # pytest's terminal output (capped); informational only, never parsed for results
    skipped: list[str] = field(default_factory=list)
    tampered: str | None = None  # what the agent changed in the test toolchain; tests were not run
    parts: dict[str, float] | None = None  # a Harbor test.sh's named rewards (harbor_verifier.py), else None


@dataclass
class Toolchain:
    """The trusted test toolchain of one task image (`probe_toolchain`). Paths are absolute, in the image."""

    python: str  # real path of `python3` (no symlink on its way)
    stdlib: list[str]  # sys.path of `python -I -S`: zip, stdlib dir, lib-dynload
    search: list[str]  # the rest of sys.path under `python -I`: site dirs and .pth path entries
    site_dirs: list[str]  # site.getsitepackages() that exist
    files: list[str]  # interpreter, loader, mapped libraries, with every symlink on their way
    packages: list[str]  # package dirs / module files of what pytest loaded from site dirs
    toplevel: list[str]  # their top-level module names
    stdlib_names: list[str]  # sys.stdlib_module_names
    libnames: list[str]  # basenames of the mapped shared libraries
    plugins: list[str]  # pytest11 entry-point modules of the image, loaded with -p
    env: list[str]  # the image's Config.Env ("K=V")
    workdir: str  # the image's WORKDIR, default /app


# ---------------------------------------------------------------------------------------------------------
# Probe of the task image (runs `python3 -I` in a throwaway container of the untouched image)

_PROBE = r"""
import contextlib, io, json, os, re, site, subprocess, sys, tempfile
def chain(p):
    out, p = [], os.path.abspath(p)
    for _ in range(64):
        parts = p.split('/')
        for i in range(2, len(parts) + 1):
            pre = '/'.join(parts[:i])
            if os.path.islink(pre):
                out.append(pre)
                p = os.path.normpath(os.path.join(os.path.dirname(pre), os.readlink(pre), *parts[i:]))
                break
        else:
            return out + [p]
    return out
stdlib = json.loads(subprocess.run([sys.executable, '-I', '-S', '-c', 'import sys, json; print(json.dumps(sys.path))'],
                                   capture_output=True, text=True, check=True).stdout)
try:
    from importlib.metadata import entry_points
    eps = entry_points(group='pytest11') if sys.version_info >= (3, 10) else entry_points().get('pytest11', [])
    plugins = sorted({ep.value for ep in eps if ':' not in ep.value})
except Exception:
    plugins = []
d = tempfile.mkdtemp()
with open(d + '/test_probe.py', 'w') as f:
    f.write('import pytest\n@pytest.mark.parametrize("v", [1])\ndef test_probe(v):\n    pass\n')
with open(d + '/pytest.ini', 'w') as f:
    f.write('[pytest]\n')
os.environ['PYTEST_DISABLE_PLUGIN_AUTOLOAD'] = '1'
buf = io.StringIO()
with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
    import pytest
    rc = pytest.main(['-p', 'no:cacheprovider', '-q', '--rootdir', d, '-c', d + '/pytest.ini', '--junitxml',
                      d + '/r.xml'] + [a for p in plugins for a in ('-p', p)] + [d])
if rc != 0:
    sys.exit('pytest failed in the probe (exit %s):\n%s' % (rc, buf.getvalue()[-2000:]))
maps = sorted({ln.split(None, 5)[5].strip() for ln in open('/proc/self/maps') if len(ln.split(None, 5)) == 6
               and ln.split(None, 5)[5].startswith('/')})
with open(sys.executable, 'rb') as f:
    m = re.search(rb'(/[\w./+-]*ld[\w.+-]*\.so[\w.]*)\x00', f.read(4096))
modules = sorted({os.path.realpath(m.__file__) for m in list(sys.modules.values()) if getattr(m, '__file__', None)})
print('TERMRL_PROBE ' + json.dumps({
    'python': os.path.realpath(sys.executable), 'stdlib': stdlib, 'search': [p for p in sys.path if p and p not in stdlib],
    'site_dirs': [p for p in site.getsitepackages() if os.path.isdir(p)],
    'files': sorted({c for p in [os.path.realpath(sys.executable)] + maps + ([m.group(1).decode()] if m else [])
                     for c in chain(p)}),
    'modules': modules, 'libnames': sorted({os.path.basename(p) for p in maps if '.so' in os.path.basename(p)}),
    'stdlib_names': sorted(getattr(sys, 'stdlib_module_names', ())), 'plugins': plugins}))
"""

_toolchains: dict[str, Toolchain] = {}
_toolchain_lock = threading.Lock()


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def probe_toolchain(api, image: str, limits, labels: dict[str, str]) -> Toolchain:
    """The trusted toolchain of `image` (an id or tag), probed once per image id in a container of the image.

    Raises:
        VerifyError: the image has no `python3` whose pytest runs, or Docker failed.
    """
    config = api.inspect_image(image)
    image_id = config["Id"]
    with _toolchain_lock:
        if image_id in _toolchains:
            return _toolchains[image_id]
    cid = api.create_container(image_id, entrypoint=[], command=["sh", "-c", 'exec python3 -I -c "$TERMRL_PROBE"'],
                               environment={"TERMRL_PROBE": _PROBE}, labels=labels, user="root",
                               host_config=_host_config(api, limits))["Id"]
    try:
        api.start(cid)
        rc = api.wait(cid, timeout=300)["StatusCode"]
        out = api.logs(cid, stdout=True, stderr=True).decode("utf-8", "replace")
    finally:
        api.remove_container(cid, force=True, v=True)
    line = next((ln for ln in out.splitlines() if ln.startswith("TERMRL_PROBE ")), None)
    if rc != 0 or line is None:
        raise VerifyError(f"image {image!r}: no usable `python3 -m pytest` for the hidden tests (probe exit {rc}); "
                          f"install python3 and pytest at build time. Probe output tail:\n{out[-2000:]}")
    p = json.loads(line[len("TERMRL_PROBE "):])
    packages = set()
    for f in p["modules"]:
        if any(_under(f, s) for s in p["stdlib"]):
            continue
        site_dir = max((s for s in p["search"] if _under(f, s)), key=len, default=None)
        if site_dir is not None:
            packages.add(posixpath.join(site_dir, f[len(site_dir):].lstrip("/").split("/")[0]))
    cfg = config.get("Config") or {}
    tc = Toolchain(python=p["python"], stdlib=p["stdlib"], search=p["search"],
                   site_dirs=p["site_dirs"], files=p["files"], packages=sorted(packages),
                   toplevel=sorted({posixpath.basename(x).split(".")[0] for x in packages}),
                   stdlib_names=p["stdlib_names"], libnames=p["libnames"], plugins=p["plugins"],
                   env=list(cfg.get("Env") or []), workdir=cfg.get("WorkingDir") or DEFAULT_WORKDIR)
    with _toolchain_lock:
        _toolchains[image_id] = tc
    return tc


# ---------------------------------------------------------------------------------------------------------
# Tamper verdict from the engine's list of changes (pure)

_MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")


def _shadowed(path: str, dirs: dict[str, set[str]]) -> str | None:
    """The module name an added path would provide from one of `dirs` (dir -> names it must not shadow)."""
    parent, base = posixpath.split(path)
    if parent in dirs and base.endswith(_MODULE_SUFFIXES) and base.split(".")[0] in dirs[parent]:
        return base.split(".")[0]
    grand, pkg = posixpath.split(parent)
    if grand in dirs and base.split(".")[0] == "__init__" and pkg in dirs[grand]:
        return pkg
    return None


def find_tampering(changes: list[dict], tc: Toolchain, tests_package: bool = False) -> list[str]:
    """What the agent changed in the test toolchain, from `docker diff` entries ({"Path": str, "Kind": 0 changed,
    1 added, 2 deleted}); [] when nothing. The rules are the module docstring's step 3 (directories turned into
    something else need the container: `swapped_dirs`). Paths with a `__pycache__` component are ignored."""
    files, trees = set(tc.files), list(tc.packages)
    stdlib_trees = [s for s in tc.stdlib if s]
    libnames = set(tc.libnames)
    exe_dir = posixpath.dirname(tc.python)
    guarded = {d: set(tc.toplevel) for d in tc.search}
    if tests_package:  # pytest puts the parent of a package's root, `/`, first on sys.path
        guarded["/"] = set(tc.toplevel) | set(tc.stdlib_names)
    parents = {posixpath.dirname(c.get("Path", "")) for c in changes}  # a changed dir: its entries say what changed
    found = []
    for ch in changes:
        path, kind = ch.get("Path", ""), _KINDS.get(ch.get("Kind"), "changed")
        if "/__pycache__" in path or not path.startswith("/") or (kind == "changed" and path in parents):
            continue
        base = posixpath.basename(path)
        if path in files:
            why = f"{kind} {path} (test interpreter or a library it loads)"
        elif any(_under(path, t) for t in trees):
            why = f"{kind} {path} (pytest or a module it loads)"
        elif any(_under(path, t) for t in stdlib_trees) and not any(_under(path, s) for s in tc.search):
            why = f"{kind} {path} (the interpreter's standard library)"
        elif path == "/etc/ld.so.preload" and kind != "deleted":
            why = f"{kind} {path} (preloads a library into every process)"
        elif base in libnames and kind != "deleted":
            why = f"{kind} {path} (shadows the library {base} the test interpreter loads)"
        elif kind == "added" and (name := _shadowed(path, guarded)):
            why = f"added {path} (shadows the module {name!r} the test run imports)"
        elif kind != "deleted" and (base == "pyvenv.cfg" and path in (posixpath.join(exe_dir, base),
                                    posixpath.join(posixpath.dirname(exe_dir), base))
                                    or posixpath.dirname(path) == exe_dir and base.endswith("._pth")):
            why = f"{kind} {path} (moves the test interpreter's prefix)"
        else:
            continue
        found.append(why)
    return found


def swapped_dirs(api, container_id: str, changes: list[dict], tc: Toolchain) -> list[str]:
    """Directories on the way to the toolchain that `docker diff` lists as changed and that are no longer plain
    directories (e.g. /usr/bin replaced by a symlink), checked with the archive stat of `container_id`."""
    changed = {c["Path"] for c in changes if c.get("Kind") == 0}
    ancestors = set()
    for p in set(tc.files) | set(tc.packages) | {s for s in tc.stdlib + tc.search if s}:
        while (p := posixpath.dirname(p)) != "/":
            ancestors.add(p)
    found = []
    for d in sorted(ancestors & changed):
        r = api.head(api._url("/containers/{0}/archive", container_id), params={"path": d})
        stat = json.loads(base64.b64decode(r.headers.get("X-Docker-Container-Path-Stat", "") or "e30=") or b"{}")
        if r.status_code != 200 or not stat.get("mode", 0) & _MODE_DIR or stat.get("mode", 0) & _MODE_SYMLINK:
            found.append(f"replaced the directory {d} (on the way to the test toolchain)")
    return found


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
    skipped, errors = [], []
    for case in root.iter("testcase"):
        name = case.get("name", "")
        children = [c for c in case if c.tag in ("failure", "error", "skipped")]
        if any(c.tag == "error" and "collection failure" in (c.get("message") or "") for c in children):
            detail = (children[0].text or "").strip().splitlines()
            errors.append(f"collection error in {case.get('classname') or name}: " + (detail[-1] if detail else ""))
            continue
        skips = [c for c in children if c.tag == "skipped" and c.get("type") != "pytest.xfail"]
        ok = not any(c.tag in ("failure", "error") for c in children) and not skips
        if skips and name not in skipped:
            skipped.append(name)
        tests[name] = tests.get(name, True) and ok
    return tests, skipped, ("; ".join(errors) if errors else None)


# ---------------------------------------------------------------------------------------------------------
# The verifier container

# Runs as `<real python> -I -S -X pycache_prefix=... -c _BOOT <json>`: the image's search path after the stdlib,
# then the path lines (never the import lines) of every .pth file in the site dirs, then pytest.
_BOOT = r"""
import json, os, sys
cfg = json.loads(sys.argv[1])
sys.path[:] = [p for p in sys.path if p] + [p for p in cfg['search'] if p not in sys.path]
for d in cfg['site_dirs']:
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith('.pth'))
    except OSError:
        continue
    for n in names:
        try:
            lines = open(os.path.join(d, n), encoding='utf-8', errors='replace').read().splitlines()
        except OSError:
            continue
        for ln in lines:
            p = os.path.join(d, ln.rstrip())
            if ln.strip() and not ln.startswith(('#', 'import ', 'import\t')) and os.path.isdir(p) and p not in sys.path:
                sys.path.append(p)
try:
    os.chdir(cfg['workdir'])
except OSError as e:
    print('[termrl] cannot enter the working directory %r (%s); tests run from /' % (cfg['workdir'], e))
import pytest
sys.exit(pytest.main(cfg['args']))
"""


def _host_config(api, limits, mounts=None):
    return api.create_host_config(
        network_mode="none", mem_limit=limits.memory_bytes, memswap_limit=limits.memory_bytes,
        nano_cpus=int(limits.cpus * 1e9), pids_limit=limits.pids, cap_drop=["ALL"], cap_add=list(limits.cap_add),
        security_opt=["no-new-privileges"], init=True, mounts=mounts,
        log_config=docker.types.LogConfig(type="json-file", config={"max-size": "1m"}))


def _env(tc: Toolchain) -> list[str]:
    drop = ("PYTEST_ADDOPTS=", "PYTEST_PLUGINS=", "TEST_DIR=", "LD_PRELOAD=", "LD_LIBRARY_PATH=")
    return [e for e in tc.env if not e.startswith(drop)] + [
        f"TEST_DIR={TESTS}", "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "PYTEST_ADDOPTS=", "PYTEST_PLUGINS="]


def _pytest_cmd(tc: Toolchain, ini: str, extra: list[str]) -> list[str]:
    args = ["-p", "no:cacheprovider", f"--rootdir={TESTS}", f"--confcutdir={TESTS}", "-c", ini, "--color=no",
            *[a for p in tc.plugins for a in ("-p", p)], *extra, TESTS]
    cfg = {"search": tc.search, "site_dirs": tc.site_dirs, "workdir": tc.workdir, "args": args}
    return [tc.python, "-I", "-S", "-X", f"pycache_prefix={PRIVATE}/pycache", "-c", _BOOT, json.dumps(cfg)]


def _cap(head: bytearray, tail: bytearray, data: bytes, limit: int) -> int:
    room = limit // 2 - len(head)
    if room > 0:
        head += data[:room]
        data = data[room:]
    tail += data
    if len(tail) > limit:
        del tail[: len(tail) - limit // 2]
    return len(data)


def _exec(api, cid: str, cmd: list[str], env: list[str], workdir: str, timeout: float) -> tuple[int | None, str]:
    """Run cmd in the verifier container; (exit code or None on timeout, output head + tail). On timeout the
    container is killed, which ends every process in it."""
    eid = api.exec_create(cid, cmd, environment=env, workdir=workdir)["Id"]
    head, tail, box = bytearray(), bytearray(), {"total": 0}

    def pump():
        try:
            for data in api.exec_start(eid, stream=True):
                box["total"] += len(data)
                _cap(head, tail, data, OUTPUT_BYTES)
        except Exception as e:  # noqa: BLE001 - reported below
            box["error"] = e

    t = threading.Thread(target=pump, daemon=True, name="verifier-exec")
    t.start()
    t.join(timeout)
    rc = None
    if t.is_alive():
        api.kill(cid)
        t.join(30)
    elif "error" in box:
        raise VerifyError(f"running {cmd[0]} in the verifier container failed: {box['error']}")
    else:
        rc = api.exec_inspect(eid)["ExitCode"]
    cut = box["total"] - len(head) - len(tail)
    text = (head + (f"\n[... {cut} bytes of output cut ...]\n".encode() if cut > 0 else b"") + tail)
    return rc, bytes(text).decode("utf-8", "replace")


def _tests_tar(tests_dir: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for p in sorted(tests_dir.rglob("*")):
            if "__pycache__" not in p.parts:
                tar.add(p, arcname=p.relative_to(tests_dir).as_posix(), recursive=False)
    return buf.getvalue()


def _private_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in (("pytest.ini", b"[pytest]\n"),):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        for name in ("out", "pycache"):  # writable by the image's USER, whoever that is
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o777
            tar.addfile(info)
    return buf.getvalue()


def _ini(tests_dir: Path) -> str:
    """The hidden tests' own pytest config file (as pytest would pick it in /tests), else the generated one."""
    for name, section in (("pytest.ini", ""), ("pyproject.toml", "[tool.pytest.ini_options]"),
                          ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]")):
        f = tests_dir / name
        if f.is_file() and section in f.read_text(errors="replace"):
            return f"{TESTS}/{name}"
    return f"{PRIVATE}/pytest.ini"


def remove_quietly(api, cid: str) -> None:
    """Remove a verifier container and its volumes. A 409 "removal already in progress" (a busy engine
    removing it already) and a 404 are fine: the verdict was read before; other errors are raised."""
    try:
        api.remove_container(cid, force=True, v=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as e:
        if e.status_code != 409:
            raise
        log.info("verifier container %s: %s", cid[:12], e.explanation or e)


def run_tests_blocking(api, container_id: str, name: str, labels: dict[str, str], limits, tests_dir: Path,
                       timeout: float, test_setup: str | None = None) -> TestReport:
    """Verify the agent container `container_id` with the hidden tests in `tests_dir` (steps: module docstring).

    Args:
        api: docker-py APIClient with a socket timeout of a minute or more. labels: put on every container and
            image made here (termrl=1, run id, owner). limits: sandbox.Limits (memory, cpus, pids, cap_add).
        timeout: seconds for pytest (and, separately, for test_setup). test_setup: bash source or None.
    Returns:
        TestReport; tampered set (and no tests) when the agent changed the toolchain. Timeout: every test found
        by `--collect-only` is False, timed_out=True. Collection error / no tests / no report: `error` says so.
    Raises:
        VerifyError: the image has no usable pytest, the agent container is gone, or Docker failed.
    """
    t0 = time.monotonic()
    try:
        image = api.inspect_container(container_id)["Image"]
        tc = probe_toolchain(api, image, limits, labels)
        changes = api.diff(container_id) or []
        snapshot = api.commit(container_id, repository="termrl/snapshot", tag=name.lower()[-120:],
                              conf={"Labels": labels})["Id"]
    except docker.errors.APIError as e:
        raise VerifyError(f"verification of {name}: snapshot failed: {e.explanation or e}") from e
    try:
        vid = api.create_container(
            snapshot, entrypoint=[], command=[tc.python, "-I", "-S", "-c", "import time; time.sleep(86400)"],
            labels=labels, name=f"{name}-verify", hostname="sandbox", environment=_env(tc),
            host_config=_host_config(api, limits, [docker.types.Mount(d, None, type="volume", no_copy=True)
                                                   for d in (TESTS, PRIVATE)]))["Id"]
        try:
            return _verify_in(api, vid, tc, changes, tests_dir, timeout, test_setup, t0)
        finally:
            remove_quietly(api, vid)
    except docker.errors.APIError as e:
        raise VerifyError(f"verification of {name} failed: {e.explanation or e}") from e
    finally:
        try:
            api.remove_image(snapshot, force=True)
        except docker.errors.APIError as e:
            log.warning("removing snapshot image %s failed: %s", snapshot[:19], e)


def _verify_in(api, vid: str, tc: Toolchain, changes: list[dict], tests_dir: Path, timeout: float,
               test_setup: str | None, t0: float) -> TestReport:
    found = find_tampering(changes, tc, (tests_dir / "__init__.py").exists()) or swapped_dirs(api, vid, changes, tc)
    if found:
        log.warning("verification: tampered: %s", "; ".join(found))
        return TestReport({}, False, None, time.monotonic() - t0, "", tampered="; ".join(found[:5]))
    api.put_archive(vid, TESTS, _tests_tar(tests_dir))
    api.put_archive(vid, PRIVATE, _private_tar())
    api.start(vid)
    env, output = _env(tc), ""
    if test_setup:
        rc, output = _exec(api, vid, ["bash", "-c", test_setup], env, tc.workdir, timeout)
        if rc != 0:  # the task's own set-up broke: no verdict on the agent, never a 0.0
            raise VerifyError(f"test_setup {'timed out' if rc is None else f'exited {rc}'}; "
                              f"output tail:\n{output[-2000:]}")
        api.kill(vid)  # whatever test_setup left running dies; its files stay
        found = find_tampering(api.diff(vid) or [], tc, (tests_dir / "__init__.py").exists())
        if found:
            log.warning("verification: tampered (through test_setup): %s", "; ".join(found))
            return TestReport({}, False, None, time.monotonic() - t0, output,
                              tampered="test_setup " + "; ".join(found[:5]))
        api.start(vid)
    ini = _ini(tests_dir)
    rc, out = _exec(api, vid, _pytest_cmd(tc, ini, ["-q", "-rA", f"--junitxml={PRIVATE}/out/report.xml"]),
                    env, "/", timeout)
    output += out
    if rc is None:
        api.start(vid)
        _, col = _exec(api, vid, _pytest_cmd(tc, ini, ["-q", "--collect-only"]), env, "/", 60.0)
        # `--collect-only -q` prints one node id per line: path::[Class::]name[params]
        names = [ln.split("::", 1)[1].rsplit("::", 1)[-1] for ln in col.splitlines()
                 if "::" in ln and not ln[:1].isspace() and ".py::" in ln]
        return TestReport({n: False for n in names}, True, None, time.monotonic() - t0, output)
    api.kill(vid)  # nothing may touch the report after pytest ends
    try:
        stream, _ = api.get_archive(vid, f"{PRIVATE}/out/report.xml")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = next(m for m in tar.getmembers() if m.isfile())
            xml = tar.extractfile(member).read()
    except (docker.errors.NotFound, StopIteration):
        return TestReport({}, False, f"pytest wrote no JUnit report (exit code {rc}); output tail:\n{output[-2000:]}",
                          time.monotonic() - t0, output)
    tests, skipped, error = parse_junit(xml)
    if error is None and rc == 5:
        error = "pytest collected no tests"
    elif error is None and rc not in (0, 1):
        error = f"pytest exited with code {rc}; output tail:\n{output[-2000:]}"
    return TestReport(tests, False, error, time.monotonic() - t0, output, skipped)
