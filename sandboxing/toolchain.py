"""The pristine test toolchain of a task image: probed once in the untouched image, copied once into a
read-only volume `termrl-toolchain-<digest>` (verifier.py step 1 says what is in it and why).

A probe in a throwaway container of the *task image* finds `python3`'s real path, its loader, stdlib, site
dirs, the library dirs (mapped by pytest and named by the loader cache), `bash`; a second container of the
image copies those trees into a staging volume, where every symlink is rewritten to point inside the copy,
the programs' PT_INTERP is set to the copied loader, and the stdlib and site dirs are byte-compiled once
(checked by source hash: the verifier reads that bytecode, never writes). It also gets the import guard
(GUARD) and a pristine `pytest` beside `python3` (BIN).

The task image's programs did that work, so termrl trusts none of it: it reads the copy back through the
engine's archive call (no program runs), refuses it unless it is one self-contained tree (`_read_copy`),
and writes it itself into the volume named by the sha256 of its entries (paths, types, modes, sizes,
links, bytes; never mtimes), with the size it measured: task images with the same toolchain share it
(nine volumes of exactly 277.3 MB were the toolchain of images that pip-install pytest at build time, the
same files with each build's mtimes). No running container mounts that volume writable; its contents
are checked against its name once per process, its identity on every use (`_check`, `_intact`).
One probe per image id in a process however many verifications ask at once (`prepare_toolchain`). The
volumes are a cache of at most CACHE_BYTES per engine, the least recently used (LEDGER, which also
remembers the volume each image id was copied into) evicted when a new one is made (`evict`), all removed
by `python -m sandboxing.toolchain remove` (`make clean-toolchains`).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime
import fcntl
import hashlib
import io
import json
import logging
import os
import posixpath
import secrets
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import docker
import docker.errors
import docker.types

from sandboxing import hosts
from sandboxing.limits import host_config

log = logging.getLogger("termrl.verifier")


class VerifyError(RuntimeError):
    """Verification could not run or be scored (image without pytest, Docker failure, pytest killed, the
    verifier's wall clock ran out): an error with its reason, no reward, never a score of 0."""


DEFAULT_WORKDIR = "/app"


# where the toolchain volume is mounted (fill and verifier containers)
TOOLCHAIN = "/.termrl-toolchain"
# the copy: ROOT + <path in the task image>
ROOT = TOOLCHAIN + "/tc"
# the loader's copy; the PT_INTERP of the copied programs (<= 27 bytes, see _FILL)
LOADER = ROOT + "/ld"
# python3, python, python3.X -> the copied interpreter, pytest -> its pytest; first on the tests' PATH
BIN = ROOT + "/bin-termrl"
# Terminal-Bench's hidden tests directory (TEST_DIR): what the import guard trusts besides the toolchain
TESTS = "/tests"
# the toolchain volumes of one engine hold at most this many bytes: past it, the least recently used
# volumes no container uses are removed when a new one is made (`evict`)
CACHE_BYTES = 8 << 30
# when this process last used each toolchain volume, per engine (the order of eviction; a volume not
# listed counts as used when it was created)
LEDGER = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "termrl" / "toolchains.json"
)

# Runs as `python3 -I -c _PROBE` in a throwaway container of the task image (its own files, unchanged).
_PROBE = r"""
import contextlib, io, json, os, re, shutil, site, subprocess, sys, tempfile
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
print('TERMRL_PROBE ' + json.dumps({
    'python': os.path.realpath(sys.executable), 'loader': loader, 'shell': shells[0] if shells else None,
    'stdlib': [os.path.realpath(p) for p in stdlib if p], 'site_dirs': site_dirs, 'libdirs': libdirs,
    'roots': roots, 'plugins': plugins}))
"""

# The import guard of every pristine interpreter, written into the copy's first site dir as `_termrl_guard`
# with a .pth line that imports it (the boot of the pytest verifier, which runs with -S, imports it itself).
# It makes the process non-dumpable (the program under test, a child of the same user, can neither trace it
# nor write its memory through /proc/<pid>/mem) and puts a finder ahead of the path finder that decides every
# top-level import:
# - a module the toolchain has (any sys.path entry under ROOT) comes from the toolchain, wherever else the
#   name exists (the cwd, a script's folder, /app/pytest.py, the agent's site dirs);
# - a module the toolchain lacks is absent when the toolchain's own code imports it (numpy trying `pickle5`,
#   pytest its optional plugins), unless it lies in the hidden tests' folder; the code that imports it by
#   name on purpose (the tests, the agent's code they run, a command line's `-c`/`-m`, pytest importing a
#   collected file) finds it on sys.path as that code shaped it, then in the agent's site dirs (`data`);
# - a name the task declares in agent_modules (`allow`) comes from the agent's files first.
GUARD = r"""
import os, sys
from importlib.machinery import PathFinder
ROOT = %(root)r
TESTS = %(tests)r
data = []  # the agent's site dirs (the verifier's boot sets them): the tests' imports may find modules there
allow = set()  # agent_modules: top-level names the tests import from the agent's files first
_IMPORTLIB = os.sep + os.path.join('importlib', '__init__.py')
# files of the toolchain that import what their caller named: `python -m X`, pytest importing a collected file
_ON_BEHALF = (os.sep + 'runpy.py', os.sep + os.path.join('_pytest', 'pathlib.py'))
def _toolchains_own():
    # the frame of the import statement (past importlib's own): the toolchain's code, or code that imports
    # by name on purpose; code compiled from a string belongs to whoever ran it (a command line's -c: its own)
    f = sys._getframe(2)
    from_string = False
    while f is not None:
        name = f.f_code.co_filename
        if name.startswith('<frozen importlib') or name.endswith(_IMPORTLIB):
            f = f.f_back
        elif name.startswith('<frozen '):
            return 'runpy' not in name
        elif name.startswith('<'):
            from_string = True
            f = f.f_back
        elif name.startswith(ROOT + os.sep):
            return not name.endswith(_ON_BEHALF)
        else:
            return False
    return not from_string
class Guard:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if path is not None:  # submodules follow their package's __path__
            return None
        entries = [p for p in sys.path if isinstance(p, str)]
        toolchain = [p for p in entries if p.startswith(ROOT + os.sep)]
        if name in allow:
            spec = PathFinder.find_spec(name, data + [p for p in entries if p not in toolchain])
            if spec is not None:
                return spec
        spec = PathFinder.find_spec(name, toolchain)
        if spec is not None:
            return spec
        if _toolchains_own():
            tests = [p for p in entries if p == TESTS or p.startswith(TESTS + os.sep)]
            spec = PathFinder.find_spec(name, tests)
            if spec is None:
                raise ModuleNotFoundError('No module named %%r' %% name, name=name)
            return spec
        return PathFinder.find_spec(name, entries + data)
    @staticmethod
    def invalidate_caches():
        pass
def _nondumpable():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    # PR_SET_DUMPABLE = 4, PR_GET_DUMPABLE = 3
    if libc.prctl(4, 0, 0, 0, 0) != 0 or libc.prctl(3, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_DUMPABLE, 0) failed')
if Guard not in sys.meta_path:
    sys.meta_path.insert(sys.meta_path.index(PathFinder), Guard)
try:
    _nondumpable()
except Exception as e:
    os.write(2, b'[termrl] the pristine interpreter cannot make itself non-dumpable: %%s\n' %% str(e).encode())
    os._exit(%(undumpable_rc)d)
"""
UNDUMPABLE = 72  # the exit code of a pristine interpreter that could not make itself non-dumpable


def guard_source() -> str:
    """The text of `_termrl_guard.py` (GUARD) as the fill writes it into the copy."""
    return GUARD % {"root": ROOT, "tests": TESTS, "undumpable_rc": UNDUMPABLE}


# Runs as `python3 -I -S -c _FILL <json>` in a container of the task image with a new staging volume at
# TOOLCHAIN: copies the roots, makes the copy self-contained and renames it to ROOT at the end. What it
# writes is the work of the task image's programs, so it is data: termrl reads it back through the engine,
# checks and hashes it (`_read_copy`) and writes the copy into the content-named volume itself (`_fill`).
_FILL = r"""
import compileall, json, os, py_compile, shutil, subprocess, sys, tempfile
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
# `pytest` on the tests' PATH is the pristine one, never the image's console script (its shebang names
# an interpreter in the agent's root)
with open(tmp + '/bin-termrl/pytest', 'w') as f:
    f.write('#!%s/bin-termrl/python3\nimport pytest\nraise SystemExit(pytest.main())\n' % cfg['root'])
os.chmod(tmp + '/bin-termrl/pytest', 0o755)
os.symlink('pytest', tmp + '/bin-termrl/py.test')
# the import guard (GUARD), loaded by every pristine interpreter through a .pth line
site0 = tmp + cfg['site_dirs'][0]
with open(site0 + '/_termrl_guard.py', 'w') as f:
    f.write(cfg['guard'])
with open(site0 + '/000-termrl-guard.pth', 'w') as f:
    f.write('import _termrl_guard\n')
os.makedirs(tmp + '/etc')
if os.path.isfile('/etc/nsswitch.conf'):
    shutil.copy2('/etc/nsswitch.conf', tmp + '/etc/nsswitch.conf')
else:
    open(tmp + '/etc/nsswitch.conf', 'w').write('passwd: files\ngroup: files\nhosts: files dns\n')
# Bytecode once per toolchain, read-only afterwards (the verifier runs with -B: it never writes any). The
# image's own bytecode goes first, and the new one is checked by source hash, not mtime: two images with
# the same files get the same copy, byte for byte (termrl names the volume by the copy's contents).
for top, dirs, files in os.walk(tmp):
    if '__pycache__' in dirs:
        shutil.rmtree(os.path.join(top, '__pycache__'))
        dirs.remove('__pycache__')
for d in cfg['stdlib'] + cfg['site_dirs']:
    if os.path.isdir(tmp + d):
        compileall.compile_dir(tmp + d, ddir=cfg['root'] + d, quiet=2, workers=1,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
os.rename(tmp, root)
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


# (engine, image id) -> the future of its Toolchain
_toolchains: dict[tuple[str, str], concurrent.futures.Future] = {}
_toolchain_lock = threading.Lock()
# one filler per volume in this process; other processes wait on FILL_LOCK
_fill_lock = threading.Lock()
probes = 0  # probe containers this process ran (one per engine and image id: tests count them)
# (engine, volume) -> the volume's creation time when this process checked its contents (`_check`)
_checked: dict[tuple[str, str], str] = {}
# the digest's version: a copy made by another layout of the volume is never taken for this one
_DIGEST_VERSION = b"termrl-toolchain-v3\n"


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
        host_config=host_config(api, limits, mounts),
    )["Id"]
    try:
        api.start(cid)
        rc = api.wait(cid, timeout=600)["StatusCode"]
        return rc, api.logs(cid, stdout=True, stderr=True, tail=200).decode("utf-8", "replace")
    finally:
        api.remove_container(cid, force=True, v=True)


def _engine(api) -> str:
    return str(getattr(api, "base_url", ""))


def prepare_toolchain(api, image: str, limits, labels: dict[str, str]) -> Toolchain:
    """The pristine toolchain of `image` (an id or tag) on the engine of `api`: probed once per engine
    and image id in a container of the image; its files copied once per engine and image id into a
    staging volume by the image's own programs, then read back through the engine, checked (`_read_copy`)
    and written by termrl into the volume `termrl-toolchain-<sha256 of the copy>` (labels termrl=1,
    termrl.toolchain=<digest>, termrl.toolchain.bytes=<bytes termrl measured>), which images with the same
    copy share. No container that runs a program mounts that volume writable. Its contents are checked
    against its name once per process, its identity (digest label, creation time) on every use. A new
    volume first makes room under CACHE_BYTES (`evict`); each use is noted in LEDGER (the order of
    eviction, and which volume each image id was copied into). A volume removed since is made again.
    Callers asking at once wait for the one probe; a failed probe is not cached.

    Raises:
        VerifyError: the image has no `python3` whose pytest runs, the copy failed or is not a
            self-contained tree (a link leaving it, a device, a path through a link), a volume's
            contents are not what its name says (poisoned: it is removed, never used), or Docker failed.
    """
    engine = _engine(api)
    with _toolchain_lock:  # an image id known here needs no inspect (the verifier passes ids)
        fut = _toolchains.get((engine, image))
    if fut is not None and fut.done() and not fut.exception():
        tc = fut.result()
        if _intact(api, tc.volume):
            _touch(engine, tc.volume)
            return tc
        with _toolchain_lock:  # evicted by another process: probed and filled again
            _toolchains.pop((engine, image), None)
    config = api.inspect_image(image)
    key = (engine, config["Id"])
    with _toolchain_lock:
        fut = _toolchains.get(key)
        if (
            fut is not None
            and fut.done()
            and not fut.exception()
            and not _intact(api, fut.result().volume)
        ):
            fut = None
        mine = False
        if fut is None:
            fut = _toolchains[key] = concurrent.futures.Future()
            mine = True
    if not mine:
        return fut.result()
    try:
        tc = _probe_and_fill(api, image, config, limits, labels)
    except BaseException as e:
        with _toolchain_lock:
            del _toolchains[key]
        fut.set_exception(e)
        raise
    fut.set_result(tc)
    return tc


def _present(api, volume: str) -> dict | None:
    """The engine's record of the toolchain volume when it is there with its label, else None (an
    engine makes a volume a mount names anew, empty and unlabelled: such a one is removed)."""
    try:
        found = api.inspect_volume(volume)
    except docker.errors.NotFound:
        return None
    if "termrl.toolchain" in (found.get("Labels") or {}):
        return found
    with contextlib.suppress(docker.errors.APIError):
        api.remove_volume(volume)
    return None


def _intact(api, volume: str) -> bool:
    """Whether the volume this process checked by content is still that volume: there, labelled with
    the digest its name carries, created when it was checked (one inspect, a few ms)."""
    found = _present(api, volume)
    return (
        found is not None
        and _named(found["Labels"]["termrl.toolchain"]) == volume
        and _checked.get((_engine(api), volume)) == found.get("CreatedAt")
    )


def _named(digest: str) -> str:
    return f"termrl-toolchain-{digest[:24]}"


def _probe_and_fill(api, image: str, config: dict, limits, labels: dict[str, str]) -> Toolchain:
    global probes
    probes += 1
    rc, out = _run_pristine(
        api,
        config["Id"],
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
    if not p["site_dirs"]:
        raise VerifyError(f"image {image!r}: its python3 has no site-packages folder for pytest")
    engine = _engine(api)
    name = _copied(engine, config["Id"])
    found = _present(api, name) if name else None
    if found is None:
        name = _fill(api, image, config["Id"], p, limits, labels)
    else:
        _check(api, config["Id"], name, found, labels)
    _touch(engine, name, image=config["Id"])
    cfg = config.get("Config") or {}
    return Toolchain(
        python=p["python"],
        loader=p["loader"],
        shell=p["shell"],
        stdlib=p["stdlib"],
        site_dirs=p["site_dirs"],
        libdirs=p["libdirs"],
        plugins=p["plugins"],
        volume=name,
        nsswitch=api.inspect_volume(name)["Mountpoint"] + "/tc/etc/nsswitch.conf",
        env=list(cfg.get("Env") or []),
        workdir=cfg.get("WorkingDir") or DEFAULT_WORKDIR,
        user=cfg.get("User") or "",
    )


def _fill(api, image: str, image_id: str, p: dict, limits, labels: dict[str, str]) -> str:
    """Copy the probed roots with the image's programs into a staging volume, read the copy back through
    the engine (`_read_copy`: checked, hashed, measured, spooled to a host file), and write it with the
    engine's archive call into the volume named by its digest, in a created container that never starts.
    The staging volume is removed. Returns the volume's name."""
    own = {k: v for k, v in labels.items() if k not in ("termrl.verifies", "termrl.tests")}
    staging = f"termrl-toolchain-staging-{secrets.token_hex(8)}"
    api.create_volume(staging, labels={**own, "termrl": "1"})
    try:
        fill = {**p, "volume": TOOLCHAIN, "root": ROOT, "ld": LOADER, "guard": guard_source()}
        rc, out = _run_pristine(
            api,
            image_id,
            ["python3", "-I", "-S", "-c", _FILL, json.dumps(fill)],
            {},
            labels,
            limits,
            [docker.types.Mount(TOOLCHAIN, staging, type="volume", no_copy=True)],
        )
        if rc != 0:
            raise VerifyError(
                f"image {image!r}: copying the test toolchain into volume {staging} failed "
                f"(exit {rc}):\n{out[-2000:]}"
            )
        LEDGER.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=LEDGER.parent, prefix="toolchain-") as spool:
            digest, size = _read_copy(
                api, image_id, staging, spool, f"image {image!r}, its copy in volume {staging}", own
            )
            name = _named(digest)
            with _fill_lock, _lock_file("fill"):
                found = _present(api, name)
                if found is not None:  # another image's copy, the same files: shared
                    _check(api, image_id, name, found, own)
                    return name
                evict(api, size, keep=name)
                api.create_volume(
                    name,
                    labels={
                        "termrl": "1",
                        "termrl.toolchain": digest,
                        "termrl.toolchain.bytes": str(size),
                    },
                )
                try:
                    spool.seek(0)
                    _with_volume(
                        api,
                        image_id,
                        name,
                        False,
                        lambda cid: api.put_archive(cid, TOOLCHAIN, spool),
                        own,
                    )
                except BaseException:
                    with contextlib.suppress(docker.errors.APIError):
                        api.remove_volume(name, force=True)
                    raise
                _checked[(_engine(api), name)] = api.inspect_volume(name).get("CreatedAt")
        _touch(_engine(api), name, size)
        return name
    finally:
        with contextlib.suppress(docker.errors.APIError):
            api.remove_volume(staging, force=True)


def _with_volume(api, image_id: str, volume: str, read_only: bool, call, labels: dict[str, str]):
    """call(container id) on a created, never started container of the image with `volume` at
    TOOLCHAIN: the engine's archive calls reach the volume while no program runs. The container carries
    `labels` (the run's, with its owner): a process killed mid-call leaves it for reap, which would
    otherwise find the staging volume held by a container it cannot attribute."""
    cid = api.create_container(
        image_id,
        entrypoint=[],
        command=["true"],
        labels={**labels, "termrl": "1"},
        host_config=api.create_host_config(
            network_mode="none",
            mounts=[
                docker.types.Mount(
                    TOOLCHAIN, volume, type="volume", read_only=read_only, no_copy=True
                )
            ],
        ),
    )["Id"]
    try:
        return call(cid)
    finally:
        api.remove_container(cid, force=True)


def _check(api, image_id: str, name: str, found: dict, labels: dict[str, str]) -> None:
    """Check the volume's contents against the digest its label and name carry (once per process and
    volume; `_intact` after). A mismatch is a poisoned copy: the volume is removed and never used.

    Raises:
        VerifyError: the contents differ (naming the volume), or the copy is not a self-contained tree.
    """
    key = (_engine(api), name)
    if _checked.get(key) == found.get("CreatedAt"):
        return
    want = found["Labels"]["termrl.toolchain"]
    try:
        got, _ = _read_copy(api, image_id, name, None, f"toolchain volume {name}", labels)
    except VerifyError:
        got = None
    if got != want or _named(want) != name:
        with contextlib.suppress(docker.errors.APIError):
            api.remove_volume(name, force=True)
        raise VerifyError(
            f"toolchain volume {name}: its contents are not the copy termrl made (sha256 "
            f"{got or 'unreadable'}, label {want}): poisoned; removed, never used"
        )
    _checked[key] = found.get("CreatedAt")


class _Chunks(io.RawIOBase):
    """A readable stream over an iterator of byte chunks (the engine's archive), each chunk also
    written to `spool` when given."""

    def __init__(self, chunks, spool=None):
        self._chunks, self._spool, self._left = iter(chunks), spool, b""

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        while not self._left:
            try:
                self._left = next(self._chunks)
            except StopIteration:
                return 0
            if self._spool is not None:
                self._spool.write(self._left)
        n = min(len(buf), len(self._left))
        buf[:n] = self._left[:n]
        self._left = self._left[n:]
        return n


def _read_copy(
    api, image_id: str, volume: str, spool, what: str, labels: dict[str, str]
) -> tuple[str, int]:
    """(sha256 hex, bytes of regular files) of the copy at ROOT in `volume`, read through the engine's
    archive call (no program of the image runs), the tar written to `spool` when given. The digest covers
    every entry's path, type, permission bits, size, link target and content (never mtimes or owners).
    The copy must be one self-contained tree: folders, regular files, hard links to earlier files, and
    symlinks whose target is relative and stays inside ROOT; no entry under a symlink;
    etc/nsswitch.conf a regular file (the verifier binds it by its host path); at most CACHE_BYTES.

    Raises:
        VerifyError: the copy breaks one of these rules (`what` and the entry named) or is missing.
    """
    top = PurePosixPath(ROOT).name
    records, links, files = [], set(), set()
    size = 0

    def refuse(why: str):
        raise VerifyError(f"{what}: the toolchain copy is refused, {why}")

    def read(cid):
        # the response itself (not docker-py's get_archive): closed when a refusal stops the read, else
        # the engine waits for the rest to be read, and the container's removal for the engine
        res = api._get(api._url("/containers/{0}/archive", cid), params={"path": ROOT}, stream=True)
        with contextlib.closing(res):
            if res.status_code == 404:
                refuse(f"no {ROOT} in it")
            api._raise_for_status(res)
            walk(res.iter_content(1 << 20))

    def walk(stream):
        nonlocal size
        with tarfile.open(
            fileobj=io.BufferedReader(_Chunks(stream, spool), 1 << 20), mode="r|"
        ) as tar:
            for m in tar:
                path = PurePosixPath(m.name)
                if path.is_absolute() or ".." in path.parts or path.parts[:1] != (top,):
                    refuse(f"entry {m.name!r} is outside {top}/")
                if any(str(a) in links for a in path.parents):
                    refuse(f"entry {m.name!r} lies under a symlink")
                digest = ""
                if m.issym():
                    target = PurePosixPath(m.linkname)
                    resolved = posixpath.normpath(posixpath.join(str(path.parent), m.linkname))
                    if target.is_absolute() or not (resolved + "/").startswith(top + "/"):
                        refuse(f"symlink {m.name!r} -> {m.linkname!r} leaves the copy")
                    links.add(m.name)
                elif m.islnk():
                    if m.linkname not in files:
                        refuse(f"hard link {m.name!r} -> {m.linkname!r} names no earlier file")
                elif m.isreg():
                    size += m.size
                    if size > CACHE_BYTES:
                        refuse(f"it holds more than the cache's {CACHE_BYTES >> 20} MiB")
                    h = hashlib.sha256()
                    f = tar.extractfile(m)
                    while block := f.read(1 << 20):
                        h.update(block)
                    digest = h.hexdigest()
                    files.add(m.name)
                elif not m.isdir():
                    refuse(f"entry {m.name!r} is not a file, folder or link (type {m.type!r})")
                records.append(
                    f"{m.name}\0{m.type.decode()}\0{m.mode & 0o7777:o}\0{m.size}\0{m.linkname}\0{digest}\n"
                )

    _with_volume(api, image_id, volume, True, read, labels)
    if f"{top}/etc/nsswitch.conf" not in files:
        refuse("etc/nsswitch.conf is not a regular file")
    h = hashlib.sha256(_DIGEST_VERSION)
    for line in sorted(records):
        h.update(line.encode())
    return h.hexdigest(), size


# ---------------------------------------------------------------------------------------------------------
# The cache of toolchain volumes: bounded, least recently used first out, removable in one command

_touched: dict[
    tuple[str, str], float
] = {}  # (engine, volume) -> when this process last noted its use
_ledger_lock = threading.Lock()


@contextlib.contextmanager
def _ledger():
    """The ledger (LEDGER: {engine: {volume: {"used": unix s, "bytes": n}}}) under an exclusive file lock
    (processes of one host share it); what the block leaves in the dict is written back atomically."""
    LEDGER.parent.mkdir(parents=True, exist_ok=True)
    with _ledger_lock, open(LEDGER.with_name(LEDGER.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            data = json.loads(LEDGER.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            data = {}
        yield data
        tmp = LEDGER.with_name(LEDGER.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, LEDGER)


def _touch(engine: str, volume: str, size: int | None = None, image: str | None = None) -> None:
    """Note in the ledger that `volume` was used now (at most once a minute per volume and process), its
    size in bytes when termrl measured it, and that the image id `image` was copied into it."""
    now = time.time()
    if size is None and image is None and now - _touched.get((engine, volume), 0.0) < 60.0:
        return
    _touched[(engine, volume)] = now
    with _ledger() as data:
        entry = data.setdefault(engine, {}).setdefault(volume, {})
        entry["used"] = now
        if size is not None:
            entry["bytes"] = size
        if image is not None and image not in entry.setdefault("images", []):
            entry["images"].append(image)


def _copied(engine: str, image_id: str) -> str | None:
    """The volume the ledger says the image id was copied into, None when none."""
    with _ledger() as data:
        return next(
            (name for name, e in data.get(engine, {}).items() if image_id in e.get("images", [])),
            None,
        )


@contextlib.contextmanager
def _lock_file(name: str):
    """An exclusive lock shared by this host's processes (beside LEDGER), held for the block."""
    LEDGER.parent.mkdir(parents=True, exist_ok=True)
    with open(LEDGER.with_name(f"toolchains.{name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _created(volume: dict) -> float:
    try:
        return datetime.datetime.fromisoformat(volume.get("CreatedAt", "")).timestamp()
    except ValueError:
        return 0.0


def evict(
    api,
    incoming: int = 0,
    cap: int | None = None,
    keep: str | None = None,
    names: list[str] | None = None,
) -> list[str]:
    """Remove the toolchain volumes of the engine of `api` least recently used first (the ledger's time,
    else the volume's creation) until those left plus `incoming` bytes fit in `cap` (default CACHE_BYTES;
    a volume's bytes: the ledger's measure after its fill, else its label's probe). A volume a container
    uses is kept (the engine refuses), and so is `keep`; names: only these volumes are weighed and
    removed (default every toolchain volume). Returns the names removed.

    Raises:
        docker.errors.APIError: the engine refused to list volumes.
    """
    cap = CACHE_BYTES if cap is None else cap
    engine = _engine(api)
    volumes = api.volumes(filters={"label": "termrl.toolchain"}).get("Volumes") or []
    if names is not None:
        volumes = [v for v in volumes if v["Name"] in names]
    with _ledger() as data:
        seen = data.get(engine, {})

        def used(v: dict) -> float:
            return seen.get(v["Name"], {}).get("used") or _created(v)

        def size(v: dict) -> int:
            return int(
                seen.get(v["Name"], {}).get("bytes")
                or (v.get("Labels") or {}).get("termrl.toolchain.bytes")
                or 0
            )

        total = incoming + sum(size(v) for v in volumes)
        removed = []
        for v in sorted(volumes, key=used):
            if total <= cap:
                break
            if v["Name"] == keep:
                continue
            try:
                api.remove_volume(v["Name"])
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as e:  # in use by a verification: kept
                log.info("toolchain volume %s kept: %s", v["Name"], e.explanation or e)
                continue
            total -= size(v)
            removed.append(v["Name"])
            seen.pop(v["Name"], None)
    if removed:
        log.info("toolchain cache over %d MiB: removed %s", cap >> 20, ", ".join(removed))
    return removed


def remove_toolchains(api) -> tuple[list[str], list[str]]:
    """Remove every toolchain volume of the engine of `api` (label termrl.toolchain): the whole cache,
    made again by the next verification. Returns (removed, kept: in use by a container)."""
    return evict(api, 0, cap=-1), [
        v["Name"] for v in api.volumes(filters={"label": "termrl.toolchain"}).get("Volumes") or []
    ]


def pristine(tc: Toolchain, program: str, *args: str) -> list[str]:
    """argv starting `program` (a path in the task image) from ROOT through the copied loader."""
    return [LOADER, "--library-path", tc.libpath, tc.tc(program), *args]


def main(argv: list[str] | None = None) -> int:
    """`python -m sandboxing.toolchain remove [--host URL ...]` (`make clean-toolchains`): remove the
    verifier's toolchain cache on each engine (default the local one). Exit status 2, after one line
    naming --host for each engine that could not be reached, when any could not."""
    parser = argparse.ArgumentParser(
        prog="python -m sandboxing.toolchain", description=main.__doc__
    )
    parser.add_argument("command", choices=["remove"])
    parser.add_argument(
        "--host", action="append", help="a Docker engine url (repeatable; default the local engine)"
    )
    args = parser.parse_args(argv)
    failed = 0
    for url in args.host or [hosts.LOCAL]:
        try:
            removed, kept = remove_toolchains(hosts.client(url))
        except (docker.errors.DockerException, ValueError, OSError) as e:
            # a url that does not parse, needs TLS files it lacks, or names no engine: one line each,
            # and the other engines are still cleaned
            why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            print(f"error: --host {url}: {why}", file=sys.stderr)
            failed += 1
            continue
        print(f"{url}: removed {len(removed)} toolchain volume(s); {len(kept)} in use kept {kept}")
    return 2 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
