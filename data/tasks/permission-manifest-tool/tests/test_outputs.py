import os
import stat
import subprocess
import sys
import tempfile

PASSWD = "root:x:0:0::/root:/bin/bash\nweb:x:3101:3101::/srv:/bin/false\nops:x:3102:3110::/home/ops:/bin/bash\n"
GROUP = "root:x:0:\nweb:x:3101:\nopsteam:x:3110:ops\nlogs:x:3120:\nweb:x:9999:\n"
ENTRIES = [("d", "0755", "root:root", "srv"), ("d", "2770", "web:logs", "srv/app"),
           ("f", "0640", "web:logs", "srv/app/config file.ini"), ("d", "1777", "root:root", "srv/app/tmp"),
           ("f", "4755", "ops:opsteam", "srv/app/tool"), ("d", "0700", "3102:3110", "srv/app/tmp/ops cache"),
           ("f", "0600", "1234:web", "srv/app/secret")]
IDS = {"root": 0, "web": 3101, "ops": 3102, "opsteam": 3110, "logs": 3120, "1234": 1234, "3102": 3102, "3110": 3110}


def make(seed=0):
    root = tempfile.mkdtemp()
    os.makedirs(f"{root}/etc")
    open(f"{root}/etc/passwd", "w").write(PASSWD)
    open(f"{root}/etc/group", "w").write(GROUP)
    os.makedirs(f"{root}/srv/app")
    for f in ["config file.ini", "tool", "secret"]:
        open(f"{root}/srv/app/{f}", "w").write(f)
        os.chmod(f"{root}/srv/app/{f}", 0o644)
    man = os.path.join(root, "..", os.path.basename(root) + ".manifest")
    lines = ["# test manifest", ""] + [" ".join(e) for e in ENTRIES]
    open(man, "w").write("\n".join(lines) + "\n")
    return root, man


def run(*args):
    return subprocess.run([sys.executable, "/app/permsync.py", *args], capture_output=True, text=True, timeout=30)


def test_apply_sets_metadata():
    root, man = make()
    r = run(man, root)
    assert r.returncode == 0, r.stderr[-1500:]
    for typ, mode, og, path in ENTRIES:
        st = os.lstat(f"{root}/{path}")
        o, g = og.split(":")
        assert stat.S_ISDIR(st.st_mode) == (typ == "d"), path
        assert stat.S_IMODE(st.st_mode) == int(mode, 8), path
        assert (st.st_uid, st.st_gid) == (IDS[o], IDS[g]), path
    assert open(f"{root}/srv/app/tool").read() == "tool"


def test_apply_missing_file():
    root, man = make()
    os.remove(f"{root}/srv/app/tool")
    r = run(man, root)
    assert r.returncode == 2
    assert not os.path.exists(f"{root}/srv/app/tool")
    st = os.lstat(f"{root}/srv/app/secret")
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o600, 1234, 3101)
    assert os.path.isdir(f"{root}/srv/app/tmp/ops cache")


def test_check_mode():
    root, man = make()
    r = run("--check", man, root)
    assert r.returncode == 1
    first = {l.split(":")[0] for l in r.stdout.splitlines() if l.strip()}
    assert first == {p for *_, p in ENTRIES} - {"srv"}
    assert not os.path.exists(f"{root}/srv/app/tmp")
    assert run(man, root).returncode == 0
    r = run("--check", man, root)
    assert (r.returncode, r.stdout.strip()) == (0, "")
    os.chmod(f"{root}/srv/app/secret", 0o644)
    os.chown(f"{root}/srv/app/config file.ini", 3101, 3101)
    os.rmdir(f"{root}/srv/app/tmp/ops cache")
    r = run("--check", man, root)
    assert r.returncode == 1
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    assert sorted(l.split(":")[0] for l in lines) == ["srv/app/config file.ini", "srv/app/secret", "srv/app/tmp/ops cache"]
    assert stat.S_IMODE(os.stat(f"{root}/srv/app/secret").st_mode) == 0o644
