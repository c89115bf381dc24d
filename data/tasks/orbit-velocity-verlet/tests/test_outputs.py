import json
import math
import subprocess


def reference(gm, r0, v0, dt, steps):
    x, y = r0
    vx, vy = v0

    def acc(x, y):
        r3 = (x * x + y * y) ** 1.5
        return -gm * x / r3, -gm * y / r3
    e0 = (vx * vx + vy * vy) / 2 - gm / math.hypot(x, y)
    ax, ay = acc(x, y)
    cross = []
    for k in range(steps):
        hx, hy = vx + ax * dt / 2, vy + ay * dt / 2
        nx, ny = x + hx * dt, y + hy * dt
        ax, ay = acc(nx, ny)
        vx, vy = hx + ax * dt / 2, hy + ay * dt / 2
        if y < 0 <= ny and nx > 0 and len(cross) < 2:
            cross.append(k * dt + dt * (-y) / (ny - y))
        x, y = nx, ny
    e1 = (vx * vx + vy * vy) / 2 - gm / math.hypot(x, y)
    return (x, y, vx, vy), (e1 - e0) / abs(e0), (cross[1] - cross[0] if len(cross) == 2 else None)


def run(tmp_path, gm, r0, v0, dt, steps):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"GM": gm, "r0": r0, "v0": v0, "dt": dt, "steps": steps}))
    r = subprocess.run(["python3", "/app/orbit.py", str(p)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    out = {line.split()[0]: line.split()[1:] for line in r.stdout.splitlines()}
    state = tuple(float(v) for v in out["final"])
    period = None if out["period"] == ["none"] else float(out["period"][0])
    return state, float(out["energy_drift"][0]), period


def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(b))


CASES = [(1.0, [1.0, 0.0], [0.0, 1.2], 0.001, 35000), (398600.0, [7000.0, 0.0], [0.0, 8.2], 1.0, 17000),
         (2.5, [0.0, -2.0], [1.3, 0.1], 0.002, 16000)]


def test_final_state_matches_verlet(tmp_path):
    for case in CASES:
        state, drift, _ = run(tmp_path, *case)
        want, wdrift, _ = reference(*case)
        for a, b in zip(state, want):
            assert close(a, b, 1e-8), (case, state, want)
        assert abs(drift - wdrift) < 1e-9 + 1e-3 * abs(wdrift)


def test_period_and_energy(tmp_path):
    gm, r0, v0 = 1.0, [1.0, 0.0], [0.0, 1.2]
    state, drift, period = run(tmp_path, gm, r0, v0, 0.001, 35000)
    _, _, want_period = reference(gm, r0, v0, 0.001, 35000)
    eps = 1.2 ** 2 / 2 - 1.0
    a = -gm / (2 * eps)
    kepler = 2 * math.pi * math.sqrt(a ** 3 / gm)
    assert period is not None and abs(period - want_period) < 1e-7
    assert abs(period - kepler) / kepler < 1e-5
    assert abs(drift) < 1e-6
    for case in CASES[1:]:
        _, _, p = run(tmp_path, *case)
        _, _, wp = reference(*case)
        assert (p is None) == (wp is None) and (p is None or abs(p - wp) < 1e-6 * max(1.0, wp)), (case, p, wp)
    _, _, p = run(tmp_path, 1.0, [1.0, 0.0], [0.0, 1.0], 0.01, 300)
    assert p is None
