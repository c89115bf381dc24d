import json
import random
import subprocess


def run(code):
    # the system python3 the task installs into (the agent's), not the verifier's pristine interpreter
    r = subprocess.run(["/usr/bin/python3", "-c", code], cwd="/", capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def fnv(data):
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def test_installed_metadata():
    out = run("import importlib.metadata as m, tinyhash; print(m.version('tinyhash')); print(tinyhash.__file__)")
    version, path = out.split()
    assert version == "1.2.0"
    assert not path.startswith("/app/"), path


def test_hash_functions():
    rng = random.Random(99)
    keys = ["".join(rng.choice("abcxyz0123_-") for _ in range(rng.randint(0, 12))) for _ in range(40)]
    out = run("import json, tinyhash; ks = json.loads(%r); "
              "print(json.dumps([[tinyhash.fnv1a_32(k.encode()), tinyhash.bucket(k, 17)] for k in ks]))" % json.dumps(keys))
    assert json.loads(out) == [[fnv(k.encode()), fnv(k.encode()) % 17] for k in keys]
