import os
import stat
import subprocess
import tempfile

ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "TERM": "dumb"}


def test_root_login_umask():
    for shell in ["bash", "sh"]:
        out = subprocess.run([shell, "-lc", "umask"], env=ENV, capture_output=True, text=True, cwd="/")
        assert out.stdout.strip().splitlines()[-1] == "0027", (shell, out.stdout)
    d = tempfile.mkdtemp()
    subprocess.run(["bash", "-lc", f"touch {d}/f && mkdir {d}/sub"], env=ENV, check=True, cwd="/")
    assert stat.S_IMODE(os.stat(f"{d}/f").st_mode) == 0o640
    assert stat.S_IMODE(os.stat(f"{d}/sub").st_mode) == 0o750


def test_user_login_umask():
    subprocess.run(["useradd", "-m", "-s", "/bin/bash", "umasktest"], capture_output=True)
    out = subprocess.run(["su", "-", "umasktest", "-c", "umask"], env=ENV, capture_output=True, text=True, cwd="/")
    assert out.stdout.strip().splitlines()[-1] == "0027", out.stdout + out.stderr
