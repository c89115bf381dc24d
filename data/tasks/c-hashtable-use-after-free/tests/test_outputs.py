import random
import subprocess


def build():
    r = subprocess.run(["make", "-B", "-C", "/app"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def model(cmds):
    d, out = {}, []
    for c in cmds:
        p = c.split()
        if p[0] == "set":
            d[p[1]] = p[2]
        elif p[0] == "get":
            out.append(d.get(p[1], "(nil)"))
        elif p[0] == "del":
            out.append("1" if d.pop(p[1], None) is not None else "0")
        elif p[0] == "count":
            out.append(str(len(d)))
    return out


def run(binary, cmds):
    r = subprocess.run([binary], input="".join(c + "\n" for c in cmds), capture_output=True, text=True,
                       timeout=120, env={"ASAN_OPTIONS": "detect_leaks=0"})
    assert "Sanitizer" not in r.stderr, r.stderr[:2000]
    assert r.returncode == 0, r.stderr[:2000]
    return r.stdout.splitlines()


def test_growth_without_deletes():
    build()
    cmds = [f"set key{i} v{i * 7}" for i in range(5000)] + [f"get key{i}" for i in range(0, 5000, 3)]
    cmds += ["count", "get nothere", "set key10 changed", "get key10", "count"]
    for b in ("/app/kv", "/app/kv-asan"):
        assert run(b, cmds) == model(cmds)


def test_mixed_workload_asan():
    build()
    rng = random.Random(42)
    keys = [f"k{rng.randrange(10**9)}" for _ in range(3000)]
    cmds = []
    for _ in range(150000):
        x = rng.random()
        k = rng.choice(keys)
        if x < 0.45:
            cmds.append(f"set {k} {rng.randrange(10**6)}")
        elif x < 0.7:
            cmds.append(f"get {k}")
        elif x < 0.97:
            cmds.append(f"del {k}")
        else:
            cmds.append("count")
    cmds.append("bogus line here")
    cmds.append("count")
    for b in ("/app/kv-asan", "/app/kv"):
        assert run(b, cmds) == model(cmds)
