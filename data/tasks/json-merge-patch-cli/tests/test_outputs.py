import copy
import importlib.util
import json
import random
import subprocess
import sys


def load():
    spec = importlib.util.spec_from_file_location("mergepatch", "/app/mergepatch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


RFC = [({"a": "b"}, {"a": "c"}, {"a": "c"}), ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
       ({"a": "b"}, {"a": None}, {}), ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
       ({"a": ["b"]}, {"a": "c"}, {"a": "c"}), ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
       ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
       ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}), (["a", "b"], ["c", "d"], ["c", "d"]),
       ({"a": "b"}, ["c"], ["c"]), ({"a": "foo"}, None, None), ({"a": "foo"}, "bar", "bar"),
       ({"e": None}, {"a": 1}, {"e": None, "a": 1}), ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
       ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}})]


def test_apply_rfc_examples():
    m = load()
    for target, patch, want in RFC:
        t0, p0 = copy.deepcopy(target), copy.deepcopy(patch)
        assert m.apply_patch(target, patch) == want, (target, patch)
        assert target == t0 and patch == p0


def rand_obj(rng, depth=0):
    d = {}
    for _ in range(rng.randint(0, 4)):
        k = rng.choice("abcdef")
        r = rng.random()
        if depth < 3 and r < 0.35:
            d[k] = rand_obj(rng, depth + 1)
        else:
            d[k] = rng.choice([1, 2, "x", "y", 7.5, [1, 2], [], "w"])
    return d


def mutate(rng, obj):
    o = copy.deepcopy(obj)
    for _ in range(rng.randint(0, 4)):
        k = rng.choice("abcdefg")
        r = rng.random()
        if r < 0.3:
            o.pop(k, None)
        elif r < 0.6 and isinstance(o.get(k), dict):
            o[k] = mutate(rng, o[k])
        else:
            o[k] = rng.choice([3, "z", "t", [3], {"n": 1}])
    return o


def minimal(p, s, t):
    if not isinstance(p, dict) or not isinstance(s, dict) or not isinstance(t, dict):
        return p == t
    for k, v in p.items():
        if k in s and k in t and s[k] == t[k] and type(s[k]) is type(t[k]):
            return False
        if isinstance(v, dict) and isinstance(s.get(k), dict) and isinstance(t.get(k), dict):
            if not minimal(v, s[k], t[k]):
                return False
    return True


def test_make_patch_minimal_round_trip():
    m = load()
    rng = random.Random(21)
    for _ in range(300):
        s = rand_obj(rng)
        t = mutate(rng, s)
        p = m.make_patch(s, t)
        assert m.apply_patch(s, p) == t
        assert minimal(p, s, t), (s, t, p)
    assert m.make_patch({"a": 1, "b": {"c": 2, "d": 3}}, {"a": 1, "b": {"c": 2}}) == {"b": {"d": None}}
    assert m.make_patch({"a": 1}, {"a": 1}) == {}
    assert m.make_patch([1], {"a": 1}) == {"a": 1}


def test_cli(tmp_path):
    rng = random.Random(22)
    s = rand_obj(rng)
    s["keep"] = {"deep": [1, 2]}
    t = mutate(rng, s)
    t["new"] = {"x": "y"}
    (tmp_path / "s.json").write_text(json.dumps(s))
    (tmp_path / "t.json").write_text(json.dumps(t))
    r = subprocess.run([sys.executable, "/app/mergepatch.py", "diff", tmp_path / "s.json", tmp_path / "t.json"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    patch = json.loads(r.stdout)
    assert r.stdout == json.dumps(patch, sort_keys=True) + "\n"
    assert "keep" not in patch and patch["new"] == {"x": "y"}
    (tmp_path / "p.json").write_text(r.stdout)
    r = subprocess.run([sys.executable, "/app/mergepatch.py", "apply", tmp_path / "s.json", tmp_path / "p.json"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout == json.dumps(t, sort_keys=True) + "\n"
