"""Random broken account databases and the reference repair (tests only)."""
import os
import random


def read(root, name):
    p = os.path.join(root, "etc", name)
    return [l.rstrip("\n").split(":") for l in open(p) if l.strip()]


def repair(root):
    pw, seen = [], set()
    for r in read(root, "passwd"):
        if r[0] not in seen:
            seen.add(r[0]); pw.append(r)
    users = [r[0] for r in pw]
    gr, gseen = [], set()
    for r in read(root, "group"):
        if r[0] not in gseen:
            gseen.add(r[0]); gr.append(r)
    for r in gr:
        mem, out = [m for m in r[3].split(",") if m], []
        for m in mem:
            if m in seen and m not in out:
                out.append(m)
        r[3] = ",".join(out)
    gids = {r[2] for r in gr}
    for r in pw:
        if r[3] not in gids:
            gr.append([r[0], "x", r[3], ""]); gids.add(r[3])
    sh, sseen = [], set()
    for r in read(root, "shadow"):
        if r[0] in seen and r[0] not in sseen:
            sseen.add(r[0]); sh.append(r)
    for u in users:
        if u not in sseen:
            sh.append([u, "!", "19000", "0", "99999", "7", "", "", ""])
    gsh = {}
    for r in read(root, "gshadow"):
        gsh.setdefault(r[0], r)
    gs = []
    for r in gr:
        old = gsh.get(r[0])
        gs.append([r[0], old[1], old[2], r[3]] if old else [r[0], "!", "", r[3]])
    return {"passwd": pw, "group": gr, "shadow": sh, "gshadow": gs}


def generate(root, seed):
    rnd = random.Random(seed)
    os.makedirs(os.path.join(root, "etc"), exist_ok=True)
    sysu = [("root", 0), ("daemon", 1), ("bin", 2), ("www-data", 33)]
    names = rnd.sample(["ana", "ben", "cleo", "dan", "eli", "fay", "gus", "hal", "ivy", "jon", "kai", "lea", "max", "noa"], 9)
    users = sysu + [(n, 1000 + i) for i, n in enumerate(names)]
    pw = [f"{u}:x:{uid}:{uid}:{u.title()}:/home/{u}:/bin/bash" for u, uid in users]
    pw.append(pw[rnd.randrange(len(pw))])
    dup = rnd.choice(names)
    pw.append(f"{dup}:x:4999:4999:dup:/tmp:/bin/sh")
    groups = []
    for u, uid in users:
        if rnd.random() < 0.8:
            groups.append([u, "x", str(uid), ""])
    extra = ["sudo:x:27:", "docker:x:999:", "staff:x:50:", "audio:x:29:"]
    for e in extra:
        r = e.split(":")
        mem = rnd.sample([u for u, _ in users] + ["ghost", "olduser"], rnd.randint(0, 5))
        if mem and rnd.random() < 0.5:
            mem.append(mem[0])
        r.append(",".join(mem)) if len(r) == 3 else None
        groups.append(r[:3] + [",".join(mem)])
    groups.insert(rnd.randrange(len(groups)), ["staff", "x", "51", "ana"])
    groups.append(["oldgroup", "x", "3000", "ghost"])
    rnd.shuffle(groups)
    sh = [f"{u}:$6$salt${u}hash:19500:0:99999:7:::" for u, _ in users if rnd.random() < 0.7]
    sh += ["ghost:!:19000:0:99999:7:::", f"{users[0][0]}:*:1:0:99999:7:::"]
    rnd.shuffle(sh)
    gsh = [f"{g[0]}:{rnd.choice(['!', '*', ''])}:{rnd.choice(['', 'root'])}:stale" for g in groups if rnd.random() < 0.6]
    gsh.append("removedgrp:!::ghost")
    rnd.shuffle(gsh)
    for name, lines in (("passwd", pw), ("group", [":".join(g) for g in groups]), ("shadow", sh), ("gshadow", gsh)):
        with open(os.path.join(root, "etc", name), "w") as f:
            f.write("\n".join(lines) + ("\n\n" if rnd.random() < 0.3 else "\n"))
