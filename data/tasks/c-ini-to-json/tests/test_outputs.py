import json
import os
import subprocess
import tempfile

import pytest

# The program must be C (no wrapper around a script): it is tested where `python3` and `perl` are not available.
HIDDEN_INTERPRETERS = ["/usr/bin/python3", "/usr/bin/perl", "/usr/bin/perl5.36.0"]


@pytest.fixture(scope="module", autouse=True)
def no_interpreters():
    moved = []
    try:
        for p in HIDDEN_INTERPRETERS:
            if os.path.lexists(p):
                os.rename(p, p + ".hidden-by-tests")
                moved.append(p)
        yield
    finally:
        for p in moved:
            os.rename(p + ".hidden-by-tests", p)


_built = []


def conv(data: bytes):
    if not _built:
        r = subprocess.run(["make", "-C", "/app/ini2json"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        with open("/app/ini2json/ini2json", "rb") as f:
            assert f.read(4) == b"\x7fELF", "ini2json must be a compiled binary"
        _built.append(1)
    with tempfile.NamedTemporaryFile(suffix=".ini", delete=False) as f:
        f.write(data)
    return subprocess.run(["/app/ini2json/ini2json", f.name], capture_output=True, timeout=20)


def ok(text):
    r = conv(text.encode() if isinstance(text, str) else text)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.decode("utf-8"))


def test_sections_and_keys():
    text = """
; comment
name = top level
  # indented comment
[server]
host = 0.0.0.0
port=8080
[ db.primary ]
url = postgres://x?a=b
[db]
pool = 5
[db.primary]
url = second wins
user.name = dotted key
[server]
extra = merged
empty =
"""
    assert ok(text) == {"name": "top level", "server": {"host": "0.0.0.0", "port": "8080", "extra": "merged", "empty": ""},
                        "db": {"primary": {"url": "second wins", "user.name": "dotted key"}, "pool": "5"}}
    assert ok("[a.b.c]\r\nk = v\r\n[a]\r\nk = w\r\n") == {"a": {"b": {"c": {"k": "v"}}, "k": "w"}}
    assert ok("") == {}


def test_escaping():
    text = ('q = "say \\"hi\\"\\tnow\\\\"\n'
            'nl = "a\\nb"\n'
            'raw = C:\\path\\"x"\n'
            'ctl = a\x01b\x1fc\n'
            'utf = grüße ✓\n'
            'quoted_eq = "a = b"\n')
    assert ok(text) == {"q": 'say "hi"\tnow\\', "nl": "a\nb", "raw": 'C:\\path\\"x"', "ctl": "a\x01b\x1fc",
                        "utf": "grüße ✓", "quoted_eq": "a = b"}
    r = conv(b"k = v\x02\n")
    assert b"\\u0002" in r.stdout.lower()


def test_errors():
    cases = [("a = 1\nno equals here\n", 2), ("[bad name]\n", 1), ("[a..b]\n", 1), ("[]\n", 1), ("k = 1\n[sec\n", 2),
             ('x = "unterminated\n', 1), ('x = "bad \\q escape"\n', 1), ("= value\n", 1), ("bad key = 1\n", 1),
             ("[a]\nb = 1\n[a.b]\n", 3), ("[a.b]\n[a]\nb = 2\n", 3), ("ok = 1\n\n\n[x]\ny\n", 5)]
    for text, line in cases:
        r = conv(text.encode())
        assert r.returncode == 1 and r.stdout == b"", text
        assert r.stderr.decode().strip() == f"error: line {line}", (text, r.stderr)
    assert ok("[x]\ny = 1\n") == {"x": {"y": "1"}}
