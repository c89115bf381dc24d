"""Reference model of the task's unit-ordering rules and a random unit-tree generator (tests only)."""
import heapq
import os
import random

LIST_KEYS = ("Requires", "Wants", "After", "Before", "WantedBy")


def parse_unit(paths):
    keys = {k: [] for k in LIST_KEYS}
    for p in paths:
        for raw in open(p):
            line = raw.strip()
            if not line or line[0] in "#;" or line.startswith("["):
                continue
            k, _, v = line.partition("=")
            k = k.strip()
            if k not in keys:
                continue
            if v.strip() == "":
                keys[k] = []
            else:
                keys[k] += v.split()
    return keys


def load(d):
    units = {}
    for name in sorted(os.listdir(d)):
        if os.path.isfile(os.path.join(d, name)) and name.rsplit(".", 1)[-1] in ("service", "target", "socket", "timer"):
            drop = os.path.join(d, name + ".d")
            extra = sorted(os.path.join(drop, f) for f in os.listdir(drop) if f.endswith(".conf")) if os.path.isdir(drop) else []
            units[name] = parse_unit([os.path.join(d, name)] + extra)
    return units


def order(d, target):
    units = load(d)
    wants = {u: set(k["Requires"]) | set(k["Wants"]) for u, k in units.items()}
    for u, k in units.items():
        for t in k["WantedBy"]:
            if t in wants:
                wants[t].add(u)
    todo, seen = [target], set()
    while todo:
        u = todo.pop()
        if u in seen or u not in units:
            continue
        seen.add(u)
        todo += wants[u]
    edges = {u: set() for u in seen}
    for u in seen:
        for b in units[u]["After"]:
            if b in seen and b != u:
                edges[b].add(u)
        for a in units[u]["Before"]:
            if a in seen and a != u:
                edges[u].add(a)
    indeg = {u: 0 for u in seen}
    for u in seen:
        for v in edges[u]:
            indeg[v] += 1
    heap = [u for u in seen if indeg[u] == 0]
    heapq.heapify(heap)
    out = []
    while heap:
        u = heapq.heappop(heap)
        out.append(u)
        for v in edges[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(heap, v)
    return out if len(out) == len(seen) else None


def generate(d, seed, n=14, cycle=False):
    rnd = random.Random(seed)
    names = [f"{w}{i}.service" for i, w in zip(range(n), rnd.choices(["db", "web", "net", "log", "api", "mq"], k=n))]
    names += ["app.target", "base.target", "extra.target"]
    rank = {u: i for i, u in enumerate(rnd.sample(names, len(names)))}
    for u in names:
        lines, drop = ["[Unit]", f"Description=unit {u}"], []
        others = [v for v in names if v != u]
        for key in ("Requires", "Wants"):
            deps = rnd.sample(others, rnd.randint(0, 2))
            if deps:
                lines.append(f"{key}={' '.join(deps)}")
        if rnd.random() < 0.3:
            lines.append("Wants=ghost.service")
        for v in rnd.sample(others, rnd.randint(0, 3)):
            key = "After" if rank[v] < rank[u] else "Before"
            if rnd.random() < 0.25:
                lines.append(f"{key}=bogus-{v}")
                lines.append(f"{key}=")
            lines.append(f"{key}={v}" if rnd.random() < 0.6 else f"{key} = {v}")
        if rnd.random() < 0.3:
            lines.append("After=ghost.service")
        if u.endswith(".service"):
            lines += ["", "[Service]", "ExecStart=/bin/true"]
            if rnd.random() < 0.3:
                lines += ["", "[Install]", f"WantedBy={rnd.choice(['app.target', 'extra.target'])}"]
        if rnd.random() < 0.25:
            later = [v for v in others if rank[v] > rank[u]]
            if later:
                drop.append(f"# override\n[Unit]\nBefore={rnd.choice(later)}\nWants={rnd.choice(others)}\n")
        with open(os.path.join(d, u), "w") as f:
            f.write("\n".join(lines) + "\n")
        if drop:
            os.makedirs(os.path.join(d, u + ".d"), exist_ok=True)
            with open(os.path.join(d, u + ".d", "10-extra.conf"), "w") as f:
                f.write(drop[0])
            with open(os.path.join(d, u + ".d", "README"), "w") as f:
                f.write("After=" + " ".join(names) + "\n")
    # app.target pulls in a good part of the graph
    with open(os.path.join(d, "app.target"), "a") as f:
        f.write("Wants=" + " ".join(rnd.sample(names[:n], n // 2)) + "\n")
    if cycle:
        a, b = sorted(names[:n], key=rank.get)[:2]
        with open(os.path.join(d, "app.target"), "a") as f:
            f.write(f"Requires={a} {b}\n")
        with open(os.path.join(d, a), "a") as f:
            f.write(f"\n[Unit]\nAfter={b}\n")
        with open(os.path.join(d, b), "a") as f:
            f.write(f"\n[Unit]\nAfter={a}\n")
    with open(os.path.join(d, "notes.txt"), "w") as f:
        f.write("Requires=" + names[0] + "\n")
