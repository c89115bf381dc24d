import subprocess


def build():
    r = subprocess.run(["make", "-B", "-C", "/app"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def tally(text):
    r = subprocess.run(["/app/tally"], input=text, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0
    return r.stdout.strip()


def expect(vals):
    s = sum(vals)
    return f"count={len(vals)} sum={s} max={max(vals)} mean={s / len(vals):.2f}"


def test_big_values():
    build()
    vals = [4000000000, 3999999999, 17, 2147483648, 0] * 200000
    assert tally("".join(f"{v}\n" for v in vals)) == expect(vals)
    vals = [3000000000, 1]
    assert tally("3000000000\n1\n") == expect(vals)


def test_mean_and_empty():
    build()
    assert tally("1\n2\n") == "count=2 sum=3 max=2 mean=1.50"
    assert tally("10\n0\n0\n") == "count=3 sum=10 max=10 mean=3.33"
    assert tally("") == "count=0 sum=0 max=0 mean=0.00"
    vals = [7, 8, 8]
    assert tally("7\n8\n8\n") == expect(vals)
