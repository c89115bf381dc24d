"""The pristine test toolchain of a task image: probed once in the untouched image, copied once into a
read-only volume `termrl-toolchain-<digest>` (verifier.py step 1 says what is in it and why).

A probe in a throwaway container of the *task image* finds `python3`'s real path, its loader, stdlib, site
dirs, the library dirs (mapped by pytest and named by the loader cache), `bash`; a second container of the
image copies those trees into the volume (the digest of their listing: task images built on one base share
it), where every symlink is rewritten to point inside the copy, the programs' PT_INTERP is set to the copied
loader, and the stdlib and site dirs are byte-compiled once (the verifier reads that bytecode, never writes).
One probe per image id in a process however many verifications ask at once (`prepare_toolchain`).
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
from dataclasses import dataclass

import docker.types


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
# python3, python, python3.X -> the copied interpreter; first on the tests' PATH
BIN = ROOT + "/bin-termrl"

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


# (engine, image id) -> the future of its Toolchain
_toolchains: dict[tuple[str, str], concurrent.futures.Future] = {}
_toolchain_lock = threading.Lock()
# one filler per volume in this process; others lose the rename (_FILL)
_fill_lock = threading.Lock()
probes = 0  # probe containers this process ran (one per engine and image id: tests count them)


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


def prepare_toolchain(api, image: str, limits, labels: dict[str, str]) -> Toolchain:
    """The pristine toolchain of `image` (an id or tag) on the engine of `api`: probed once per engine
    and image id in a container of the image, copied once per toolchain digest into the volume
    `termrl-toolchain-<digest>` (labels termrl=1, termrl.toolchain=<digest>), which later verifications
    of any image with the same toolchain reuse. Callers asking at once wait for the one probe; a failed
    probe is not cached (the next caller tries again).

    Raises:
        VerifyError: the image has no `python3` whose pytest runs, the copy failed, or Docker failed.
    """
    engine = str(getattr(api, "base_url", ""))
    with _toolchain_lock:  # an image id known here needs no inspect (the verifier passes ids)
        fut = _toolchains.get((engine, image))
    if fut is not None and fut.done() and not fut.exception():
        return fut.result()
    config = api.inspect_image(image)
    key = (engine, config["Id"])
    with _toolchain_lock:
        fut = _toolchains.get(key)
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
    name = f"termrl-toolchain-{p['digest'][:24]}"
    with _fill_lock:
        api.create_volume(name, labels={"termrl": "1", "termrl.toolchain": p["digest"]})
        rc, out = _run_pristine(
            api,
            config["Id"],
            [
                "python3",
                "-I",
                "-S",
                "-c",
                _FILL,
                json.dumps({**p, "volume": TOOLCHAIN, "root": ROOT, "ld": LOADER}),
            ],
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


def host_config(api, limits, mounts=None, logs: bool = True, network_mode: str = "none"):
    """The isolation of the sandbox and of every verifier-side container: limits (sandbox.Limits),
    no network (network_mode "none", or "container:<id>": a compose pod's namespace with only `lo`),
    capabilities dropped but limits.cap_add, no-new-privileges, docker-init; logs False keeps no
    container log (the sandbox's command output), else 1 MB of json-file."""
    return api.create_host_config(
        network_mode=network_mode,
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
        log_config=docker.types.LogConfig(type="json-file", config={"max-size": "1m"})
        if logs
        else docker.types.LogConfig(type="none"),
    )


def pristine(tc: Toolchain, program: str, *args: str) -> list[str]:
    """argv starting `program` (a path in the task image) from ROOT through the copied loader."""
    return [LOADER, "--library-path", tc.libpath, tc.tc(program), *args]
