#!/bin/bash
set -e
cat > /app/semver.py <<'PY'
"""Semantic Versioning 2.0.0 helpers."""
import functools
import re

NUM = r"0|[1-9]\d*"
IDENT = r"(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)"
RX = re.compile(r"(%s)\.(%s)\.(%s)(?:-(%s(?:\.%s)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?" % (NUM, NUM, NUM, IDENT, IDENT))


@functools.total_ordering
class Version:
    def __init__(self, major, minor, patch, prerelease=(), build=()):
        self.major, self.minor, self.patch = major, minor, patch
        self.prerelease, self.build = tuple(prerelease), tuple(build)

    @classmethod
    def parse(cls, text):
        m = RX.fullmatch(text) if isinstance(text, str) else None
        if not m:
            raise ValueError("invalid version %r" % (text,))
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        build = tuple(m.group(5).split(".")) if m.group(5) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, build)

    def __str__(self):
        s = "%d.%d.%d" % (self.major, self.minor, self.patch)
        if self.prerelease:
            s += "-" + ".".join(self.prerelease)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def _key(self):
        pre = tuple((0, int(i), "") if i.isdigit() else (1, 0, i) for i in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)

    def __eq__(self, other):
        return isinstance(other, Version) and self._key() == other._key()

    def __lt__(self, other):
        return self._key() < other._key()

    def __hash__(self):
        return hash(self._key())


def max_satisfying(versions, minimum):
    lo = Version.parse(minimum)
    best = None
    for s in versions:
        try:
            v = Version.parse(s)
        except ValueError:
            continue
        if not v.prerelease and v >= lo and (best is None or v > best[0]):
            best = (v, s)
    return best[1] if best else None
PY
