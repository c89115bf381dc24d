import copy
import importlib.util
import json
import random
import subprocess
import sys

import pytest


def load():
    spec = importlib.util.spec_from_file_location("jsonpatch_lite", "/app/jsonpatch_lite.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_pointer():
    m = load()
    doc = {"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8}
    cases = {"": doc, "/foo": ["bar", "baz"], "/foo/0": "bar", "/": 0, "/a~1b": 1, "/c%d": 2, "/e^f": 3, "/g|h": 4,
             "/i\\j": 5, "/k\"l": 6, "/ ": 7, "/m~0n": 8}
    for ptr, want in cases.items():
        assert m.resolve(doc, ptr) == want, ptr
    for bad in ["/nope", "/foo/2", "/foo/01", "/foo/-", "/foo/x", "/foo/0/deeper"]:
        with pytest.raises(m.PatchError):
            m.resolve(doc, bad)


APPENDIX = [
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"baz": "qux", "foo": "bar"}),
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo", "foo": "bar"}),
    ({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
     [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
     {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}),
    ({"foo": ["all", "grass", "cows", "eat"]}, [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
     {"foo": ["all", "cows", "eat", "grass"]}),
    ({"baz": "qux", "foo": ["a", 2, "c"]}, [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
     {"baz": "qux", "foo": ["a", 2, "c"]}),
    ({"foo": "bar"}, [{"op": "add", "path": "/child", "value": {"grandchild": {}}}], {"foo": "bar", "child": {"grandchild": {}}}),
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}], {"foo": "bar", "baz": "qux"}),
    ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}], {"foo": ["bar", ["abc", "def"]]}),
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),
    ({"a": 1}, [{"op": "add", "path": "", "value": [1]}], [1]),
    ({"a": [1]}, [{"op": "add", "path": "/a/1", "value": 2}, {"op": "copy", "from": "/a", "path": "/b"},
                  {"op": "add", "path": "/b/0", "value": 0}], {"a": [1, 2], "b": [0, 1, 2]}),
    ({"n": 1, "o": {"x": [1, {"y": 2}]}}, [{"op": "test", "path": "/n", "value": 1.0},
                                          {"op": "test", "path": "/o", "value": {"x": [1.0, {"y": 2}]}}],
     {"n": 1, "o": {"x": [1, {"y": 2}]}}),
]


def test_rfc_appendix_examples():
    m = load()
    for doc, patch, want in APPENDIX:
        before = copy.deepcopy(doc)
        assert m.apply(doc, patch) == want, patch
        assert doc == before


def test_atomic_and_errors():
    m = load()
    doc = {"a": [1, 2, 3], "b": {"c": True}}
    bad_patches = [
        [{"op": "add", "path": "/a/1", "value": 9}, {"op": "remove", "path": "/zzz"}],
        [{"op": "replace", "path": "/missing", "value": 1}],
        [{"op": "add", "path": "/a/4", "value": 1}],
        [{"op": "add", "path": "/a/01", "value": 1}],
        [{"op": "remove", "path": "/a/3"}],
        [{"op": "move", "from": "/b", "path": "/b/c/d"}],
        [{"op": "test", "path": "/b/c", "value": 1}],
        [{"op": "test", "path": "/a", "value": [1, 2]}],
        [{"op": "add", "path": "/x"}],
        [{"op": "jump", "path": "/x"}],
        [{"path": "/x", "value": 1}],
        [{"op": "copy", "path": "/x"}],
        [{"op": "add", "path": "/missing/child", "value": 1}],
    ]
    for p in bad_patches:
        before = copy.deepcopy(doc)
        with pytest.raises(m.PatchError):
            m.apply(doc, p)
        assert doc == before
    rng = random.Random(33)
    for _ in range(50):
        arr = [rng.randint(0, 9) for _ in range(rng.randint(1, 6))]
        i = rng.randint(0, len(arr))
        assert m.apply({"v": arr}, [{"op": "add", "path": "/v/%d" % i, "value": "X"}])["v"] == arr[:i] + ["X"] + arr[i:]
        j = rng.randrange(len(arr))
        assert m.apply({"v": arr}, [{"op": "remove", "path": "/v/%d" % j}])["v"] == arr[:j] + arr[j + 1:]


def test_cli(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps({"z": [1], "y": {"k": "v"}}))
    (tmp_path / "p.json").write_text(json.dumps([{"op": "move", "from": "/y/k", "path": "/z/0"}, {"op": "add", "path": "/n", "value": None}]))
    r = subprocess.run([sys.executable, "/app/jsonpatch_lite.py", tmp_path / "d.json", tmp_path / "p.json"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == json.dumps({"n": None, "y": {}, "z": ["v", 1]}, sort_keys=True)
    (tmp_path / "p.json").write_text(json.dumps([{"op": "test", "path": "/z/0", "value": 2}]))
    r = subprocess.run([sys.executable, "/app/jsonpatch_lite.py", tmp_path / "d.json", tmp_path / "p.json"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and r.stderr.startswith("error: ") and r.stdout == ""
