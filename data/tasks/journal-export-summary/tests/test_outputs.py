import json
import subprocess
import sys
import tempfile

sys.path.insert(0, "/tests")
import journal_gen  # noqa: E402

SEEDS = [7, 99, 123456]


def run(seed, n=150):
    data = journal_gen.generate(seed, n)
    with tempfile.NamedTemporaryFile(suffix=".export", delete=False) as f:
        f.write(data)
    r = subprocess.run([sys.executable, "/app/journal_summary.py", f.name], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout), journal_gen.summary(data)


def test_counts():
    for s in SEEDS:
        got, exp = run(s)
        assert (got["entries"], got["boots"]) == (exp["entries"], exp["boots"])


def test_errors_by_unit():
    for s in SEEDS:
        got, exp = run(s)
        assert got["errors_by_unit"] == exp["errors_by_unit"]


def test_first_error():
    for s in SEEDS:
        got, exp = run(s)
        assert got["first_error"] == exp["first_error"]
    got, exp = run(5, 400)
    assert got == exp
