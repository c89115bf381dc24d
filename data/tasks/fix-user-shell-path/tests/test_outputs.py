import subprocess


def login(cmd):
    r = subprocess.run(["su", "-", "dev", "-c", cmd], capture_output=True, text=True, timeout=20)
    return r.stdout.strip()


def interactive(cmd):
    r = subprocess.run(["runuser", "-u", "dev", "--", "env", "-i", "HOME=/home/dev", "USER=dev",
                        "PATH=/usr/local/bin:/usr/bin:/bin", "TERM=dumb", "bash", "-ic", cmd],
                       capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL, cwd="/tmp")
    return r.stdout.strip()


def test_login_path():
    assert login("mytool") == "mytool 2.3"
    path = login('echo "$PATH"').splitlines()[-1].split(":")
    for d in ["/opt/tools/bin", "/usr/local/bin", "/usr/bin", "/bin"]:
        assert d in path, (d, path)
    assert path.index("/opt/tools/bin") < path.index("/usr/local/bin")
    assert len(path) == len(set(path)), path
    assert login("command -v ls && echo found").splitlines()[-1] == "found"


def test_interactive_shell():
    out = interactive("mytool; alias ll; alias la; ls -d /etc")
    lines = out.splitlines()
    assert "mytool 2.3" in lines
    assert "alias ll='ls -alF'" in lines
    assert "alias la='ls -A'" in lines
    assert "/etc" in lines


def test_login_keeps_editor():
    assert login('echo "E=$EDITOR"').splitlines()[-1] == "E=nano"
    assert login("mytool") == "mytool 2.3"
