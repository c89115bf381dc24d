#!/bin/bash
cat > /app/safe_extract.py <<'PY'
import os, posixpath, stat, sys, tarfile


def inside(rel):
    n = posixpath.normpath(rel)
    return not (n.startswith("/") or n == ".." or n.startswith("../"))


def through_link(dest, rel):
    parts = posixpath.normpath(rel).split("/")
    cur = dest
    for p in parts[:-1]:
        cur = os.path.join(cur, p)
        if os.path.islink(cur):
            return True
    return False


def main():
    src, dest = sys.argv[1], sys.argv[2]
    try:
        tf = tarfile.open(src, "r:*")
        members = tf.getmembers()
    except (tarfile.TarError, OSError) as e:
        print(f"cannot read {src}: {e}", file=sys.stderr)
        return 1
    os.makedirs(dest, exist_ok=True)
    dest = os.path.realpath(dest)
    skipped = []
    for m in members:
        name = m.name
        ok = not name.startswith("/") and inside(name) and (m.isfile() or m.isdir() or m.issym())
        if ok and m.issym():
            ok = not m.linkname.startswith("/") and inside(posixpath.join(posixpath.dirname(posixpath.normpath(name)), m.linkname))
        if ok and (through_link(dest, name) or os.path.islink(os.path.join(dest, posixpath.normpath(name)))):
            ok = False
        if not ok:
            skipped.append(name); continue
        target = os.path.join(dest, posixpath.normpath(name))
        if m.isdir():
            os.makedirs(target, exist_ok=True)
        elif m.issym():
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.symlink(m.linkname, target)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with tf.extractfile(m) as fsrc, open(target, "wb") as fdst:
                fdst.write(fsrc.read())
            os.chmod(target, m.mode & 0o755 & ~(stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX))
    for n in skipped:
        print(n)
    return 3 if skipped else 0


sys.exit(main())
PY
