import os
import subprocess

SECRET = "Sup3rS3cret"


def run(*args):
    return subprocess.run(["/app/lookup.sh", *args], capture_output=True, text=True, timeout=10, cwd="/tmp")


def check_normal_behaviour():
    # a guard, not a scored test: every scored test calls it, so an empty or destructive attempt scores 0
    r = run("alice")
    assert (r.returncode, r.stdout) == (0, "alice:alice@example.com:admin\n")
    assert run("carol_9").stdout == "carol_9:carol@example.com:support\n"
    assert run("dev-ops").stdout == "dev-ops:ops@example.com:service\n"
    r = run("mallory")
    assert (r.returncode, r.stdout) == (1, "")
    r = run("--report", "weekly")
    assert (r.returncode, r.stdout) == (0, "tickets closed this week: 42\n")
    assert run("--report", "sla_2024-q1").stdout == "uptime: 99.95%\n"
    assert run("--report", "missing").returncode == 1


def test_command_injection_blocked():
    check_normal_behaviour()
    payloads = [
        "x'; touch /tmp/pwned1; echo '",
        "$(touch /tmp/pwned2)",
        "`touch /tmp/pwned3`",
        "a' /app/data/secret.txt '",
        "alice:' /app/data/secret.txt; touch /tmp/pwned4; echo '",
    ]
    for i, p in enumerate(payloads):
        r = run(p)
        assert SECRET not in r.stdout + r.stderr, p
        assert r.stdout == "", p
    r = run("--report", "weekly.txt; touch /tmp/pwned5; echo x")
    assert SECRET not in r.stdout
    r = run("--report", "$(touch /tmp/pwned6)")
    for i in range(1, 7):
        assert not os.path.exists(f"/tmp/pwned{i}"), f"payload {i} executed"


def test_path_traversal_blocked():
    check_normal_behaviour()
    for name in ("../data/secret", "../../app/data/secret", "/app/data/secret", "..%2fdata/secret"):
        r = run("--report", name)
        assert SECRET not in r.stdout + r.stderr, name
        assert r.returncode == 2, name


def test_invalid_input_exit_code():
    check_normal_behaviour()
    for args in (["Alice"], ["bob;id"], ["a b"], [""], ["../x"], ["--report", "week ly"], ["--report", ""]):
        r = run(*args)
        assert r.returncode == 2, args
        assert r.stdout == "", args
        assert r.stderr.strip() != "", args
