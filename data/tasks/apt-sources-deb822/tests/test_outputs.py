import subprocess
import sys
import tempfile

sys.path.insert(0, "/tests")
import deb822_ref  # noqa: E402


def run(text):
    with tempfile.NamedTemporaryFile("w", suffix=".list", delete=False) as f:
        f.write(text)
    r = subprocess.run([sys.executable, "/app/sources2deb822.py", f.name], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr[-1500:]
    return r.stdout


def norm(text):
    return [[l.rstrip() for l in block.strip().splitlines()] for block in text.strip().split("\n\n")]


def test_example_file():
    text = open("/app/sources.list").read()
    assert text == deb822_ref.generate(77)
    assert norm(run(text)) == norm(deb822_ref.convert(text))


def test_generated_files():
    for seed in [1, 2, 3, 10, 99]:
        text = deb822_ref.generate(seed)
        assert norm(run(text)) == norm(deb822_ref.convert(text)), seed
