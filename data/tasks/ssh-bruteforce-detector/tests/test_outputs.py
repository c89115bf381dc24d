import json
import subprocess
import sys
import tempfile

sys.path.insert(0, "/tests")
import brute_ref  # noqa: E402

SEEDS = [1, 2, 5, 8, 13]


def results():
    for s in SEEDS:
        text = brute_ref.generate(s)
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write(text)
        r = subprocess.run([sys.executable, "/app/bruteforce.py", f.name], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr[-1500:]
        yield json.loads(r.stdout), brute_ref.analyse(text)
    yield json.loads(subprocess.run([sys.executable, "/app/bruteforce.py", "/app/auth.log"], capture_output=True,
                                    text=True, timeout=30).stdout), brute_ref.analyse(open("/app/auth.log").read())


def test_flagged_ips():
    for got, exp in results():
        assert sorted(got) == sorted(exp)
        assert {ip: v["flagged_at"] for ip, v in got.items()} == {ip: v["flagged_at"] for ip, v in exp.items()}


def test_counts_and_users():
    for got, exp in results():
        assert {ip: (v["failures"], v["users"]) for ip, v in got.items()} == \
               {ip: (v["failures"], v["users"]) for ip, v in exp.items()}


def test_compromised():
    for got, exp in results():
        assert {ip: v["compromised_users"] for ip, v in got.items()} == {ip: v["compromised_users"] for ip, v in exp.items()}
        assert got == exp
