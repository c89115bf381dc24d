"""Random rotated access/auth logs and reference answers for the log query service (tests only)."""
import datetime as dt
import gzip
import os
import random
import re

ACC = re.compile(r'^(\S+) \S+ \S+ \[([^\]]+)\] "[^"]*" (\d{3}) (\d+|-)')
FAIL = re.compile(r"Failed password for (?:invalid user )?(\S+) from (\S+) port")


def access_line(rnd, t, ip):
    off = rnd.choice([0, 60, -300, 330])
    tz = dt.timezone(dt.timedelta(minutes=off))
    lt = t.astimezone(tz)
    st = rnd.choice([200, 200, 200, 301, 404, 500, 204])
    b = "-" if st == 204 else str(rnd.randint(10, 5000))
    path = rnd.choice(["/", "/api/x?q=1", "/static/a b.css", "/login"])
    return f'{ip} - - [{lt.strftime("%d/%b/%Y:%H:%M:%S %z")}] "GET {path} HTTP/1.1" {st} {b} "-" "agent \\"x\\" 1.0"'


def auth_line(rnd, t, ip):
    u = rnd.choice(["root", "admin", "alice", "bob"])
    k = rnd.random()
    if k < 0.6:
        inv = "invalid user " if rnd.random() < 0.3 else ""
        msg = f"sshd[{rnd.randint(100, 999)}]: Failed password for {inv}{u} from {ip} port {rnd.randint(1000, 65000)} ssh2"
    elif k < 0.8:
        msg = f"sshd[{rnd.randint(100, 999)}]: Accepted password for {u} from {ip} port 22 ssh2"
    else:
        msg = f"CRON[{rnd.randint(100, 999)}]: pam_unix(cron:session): session opened for user {u}"
    return f"{t.strftime('%Y-%m-%dT%H:%M:%S')}+00:00 host1 {msg}"


def write(path, lines):
    data = "".join(l + "\n" for l in lines).encode()
    if path.endswith(".gz"):
        data = gzip.compress(data)
    with open(path, "wb") as f:
        f.write(data)


def generate(d, seed):
    rnd = random.Random(seed)
    os.makedirs(d, exist_ok=True)
    ips = [f"10.0.{rnd.randint(0, 3)}.{rnd.randint(1, 40)}" for _ in range(12)]
    t = dt.datetime(2024, 3, 12, 8, 0, tzinfo=dt.timezone.utc)
    chunks = {"access": [], "auth": []}
    for kind in chunks:
        tt = t
        for part in range(4):
            lines = []
            for _ in range(rnd.randint(30, 60)):
                tt += dt.timedelta(seconds=rnd.randint(1, 240))
                ip = rnd.choice(ips)
                lines.append(access_line(rnd, tt, ip) if kind == "access" else auth_line(rnd, tt, ip))
            chunks[kind].append(lines)
    for kind, parts in chunks.items():
        names = [f"{kind}.log.3.gz", f"{kind}.log.2.gz", f"{kind}.log.1", f"{kind}.log"]
        for name, lines in zip(names, parts):
            write(os.path.join(d, name), lines)
    write(os.path.join(d, "access.log.bak"), [access_line(rnd, t, "9.9.9.9")])
    write(os.path.join(d, "other.log"), [auth_line(rnd, t, "9.9.9.9")])


def read_all(d, kind):
    out = []
    for n in sorted(os.listdir(d)):
        if re.fullmatch(kind + r"\.log(\.\d+(\.gz)?)?", n):
            p = os.path.join(d, n)
            data = gzip.open(p, "rt").read() if n.endswith(".gz") else open(p).read()
            out += data.splitlines()
    return out


def access_entries(d):
    out = []
    for line in read_all(d, "access"):
        m = ACC.match(line)
        if m:
            t = dt.datetime.strptime(m.group(2), "%d/%b/%Y:%H:%M:%S %z")
            out.append((m.group(1), t, m.group(3), 0 if m.group(4) == "-" else int(m.group(4))))
    return out


def requests(d, start=None, end=None):
    by = {}
    for ip, t, st, b in access_entries(d):
        if (start is None or t >= start) and (end is None or t < end):
            by[st] = by.get(st, 0) + 1
    return {"total": sum(by.values()), "by_status": by}


def top_clients(d, n):
    agg = {}
    for ip, t, st, b in access_entries(d):
        r = agg.setdefault(ip, [0, 0])
        r[0] += 1
        r[1] += b
    rows = sorted(agg.items(), key=lambda kv: (-kv[1][0], kv[0]))[:n]
    return {"clients": [{"ip": ip, "requests": r, "bytes": b} for ip, (r, b) in rows]}


def failed(d, user):
    ips, c = set(), 0
    for line in read_all(d, "auth"):
        m = FAIL.search(line)
        if m and m.group(1) == user:
            c += 1
            ips.add(m.group(2))
    return {"user": user, "failed": c, "ips": sorted(ips)}
