#!/bin/bash
cat > /app/permsync.py <<'PY'
import os
import stat
import sys

args = sys.argv[1:]
check = args[0] == "--check"
if check:
    args = args[1:]
manifest, root = args


def table(name, idx):
    out = {}
    with open(os.path.join(root, "etc", name)) as f:
        for line in f:
            p = line.rstrip("\n").split(":")
            if len(p) > idx:
                out.setdefault(p[0], int(p[idx]))
    return out


users, groups = table("passwd", 2), table("group", 2)


def ident(s, tab):
    return int(s) if s.isdigit() else tab[s]


status = 0
for line in open(manifest):
    line = line.rstrip("\n")
    if not line.strip() or line.lstrip().startswith("#"):
        continue
    typ, mode, og, path = line.split(None, 3)
    o, g = og.split(":")
    uid, gid, mode = ident(o, users), ident(g, groups), int(mode, 8)
    full = os.path.join(root, path)
    if check:
        if not os.path.lexists(full):
            print(f"{path}: missing")
            status = 1
            continue
        st = os.lstat(full)
        want_dir = typ == "d"
        probs = []
        if (want_dir and not stat.S_ISDIR(st.st_mode)) or (not want_dir and not stat.S_ISREG(st.st_mode)):
            probs.append("wrong type")
        if stat.S_IMODE(st.st_mode) != mode:
            probs.append(f"mode {stat.S_IMODE(st.st_mode):04o} expected {mode:04o}")
        if (st.st_uid, st.st_gid) != (uid, gid):
            probs.append(f"owner {st.st_uid}:{st.st_gid} expected {uid}:{gid}")
        if probs:
            print(f"{path}: {', '.join(probs)}")
            status = 1
        continue
    if not os.path.lexists(full):
        if typ == "d":
            os.mkdir(full)
        else:
            print(f"{path}: missing", file=sys.stderr)
            status = 2
            continue
    os.lchown(full, uid, gid)
    os.chmod(full, mode)
sys.exit(status)
PY
