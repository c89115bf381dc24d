#!/bin/bash
set -e
cat > /app/pqueue.py <<'PY'
import heapq
import itertools


class TaskQueue:
    def __init__(self):
        self._heap, self._live, self._seq = [], {}, itertools.count()

    def push(self, name, priority):
        if name in self._live:
            raise KeyError(name)
        entry = [priority, next(self._seq), name, True]
        self._live[name] = entry
        heapq.heappush(self._heap, entry)

    def _clean(self):
        while self._heap and not self._heap[0][3]:
            heapq.heappop(self._heap)

    def peek(self):
        self._clean()
        if not self._heap:
            raise IndexError("empty")
        return (self._heap[0][2], self._heap[0][0])

    def pop(self):
        item = self.peek()
        e = heapq.heappop(self._heap)
        del self._live[e[2]]
        return item

    def remove(self, name):
        e = self._live.pop(name)
        e[3] = False

    def update(self, name, priority):
        e = self._live[name]
        if e[0] == priority:
            return
        self.remove(name)
        self.push(name, priority)

    def __len__(self):
        return len(self._live)

    def __contains__(self, name):
        return name in self._live

    def __bool__(self):
        return bool(self._live)

    def drain(self):
        return [self.pop() for _ in range(len(self))]
PY
