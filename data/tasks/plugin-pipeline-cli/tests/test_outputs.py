import importlib.util
import random
import subprocess
import sys

import pytest


def load():
    spec = importlib.util.spec_from_file_location("textpipe", "/app/textpipe.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def plugin(d, fname, name, prio=None, requires=None, body="return text + %r", extra=""):
    d.mkdir(parents=True, exist_ok=True)
    src = "NAME = %r\n" % name
    if prio is not None:
        src += "PRIORITY = %d\n" % prio
    if requires is not None:
        src += "REQUIRES = %r\n" % (requires,)
    src += extra + "\n\ndef transform(text, options):\n    " + (body % ("[" + name + "]") if "%r" in body else body) + "\n"
    (d / fname).write_text(src)


def test_load_and_isolation(tmp_path):
    m = load()
    a, b = tmp_path / "a", tmp_path / "b"
    (a).mkdir()
    (b).mkdir()
    (a / "util.py").write_text("NAME = 'ua'\nVAL = 'A'\ndef transform(t, o):\n    return t + VAL\n")
    (b / "util.py").write_text("NAME = 'ub'\nVAL = 'B'\ndef transform(t, o):\n    return t + VAL\n")
    (b / "_private.py").write_text("raise RuntimeError('must not be imported')\n")
    (b / "notes.txt").write_text("not python")
    ps = m.load_plugins([str(a), str(b)])
    assert sorted(ps) == ["ua", "ub"]
    assert ps["ua"].transform("", {}) == "A" and ps["ub"].transform("", {}) == "B"
    assert sorted(m.load_plugins(["/app/plugins"])) == ["strip", "upper"]


def test_plan_order_and_requires(tmp_path):
    m = load()
    d = tmp_path / "p"
    rng = random.Random(6)
    prios = rng.sample(range(1, 90), 6)
    names = ["p%d" % i for i in range(6)]
    for n, pr in zip(names, prios):
        plugin(d, n + ".py", n, pr)
    plugin(d, "late.py", "late", 1, ["p0", "p1"])
    plugin(d, "dflt.py", "dflt")
    ps = m.load_plugins([str(d)])
    order = m.plan(ps)
    expect_base = sorted(zip(prios, names))
    done, exp, pending = set(), [], {n: (pr, n) for pr, n in expect_base}
    pending["late"], pending["dflt"] = (1, "late"), (100, "dflt")
    req = {"late": {"p0", "p1"}}
    while pending:
        n = min((k for k in pending if req.get(k, set()) <= done), key=lambda k: pending[k])
        exp.append(n)
        done.add(n)
        del pending[n]
    assert order == exp
    sel = m.plan(ps, ["late"])
    assert sorted(sel) == ["late", "p0", "p1"] and sel[-1] == "late"
    assert m.run("x", ps, ["p3", "p1"]) == "x[p3][p1]"


def test_cli_run_and_list(tmp_path):
    r = subprocess.run([sys.executable, "/app/textpipe.py"], input="  hello \n world  ", capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "HELLO\nWORLD"
    r = subprocess.run([sys.executable, "/app/textpipe.py", "--list"], capture_output=True, text=True, timeout=30)
    assert r.stdout.splitlines() == ["strip 10", "upper 50"]
    d1, d2 = tmp_path / "one", tmp_path / "two"
    plugin(d1, "wrap.py", "wrap", 5, body="return options.get('l', '<') + text + options.get('r', '>')")
    plugin(d2, "rev.py", "rev", 7, ["wrap"], body="return text[::-1]")
    plugin(d2, "dup.py", "dup", 1, body="return text * 2")
    args = [sys.executable, "/app/textpipe.py", "--plugin-dir", str(d1), "--plugin-dir", str(d2)]
    r = subprocess.run(args + ["--only", "rev", "--opt", "l=[", "--opt", "r=]=x"], input="abc", capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "x=]cba["
    r = subprocess.run(args + ["--list"], capture_output=True, text=True, timeout=30)
    assert r.stdout.splitlines() == ["dup 1", "wrap 5", "rev 7"]


def test_errors(tmp_path):
    m = load()
    cases = {
        "broken": ("bad.py", "NAME = 'bad'\nimport does_not_exist_xyz\ndef transform(t, o): return t\n"),
        "noname": ("anon.py", "def transform(t, o): return t\n"),
        "notrans": ("nt.py", "NAME = 'nt'\ntransform = 5\n"),
    }
    for key, (fn, src) in cases.items():
        d = tmp_path / key
        d.mkdir()
        (d / fn).write_text(src)
        with pytest.raises(m.PluginError) as ei:
            m.load_plugins([str(d)])
        assert fn in str(ei.value)
    d1, d2 = tmp_path / "x1", tmp_path / "x2"
    plugin(d1, "a.py", "same")
    plugin(d2, "b.py", "same")
    with pytest.raises(m.PluginError) as ei:
        m.load_plugins([str(d1), str(d2)])
    assert "same" in str(ei.value) and "b.py" in str(ei.value)
    cyc = tmp_path / "cyc"
    plugin(cyc, "a.py", "a", requires=["b"])
    plugin(cyc, "b.py", "b", requires=["a"])
    plugin(cyc, "c.py", "c", requires=["ghost"])
    ps = m.load_plugins([str(cyc)])
    with pytest.raises(m.PluginError):
        m.plan(ps, ["a"])
    with pytest.raises(m.PluginError):
        m.plan(ps, ["c"])
    with pytest.raises(m.PluginError):
        m.plan(ps, ["zzz"])
    r = subprocess.run([sys.executable, "/app/textpipe.py", "--plugin-dir", str(cyc), "--list"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 3 and r.stderr.startswith("error: ")
