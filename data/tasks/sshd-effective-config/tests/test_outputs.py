import random
import subprocess
import sys
import tempfile

sys.path.insert(0, "/tests")
import sshd_ref  # noqa: E402


def run(path, ctx):
    r = subprocess.run([sys.executable, "/app/sshd_effective.py", path, "--user", ctx["user"], "--groups",
                        ",".join(ctx["groups"]), "--host", ctx["host"], "--addr", ctx["addr"]],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr[-1500:]
    return [l.rstrip() for l in r.stdout.splitlines() if l.strip()]


def write(text):
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        f.write(text)
    return f.name


def test_global_only():
    text = "Port 2222\nport 22\nPermitRootLogin=no\n# X11Forwarding yes\nAcceptEnv LANG\nBanner   /etc/issue   net\nAcceptEnv TZ\n"
    ctx = {"user": "u", "groups": ["g"], "host": "h", "addr": "10.0.0.1"}
    assert run(write(text), ctx) == ["acceptenv LANG", "acceptenv TZ", "banner /etc/issue net", "permitrootlogin no", "port 2222"]
    assert run("/app/sshd_config", ctx) == sshd_ref.effective(open("/app/sshd_config").read(), ctx)


def test_example_config():
    rnd = random.Random(5)
    text = open("/app/sshd_config").read()
    for _ in range(12):
        ctx = sshd_ref.random_ctx(rnd)
        assert run("/app/sshd_config", ctx) == sshd_ref.effective(text, ctx), ctx


def test_generated_configs():
    rnd = random.Random(77)
    for seed in range(6):
        text = sshd_ref.generate(seed)
        path = write(text)
        for _ in range(5):
            ctx = sshd_ref.random_ctx(rnd)
            assert run(path, ctx) == sshd_ref.effective(text, ctx), (seed, ctx)
