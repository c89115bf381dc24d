import subprocess
import tempfile


def get(path, sec, key):
    r = subprocess.run(["/app/iniget", path, sec, key], capture_output=True, text=True, timeout=20)
    return r.returncode, r.stdout


def write(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False)
    f.write(text)
    f.close()
    return f.name


def test_example_file():
    assert get("/app/app.ini", "server", "port") == (0, "9090\n")
    assert get("/app/app.ini", "server", "host") == (0, "0.0.0.0\n")
    assert get("/app/app.ini", "server", "motd") == (0, "  Welcome = friends  \n")
    assert get("/app/app.ini", "", "name") == (0, "demo app\n")
    assert get("/app/app.ini", "database", "url") == (0, "sqlite:///data.db\n")
    # the example with one more section: the answers must follow the file, not a fixed table
    p = write(open("/app/app.ini").read() + "\n[server]\nport = 7070\n[database]\npool=9\n")
    assert get(p, "server", "port") == (0, "7070\n")
    assert get(p, "database", "pool") == (0, "9\n")
    assert get(p, "server", "host") == (0, "0.0.0.0\n")


HIDDEN = """
top=level=value
  ; comment = not a key
#also = comment
[ paths ]
root   =   /srv/www  
Root = /other
empty =
quoted = "a ; b # c"
single = "
[Mixed Case]
Key = v1
key = v2
[paths]
logs = "/var/log/app"
root = /srv/final
"""


def test_hidden_files():
    p = write(HIDDEN)
    assert get(p, "", "top") == (0, "level=value\n")
    assert get(p, "paths", "root") == (0, "/srv/final\n")
    assert get(p, "paths", "Root") == (0, "/other\n")
    assert get(p, "paths", "empty") == (0, "\n")
    assert get(p, "paths", "quoted") == (0, "a ; b # c\n")
    assert get(p, "paths", "single") == (0, '"\n')
    assert get(p, "paths", "logs") == (0, "/var/log/app\n")
    assert get(p, "Mixed Case", "Key") == (0, "v1\n")
    assert get(p, "Mixed Case", "key") == (0, "v2\n")
    q = write("[a]\r\nx = 1\r\n[b]\r\ny = \"two\"\r\n")
    assert get(q, "b", "y") == (0, "two\n")
    assert get(q, "a", "x") == (0, "1\n")


def test_missing_keys():
    p = write(HIDDEN)
    for sec, key in [("paths", "nope"), ("nosuch", "root"), ("", "root"), ("mixed case", "Key"),
                     ("paths", "comment"), ("", "#also")]:
        assert get(p, sec, key) == (1, ""), (sec, key)
    assert get("/app/app.ini", "server", "port") == (0, "9090\n")
