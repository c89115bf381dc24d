import subprocess
import tempfile
from pathlib import Path

EXTRA = r"""
#include "counter.h"
#include "report.h"
#include "counter.h"
#include "report.h"
int extra_total(void) { return total_calls; }
"""
DRIVER = r"""
#include <stdio.h>
#include "report.h"
#include "counter.h"
int extra_total(void);
int main(void) {
    struct counter a = {"a", 0, 0}, b = {"b", 0, 0};
    counter_hit(&a); counter_miss(&a); counter_miss(&a); counter_hit(&b);
    report_print(&a);
    printf("%d %.3f\n", extra_total(), counter_ratio(&b));
    return 0;
}
"""


def test_make_and_run():
    subprocess.run(["rm", "-f", "/app/counter_demo"])
    r = subprocess.run(["make", "-C", "/app"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    for pat, want in [("hhmh", "cache: 3 hits, 1 misses, ratio 0.75\ntotal calls: 4\n"),
                      ("", "cache: 0 hits, 0 misses, ratio 0.00\ntotal calls: 0\n"),
                      ("mmhxm", "cache: 1 hits, 3 misses, ratio 0.25\ntotal calls: 4\n")]:
        out = subprocess.run(["/app/counter_demo", pat], capture_output=True, text=True).stdout
        assert out == want


def test_headers_reusable():
    with tempfile.TemporaryDirectory() as d:
        Path(d, "extra.c").write_text(EXTRA)
        Path(d, "driver.c").write_text(DRIVER)
        # main.c is linked too (its main renamed), since the definitions may live in any of the three sources
        r = subprocess.run(["gcc", "-Wall", "-Dmain=counter_demo_main", "-I", "/app/src", "-c", "-o", f"{d}/main.o",
                            "/app/src/main.c"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        srcs = [f"{d}/extra.c", f"{d}/driver.c", "/app/src/counter.c", "/app/src/report.c", f"{d}/main.o"]
        r = subprocess.run(["gcc", "-Wall", "-I", "/app/src", "-o", f"{d}/t", *srcs], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out = subprocess.run([f"{d}/t"], capture_output=True, text=True).stdout
    assert out == "a: 1 hits, 2 misses, ratio 0.33\n4 1.000\n"
