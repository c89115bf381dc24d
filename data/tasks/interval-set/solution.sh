#!/bin/bash
set -e
cat > /app/intervals.py <<'PY'
"""Half-open integer interval sets."""


class IntervalSet:
    def __init__(self, intervals=()):
        self._iv = []
        for s, e in intervals:
            self.add(s, e)

    @staticmethod
    def _check(s, e):
        if not s < e:
            raise ValueError("start must be < end")

    def add(self, s, e):
        self._check(s, e)
        out = []
        for a, b in self._iv:
            if b < s or a > e:
                out.append((a, b))
            else:
                s, e = min(s, a), max(e, b)
        out.append((s, e))
        self._iv = sorted(out)

    def remove(self, s, e):
        self._check(s, e)
        out = []
        for a, b in self._iv:
            if b <= s or a >= e:
                out.append((a, b))
                continue
            if a < s:
                out.append((a, s))
            if b > e:
                out.append((e, b))
        self._iv = sorted(out)

    def intervals(self):
        return list(self._iv)

    def __contains__(self, x):
        return any(a <= x < b for a, b in self._iv)

    def __len__(self):
        return sum(b - a for a, b in self._iv)

    def __eq__(self, other):
        return isinstance(other, IntervalSet) and self._iv == other._iv

    def union(self, other):
        return IntervalSet(self._iv + other._iv)

    def difference(self, other):
        r = IntervalSet(self._iv)
        for a, b in other._iv:
            r.remove(a, b)
        return r

    def intersection(self, other):
        return self.difference(self.difference(other))

    def gaps(self, start, end):
        r = IntervalSet([(start, end)]) if start < end else IntervalSet()
        return r.difference(self).intervals()
PY
