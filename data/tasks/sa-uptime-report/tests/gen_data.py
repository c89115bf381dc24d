import random

SERVICES = ["api", "auth", "search", "billing"]


def make_lines():
    rng = random.Random(606)
    lines = []
    state = {s: True for s in SERVICES}
    for minute in range(360):
        ts = f"2024-03-01T{minute // 60:02d}:{minute % 60:02d}:00Z"
        if minute % 97 == 50:
            lines.append(f"# {ts} probe restarted")
        for s in SERVICES:
            if s == "billing" and 200 <= minute < 215:
                continue  # probe could not reach billing: no sample at all
            flip = 0.02 if state[s] else 0.25
            if rng.random() < flip:
                state[s] = not state[s]
            if state[s]:
                lines.append(f"{ts} {s} UP {rng.randint(20, 400) + (600 if rng.random() < 0.06 else 0)}ms")
            else:
                lines.append(f"{ts} {s} DOWN {rng.choice(['timeout', 'http_503', 'conn_refused'])}")
    return lines


if __name__ == "__main__":
    import os
    os.makedirs("/app/logs", exist_ok=True)
    open("/app/logs/healthcheck.log", "w").write("\n".join(make_lines()) + "\n")
