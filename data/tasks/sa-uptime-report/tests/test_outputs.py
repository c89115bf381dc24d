import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import gen_data  # noqa: E402  (the generator of /app/logs/healthcheck.log)


def reference():
    seq = {s: [] for s in gen_data.SERVICES}
    for line in gen_data.make_lines():
        p = line.split()
        if p[0].startswith("#"):
            continue
        seq[p[1]].append((p[0], p[2], p[3]))
    rep = {}
    for s, checks in seq.items():
        ups = sorted(int(x[2][:-2]) for x in checks if x[1] == "UP")
        best, run = None, []
        for ts, st, _ in checks + [(None, "UP", "")]:
            if st == "DOWN":
                run.append(ts)
            else:
                if run and (best is None or len(run) > best["checks"]):
                    best = {"start": run[0], "end": run[-1], "checks": len(run)}
                run = []
        rep[s] = {"checks": len(checks), "up": len(ups), "uptime_pct": round(100 * len(ups) / len(checks), 2),
                  "p95_latency_ms": ups[math.ceil(0.95 * len(ups)) - 1], "longest_outage": best}
    return rep


def report():
    return json.loads(Path("/app/uptime_report.json").read_text())


def test_counts_and_uptime():
    got, want = report(), reference()
    assert set(got) == set(want)
    for s in want:
        assert got[s]["checks"] == want[s]["checks"] and got[s]["up"] == want[s]["up"], s
        assert abs(got[s]["uptime_pct"] - want[s]["uptime_pct"]) < 0.006, (s, got[s]["uptime_pct"])


def test_p95_latency():
    got, want = report(), reference()
    assert [got[s]["p95_latency_ms"] for s in sorted(want)] == [want[s]["p95_latency_ms"] for s in sorted(want)]


def test_longest_outage():
    got, want = report(), reference()
    for s in want:
        assert got[s]["longest_outage"] == want[s]["longest_outage"], s
