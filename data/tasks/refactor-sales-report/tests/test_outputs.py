import ast
import importlib
import os
import random
import subprocess
import sys

sys.path.insert(0, "/app")
LEGACY = os.path.join(os.path.dirname(__file__), "legacy_reference.py")
REGIONS = ["north", "SOUTH", " east", "West ", "north-east", "south"]
PRODUCTS = ["Widget", "gadget ", "GIZMO", "doohickey", "widget"]


def gen_lines(rng, n=60):
    lines = ["# header"]
    for _ in range(n):
        r = rng.random()
        if r < 0.06:
            lines.append("")
        elif r < 0.12:
            lines.append("broken;line")
        elif r < 0.16:
            lines.append("north;widget;many;1.0")
        elif r < 0.2:
            lines.append("south;gizmo;%d;2.0" % rng.choice([0, -3]))
        else:
            lines.append("%s;%s;%d;%s" % (rng.choice(REGIONS), rng.choice(PRODUCTS), rng.randint(1, 20),
                                          rng.choice(["1.05", "2.5", "0.335", "10", "3.999", "7.125"])))
    return [l + "\n" for l in lines]


def legacy(path, *args):
    return subprocess.run([sys.executable, LEGACY, str(path), *args], capture_output=True, text=True, timeout=30)


def fresh(name):
    for k in list(sys.modules):
        if k == "salesreport" or k.startswith("salesreport."):
            del sys.modules[k]
    return importlib.import_module(name)


def test_parse_lines():
    parsing = fresh("salesreport.parsing")
    recs, bad = parsing.parse_lines(["# c\n", "\n", " north ;Widget ;3;2.5\n", "a;b;c\n", "x;y;0;1\n", "s;t;2;z\n", "east;GIZMO;1;4\n"])
    assert recs == [("North", "widget", 3, 2.5), ("East", "gizmo", 1, 4.0)] and bad == 3
    rng = random.Random(70)
    lines = gen_lines(rng)
    recs, bad = parsing.parse_lines(lines)
    assert bad == sum(1 for l in lines if l.strip() and not l.startswith("#") and
                      (len(l.split(";")) != 4 or "many" in l or ";0;" in l or ";-3;" in l))
    assert all(isinstance(r[2], int) and isinstance(r[3], float) for r in recs)


def ref_summarize(records, mn=0.0):
    data = {}
    for r, prod, q, pr in records:
        e = data.setdefault(r, {}).setdefault(prod, [0, 0.0])
        e[0] += q
        e[1] += q * pr
    rows = []
    for r, prods in data.items():
        t, n = 0.0, 0
        for prod in prods:
            t += prods[prod][1]
            n += prods[prod][0]
        best = sorted(prods.items(), key=lambda kv: (-kv[1][1], kv[0]))[0][0]
        if t >= mn:
            rows.append((r, n, round(t, 2), best))
    rows.sort(key=lambda x: (-x[2], x[0]))
    return rows


def test_summarize():
    parsing, summary = fresh("salesreport.parsing"), importlib.import_module("salesreport.summary")
    rng = random.Random(71)
    for _ in range(20):
        recs, _ = parsing.parse_lines(gen_lines(rng, 80))
        for mn in [0.0, 25.0, rng.uniform(0, 200)]:
            assert [tuple(r) for r in summary.summarize(recs, mn)] == ref_summarize(recs, mn)
    assert [tuple(r) for r in summary.summarize([("A", "x", 1, 2.0), ("B", "y", 2, 1.0), ("A", "z", 1, 3.0)])] == \
        [("A", 2, 5.0, "z"), ("B", 2, 2.0, "y")]


def test_render(tmp_path):
    render = fresh("salesreport.render")
    rng = random.Random(72)
    for k in range(5):
        p = tmp_path / ("r%d.txt" % k)
        p.write_text("".join(gen_lines(rng)))
        recs = __import__("salesreport.parsing", fromlist=["x"]).parse_lines(open(p))[0]
        rows = __import__("salesreport.summary", fromlist=["x"]).summarize(recs)
        assert render.render_text(rows) == legacy(p).stdout
        assert render.render_csv(rows) == legacy(p, "--format", "csv").stdout
    assert render.render_csv([]) == "region,units,total,top_product\n"


def test_cli_matches_legacy(tmp_path):
    rng = random.Random(73)
    for k in range(6):
        p = tmp_path / ("c%d.txt" % k)
        p.write_text("".join(gen_lines(rng, rng.randint(0, 70))))
        args = rng.choice([[], ["--format", "csv"], ["--min-total", str(rng.randint(0, 150))],
                           ["--format", "csv", "--min-total", "40.5"]])
        want = legacy(p, *args)
        got = subprocess.run([sys.executable, "/app/sales_report.py", str(p), *args], capture_output=True, text=True, timeout=30, cwd="/tmp")
        assert got.returncode == 0, got.stderr
        assert (got.stdout, got.stderr) == (want.stdout, want.stderr)
    cli = fresh("salesreport.cli")
    assert cli.main([str(p)] + args) == 0


def test_wrapper_is_thin():
    src = open("/app/sales_report.py").read()
    tree = ast.parse(src)
    assert "salesreport" in src and "main" in src
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp))]
    assert loops == [] and "ljust" not in src and "split(" not in src
    assert os.path.isfile("/app/salesreport/__init__.py")
    r = subprocess.run([sys.executable, "/app/sales_report.py", "/app/sales.txt"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout == legacy("/app/sales.txt").stdout
    assert r.stderr == "skipped 1 bad lines\n"
