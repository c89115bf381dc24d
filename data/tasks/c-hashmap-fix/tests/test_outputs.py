import random
import subprocess
import tempfile
from pathlib import Path

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hashmap.h"
static void unhex(const char *h, char *out) {
    size_t n = strlen(h) / 2;
    for (size_t i = 0; i < n; i++) { unsigned v; sscanf(h + 2 * i, "%2x", &v); out[i] = (char)v; }
    out[n] = 0;
}
static long sum; static size_t cnt;
static void acc(const char *k, long v, void *ctx) { (void)ctx; sum += v * (long)strlen(k); cnt++; }
int main(void) {
    hashmap *m = hm_new();
    char op[8], hex[600], key[300];
    long v;
    while (scanf("%7s", op) == 1) {
        if (op[0] == 'p') { scanf("%599s %ld", hex, &v); unhex(hex, key); hm_put(m, key, v); memset(key, 'Z', sizeof key - 1); }
        else if (op[0] == 'g') { scanf("%599s", hex); unhex(hex, key); long o = 0; int f = hm_get(m, key, &o); printf("g %d %ld\n", f, f ? o : 0); }
        else if (op[0] == 'd') { scanf("%599s", hex); unhex(hex, key); printf("d %d\n", hm_del(m, key)); }
        else if (op[0] == 's') { printf("s %zu\n", hm_size(m)); }
        else if (op[0] == 'e') { sum = 0; cnt = 0; hm_each(m, acc, NULL); printf("e %zu %ld\n", cnt, sum); }
    }
    hm_free(m);
    return 0;
}
"""


def build(d, sanitize=False):
    Path(d, "drv.c").write_text(DRIVER)
    flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g"] if sanitize else ["-O2"]
    r = subprocess.run(["gcc", *flags, "-I", "/app/hashmap", "-o", f"{d}/drv", f"{d}/drv.c", "/app/hashmap/hashmap.c"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return f"{d}/drv"


def script(rnd, n, alphabet, maxlen=12, keyspace=None):
    ref, ops, want = {}, [], []
    keys = keyspace or []
    for _ in range(n):
        k = rnd.random()
        if keys and rnd.random() < 0.6:
            key = rnd.choice(keys)
        else:
            key = bytes(rnd.choice(alphabet) for _ in range(rnd.randint(1, maxlen)))
            keys.append(key)
        h = key.hex()
        if k < 0.5:
            v = rnd.randint(-10 ** 9, 10 ** 9)
            ops.append(f"p {h} {v}")
            ref[key] = v
        elif k < 0.75:
            ops.append(f"g {h}")
            want.append(f"g {int(key in ref)} {ref.get(key, 0)}")
        elif k < 0.95:
            ops.append(f"d {h}")
            want.append(f"d {int(ref.pop(key, None) is not None)}")
        else:
            ops.append("s")
            want.append(f"s {len(ref)}")
    ops.append("e")
    want.append(f"e {len(ref)} {sum(v * len(k) for k, v in ref.items())}")
    return "\n".join(ops) + "\n", want


def run(binary, ops, env=None):
    r = subprocess.run([binary], input=ops, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.split("\n")[:-1]


def test_demo_program():
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run(["gcc", "-I", "/app/hashmap", "-o", f"{d}/demo", "/app/hashmap/demo.c", "/app/hashmap/hashmap.c"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out = subprocess.run([f"{d}/demo"], capture_output=True, text=True, timeout=20).stdout.split("\n")
    assert out[0] == "size=19 key7=1 v=49"
    assert sorted(out[1:-1]) == sorted(f"key{i}={i * i}" for i in range(20) if i != 3)


def test_random_operations_match_reference():
    rnd = random.Random(99)
    with tempfile.TemporaryDirectory() as d:
        b = build(d)
        for n, alpha, maxlen in [(3000, b"ab", 6), (60000, b"abcdefghijklmnopqrstuvwxyz0123456789", 10), (20000, b"xyz", 12)]:
            ops, want = script(rnd, n, alpha, maxlen)
            assert run(b, ops) == want


def test_high_bytes_and_memory():
    rnd = random.Random(7)
    alpha = bytes(range(1, 256))
    with tempfile.TemporaryDirectory() as d:
        b = build(d, sanitize=True)
        ops, want = script(rnd, 8000, alpha, 20)
        assert run(b, ops, env={"ASAN_OPTIONS": "detect_leaks=1", "PATH": "/usr/bin:/bin"}) == want
        ops, want = script(rnd, 4000, b"\x80\xff\xc3\xa9e", 4)
        assert run(b, ops, env={"ASAN_OPTIONS": "detect_leaks=1", "PATH": "/usr/bin:/bin"}) == want
