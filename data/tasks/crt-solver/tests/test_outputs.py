import math
import random
import subprocess


def solve(lines):
    p = subprocess.run(["python3", "/app/crt.py"], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def check(system, out):
    """system: list of (a, m). Verify a printed answer independently."""
    lcm = 1
    for _, m in system:
        lcm = lcm * m // math.gcd(lcm, m)
    x, M = map(int, out.split())
    assert M == lcm
    assert 0 <= x < M
    assert all((x - a) % m == 0 for a, m in system)


def consistent(system):
    """Brute-force-free consistency test: pairwise gcd condition (sufficient and necessary)."""
    return all((a1 - a2) % math.gcd(m1, m2) == 0 for i, (a1, m1) in enumerate(system) for a2, m2 in system[i + 1:])


def test_examples():
    assert solve(["2 3", "3 5", "2 7"]) == "23 105"
    assert solve(["1 4", "2 6"]) == "none"
    assert solve(["3 4", "5 6"]) == "11 12"
    # small cases beyond the instruction's examples
    assert solve(["1 2", "2 3", "3 5"]) == "23 30"
    assert solve(["7 12", "3 8"]) == "19 24"
    assert solve(["-1 10"]) == "9 10"
    assert solve(["0 5", "", "10 3"]) == "10 15"
    assert solve(["1 6", "2 4"]) == "none"


def test_random_coprime():
    r = random.Random(31)
    primes = [1000000007, 998244353, 10**9 + 9, 2**61 - 1, 170141183460469231731687303715884105727, 7, 11]
    for _ in range(10):
        ps = r.sample(primes, r.randint(2, 5))
        x = r.randrange(math.prod(ps))
        system = [(x + r.randint(-3, 3) * p if r.random() < 0.5 else x % p, p) for p in ps]
        out = solve([f"{a} {m}" for a, m in system])
        check(system, out)
        assert int(out.split()[0]) == x % math.prod(ps)


def test_non_coprime_and_none():
    r = random.Random(77)
    seen_none = seen_ok = 0
    for _ in range(30):
        k = r.randint(2, 5)
        mods = [r.choice([2, 3, 4, 6, 8, 9, 10, 12, 15, 18, 20, 30, 10**20, 6 * 10**18]) * r.randint(1, 5) for _ in range(k)]
        if r.random() < 0.5:
            x = r.randrange(10**25)
            system = [(x % m - r.randint(0, 2) * m, m) for m in mods]
        else:
            system = [(r.randint(-50, 10**21), m) for m in mods]
        out = solve([f"{a} {m}" for a, m in system])
        if consistent(system):
            check(system, out)
            seen_ok += 1
        else:
            assert out == "none", (system, out)
            seen_none += 1
    assert seen_none >= 3 and seen_ok >= 3
    assert solve(["5 1", "-1 7"]) == "6 7"
