import subprocess


def build():
    subprocess.run(["rm", "-f", "/app/rev"], check=True)
    out = subprocess.run(["make", "-C", "/app"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def rev(data):
    return subprocess.run(["/app/rev"], input=data, capture_output=True, timeout=10).stdout


def test_single_line():
    build()
    assert rev(b"hello\n") == b"olleh\n"


def test_multiple_lines():
    build()
    assert rev(b"abc\nterminal\nab\n") == b"cba\nlanimret\nba\n"


def test_edge_cases():
    build()
    assert rev(b"\n") == b"\n"
    assert rev(b"x\n") == b"x\n"
    assert rev(b"no newline at end") == b"dne ta enilwen on"
