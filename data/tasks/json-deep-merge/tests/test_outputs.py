import json
import subprocess
import tempfile


def files(*docs):
    paths = []
    for d in docs:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(d if isinstance(d, str) else json.dumps(d))
        paths.append(f.name)
    return paths


def jmerge(*paths):
    return subprocess.run(["/app/jmerge", *paths], capture_output=True, text=True, timeout=20)


def merged(*docs):
    r = jmerge(*files(*docs))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_example():
    r = jmerge("/app/base.json", "/app/prod.json")
    assert json.loads(r.stdout) == {"server": {"host": "0.0.0.0", "port": 443,
                                               "tls": {"enabled": True, "cert": "/etc/cert.pem"}}, "features": ["a"]}
    # the example files in the other order: the output must follow the inputs, not a fixed text
    r = jmerge("/app/prod.json", "/app/base.json")
    assert json.loads(r.stdout) == {"server": {"host": "0.0.0.0", "port": 8080, "tls": {"enabled": False, "cert": "/etc/cert.pem"}},
                                    "features": ["a", "b"], "debug": True}


def test_hidden_merges():
    a = {"a": {"b": {"c": 1, "d": [1, 2]}, "e": "x"}, "f": 1.5, "g": [{"h": 1}], "keep": {"deep": {"er": True}}}
    b = {"a": {"b": {"d": [3], "n": None}, "e": {"now": "object"}}, "f": None, "g": [{"i": 2}, None], "new": {"k": [None]}}
    c = {"a": {"b": None}, "keep": {"deep": {"er": False, "est": 0}}, "z": "last"}
    assert merged(a, b) == {"a": {"b": {"c": 1, "d": [3]}, "e": {"now": "object"}}, "g": [{"i": 2}, None],
                            "keep": {"deep": {"er": True}}, "new": {"k": [None]}}
    assert merged(a, b, c) == {"a": {"e": {"now": "object"}}, "g": [{"i": 2}, None],
                               "keep": {"deep": {"er": False, "est": 0}}, "new": {"k": [None]}, "z": "last"}
    assert merged({"x": {"y": 1}}, {"x": 5}, {"x": {"q": "r"}}) == {"x": {"q": "r"}}
    assert merged({"u": "ü"}, {}) == {"u": "ü"}


def test_invalid_files():
    good, bad_json, top_array = files({"a": 1}, "{not json", [1, 2])
    for args in ([good, bad_json], [top_array, good], [good, "/nonexistent.json"]):
        r = jmerge(*args)
        assert r.returncode == 1 and r.stdout == "" and r.stderr.strip(), args
    assert merged({"a": 1}, {"b": 2}) == {"a": 1, "b": 2}
