#!/bin/bash
cat > /app/cache.py <<'PY'
"""In-process cache for the pricing service (see /app/SPEC.md)."""
import time
from collections import OrderedDict


class LRUCache:
    def __init__(self, capacity, ttl=None, clock=time.monotonic):
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity, self.ttl, self.clock = capacity, ttl, clock
        self._data = OrderedDict()  # key -> (value, written_at); last = most recent
        self._hits = self._misses = self._evictions = 0

    def _expired(self, written_at):
        return self.ttl is not None and self.clock() - written_at >= self.ttl

    def _purge(self):
        for k in [k for k, (_, w) in self._data.items() if self._expired(w)]:
            del self._data[k]

    def put(self, key, value):
        self._data[key] = (value, self.clock())
        self._data.move_to_end(key)
        if len(self._data) > self.capacity:
            self._purge()
        while len(self._data) > self.capacity:
            self._data.popitem(last=False)
            self._evictions += 1

    def get(self, key, default=None):
        item = self._data.get(key)
        if item is None or self._expired(item[1]):
            self._data.pop(key, None)
            self._misses += 1
            return default
        self._data.move_to_end(key)
        self._hits += 1
        return item[0]

    def __contains__(self, key):
        item = self._data.get(key)
        return item is not None and not self._expired(item[1])

    def __len__(self):
        return sum(1 for _, w in self._data.values() if not self._expired(w))

    def stats(self):
        return {"hits": self._hits, "misses": self._misses, "evictions": self._evictions}
PY
