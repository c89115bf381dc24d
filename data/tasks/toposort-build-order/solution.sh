#!/bin/bash
set -e
cat > /app/buildorder.py <<'PY'
import heapq
import json
import sys


class CycleError(ValueError):
    def __init__(self, cycle):
        super().__init__(" -> ".join(cycle))
        self.cycle = cycle


def build_order(deps):
    graph = {k: list(v) for k, v in deps.items()}
    for v in list(graph.values()):
        for d in v:
            graph.setdefault(d, [])
    indeg = {k: len(set(v)) for k, v in graph.items()}
    users = {k: [] for k in graph}
    for k, v in graph.items():
        for d in set(v):
            users[d].append(k)
    ready = [k for k, n in indeg.items() if n == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        k = heapq.heappop(ready)
        out.append(k)
        for u in users[k]:
            indeg[u] -= 1
            if indeg[u] == 0:
                heapq.heappush(ready, u)
    if len(out) < len(graph):
        left = {k for k in graph if k not in set(out)}
        node, path, seen = min(left), [], {}
        while node not in seen:
            seen[node] = len(path)
            path.append(node)
            node = min(d for d in graph[node] if d in left)
        raise CycleError(path[seen[node]:] + [node])
    return out


if __name__ == "__main__":
    try:
        order = build_order(json.load(open(sys.argv[1])))
    except CycleError as e:
        print("cycle: " + " -> ".join(e.cycle), file=sys.stderr)
        sys.exit(1)
    print("\n".join(order))
PY
