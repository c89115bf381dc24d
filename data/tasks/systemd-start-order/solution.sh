#!/bin/bash
cat > /app/unit_order.py <<'PY'
import heapq
import os
import sys

KEYS = ("Requires", "Wants", "After", "Before", "WantedBy")


def parse(paths):
    keys = {k: [] for k in KEYS}
    for p in paths:
        with open(p) as f:
            for raw in f:
                line = raw.strip()
                if not line or line[0] in "#;[":
                    continue
                k, _, v = line.partition("=")
                k = k.strip()
                if k in keys:
                    keys[k] = keys[k] + v.split() if v.strip() else []
    return keys


def main(d, target):
    units = {}
    for n in sorted(os.listdir(d)):
        if os.path.isfile(os.path.join(d, n)) and n.rsplit(".", 1)[-1] in ("service", "target", "socket", "timer"):
            dd = os.path.join(d, n + ".d")
            extra = sorted(f for f in os.listdir(dd) if f.endswith(".conf")) if os.path.isdir(dd) else []
            units[n] = parse([os.path.join(d, n)] + [os.path.join(dd, f) for f in extra])
    pulls = {u: set(k["Requires"]) | set(k["Wants"]) for u, k in units.items()}
    for u, k in units.items():
        for t in k["WantedBy"]:
            if t in pulls:
                pulls[t].add(u)
    seen, stack = set(), [target]
    while stack:
        u = stack.pop()
        if u in units and u not in seen:
            seen.add(u)
            stack.extend(pulls[u])
    succ = {u: set() for u in seen}
    for u in seen:
        succ.update()
        for b in units[u]["After"]:
            if b in seen and b != u:
                succ[b].add(u)
        for a in units[u]["Before"]:
            if a in seen and a != u:
                succ[u].add(a)
    indeg = {u: 0 for u in seen}
    for u in seen:
        for v in succ[u]:
            indeg[v] += 1
    heap = sorted(u for u in seen if indeg[u] == 0)
    out = []
    while heap:
        u = heapq.heappop(heap)
        out.append(u)
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(heap, v)
    if len(out) != len(seen):
        return 1
    print("\n".join(out))
    return 0


sys.exit(main(sys.argv[1], sys.argv[2]))
PY
