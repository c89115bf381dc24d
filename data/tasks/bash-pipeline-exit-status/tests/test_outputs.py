import subprocess
from pathlib import Path


def check(tmp_path, text):
    p = tmp_path / "c.conf"
    p.write_text(text)
    return subprocess.run(["bash", "/app/check.sh", str(p)], capture_output=True, text=True, timeout=30)


def test_exit_status(tmp_path):
    bad = check(tmp_path, "# comment\nPORT=80\nhost name = x\n")
    assert bad.returncode != 0
    assert "line 3: invalid" in bad.stdout
    assert "1 problem(s)" in Path("/app/check.log").read_text()
    good = check(tmp_path, "PORT=80\n\nHOST=example\n")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "0 problem(s)" in good.stdout
    assert Path("/app/check.log").read_text() == "0 problem(s)\n"
