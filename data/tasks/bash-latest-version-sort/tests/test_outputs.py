import subprocess


def latest(tmp_path, lines):
    p = tmp_path / "t.txt"
    p.write_text("\n".join(lines) + "\n")
    r = subprocess.run(["bash", "/app/latest.sh", str(p)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_latest_tags(tmp_path):
    assert latest(tmp_path, ["v1.2.0", "v1.9.3", "v1.10.0", "nightly", "v1.10.0-rc1"]) == "v1.10.0"
    assert latest(tmp_path, ["v9.0.0", "v10.0.0", "v2.99.99"]) == "v10.0.0"
    assert latest(tmp_path, ["v3.4.9", "v3.4.10", "v3.4.2", "release-9"]) == "v3.4.10"
    assert latest(tmp_path, ["v0.1.1", "v11.1.1", "v2.20.0", "v11.0.19", "v12.0.0-beta"]) == "v11.1.1"
