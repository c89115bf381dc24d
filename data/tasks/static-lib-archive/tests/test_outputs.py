import subprocess
import tempfile
from pathlib import Path

PROG = r"""
#include <stdio.h>
#include "geom.h"
int main(void) {
    point sq[4] = {{0, 0}, {4, 0}, {4, 3}, {0, 3}};
    point tri[3] = {{1, 1}, {6, 2}, {2, 7}};
    printf("%.3f %.3f %.3f %d %d %d\n", geom_dist(sq[0], sq[2]), geom_polygon_area(sq, 4),
           geom_polygon_area(tri, 3), geom_orientation(tri[0], tri[1], tri[2]),
           geom_orientation(tri[0], tri[2], tri[1]), geom_orientation(sq[0], sq[1], (point){9, 0}));
    return 0;
}
"""


def test_archive_members():
    r = subprocess.run(["ar", "t", "/app/lib/libgeom.a"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == ["area.o", "dist.o", "orient.o"]


def test_link_and_run():
    with tempfile.TemporaryDirectory() as d:
        Path(d, "prog.c").write_text(PROG)
        r = subprocess.run(["gcc", "prog.c", "-I/app/include", "-L/app/lib", "-lgeom", "-lm", "-o", "prog"],
                           cwd=d, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out = subprocess.run([d + "/prog"], capture_output=True, text=True).stdout
    assert out.strip() == "5.000 12.000 14.500 1 -1 0"
