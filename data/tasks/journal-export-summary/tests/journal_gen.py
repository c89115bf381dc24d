"""Generator and reference parser for journalctl -o export streams (used by the tests)."""
import random
import struct

UNITS = ["nginx.service", "sshd.service", "cron.service", "postgresql@15-main.service", "app-worker@3.service"]


def field(key, value):
    raw = value.encode() if isinstance(value, str) else value
    if b"\n" in raw or any(b < 32 and b not in (9,) for b in raw):
        return key.encode() + b"\n" + struct.pack("<Q", len(raw)) + raw + b"\n"
    return key.encode() + b"=" + raw + b"\n"


def generate(seed, n=120):
    rnd = random.Random(seed)
    boots = [f"{rnd.getrandbits(128):032x}" for _ in range(rnd.randint(1, 4))]
    out = []
    for i in range(n):
        ts = 1700000000000000 + rnd.randint(0, 10**11)
        fields = [("__CURSOR", f"s=abc;i={i:x};b={rnd.choice(boots)}"), ("__REALTIME_TIMESTAMP", str(ts)),
                  ("__MONOTONIC_TIMESTAMP", str(rnd.randint(1, 10**9))), ("_BOOT_ID", rnd.choice(boots))]
        if rnd.random() < 0.9:
            fields.append(("PRIORITY", str(rnd.randint(0, 7))))
        if rnd.random() < 0.85:
            fields.append(("_SYSTEMD_UNIT", rnd.choice(UNITS)))
        kind = rnd.random()
        if kind < 0.2:
            msg = f"Traceback (most recent call last):\n\n  File \"w.py\", line {i}\nValueError: bad {i}"
        elif kind < 0.3:
            msg = f"binary\x01payload\x02{i}"
        elif kind < 0.4:
            msg = f"key=value pair {i} == x"
        else:
            msg = f"message number {i} from worker"
        fields.append(("MESSAGE", msg))
        if rnd.random() < 0.3:
            fields.append(("SYSLOG_IDENTIFIER", "app"))
        rnd.shuffle(fields[4:])
        out.append(b"".join(field(k, v) for k, v in fields))
    return b"\n".join(out) + b"\n"


def parse(data):
    entries, cur, i = [], {}, 0
    while i < len(data):
        if data[i:i + 1] == b"\n":
            if cur:
                entries.append(cur)
            cur = {}
            i += 1
            continue
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            cur[k.decode()] = v
            i = nl + 1
        else:
            (size,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            cur[line.decode()] = data[nl + 9:nl + 9 + size]
            i = nl + 9 + size + 1
    if cur:
        entries.append(cur)
    return entries


def summary(data):
    entries = parse(data)
    errors, first = {}, {}
    for e in sorted(entries, key=lambda e: int(e["__REALTIME_TIMESTAMP"])):
        if "PRIORITY" in e and int(e["PRIORITY"]) <= 3:
            unit = e.get("_SYSTEMD_UNIT", b"-").decode()
            errors[unit] = errors.get(unit, 0) + 1
            first.setdefault(unit, e.get("MESSAGE", b"").decode("utf-8", "replace"))
    return {"entries": len(entries), "boots": len({e["_BOOT_ID"] for e in entries}),
            "errors_by_unit": errors, "first_error": first}
