import hashlib
import importlib.util
import json
import os
import subprocess
import sys

import pytest


def load():
    spec = importlib.util.spec_from_file_location("diskcache", "/app/diskcache.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.disk_memoize


def key(module, qualname, version, args, kwargs):
    text = json.dumps([module, qualname, version, list(args), kwargs], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def test_key_and_file_format(tmp_path):
    dm = load()
    calls = []
    d = tmp_path / "c"

    @dm(str(d), version="7")
    def area(w, h, unit="m"):
        calls.append((w, h, unit))
        return {"area": w * h, "unit": unit, "dims": (w, h)}
    assert area(3, 4, unit="cm") == {"area": 12, "unit": "cm", "dims": (3, 4)}
    k = key(__name__, "test_key_and_file_format.<locals>.area", "7", [3, 4], {"unit": "cm"})
    assert json.loads((d / (k + ".json")).read_text())["value"] == {"area": 12, "unit": "cm", "dims": [3, 4]}
    assert area(3, 4, unit="cm") == {"area": 12, "unit": "cm", "dims": [3, 4]}
    assert calls == [(3, 4, "cm")]
    assert area.cache_info() == {"hits": 1, "misses": 1}
    assert area.__name__ == "area"
    area(4, 3, unit="cm")
    assert len(calls) == 2 and len(list(d.glob("*.json"))) == 2
    area.cache_clear()
    assert list(d.glob("*.json")) == [] and area.cache_info() == {"hits": 0, "misses": 0}


SCRIPT = r'''
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("diskcache", "/app/diskcache.py")
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
@mod.disk_memoize(sys.argv[1], version=sys.argv[2])
def slow(n):
    print("computed", n, file=sys.stderr)
    return [n, n * n]
print(json.dumps([slow(int(a)) for a in sys.argv[3:]] + [slow.cache_info()]))
'''


def run_script(tmp_path, version, *ns):
    p = tmp_path / "script.py"
    p.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(p), str(tmp_path / "shared"), version, *map(str, ns)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), r.stderr.count("computed")


def test_hits_across_processes(tmp_path):
    out, computed = run_script(tmp_path, "1", 5, 6, 5)
    assert out == [[5, 25], [6, 36], [5, 25], {"hits": 1, "misses": 2}] and computed == 2
    out, computed = run_script(tmp_path, "1", 6, 5, 7)
    assert out[:3] == [[6, 36], [5, 25], [7, 49]] and out[3] == {"hits": 2, "misses": 1} and computed == 1
    out, computed = run_script(tmp_path, "2", 5)
    assert computed == 1 and out[1] == {"hits": 0, "misses": 1}
    shared = tmp_path / "shared"
    assert len(list(shared.glob("*.json"))) == 4
    assert [p for p in os.listdir(shared) if not p.endswith(".json")] == []


def test_corrupt_and_errors(tmp_path):
    dm = load()
    d = tmp_path / "c"
    calls = []

    @dm(str(d))
    def f(x):
        calls.append(x)
        if x < 0:
            raise ValueError("negative")
        if x == 99:
            return object()
        return x + 1
    assert f(1) == 2
    k = key(__name__, "test_corrupt_and_errors.<locals>.f", "1", [1], {})
    (d / (k + ".json")).write_text("{truncated")
    assert f(1) == 2 and calls == [1, 1]
    assert json.loads((d / (k + ".json")).read_text())["value"] == 2
    (d / (k + ".json")).write_text('{"other": 5}')
    assert f(1) == 2 and calls == [1, 1, 1]
    with pytest.raises(ValueError):
        f(-1)
    with pytest.raises(TypeError):
        f({1, 2})
    with pytest.raises(TypeError):
        f(99)
    assert len(list(d.glob("*.json"))) == 1
    assert calls == [1, 1, 1, -1, 99]


def test_eviction_lru(tmp_path):
    dm = load()
    d = tmp_path / "lru"
    calls = []

    @dm(str(d), max_entries=3)
    def sq(x):
        calls.append(x)
        return x * x

    def path(x):
        return d / (key(__name__, "test_eviction_lru.<locals>.sq", "1", [x], {}) + ".json")
    for i, x in enumerate([1, 2, 3]):
        sq(x)
        os.utime(path(x), (1000 + i, 1000 + i))  # make the order explicit
    sq(1)                       # hit: 1 becomes most recently used
    assert os.stat(path(1)).st_mtime > 1002
    sq(4)                       # evicts 2 (least recently used)
    assert sorted(p.name for p in d.glob("*.json")) == sorted(path(x).name for x in [1, 3, 4])
    calls.clear()
    assert [sq(x) for x in [1, 3, 4]] == [1, 9, 16] and calls == []
    sq(2)
    assert calls == [2] and len(list(d.glob("*.json"))) == 3
