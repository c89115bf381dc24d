import subprocess
import tempfile
from pathlib import Path

DRIVER = r"""
#include <stdio.h>
#include "store.h"
int main(void) {
    store s = {0};
    store_put(&s, "a", 4); store_put(&s, "b", 6); store_put(&s, "a", 10);
    int out[STORE_MAX];
    int n = get_vals(&s, out);
    printf("%d %d %d %d %d\n", store_get(&s, "a", 0), store_get(&s, "zz", 42), n, out[1], get_val_count(&s));
    return 0;
}
"""
OLD = r"""
#include "store.h"
int main(void) { store s = {0}; return get_val(&s, "a", 0); }
"""


def build(src, d):
    Path(d, "t.c").write_text(src)
    return subprocess.run(["gcc", "-Wall", "-Werror", "-I", "/app/src", "-o", f"{d}/t", f"{d}/t.c", "/app/src/store.c"],
                          capture_output=True, text=True)


def test_renamed_symbol():
    with tempfile.TemporaryDirectory() as d:
        r = build(DRIVER, d)
        assert r.returncode == 0, r.stderr
        out = subprocess.run([f"{d}/t"], capture_output=True, text=True).stdout
        assert out == "10 42 2 6 2\n"
        assert build(OLD, d).returncode != 0, "get_val still exists"


def test_builds_and_behaves():
    subprocess.run(["rm", "-f", "/app/kv"])
    r = subprocess.run(["make", "-C", "/app"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    out = subprocess.run(["/app/kv", "x", "5", "y", "7", "x", "9", "z", "-3"], capture_output=True, text=True).stdout
    assert out == "get_val(x)=9 count=3 sum=13\n"
    out = subprocess.run(["/app/kv", "q", "1"], capture_output=True, text=True).stdout
    assert out == "get_val(x)=-1 count=1 sum=1\n"
    assert "store_get" in Path("/app/src/main.c").read_text()
