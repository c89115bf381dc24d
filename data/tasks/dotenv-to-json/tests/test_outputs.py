import json
import subprocess
import tempfile


def run_text(text):
    with tempfile.NamedTemporaryFile("w", suffix=".env", delete=False) as f:
        f.write(text)
    return subprocess.run(["/app/env2json", f.name], capture_output=True, text=True, timeout=20)


def parse(text):
    r = run_text(text)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_sample_file():
    r = subprocess.run(["/app/env2json", "/app/sample.env"], capture_output=True, text=True, timeout=20)
    assert json.loads(r.stdout) == {
        "DB_HOST": "localhost", "DB_PORT": "5432", "DB_URL": "postgres://localhost:5432/app",
        "GREETING": "Hello $USER, no expansion here", "MOTD": 'line1\nline2\t"quoted"', "EMPTY": "",
        "PLAIN": "some value", "HASH": "abc#def"}
    # the sample with two more lines: the output must follow the file, not a fixed text
    got = parse(open("/app/sample.env").read() + "DB_HOST=db.internal\nURL2=${DB_HOST}:$DB_PORT\n")
    assert got["DB_HOST"] == "db.internal" and got["URL2"] == "db.internal:5432"
    assert got["DB_URL"] == "postgres://localhost:5432/app" and got["PLAIN"] == "some value"


HIDDEN = r"""
   # indented comment
export   A=1
B=${A}2$A
C = "pre ${B} post \$B \\ end" # comment
D='single # not a comment'  # real comment
A=changed
E=$A-$UNDEFINED-${A}x$
F="has # inside"
G="a=b=c"
H=x y z
I="multi\nline"
_under_9=ok
J=$_under_9$HOME
K=price: 5$ and $ sign
"""


def test_hidden_quoting_and_expansion():
    assert parse(HIDDEN) == {
        "A": "changed", "B": "121", "C": "pre 121 post $B \\ end", "D": "single # not a comment",
        "E": "changed--changedx$", "F": "has # inside", "G": "a=b=c", "H": "x y z", "I": "multi\nline",
        "_under_9": "ok", "J": "ok", "K": "price: 5$ and $ sign"}
    assert parse("X=1\nX=2\nY=\"$X\"\n") == {"X": "2", "Y": "2"}


def test_errors():
    for text, line in [("A=1\n9BAD=2\n", 2), ("A=1\n\nNOEQUALS\n", 3), ("Q='unterminated\n", 1),
                       ('R="open\n', 1), ("S='a' trailing\n", 1), ("my-var=1\n", 1), ('T="x"y\n', 1)]:
        r = run_text(text)
        assert r.returncode == 1 and r.stdout == "", text
        assert r.stderr.strip() == f"error: line {line}", (text, r.stderr)
    assert parse("OK='a'   # c\n") == {"OK": "a"}
