#!/bin/bash
set -e
cat > /app/energy.py <<'PY'
import csv
import math
import sys

G = 9.80665
UNITS = {
    "mass": {"kg": 1.0, "g": 0.001, "lb": 0.45359237},
    "speed": {"m/s": 1.0, "km/h": 1 / 3.6, "mph": 0.44704, "ft/s": 0.3048},
    "height": {"m": 1.0, "cm": 0.01, "ft": 0.3048},
}


def main(src, dst):
    with open(src, newline="") as f, open(dst, "w", newline="") as g:
        out = csv.writer(g, lineterminator="\n")
        out.writerow(["id", "kinetic_j", "potential_j", "total_j", "impact_speed_m_s"])
        for lineno, row in enumerate(csv.DictReader(f), 2):
            vals = {}
            for col in ("mass", "speed", "height"):
                num, unit = row[col].strip().split(" ", 1)
                unit = unit.strip()
                if unit not in UNITS[col]:
                    print(f"line {lineno}: bad unit {unit}", file=sys.stderr)
                    break
                vals[col] = float(num) * UNITS[col][unit]
            else:
                m, v, h = vals["mass"], vals["speed"], vals["height"]
                ke, pe = m * v * v / 2, m * G * h
                out.writerow([row["id"], f"{ke:.3f}", f"{pe:.3f}", f"{ke + pe:.3f}", f"{math.sqrt(v * v + 2 * G * h):.3f}"])


main(sys.argv[1], sys.argv[2])
PY
