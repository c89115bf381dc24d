import os
import random
import subprocess

SRC = "/app/uniqsort.c"


def build(out, extra=()):
    r = subprocess.run(["gcc", "-O1", "-g", *extra, "-o", out, SRC], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def run(binary, data, env=None):
    return subprocess.run([binary], input=data, capture_output=True, text=True, timeout=30, env=env)


def expected(nums):
    return "".join(f"{n}\n" for n in sorted(set(nums)))


def test_sorted_output():
    r = subprocess.run(["make", "-C", "/app", "-B"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert run("/app/uniqsort", "5 3 9 1").stdout == "1\n3\n5\n9\n"
    assert run("/app/uniqsort", "-4 10 -20 0 7").stdout == "-20\n-4\n0\n7\n10\n"
    assert run("/app/uniqsort", "").stdout == ""


def test_duplicates_removed():
    b = build("/tmp/uniqsort_plain")
    assert run(b, "2 2 2 1 1 3").stdout == "1\n2\n3\n"
    rng = random.Random(5)
    nums = [rng.randint(-50, 50) for _ in range(2000)]
    assert run(b, " ".join(map(str, nums))).stdout == expected(nums)


def test_asan_clean():
    b = build("/tmp/uniqsort_asan", ["-fsanitize=address", "-fno-omit-frame-pointer"])
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:exitcode=99")
    rng = random.Random(9)
    for data in ("7 7 7 7", "3 1 2 3 1 2", " ".join(str(rng.randint(0, 20)) for _ in range(500))):
        r = run(b, data, env)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "AddressSanitizer" not in r.stderr
        assert r.stdout == expected(map(int, data.split()))
