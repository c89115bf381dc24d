import os
import subprocess


def test_localtime_link():
    assert os.path.islink("/etc/localtime")
    assert os.path.realpath("/etc/localtime") == os.path.realpath("/usr/share/zoneinfo/America/Chicago")
    env = {k: v for k, v in os.environ.items() if k != "TZ"}
    # 2024-01-15 12:00 UTC is 06:00 CST in Chicago
    out = subprocess.run(["date", "-d", "@1705320000", "+%H:%M %Z"], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "06:00 CST"


def test_timezone_file():
    with open("/etc/timezone") as f:
        assert f.read().strip() == "America/Chicago"
