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

1. The pristine toolchain (`prepare_toolchain`), once per task image: a probe in a throwaway container of the
   *task image* finds `python3`'s real path, its loader, stdlib, site dirs, the library dirs (mapped by pytest
   and named by the loader cache), `bash`; a second container of the image copies those trees into a volume
   `termrl-toolchain-<digest>` (the digest of their listing: task images built on one base share it), where
   every symlink is rewritten to point inside the copy (at what it resolved to in the image), the programs'
   PT_INTERP is set to the copied loader, and the stdlib and site dirs are byte-compiled once.
2. Freeze, then snapshot: the agent's container is paused (or found stopped; killed when the cgroup freezer
   fails three times on a loaded host) and committed while frozen, then unpaused; nothing is compared against
   it any more, so there is no gap between a check and the snapshot.
3. A FRESH verifier container from the snapshot (no agent process alive; docker-init PID 1, same limits and no
   network as the sandbox) with: the toolchain volume read-only at /.termrl-toolchain; /dev/null over
   /etc/ld.so.preload and the pristine nsswitch.conf over /etc/nsswitch.conf (read-only binds); the hidden
   tests in a new volume at /tests (replaced, not merged; TEST_DIR=/tests); the report and the generated ini in
   a second new volume at /.termrl-verify. A mount the engine cannot make over the agent's files (say
   /etc/nsswitch.conf turned into a directory) is `tampered` (score 0).
4. Environment fixed by the verifier (`_env`): PATH starts with the copy's python3/python, then the image's
   PATH; HOME, USER and LOGNAME set (getpass and expanduser need no NSS lookup); LANG/LC_ALL=C.UTF-8 with
   LOCPATH and GCONV_PATH in the copy; LD_LIBRARY_PATH the copy's library dirs; PYTHONNOUSERSITE=1,
   PYTHONDONTWRITEBYTECODE=1; no other LD_*, PYTHON*, PYTEST_*, BASH_ENV from anywhere.
5. test_setup (Terminal-Bench's run-tests.sh) runs first with the copy's shell started through the copied
   loader (`ld.so --library-path ...`), from the image's WORKDIR; the container is then restarted (whatever
   it left running dies).
6. pytest runs as `<copied loader> --library-path <copied lib dirs> <copied python> -I -S -B -X utf8 -c _BOOT`:
   sys.path is the copy's stdlib and site dirs (their .pth path lines, never import lines), then the agent's
   site dirs as data; a finder ahead of the path finder takes every top-level module the pristine image has
   from the copy, wherever else the name exists (numpy the tests import, `/csv.py` ahead on sys.path), except
   the names the task declares in `agent_modules` (task.toml `agent_modules = ["mypkg"]`: the task is about
   that module). `-B`: no bytecode is written or read outside the copy's own caches. The image's own pytest11
   plugins by `-p`; `-p no:cacheprovider`; `--rootdir=/tests --confcutdir=/tests`; `-c` the hidden tests' ini
   (or a generated empty one); `--continue-on-collection-errors` (a test module that fails to import fails its
   tests instead of interrupting the run); cwd the image's WORKDIR.
7. The report belongs to the verifier: a hook that runs first at pytest's sessionfinish SIGKILLs every process
   in the container but docker-init, the main process and pytest (the program under test, its daemons), then
   empties the report directory; only then does the JUnit plugin write. When pytest exits the container is
   killed. Only exit codes 0 and 1 are scored; anything else (killed, interrupted, internal or usage error, no
   tests, a process that outlived the sweep) is a VerifyError: no reward, with the reason, never a 0. The report
   must be one regular file under REPORT_BYTES, checked on the archive's stat header before a byte of it is
   read; then container, volumes and snapshot are removed (the toolchain volume stays, a cache).

Not covered, by construction: tests that import the agent's code in-process trust it (it runs inside pytest);
what a test's absolute path names (`/usr/bin/python3`, `/bin/sh` in a shebang) is the agent's file, so tests
use `sys.executable` or `python3` from PATH. A module name the pristine image lacks resolves from the agent's
site dirs (pytest imports a few optional ones lazily). Environment set by `test_setup` does not reach pytest.
A task image without pytest for `python3` cannot be verified this way (VerifyError).

Outcomes keep pytest's meaning (`parse_junit`): pass and xfail (the expected failure happened) and non-strict
xpass count as passed; failure, error and strict xpass as failed; skip as not passed, listed in `skipped`.
"""

from __future__ import annotations

import io
import json
import logging
import tarfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import docker.errors
import docker.types

from sandboxing.disk import DiskWatch

log = logging.getLogger("termrl.verifier")

TESTS = "/tests"  # Terminal-Bench's hidden tests directory (TEST_DIR)
PRIVATE = "/.termrl-verify"  # the verifier's own volume: report, ini
DEFAULT_WORKDIR = "/app"
OUTPUT_BYTES = 65536  # pytest output kept (head + tail), bytes


class VerifyError(RuntimeError):
    """Verification could not run or be scored (image without pytest, Docker failure, pytest killed): an error
    with its reason, no reward, never a score of 0."""


@dataclass
class TestReport:
    """Hidden-test outcome. tests maps JUnit `testcase@name` (e.g. `test_case[a-1]`, pytest's escaping kept) to
    passed (see the module docstring for xfail/xpass/skip); skipped lists the skipped names (False in tests)."""

    __test__ = False  # not a pytest test class despite the name

    tests: dict[str, bool]
    timed_out: bool  # pytest ran past its timeout: every known test is False
    error: str | None  # collection error, failing test_setup, ...; None when pytest ran normally
    duration_s: float
    output: str  # pytest's terminal output (capped); informational only, never parsed for results
    skipped: list[str] = field(default_factory=list)
    tampered: str | None = (
        None  # the verifier could not put its files over the agent's; tests were not run
    )
    parts: dict[str, float] | None = (
        None  # a Harbor test.sh's named rewards (harbor_verifier.py), else None
    )


# ---------------------------------------------------------------------------------------------------------
# The pristine toolchain: probed in the untouched task image, copied once into a read-only volume

TOOLCHAIN = (
    "/.termrl-toolchain"  # where the toolchain volume is mounted (fill and verifier containers)
)
ROOT = TOOLCHAIN + "/tc"  # the copy: ROOT + <path in the task image>
LOADER = (
    ROOT + "/ld"
)  # the loader's copy; the PT_INTERP of the copied programs (<= 27 bytes, see _FILL)
BIN = (
    ROOT + "/bin-termrl"
)  # python3, python, python3.X -> the copied interpreter; first on the tests' PATH

# Runs as `python3 -I -c _PROBE` in a throwaway container of the task image (its own files, unchanged).
_PROBE = r"""
import contextlib, hashlib, io, json, os, re, shutil, site, subprocess, sys, tempfile
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
if not m:
    sys.exit('no dynamic loader named in %s' % sys.executable)
loader = os.path.realpath(m.group(1).decode())
cache = subprocess.run(['ldconfig', '-p'], capture_output=True, text=True).stdout if shutil.which('ldconfig') else ''
libdirs = {os.path.dirname(os.path.realpath(p)) for p in maps if '.so' in os.path.basename(p)}
libdirs |= {os.path.dirname(ln.rsplit('=> ', 1)[1].strip()) for ln in cache.splitlines() if '=> /' in ln}
libdirs = sorted({os.path.realpath(p) for p in libdirs if os.path.isdir(p)})
site_dirs = [os.path.realpath(p) for p in site.getsitepackages() if os.path.isdir(p)]
shells = [os.path.realpath(p) for p in (shutil.which('bash'), shutil.which('sh')) if p]
roots = sorted({os.path.realpath(sys.executable), loader, *shells, *libdirs, *site_dirs, '/usr/lib/locale',
                *(os.path.realpath(p) for p in stdlib if p)})
roots = [r for r in roots if os.path.lexists(r)]
roots = [r for r in roots if not any(r.startswith(o.rstrip('/') + '/') for o in roots if o != r)]
h = hashlib.sha256(json.dumps([sys.version, roots, loader]).encode())
for r in roots:  # the listing (not the contents: layers keep mtimes) names the toolchain across task images
    for top, dirs, files in os.walk(r) if os.path.isdir(r) else [(os.path.dirname(r), [], [os.path.basename(r)])]:
        dirs.sort()
        for n in sorted(files) + [x for x in dirs if os.path.islink(os.path.join(top, x))]:
            p = os.path.join(top, n)
            st = os.lstat(p)
            h.update(('%s %o %d %d %s\n' % (p, st.st_mode, st.st_size, st.st_mtime_ns,
                                           os.readlink(p) if os.path.islink(p) else '')).encode())
for p in ('/etc/nsswitch.conf',):
    h.update(open(p, 'rb').read() if os.path.isfile(p) else b'-')
print('TERMRL_PROBE ' + json.dumps({
    'python': os.path.realpath(sys.executable), 'loader': loader, 'shell': shells[0] if shells else None,
    'stdlib': [os.path.realpath(p) for p in stdlib if p], 'site_dirs': site_dirs, 'libdirs': libdirs,
    'roots': roots, 'digest': h.hexdigest(), 'plugins': plugins}))
"""

# Runs as `python3 -I -S -c _FILL <json>` in a container of the task image with the (new, empty) toolchain
# volume at TOOLCHAIN: copies the roots, then makes the copy self-contained, and renames it to ROOT at the end
# (a concurrent filler of the same volume loses the rename and removes its own copy).
_FILL = r"""
import compileall, json, os, shutil, subprocess, sys, tempfile
cfg = json.loads(sys.argv[1])
vol, root = cfg['volume'], cfg['root']
if os.path.isdir(root):
    sys.exit(0)
tmp = tempfile.mkdtemp(prefix='.fill-', dir=vol)
try:
    for r in cfg['roots']:
        subprocess.run(['cp', '-a', '--parents', r.lstrip('/'), tmp], check=True, cwd='/')
except BaseException:
    shutil.rmtree(tmp, ignore_errors=True)
    raise
# Every symlink points inside the copy, at what it resolved to in the task image: an absolute or escaping
# link would otherwise resolve in the verifier container's root, which is the agent's.
for top, dirs, files in os.walk(tmp):
    for n in dirs + files:
        p = os.path.join(top, n)
        if os.path.islink(p):
            orig = os.path.join(os.path.dirname(p[len(tmp):]), os.readlink(p))
            os.unlink(p)
            os.symlink(os.path.relpath(tmp + os.path.realpath(orig), os.path.dirname(p)), p)
def set_interp(path, new):  # ELF64 little-endian: rewrite PT_INTERP in place (NUL-padded, same size)
    with open(path, 'r+b') as f:
        h = f.read(64)
        if h[:4] != b'\x7fELF' or h[4] != 2:
            return
        off, size, num = (int.from_bytes(h[a:b], 'little') for a, b in ((32, 40), (54, 56), (56, 58)))
        for i in range(num):
            f.seek(off + i * size)
            ph = f.read(size)
            if int.from_bytes(ph[0:4], 'little') == 3:
                at, n = int.from_bytes(ph[8:16], 'little'), int.from_bytes(ph[32:40], 'little')
                if len(new) + 1 > n:
                    sys.exit('loader path %r does not fit PT_INTERP of %s (%d bytes)' % (new, path, n))
                f.seek(at)
                f.write(new + b'\0' * (n - len(new)))
shutil.copy2(cfg['loader'], tmp + '/ld')
for p in [cfg['python'], cfg['shell']]:
    if p:
        set_interp(tmp + p, cfg['ld'].encode())
os.makedirs(tmp + '/bin-termrl')
v = sys.version_info
for name in ('python3', 'python', 'python%d.%d' % v[:2]):
    os.symlink(os.path.relpath(tmp + cfg['python'], tmp + '/bin-termrl'), tmp + '/bin-termrl/' + name)
os.makedirs(tmp + '/etc')
if os.path.isfile('/etc/nsswitch.conf'):
    shutil.copy2('/etc/nsswitch.conf', tmp + '/etc/nsswitch.conf')
else:
    open(tmp + '/etc/nsswitch.conf', 'w').write('passwd: files\ngroup: files\nhosts: files dns\n')
# Bytecode once per toolchain, read-only afterwards (the verifier runs with -B: it never writes any).
for d in cfg['stdlib'] + cfg['site_dirs']:
    if os.path.isdir(tmp + d):
        compileall.compile_dir(tmp + d, ddir=cfg['root'] + d, quiet=2, workers=1)
try:
    os.rename(tmp, root)
except OSError:
    shutil.rmtree(tmp, ignore_errors=True)
"""


@dataclass
class Toolchain:
    """The pristine test toolchain of one task image (`prepare_toolchain`). Paths are absolute in the task image;
    `tc(path)` is where the verifier reads them (the read-only volume at TOOLCHAIN)."""

    python: str  # real path of `python3`
    loader: str  # real path of its dynamic loader (PT_INTERP)
    shell: str | None  # real path of `bash` (else `sh`): runs test_setup
    stdlib: list[str]  # sys.path of `python -I -S`
    site_dirs: list[str]  # site.getsitepackages() that exist
    libdirs: list[str]  # directories of the loaded libraries and of the loader cache's entries
    plugins: list[str]  # pytest11 entry-point modules of the image, loaded with -p
    volume: str  # name of the toolchain volume (one per toolchain digest, shared by task images)
    nsswitch: str  # host path of the copied /etc/nsswitch.conf (bind-mounted over the agent's)
    env: list[str]  # the image's Config.Env ("K=V")
    workdir: str  # the image's WORKDIR, default /app
    user: str  # the image's USER ("" = root)

    @staticmethod
    def tc(path: str) -> str:
        return ROOT + path

    @property
    def libpath(self) -> str:
        return ":".join(ROOT + d for d in self.libdirs)


_toolchains: dict[str, Toolchain] = {}
_toolchain_lock = threading.Lock()


def _run_pristine(
    api, image: str, cmd: list[str], env: dict, labels, limits, mounts=None
) -> tuple[int, str]:
    cid = api.create_container(
        image,
        entrypoint=[],
        command=cmd,
        environment=env,
        labels=labels,
        user="root",
        host_config=_host_config(api, limits, mounts),
    )["Id"]
    try:
        api.start(cid)
        rc = api.wait(cid, timeout=600)["StatusCode"]
        return rc, api.logs(cid, stdout=True, stderr=True, tail=200).decode("utf-8", "replace")
    finally:
        api.remove_container(cid, force=True, v=True)


def prepare_toolchain(api, image: str, limits, labels: dict[str, str]) -> Toolchain:
    """The pristine toolchain of `image` (an id or tag): probed once per image id in a container of the image,
    copied once per toolchain digest into the volume `termrl-toolchain-<digest>` (labels termrl=1,
    termrl.toolchain=<digest>), which later verifications of any image with the same toolchain reuse.

    Raises:
        VerifyError: the image has no `python3` whose pytest runs, the copy failed, or Docker failed.
    """
    config = api.inspect_image(image)
    image_id = config["Id"]
    with _toolchain_lock:
        if image_id in _toolchains:
            return _toolchains[image_id]
    rc, out = _run_pristine(
        api,
        image_id,
        ["sh", "-c", 'exec python3 -I -c "$TERMRL_PROBE"'],
        {"TERMRL_PROBE": _PROBE},
        labels,
        limits,
    )
    line = next((ln for ln in out.splitlines() if ln.startswith("TERMRL_PROBE ")), None)
    if rc != 0 or line is None:
        raise VerifyError(
            f"image {image!r}: no usable `python3 -m pytest` for the hidden tests (probe exit {rc}); "
            f"install python3 and pytest at build time. Probe output tail:\n{out[-2000:]}"
        )
    p = json.loads(line[len("TERMRL_PROBE ") :])
    name = f"termrl-toolchain-{p['digest'][:24]}"
    vol_labels = {"termrl": "1", "termrl.toolchain": p["digest"]}
    with (
        _toolchain_lock
    ):  # one filler per volume in this process; others lose the rename (see _FILL)
        api.create_volume(name, labels=vol_labels)
        cfg = {**p, "volume": TOOLCHAIN, "root": ROOT, "ld": LOADER}
        rc, out = _run_pristine(
            api,
            image_id,
            ["python3", "-I", "-S", "-c", _FILL, json.dumps(cfg)],
            {},
            labels,
            limits,
            [docker.types.Mount(TOOLCHAIN, name, type="volume", no_copy=True)],
        )
        if rc != 0:
            raise VerifyError(
                f"image {image!r}: copying the test toolchain into volume {name} failed (exit {rc}):"
                f"\n{out[-2000:]}"
            )
    mountpoint = api.inspect_volume(name)["Mountpoint"]
    cfg = config.get("Config") or {}
    tc = Toolchain(
        python=p["python"],
        loader=p["loader"],
        shell=p["shell"],
        stdlib=p["stdlib"],
        site_dirs=p["site_dirs"],
        libdirs=p["libdirs"],
        plugins=p["plugins"],
        volume=name,
        nsswitch=mountpoint + "/tc/etc/nsswitch.conf",
        env=list(cfg.get("Env") or []),
        workdir=cfg.get("WorkingDir") or DEFAULT_WORKDIR,
        user=cfg.get("User") or "",
    )
    with _toolchain_lock:
        _toolchains[image_id] = tc
    return tc


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
SWEPT_INCOMPLETE = 70  # the boot's exit code when a process outlived the sweep (never scored)

# Runs as `<loader> --library-path <dirs> <python> -I -S -B -X utf8 -c _BOOT <json>`, everything from ROOT.
# sys.path: the pristine stdlib and site dirs (and their .pth path lines, never import lines), then the agent's
# site dirs as data. A finder before the path finder resolves every top-level module the pristine image has
# from the pristine image only, wherever else the name exists (sys.path[0] inserted by pytest, /app, the
# agent's site dirs), except names the task lists in agent_modules.
_BOOT = r"""
import json, os, shutil, signal, sys, time
from importlib.machinery import PathFinder
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
sys.path[:] = pristine + data
allow = set(cfg['agent_modules'])
class PristineFirst:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if path is not None:  # submodules follow their package's __path__
            return None
        return PathFinder.find_spec(name, data if name in allow else pristine)
    @staticmethod
    def invalidate_caches():
        pass
sys.meta_path.insert(sys.meta_path.index(PathFinder), PristineFirst)
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
swept = []
import pytest
class Owner:
    # Before the JUnit plugin writes: no process but pytest is left to touch the report, and the report's
    # directory is pytest's to fill (what the tests' processes left there is removed).
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus):
        for _ in range(500):
            pids = others()
            if not pids:
                swept.append(True)
                break
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.002)
        out = cfg['report_dir']
        if os.path.islink(out) or os.path.lexists(out) and not os.path.isdir(out):
            os.unlink(out)
        elif os.path.isdir(out):
            shutil.rmtree(out)
        os.mkdir(out)
try:
    os.chdir(cfg['workdir'])
except OSError as e:
    print('[termrl] cannot enter the working directory %r (%s); tests run from /' % (cfg['workdir'], e))
rc = pytest.main(cfg['args'], plugins=[Owner()])
if not swept:
    print('[termrl] processes of the tests outlived the sweep: %s' % others())
    sys.exit(cfg['swept_rc'])
sys.exit(rc)
"""


def _host_config(api, limits, mounts=None, network_mode: str = "none"):
    return api.create_host_config(
        network_mode=network_mode,  # "container:<id>": a compose pod's namespace, only `lo`
        mem_limit=limits.memory_bytes,
        memswap_limit=limits.memory_bytes,
        nano_cpus=int(limits.cpus * 1e9),
        pids_limit=limits.pids,
        cap_drop=["ALL"],
        cap_add=list(limits.cap_add),
        security_opt=["no-new-privileges"],
        init=True,
        mounts=mounts,
        ulimits=limits.ulimits(),
        log_config=docker.types.LogConfig(type="json-file", config={"max-size": "1m"}),
    )


_FIXED = (
    "PATH=",
    "HOME=",
    "USER=",
    "LOGNAME=",
    "LANG=",
    "LANGUAGE=",
    "LC_",
    "LOCPATH=",
    "GCONV_PATH=",
    "LD_",
    "PYTHON",
    "PYTEST_",
    "TEST_DIR=",
    "BASH_ENV=",
    "ENV=",
    "SHELLOPTS=",
    "BASHOPTS=",
)


def _env(tc: Toolchain) -> list[str]:
    """The verifier's environment: the task image's Config.Env without what the verifier fixes itself."""
    path = next(
        (e[5:] for e in tc.env if e.startswith("PATH=")),
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    )
    user = (
        tc.user.split(":")[0] if tc.user and tc.user.split(":")[0] not in ("root", "0") else "root"
    )
    home = (
        "/root"
        if user == "root"
        else next((e[5:] for e in tc.env if e.startswith("HOME=")), "/tmp")
    )
    lib = tc.tc(tc.libdirs[0]) if tc.libdirs else ROOT + "/usr/lib"
    return [e for e in tc.env if not e.startswith(_FIXED)] + [
        f"PATH={BIN}:{path}",
        f"HOME={home}",
        f"USER={user}",
        f"LOGNAME={user}",
        "LANG=C.UTF-8",
        "LC_ALL=C.UTF-8",
        f"LOCPATH={ROOT}/usr/lib/locale",
        f"GCONV_PATH={lib}/gconv",
        f"LD_LIBRARY_PATH={tc.libpath}",
        "PYTHONNOUSERSITE=1",
        "PYTHONDONTWRITEBYTECODE=1",
        f"TEST_DIR={TESTS}",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1",
    ]


def _pristine(tc: Toolchain, program: str, *args: str) -> list[str]:
    """argv starting `program` (a path in the task image) from ROOT through the copied loader."""
    return [LOADER, "--library-path", tc.libpath, tc.tc(program), *args]


def _pytest_cmd(tc: Toolchain, ini: str, extra: list[str], agent_modules=()) -> list[str]:
    args = [
        "-p",
        "no:cacheprovider",
        f"--rootdir={TESTS}",
        f"--confcutdir={TESTS}",
        "-c",
        ini,
        "--color=no",
        "--continue-on-collection-errors",
        *[a for p in tc.plugins for a in ("-p", p)],
        *extra,
        TESTS,
    ]
    cfg = {
        "root": ROOT,
        "site_dirs": tc.site_dirs,
        "workdir": tc.workdir,
        "args": args,
        "agent_modules": sorted(agent_modules),
        "report_dir": REPORT_DIR,
        "swept_rc": SWEPT_INCOMPLETE,
    }
    return _pristine(tc, tc.python, "-I", "-S", "-B", "-X", "utf8", "-c", _BOOT, json.dumps(cfg))


def _cap(head: bytearray, tail: bytearray, data: bytes, limit: int) -> int:
    room = limit // 2 - len(head)
    if room > 0:
        head += data[:room]
        data = data[room:]
    tail += data
    if len(tail) > limit:
        del tail[: len(tail) - limit // 2]
    return len(data)


def _exec(
    api, cid: str, cmd: list[str], env: list[str], workdir: str, timeout: float
) -> tuple[int | None, str]:
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
    text = head + (f"\n[... {cut} bytes of output cut ...]\n".encode() if cut > 0 else b"") + tail
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
        info = tarfile.TarInfo("out")  # writable by the image's USER, whoever that is
        info.type, info.mode = tarfile.DIRTYPE, 0o777
        tar.addfile(info)
    return buf.getvalue()


def _ini(tests_dir: Path) -> str:
    """The hidden tests' own pytest config file (as pytest would pick it in /tests), else the generated one."""
    for name, section in (
        ("pytest.ini", ""),
        ("pyproject.toml", "[tool.pytest.ini_options]"),
        ("tox.ini", "[pytest]"),
        ("setup.cfg", "[tool:pytest]"),
    ):
        f = tests_dir / name
        if f.is_file() and section in f.read_text(errors="replace"):
            return f"{TESTS}/{name}"
    return f"{PRIVATE}/pytest.ini"


_TYPE_BITS = (
    (1 << 31) | (1 << 27) | (1 << 26) | (1 << 25) | (1 << 24) | (1 << 21) | (1 << 19)
)  # Go FileMode


def read_report(api, cid: str, path: str = REPORT, cap: int = REPORT_BYTES) -> bytes:
    """The JUnit report at `path` in the (stopped) container `cid`: one regular file of at most `cap` bytes,
    read with a bounded read (the archive's stat header is checked before a byte of the body is read).

    Raises:
        VerifyError: no such file, not a regular file, larger than cap.
    """
    try:
        stream, stat = api.get_archive(cid, path, chunk_size=1 << 16)
    except docker.errors.NotFound as e:
        raise VerifyError(f"pytest wrote no JUnit report at {path}") from e
    mode, size = int(stat.get("mode", 0)), int(stat.get("size", 0))
    if mode & _TYPE_BITS:
        stream.close()
        raise VerifyError(f"the JUnit report {path} is not a regular file (mode {mode:#o})")
    if size > cap:
        stream.close()
        raise VerifyError(f"the JUnit report {path} has {size} bytes, over the cap of {cap}")
    buf = bytearray()
    for chunk in stream:
        buf += chunk
        if len(buf) > cap + (1 << 20):  # tar headers and padding are a few KiB
            stream.close()
            raise VerifyError(f"the JUnit report {path} streamed past the cap of {cap} bytes")
    with tarfile.open(fileobj=io.BytesIO(bytes(buf))) as tar:
        member = next((m for m in tar.getmembers() if m.isreg()), None)
        if member is None or member.size > cap:
            raise VerifyError(f"the JUnit report {path} is not one regular file under {cap} bytes")
        return tar.extractfile(member).read()


def _freeze(api, container_id: str, tries: int = 3) -> bool:
    """Freeze the agent's container: True when paused (to be unpaused), False when stopped. The cgroup freezer
    can fail to settle on a loaded host ("unable to freeze"); after `tries` the container is killed instead,
    which freezes its files just as well (the sandbox's shell dies with it)."""
    for i in range(tries):
        try:
            api.pause(container_id)
            return True
        except docker.errors.APIError as e:
            if "is not running" in str(e):
                return False  # a stopped container is frozen already
            log.warning("pausing %s failed (try %d of %d): %s", container_id[:12], i + 1, tries, e)
            time.sleep(0.5 * (i + 1))
    api.kill(container_id)
    return False


def _snapshot(api, container_id: str, name: str, labels: dict[str, str]) -> str:
    """Commit the agent's container while it is frozen (paused, or stopped): no process of the agent runs
    between the first and the last byte the snapshot takes. Returns the snapshot image id."""
    paused = _freeze(api, container_id)
    try:
        return api.commit(
            container_id,
            repository="termrl/snapshot",
            tag=name.lower()[-120:],
            conf={"Labels": labels},
            pause=False,
        )["Id"]
    finally:
        if paused:
            api.unpause(container_id)


def _mounts(tc: Toolchain, labels: dict[str, str]) -> list:
    """The verifier container's mounts: fresh labelled volumes for the tests and the report (reaped like
    containers), the pristine toolchain read-only, and the two files the loader reads by absolute path."""
    return [
        docker.types.Mount(TESTS, None, type="volume", no_copy=True, labels=labels),
        docker.types.Mount(PRIVATE, None, type="volume", no_copy=True, labels=labels),
        docker.types.Mount(TOOLCHAIN, tc.volume, type="volume", read_only=True, no_copy=True),
        # the loader reads these two by absolute path in the container's root: the agent's, so replaced
        docker.types.Mount("/etc/ld.so.preload", "/dev/null", type="bind", read_only=True),
        docker.types.Mount("/etc/nsswitch.conf", tc.nsswitch, type="bind", read_only=True),
    ]


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
    network_mode: str = "none",
) -> TestReport:
    """Verify the agent container `container_id` with the hidden tests in `tests_dir` (steps: module docstring).

    Args:
        api: docker-py APIClient with a socket timeout of a minute or more. labels: put on every container and
            image made here (termrl=1, run id, owner). limits: sandbox.Limits (memory, cpus, pids, cap_add).
        timeout: seconds for pytest (and, separately, for test_setup). test_setup: bash source or None.
        agent_modules: top-level module names the hidden tests import from the agent's files even where the
            task image has them (the task is about that module); default none: the pristine image wins.
        disk_budget: bytes the verifier container's layer and volumes may hold (default
            limits.storage_bytes); past it the container is killed and the report's error starts
            "disk_limit".
        network_mode: the verifier container's network: "none", or "container:<id>" (a compose pod's
            namespace, where the task's sidecars listen on 127.0.0.1; sandboxing/compose.py).
    Returns:
        TestReport. Timeout: every test found by `--collect-only` is False, timed_out=True. A failing test_setup:
        `error` says so. tampered: the verifier's mounts could not be made over the agent's files.
    Raises:
        VerifyError: the image has no usable pytest, the agent container is gone, Docker failed, or pytest's run
            cannot be scored (exit code other than 0 or 1, no report, a report that is not one regular file
            under REPORT_BYTES, or one that does not parse).
    """
    t0 = time.monotonic()
    try:
        image = api.inspect_container(container_id)["Image"]
        tc = prepare_toolchain(api, image, limits, labels)
        snapshot = _snapshot(api, container_id, name, labels)
    except docker.errors.APIError as e:
        raise VerifyError(f"verification of {name}: snapshot failed: {e.explanation or e}") from e
    try:
        vid = api.create_container(
            snapshot,
            entrypoint=[],
            command=_pristine(tc, tc.python, "-I", "-S", "-c", "import time; time.sleep(86400)"),
            labels=labels,
            name=f"{name}-verify",
            hostname="sandbox" if network_mode == "none" else None,
            environment=_env(tc),
            host_config=_host_config(api, limits, _mounts(tc, labels), network_mode),
        )["Id"]
        mounts = api.inspect_container(vid).get("Mounts") or []
        volumes = tuple(
            m["Source"]
            for m in mounts
            if m.get("Source") and m.get("Type") == "volume" and m.get("Destination") != TOOLCHAIN
        )
        budget = limits.storage_bytes if disk_budget is None else disk_budget
        watch = DiskWatch(api, vid, budget, limits.storage_check_s, volumes).start()
        try:
            report = _verify_in(
                api, vid, tc, tests_dir, timeout, test_setup, tuple(agent_modules), t0
            )
        except (docker.errors.APIError, VerifyError):
            if watch.exceeded is None:
                raise
            # the kill broke a step (or pytest: exit 137); the disk limit is the reason
            report = None
        finally:
            watch.stop()
            remove_quietly(api, vid)
        if watch.exceeded is not None:
            held = watch.exceeded / 2**20
            return TestReport(
                {},
                False,
                f"disk_limit: the verifier container held {held:.1f} MiB or more, "
                f"over the {budget / 2**20:.1f} MiB left of sandbox.storage_mb; killed",
                time.monotonic() - t0,
                report.output if report else "",
            )
        return report
    except docker.errors.APIError as e:
        raise VerifyError(f"verification of {name} failed: {e.explanation or e}") from e
    finally:
        try:
            api.remove_image(snapshot, force=True)
        except docker.errors.APIError as e:
            log.warning("removing snapshot image %s failed: %s", snapshot[:19], e)


_TARGETS = (TOOLCHAIN, TESTS, PRIVATE, "/etc/ld.so.preload", "/etc/nsswitch.conf")


def _mounting(call, *args) -> None:
    """`call(*args)`, a Docker call that mounts the verifier's files into the container (start, put_archive):
    an engine error about one of our mount targets (say /etc/nsswitch.conf turned into a directory by the
    agent) becomes _Unmountable; any other error passes."""
    try:
        call(*args)
    except docker.errors.APIError as e:
        why = str(e.explanation or e)
        if "mount" in why and any(t in why for t in _TARGETS):
            raise _Unmountable(why) from e
        raise


class _Unmountable(Exception):
    pass


def _verify_in(
    api,
    vid: str,
    tc: Toolchain,
    tests_dir: Path,
    timeout: float,
    test_setup: str | None,
    agent_modules: tuple[str, ...],
    t0: float,
) -> TestReport:
    env, output = _env(tc), ""
    try:
        _mounting(api.put_archive, vid, TESTS, _tests_tar(tests_dir))
        _mounting(api.put_archive, vid, PRIVATE, _private_tar())
        _mounting(api.start, vid)
        if test_setup:
            if tc.shell is None:
                raise VerifyError("the task has a test_setup but its image has no bash or sh")
            rc, output = _exec(
                api, vid, _pristine(tc, tc.shell, "-c", test_setup), env, tc.workdir, timeout
            )
            if rc != 0:  # the task's own set-up broke: no verdict on the agent, never a 0.0
                raise VerifyError(
                    f"test_setup {'timed out' if rc is None else f'exited {rc}'}; "
                    f"output tail:\n{output[-2000:]}"
                )
            api.kill(vid)  # whatever test_setup left running dies; its files stay
            _mounting(api.start, vid)
    except _Unmountable as e:
        why = f"the verifier cannot mount its files over the agent's: {e}"
        log.warning("verification: tampered: %s", why)
        return TestReport({}, False, None, time.monotonic() - t0, output, tampered=why)
    ini = _ini(tests_dir)
    rc, out = _exec(
        api,
        vid,
        _pytest_cmd(tc, ini, ["-q", "-rA", f"--junitxml={REPORT}"], agent_modules),
        env,
        "/",
        timeout,
    )
    output += out
    if rc is None:
        api.start(vid)
        _, col = _exec(
            api, vid, _pytest_cmd(tc, ini, ["-q", "--collect-only"], agent_modules), env, "/", 60.0
        )
        # `--collect-only -q` prints one node id per line: path::[Class::]name[params]
        names = [
            ln.split("::", 1)[1].rsplit("::", 1)[-1]
            for ln in col.splitlines()
            if "::" in ln and not ln[:1].isspace() and ".py::" in ln
        ]
        return TestReport({n: False for n in names}, True, None, time.monotonic() - t0, output)
    api.kill(vid)  # nothing may touch the report after pytest ends
    if rc not in (
        0,
        1,
    ):  # interrupted, internal error, usage error, no tests, killed, swept incomplete
        raise VerifyError(
            f"pytest exited with code {rc}: not a test outcome; output tail:\n{output[-2000:]}"
        )
    try:
        tests, skipped, error = parse_junit(read_report(api, vid))
    except ValueError as e:
        raise VerifyError(f"{e}; pytest exit code {rc}") from e
    return TestReport(tests, False, error, time.monotonic() - t0, output, skipped)
