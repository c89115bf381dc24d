#!/bin/bash
set -e
cat > /app/hashring.py <<'PY'
import bisect
import hashlib


def h(s):
    return int.from_bytes(hashlib.md5(s.encode("utf-8")).digest()[:8], "big")


class HashRing:
    def __init__(self, replicas=100):
        if replicas < 1:
            raise ValueError("replicas must be >= 1")
        self.replicas = replicas
        self._names = set()
        self._points = []  # sorted (position, name)

    def add_node(self, name):
        if name in self._names:
            raise ValueError("node exists")
        self._names.add(name)
        for i in range(self.replicas):
            bisect.insort(self._points, (h("%s#%d" % (name, i)), name))

    def remove_node(self, name):
        if name not in self._names:
            raise KeyError(name)
        self._names.remove(name)
        self._points = [p for p in self._points if p[1] != name]

    def nodes(self):
        return sorted(self._names)

    def _start(self, key):
        if not self._points:
            raise LookupError("empty ring")
        i = bisect.bisect_left(self._points, (h(key), ""))
        return i % len(self._points)

    def get_node(self, key):
        return self._points[self._start(key)][1]

    def get_nodes(self, key, n):
        i, out = self._start(key), []
        for k in range(len(self._points)):
            name = self._points[(i + k) % len(self._points)][1]
            if name not in out:
                out.append(name)
                if len(out) == n:
                    break
        return out
PY
