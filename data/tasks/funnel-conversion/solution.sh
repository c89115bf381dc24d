#!/bin/bash
set -e
python3 - <<'PY'
import csv
import json
import datetime as dt

STEPS = ["view_product", "add_to_cart", "checkout", "purchase"]
WINDOW = dt.timedelta(hours=24)


def parse_ts(s):
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def best_depth(events):
    """events: list of (time, event) sorted by time. Deepest step reached (1..4), 0 if none."""
    best = 0
    for i, (t0, e0) in enumerate(events):
        if e0 != STEPS[0]:
            continue
        depth = 1
        for t, e in events[i + 1:]:
            if t - t0 > WINDOW:
                break
            if depth < len(STEPS) and e == STEPS[depth]:
                depth += 1
        best = max(best, depth)
    return best


def funnel(rows):
    per_user = {}
    for u, ts, e in rows:
        per_user.setdefault(u, []).append((parse_ts(ts), e))
    counts = [0] * len(STEPS)
    for evs in per_user.values():
        evs.sort(key=lambda x: x[0])
        d = best_depth(evs)
        for k in range(d):
            counts[k] += 1
    return counts


rows = [(r["user_id"], r["timestamp"], r["event"]) for r in csv.DictReader(open("/app/events.csv", newline=""))]
counts = funnel(rows)
steps = [{"event": s, "users": n, "conversion": 1.0 if k == 0 else round(n / counts[k - 1], 4)}
         for k, (s, n) in enumerate(zip(STEPS, counts))]
json.dump({"steps": steps}, open("/app/funnel.json", "w"), indent=2)
PY
