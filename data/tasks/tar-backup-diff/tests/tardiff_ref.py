"""Random pairs of tar backups and the reference diff (tests only)."""
import hashlib
import io
import random
import tarfile


def norm(name):
    while name.startswith("./"):
        name = name[2:]
    return "" if name in (".", "") else name.rstrip("/")


def load(path):
    out = {}
    with tarfile.open(path) as tf:
        for m in tf.getmembers():
            name = norm(m.name)
            if not name:
                continue
            if m.isdir():
                kind, data = "dir", ""
            elif m.issym():
                kind, data = "symlink", m.linkname
            elif m.islnk():
                kind, data = "file", None
            else:
                kind, data = "file", hashlib.sha256(tf.extractfile(m).read()).hexdigest()
            out[name] = [kind, data, m.mode & 0o7777, m.uid, m.gid, m]
        for name, v in out.items():
            if v[1] is None:
                target = out[norm(v[5].linkname)]
                v[1] = target[1]
    return {k: v[:5] for k, v in out.items()}


def diff(a_path, b_path):
    a, b = load(a_path), load(b_path)
    res = {"added": sorted(set(b) - set(a)), "removed": sorted(set(a) - set(b)), "changed": {}}
    for n in sorted(set(a) & set(b)):
        what = []
        if a[n][0] != b[n][0]:
            what.append("type")
        elif a[n][1] != b[n][1]:
            what.append("content" if a[n][0] == "file" else "target")
        if a[n][2] != b[n][2]:
            what.append("mode")
        if (a[n][3], a[n][4]) != (b[n][3], b[n][4]):
            what.append("owner")
        if what:
            res["changed"][n] = what
    return res


def add(tf, name, kind="file", data=b"", mode=0o644, uid=0, gid=0, mtime=1700000000, link=""):
    ti = tarfile.TarInfo(name)
    ti.mode, ti.uid, ti.gid, ti.mtime = mode, uid, gid, mtime
    if kind == "dir":
        ti.type = tarfile.DIRTYPE
        tf.addfile(ti)
    elif kind == "symlink":
        ti.type, ti.linkname = tarfile.SYMTYPE, link
        tf.addfile(ti)
    elif kind == "hard":
        ti.type, ti.linkname = tarfile.LNKTYPE, link
        tf.addfile(ti)
    else:
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))


def build(path, entries, prefix, compression):
    with tarfile.open(path, "w:" + compression) as tf:
        if prefix:
            add(tf, "./", "dir", mode=0o755)
        for name, e in entries.items():
            k, d, mode, uid, gid = e
            nm = prefix + name
            if k == "file":
                add(tf, nm, data=d, mode=mode, uid=uid, gid=gid)
            elif k == "dir":
                add(tf, nm, "dir", mode=mode, uid=uid, gid=gid)
            elif k == "hard":
                add(tf, nm, "hard", mode=mode, uid=uid, gid=gid, link=prefix + d)
            else:
                add(tf, nm, "symlink", mode=0o777, uid=uid, gid=gid, link=d)


def generate(dirpath, seed):
    rnd = random.Random(seed)
    a = {"etc": ("dir", None, 0o755, 0, 0)}
    for i in range(25):
        d = rnd.choice(["etc", "etc/app", "var/lib", "home/u"])
        for p in ["etc/app", "var", "var/lib", "home", "home/u"]:
            if d.startswith(p) and p not in a:
                a[p] = ("dir", None, 0o755, 0, 0)
        a[f"{d}/f{i}.conf"] = ("file", f"content {i} {rnd.random()}".encode(), rnd.choice([0o644, 0o600, 0o755]),
                               rnd.choice([0, 1000]), rnd.choice([0, 1000]))
    files = [n for n, e in a.items() if e[0] == "file"]
    a["etc/link"] = ("symlink", "app/x", 0o777, 0, 0)
    a["etc/hard.conf"] = ("hard", files[0], 0o644, 0, 0)
    b = dict(a)
    for n in rnd.sample(files[1:], 10):
        k = rnd.randrange(6)
        e = b[n]
        if k == 0:
            del b[n]
        elif k == 1:
            b[n] = ("file", e[1] + b"x", e[2], e[3], e[4])
        elif k == 2:
            b[n] = ("file", e[1], 0o640, e[3], e[4])
        elif k == 3:
            b[n] = ("file", e[1], e[2], 1001, 1001)
        elif k == 4:
            b[n] = ("file", e[1] + b"!", 0o700, 1002, e[4])
        else:
            b[n] = ("symlink", "/dev/null", 0o777, e[3], e[4])
    for i in range(3):
        b[f"etc/new{i}.conf"] = ("file", b"new", 0o644, 0, 0)
    b["etc/link"] = ("symlink", "app/y", 0o777, 0, 0)
    if rnd.random() < 0.5:
        b["etc/hard.conf"] = ("file", b"not a link anymore", 0o644, 0, 0)
    pa, pb = f"{dirpath}/old.tar.gz", f"{dirpath}/new.tar.xz"
    build(pa, a, rnd.choice(["", "./"]), "gz")
    build(pb, b, rnd.choice(["", "./"]), "xz")
    return pa, pb
