#!/bin/bash
set -e
python3 - <<'PY'
import csv
import datetime as dt

END = dt.datetime(2024, 3, 31, tzinfo=dt.timezone.utc)
WEEKS = 6


def ts(s):
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(dt.timezone.utc)


def retention(users, activity):
    signup = {u["user_id"]: ts(u["signup_at"]) for u in users}
    acts = {}
    for a in activity:
        if a["user_id"] in signup:
            acts.setdefault(a["user_id"], []).append(ts(a["ts"]))
    cohorts = {}
    for u, s in signup.items():
        y, w, _ = s.isocalendar()
        cohorts.setdefault(f"{y}-W{w:02d}", []).append(u)
    out = {}
    for c in sorted(cohorts):
        members = cohorts[c]
        cells = []
        for k in range(WEEKS):
            obs = act = 0
            for u in members:
                lo = signup[u] + dt.timedelta(days=7 * k)
                hi = lo + dt.timedelta(days=7)
                if hi > END:
                    continue
                obs += 1
                if any(lo <= t < hi for t in acts.get(u, [])):
                    act += 1
            cells.append(None if obs == 0 else act / obs)
        out[c] = (len(members), cells)
    return out


res = retention(list(csv.DictReader(open("/app/users.csv", newline=""))),
                list(csv.DictReader(open("/app/activity.csv", newline=""))))
with open("/app/retention.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["cohort", "size"] + [f"w{k}" for k in range(WEEKS)])
    for c, (n, cells) in res.items():
        w.writerow([c, n] + ["" if x is None else f"{x:.4f}" for x in cells])
PY
