import os
import subprocess
import tempfile
from pathlib import Path

EXAMPLE_DRIVER = r"""
#include <stdio.h>
#include "enums.h"
int main(void) {
    Color c = COLOR_RED; Level l = LEVEL_INFO;
    int ok1 = Color_parse("BLUE", &c), ok2 = Color_parse("blue", &c), ok3 = Level_parse("ERROR", &l);
    printf("%d %d %d %d %d %d\n", COLOR_RED, COLOR_GREEN, COLOR_BLUE, LEVEL_DEBUG, LEVEL_WARN, LEVEL_ERROR);
    printf("%d %d %s %s %s\n", COLOR_COUNT, LEVEL_COUNT, Color_name(COLOR_GREEN), Level_name(-4), Color_name((Color)3) ? "bad" : "null");
    printf("%d %d %d %d %d\n", ok1, c, ok2, ok3, l);
    return 0;
}
"""

HIDDEN_SPEC = """
enum HttpStatus   # web
    OK = 200
    CREATED
    ACCEPTED
  NOT_FOUND=404
    TEAPOT = 418
end
# between enums
enum Dir
N
E
S
W
end
enum Sign
  NEG = -1
  ZERO
  POS
  BIG = 2147483647
end
"""

HIDDEN_DRIVER = r"""
#include <stdio.h>
#include "enums.h"
int main(void) {
    HttpStatus h; Dir d = DIR_W; Sign s;
    printf("%d %d %d %d %d\n", HTTPSTATUS_OK, HTTPSTATUS_CREATED, HTTPSTATUS_ACCEPTED, HTTPSTATUS_NOT_FOUND, HTTPSTATUS_TEAPOT);
    printf("%d %d %d %d\n", DIR_N, DIR_S, SIGN_ZERO, SIGN_BIG);
    printf("%s %s %s %s\n", HttpStatus_name(202), Dir_name(DIR_E), Sign_name(SIGN_NEG), HttpStatus_name(203) ? "x" : "null");
    int p1 = HttpStatus_parse("TEAPOT", &h), p2 = Dir_parse("NE", &d), p3 = Sign_parse("POS", &s);
    printf("%d %d %d\n", p1, h, p2);
    printf("%d %d %d %d\n", d, p3, s, HTTPSTATUS_COUNT + DIR_COUNT * 10 + SIGN_COUNT * 100);
    return 0;
}
"""


def gen_and_run(spec_path, driver):
    d = tempfile.mkdtemp()
    out = os.path.join(d, "out")
    r = subprocess.run(["/app/gen", out, spec_path], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    Path(d, "main.c").write_text(driver)
    r = subprocess.run(["gcc", "-std=c99", "-Wall", "-Werror", "-I", out, "-o", f"{d}/prog", f"{d}/main.c", f"{out}/enums.c"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return subprocess.run([f"{d}/prog"], capture_output=True, text=True, timeout=10).stdout


def test_example_spec():
    out = gen_and_run("/app/example.enums", EXAMPLE_DRIVER)
    assert out == "1 2 10 0 -5 -4\n3 4 GREEN ERROR null\n1 10 0 1 -4\n"
    # the example with one more member: the generated code must follow the spec file, not a fixed text
    spec = tempfile.mktemp(suffix=".enums")
    Path(spec).write_text(Path("/app/example.enums").read_text().replace("  BLUE = 10\n", "  BLUE = 10\n  PURPLE\n"))
    driver = ('#include <stdio.h>\n#include "enums.h"\nint main(void) { Color c = COLOR_RED; int ok = Color_parse("PURPLE", &c);\n'
              '    printf("%d %d %d %d %s\\n", COLOR_PURPLE, COLOR_COUNT, ok, c, Color_name(11)); return 0; }\n')
    assert gen_and_run(spec, driver) == "11 4 1 11 PURPLE\n"


def test_hidden_spec():
    spec = tempfile.mktemp(suffix=".enums")
    Path(spec).write_text(HIDDEN_SPEC)
    out = gen_and_run(spec, HIDDEN_DRIVER)
    assert out == ("200 201 202 404 418\n0 2 0 2147483647\nACCEPTED E NEG null\n1 418 0\n"
                   "3 1 1 445\n")


ERRORS = [
    ("enum A\n  X\nend\nenum A\n  Y\nend\n", 4),
    ("enum A\n  X = 1\n  Y = 1\nend\n", 3),
    ("enum A\n  X\n  X = 7\nend\n", 3),
    ("enum A\nend\n", 2),
    ("X = 1\n", 1),
    ("enum A\n  X\n  enum B\nend\n", 3),
    ("enum A\n  X\n\n", 3),
    ("enum A\n  lower\nend\n", 2),
    ("enum a\n  X\nend\n", 1),
    ("# ok\nenum A\n  X = 1\n  Y\n  Z = 2\nend\n", 5),
    ("enum A\n  X = 2147483648\nend\n", 2),
    ("enum A\n  X = 1.5\nend\n", 2),
]


def test_spec_errors():
    for text, line in ERRORS:
        d = tempfile.mkdtemp()
        spec = os.path.join(d, "s.enums")
        Path(spec).write_text(text)
        out = os.path.join(d, "out")
        r = subprocess.run(["/app/gen", out, spec], capture_output=True, text=True, timeout=30)
        assert r.returncode == 1, text
        assert r.stderr.startswith(f"error: line {line}:"), (text, r.stderr)
        assert not os.path.exists(os.path.join(out, "enums.h")) and not os.path.exists(os.path.join(out, "enums.c"))
    spec = tempfile.mktemp(suffix=".enums")
    Path(spec).write_text("enum Ok\n  A\nend\n")
    assert subprocess.run(["/app/gen", tempfile.mkdtemp(), spec]).returncode == 0
