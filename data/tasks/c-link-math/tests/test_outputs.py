import math
import subprocess


def expected(xs):
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / n)
    g = math.exp(sum(math.log(abs(x)) for x in xs) / n)
    return f"n={n} mean={mean:.4f} sd={sd:.4f} gmean={g:.4f}"


def test_stats_binary_output():
    with open("/app/stats", "rb") as f:
        assert f.read(4) == b"\x7fELF", "/app/stats is not a compiled ELF executable"
    for xs in ([3.0, 7.5, 12.25], [2.0, 8.0], [1.5, 2.5, 3.5, 10.0, 0.25], [42.0]):
        r = subprocess.run(["/app/stats", *map(str, xs)], capture_output=True, text=True, timeout=10)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == expected(xs)
