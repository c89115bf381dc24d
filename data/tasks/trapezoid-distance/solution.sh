#!/bin/bash
python3 - <<'PY'
import csv, json
rows = list(csv.DictReader(open("/app/velocity.csv")))
t = [float(r["time_s"]) for r in rows]
v = [float(r["velocity_m_s"]) for r in rows]
d = sum((t[i + 1] - t[i]) * (v[i] + v[i + 1]) / 2 for i in range(len(t) - 1))
peak = t[max(range(len(v)), key=v.__getitem__)]
json.dump({"distance_m": d, "mean_velocity_m_s": d / (t[-1] - t[0]), "peak_time_s": peak},
          open("/app/result.json", "w"), indent=2)
PY
