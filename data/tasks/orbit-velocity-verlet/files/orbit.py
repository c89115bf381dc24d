"""Test-particle orbit around a fixed central mass (2-D), a(r) = -GM r / |r|^3.

    python3 orbit.py CONFIG.json

CONFIG.json: {"GM": float, "r0": [x, y], "v0": [vx, vy], "dt": float, "steps": int}
Prints:
    final <x> <y> <vx> <vy>          state after `steps` steps (%.12e each)
    energy_drift <value>             (E_final - E_initial) / |E_initial|, E = v^2/2 - GM/|r|  (%.6e)
    period <value>                   see below (%.9f), or "period none"

Period: the time between the first two upward crossings of the positive x axis, i.e. steps where
y goes from < 0 to >= 0 while x > 0 (at the end of the step). The time of each crossing is found by linear
interpolation of y between the two states (t_k, y_k) and (t_{k+1}, y_{k+1}); t_k = k * dt.

The current integrator is explicit Euler and spirals outwards: it has to be replaced by
velocity Verlet (kick-drift-kick):
    v_half = v + a(r) * dt / 2;  r_new = r + v_half * dt;  v_new = v_half + a(r_new) * dt / 2
"""
import json
import math
import sys


def accel(gm, x, y):
    r3 = (x * x + y * y) ** 1.5
    return -gm * x / r3, -gm * y / r3


def main(path):
    cfg = json.load(open(path))
    gm, dt, steps = cfg["GM"], cfg["dt"], cfg["steps"]
    x, y = cfg["r0"]
    vx, vy = cfg["v0"]
    e0 = (vx * vx + vy * vy) / 2 - gm / math.hypot(x, y)
    for _ in range(steps):
        ax, ay = accel(gm, x, y)
        x, y = x + vx * dt, y + vy * dt
        vx, vy = vx + ax * dt, vy + ay * dt
    e1 = (vx * vx + vy * vy) / 2 - gm / math.hypot(x, y)
    print(f"final {x:.12e} {y:.12e} {vx:.12e} {vy:.12e}")
    print(f"energy_drift {(e1 - e0) / abs(e0):.6e}")
    print("period none")


if __name__ == "__main__":
    main(sys.argv[1])
