import functools
import random
import subprocess
import tempfile
from pathlib import Path

DRIVER = r"""
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "glob.h"
/* The matcher must be written, not delegated: these libc matchers are replaced by stubs that fail. */
static void banned(const char *name) { fprintf(stderr, "%s must not be used\n", name); exit(3); }
int fnmatch(const char *p, const char *s, int f) { (void)p; (void)s; (void)f; banned("fnmatch"); return 1; }
int regcomp(void *r, const char *p, int f) { (void)r; (void)p; (void)f; banned("regcomp"); return 1; }
int main(void) {
    static char line[200000];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        char *tab = strchr(line, '\t');
        *tab = 0;
        printf("%d\n", glob_match(line, tab + 1));
    }
    return 0;
}
"""
_bin = []


def binary():
    if not _bin:
        d = tempfile.mkdtemp()
        Path(d, "driver.c").write_text(DRIVER)
        r = subprocess.run(["gcc", "-O2", "-Wall", "-I", "/app/glob", "-o", f"{d}/m", f"{d}/driver.c", "/app/glob/glob.c"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        _bin.append(f"{d}/m")
    return _bin[0]


def match_all(pairs, timeout=30):
    data = "".join(f"{p}\t{t}\n" for p, t in pairs)
    r = subprocess.run([binary()], input=data.encode("latin-1"), capture_output=True, timeout=timeout)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    got = r.stdout.decode().split()
    assert len(got) == len(pairs) and set(got) <= {"0", "1"}, got[:20]
    return [x == "1" for x in got]


def tokens(p):
    out, i, n = [], 0, len(p)
    while i < n:
        c = p[i]
        if c == "*":
            out.append(("*",)); i += 1; continue
        if c == "?":
            out.append(("?",)); i += 1; continue
        if c == "[":
            j, neg, ranges, first = i + 1, False, [], True
            if j < n and p[j] in "!^":
                neg, j = True, j + 1
            while j < n and (p[j] != "]" or first):
                lo = p[j]
                if lo == "\\" and j + 1 < n:
                    j += 1; lo = p[j]
                j += 1
                hi = lo
                if j < n and p[j] == "-" and j + 1 < n and p[j + 1] != "]":
                    j += 1; hi = p[j]
                    if hi == "\\" and j + 1 < n:
                        j += 1; hi = p[j]
                    j += 1
                ranges.append((lo, hi)); first = False
            if j < n and p[j] == "]":
                out.append(("[", neg, tuple(ranges))); i = j + 1; continue
            out.append(("l", "[")); i += 1; continue
        if c == "\\" and i + 1 < n:
            out.append(("l", p[i + 1])); i += 2; continue
        out.append(("l", c)); i += 1
    return out


def ref(p, t):
    toks = tokens(p)

    @functools.lru_cache(maxsize=None)
    def m(i, j):
        if i == len(toks):
            return j == len(t)
        tk = toks[i]
        if tk[0] == "*":
            return any(m(i + 1, k) for k in range(j, len(t) + 1))
        if j == len(t):
            return False
        c = t[j]
        if tk[0] == "?":
            ok = True
        elif tk[0] == "l":
            ok = c == tk[1]
        else:
            ok = any(lo <= c <= hi for lo, hi in tk[2]) != tk[1]
        return ok and m(i + 1, j + 1)
    return m(0, 0)


CASES = [("*", "", True), ("*", "a/b/c", True), ("a*", "abc", True), ("*c", "abc", True), ("a*c", "ac", True),
         ("a*c", "ab", False), ("?", "", False), ("??", "ab", True), ("a?c", "a/c", True), ("*.txt", "notes.txt", True),
         ("*.txt", "notes.txt.bak", False), ("a*b*c", "aXbYbZc", True), ("a*b*c", "aXbYbZ", False), ("", "", True),
         ("", "x", False), ("abc", "ABC", False), ("**x", "x", True), ("*?*", "", False), ("*?*", "q", True)]
BRACKETS = [("[abc]", "b", True), ("[abc]", "d", False), ("[a-c]x", "bx", True), ("[!a-c]", "b", False),
            ("[^a-c]", "z", True), ("[]]", "]", True), ("[]a]", "a", True), ("[!]]", "]", False), ("[!]]", "x", True),
            ("[-a]", "-", True), ("[a-]", "-", True), ("[a-]", "b", False), ("[\\]]", "]", True), ("[a\\-z]", "-", True),
            ("[a\\-z]", "b", False), ("[abc", "[abc", True), ("[abc", "a", False), ("a[", "a[", True),
            ("\\*", "*", True), ("\\*", "x", False), ("\\?x", "?x", True), ("a\\", "a\\", True), ("\\[a]", "[a]", True),
            ("[0-9][0-9]", "42", True), ("[0-9][0-9]", "4a", False), ("*[!/]", "dir/", False), ("[*?]", "?", True),
            ("[!", "[!", True), ("[]", "[]", True), ("x[]y", "x[]y", True)]


def test_wildcards():
    assert match_all([(p, t) for p, t, _ in CASES]) == [w for _, _, w in CASES]


def test_brackets_and_escapes():
    assert match_all([(p, t) for p, t, _ in BRACKETS]) == [w for _, _, w in BRACKETS]


def test_random_against_reference():
    rnd = random.Random(17)
    pairs = []
    for _ in range(6000):
        p = "".join(rnd.choice("ab*?[]!-\\^") for _ in range(rnd.randint(0, 8)))
        t = "".join(rnd.choice("ab[]!-\\^") for _ in range(rnd.randint(0, 8)))
        pairs.append((p, t))
    want = [ref(p, t) for p, t in pairs]
    assert sum(want) > 150
    got = match_all(pairs)
    bad = [(p, t, w) for (p, t), g, w in zip(pairs, got, want) if g != w]
    assert not bad, bad[:10]


def test_no_exponential_blowup():
    pairs = [("a*a*a*a*a*a*a*a*a*a*b", "a" * 5000), ("*a*a*a*a*a*a*a*a*a*a", "a" * 5000), ("*?*?*?*?*?*?*?*?x", "y" * 3000)]
    assert match_all(pairs, timeout=20) == [False, True, False]
