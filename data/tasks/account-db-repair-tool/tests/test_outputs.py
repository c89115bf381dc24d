import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, "/tests")
import acct_ref  # noqa: E402


def fixed(seed=None, src=None):
    root = tempfile.mkdtemp()
    if src:
        shutil.copytree(src, root, dirs_exist_ok=True)
    else:
        acct_ref.generate(root, seed)
    exp = acct_ref.repair(root)
    r = subprocess.run([sys.executable, "/app/acctfix.py", root], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr[-1500:]
    got = {n: open(f"{root}/etc/{n}").read() for n in exp}
    return got, {n: "".join(":".join(x) + "\n" for x in rows) for n, rows in exp.items()}


def cases():
    yield fixed(src="/app/sample-rootfs")
    for s in [11, 42, 777, 2024]:
        yield fixed(seed=s)


def test_passwd_and_shadow():
    for got, exp in cases():
        assert got["passwd"] == exp["passwd"]
        assert got["shadow"] == exp["shadow"]


def test_group():
    for got, exp in cases():
        assert got["group"] == exp["group"]


def test_gshadow():
    for got, exp in cases():
        assert got["gshadow"] == exp["gshadow"]
