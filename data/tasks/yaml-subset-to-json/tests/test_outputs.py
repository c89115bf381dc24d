import json
import subprocess
import tempfile


def y2j(text=None, path=None):
    if path is None:
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(text)
        path = f.name
    r = subprocess.run(["/app/yaml2json", path], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_example_config():
    assert y2j(path="/app/config.yaml") == {
        "name": "billing", "version": 3, "ratio": 0.75, "enabled": True, "owner": None, "tags": ["api", "v2", 10],
        "server": {"host": "0.0.0.0", "port": 8080, "paths": ["/health", "/api # not a comment"]},
        "users": [{"name": "ann", "roles": ["admin"]}, {"name": "o'brien", "roles": []}],
        "motd": "line1\nline2", "empty": None}
    # the example with a changed and an added key: the output must follow the file, not a fixed text
    got = y2j(open("/app/config.yaml").read().replace("port: 8080", "port: 9090") + "extra:\n  - 1\n  - 'x'\n")
    assert got["server"]["port"] == 9090 and got["extra"] == [1, "x"]
    assert got["empty"] is None and got["users"][1]["name"] == "o'brien"


NESTED = """---
# top comment
a:
    b:
        c: 1
        d:
        - x
        - y: 2
          z: [3, "4, five"]
        -
          deep: true
    e: back   # trailing
list_at_key_column:
- 1
-
  - inner1
  - inner2
- k: v
  list:
    - p
    - q
last: end
"""


def test_hidden_nesting():
    assert y2j(NESTED) == {
        "a": {"b": {"c": 1, "d": ["x", {"y": 2, "z": [3, "4, five"]}, {"deep": True}]}, "e": "back"},
        "list_at_key_column": [1, ["inner1", "inner2"], {"k": "v", "list": ["p", "q"]}],
        "last": "end"}
    assert y2j("- a\n- b: 1\n  c:\n    - 2\n- c\n") == ["a", {"b": 1, "c": [2]}, "c"]
    assert y2j("k: 1\nk: 2\nm:\n  n: 3\n  n: 4\n") == {"k": 2, "m": {"n": 4}}


SCALARS = r"""
i: -42
f: -3.25
s1: hello world
s2: "quoted: # not comment"
s3: 'it''s'
s4: "tab\there \"q\" back\\slash"
n1: null
n2: ~
b1: false
v: 1.2.3
url: http://example.com/a#frag
str_num: "12"
colon_in: a: b
spaces:    padded value    # c
e: []
f2: ['a,b', c ,"d"]
"""


def test_hidden_scalars():
    assert y2j(SCALARS) == {
        "i": -42, "f": -3.25, "s1": "hello world", "s2": "quoted: # not comment", "s3": "it's",
        "s4": 'tab\there "q" back\\slash', "n1": None, "n2": None, "b1": False, "v": "1.2.3",
        "url": "http://example.com/a#frag", "str_num": "12", "colon_in": "a: b", "spaces": "padded value",
        "e": [], "f2": ["a,b", "c", "d"]}
