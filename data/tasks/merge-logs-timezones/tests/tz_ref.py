"""Random multi-zone logs around DST changes and the reference merge (tests only)."""
import datetime as dt
import os
import random
from zoneinfo import ZoneInfo

UTC = dt.timezone.utc
ZONES = ["America/New_York", "Europe/Berlin", "Australia/Sydney", "Asia/Kolkata", "UTC", "America/Chicago"]
# windows of UTC time containing DST changes (US fall back 2024-11-03, EU 2024-10-27, AU 2024-10-06 / 2024-04-07)
WINDOWS = [dt.datetime(2024, 11, 3, 4, 30, tzinfo=UTC), dt.datetime(2024, 10, 27, 0, 15, tzinfo=UTC),
           dt.datetime(2024, 3, 10, 6, 30, tzinfo=UTC), dt.datetime(2024, 3, 31, 0, 30, tzinfo=UTC),
           dt.datetime(2024, 4, 6, 15, 30, tzinfo=UTC)]


def generate(d, seed):
    rnd = random.Random(seed)
    os.makedirs(d, exist_ok=True)
    start = rnd.choice(WINDOWS)
    hosts = rnd.sample(["web-1", "db-main", "cache", "edge-eu", "api", "batch"], 4)
    zones = dict(zip(hosts, rnd.sample(ZONES, 4)))
    events = []
    with open(os.path.join(d, "hosts.tz"), "w") as f:
        f.write("# host  zone\n")
        for h in hosts:
            f.write(f"{h}\t{zones[h]}\n")
    os.makedirs(os.path.join(d, "logs"), exist_ok=True)
    for h in hosts:
        t = start + dt.timedelta(seconds=rnd.randint(0, 300))
        lines = []
        for i in range(rnd.randint(40, 70)):
            t += dt.timedelta(seconds=rnd.choice([7, 60, 300, 600, 900, 1200]))
            loc = t.astimezone(ZoneInfo(zones[h]))
            msg = f"{rnd.choice(['INFO', 'WARN', 'ERROR'])} event {i} on {h}"
            lines.append(f"{loc.strftime('%Y-%m-%d %H:%M:%S')} {msg}")
            events.append((t, h, i, msg))
        with open(os.path.join(d, "logs", f"{h}.log"), "w") as f:
            f.write("\n".join(lines) + "\n")
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    return "".join(f"{t.strftime('%Y-%m-%dT%H:%M:%SZ')} {h} {m}\n" for t, h, _, m in events)
