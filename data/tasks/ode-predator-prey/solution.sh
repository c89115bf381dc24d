#!/bin/bash
python3 - <<'PY'
import json

p = json.load(open("/app/params.json"))
a, b, d, g = p["alpha"], p["beta"], p["delta"], p["gamma"]


def f(x, y):
    return a * x - b * x * y, d * x * y - g * y


h = 0.001
steps = 1000  # steps per unit time
x, y = p["prey0"], p["predator0"]
out = ["t,x,y", f"0,{x!r},{y!r}"]
for t in range(1, int(p["t_end"]) + 1):
    for _ in range(steps):
        k1 = f(x, y)
        k2 = f(x + h / 2 * k1[0], y + h / 2 * k1[1])
        k3 = f(x + h / 2 * k2[0], y + h / 2 * k2[1])
        k4 = f(x + h * k3[0], y + h * k3[1])
        x += h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        y += h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    out.append(f"{t},{x!r},{y!r}")
open("/app/trajectory.csv", "w").write("\n".join(out) + "\n")
PY
