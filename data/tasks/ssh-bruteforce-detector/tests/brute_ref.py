"""Random sshd auth logs and the reference brute-force analysis (tests only)."""
import datetime as dt
import random
import re

FAIL = re.compile(r"Failed password for (?:invalid user )?(\S+) from (\S+) port")
OK = re.compile(r"Accepted (?:password|publickey) for (\S+) from (\S+) port")
REP = re.compile(r"message repeated (\d+) times: \[ (.*)\]$")


def ts(line):
    return dt.datetime.strptime("2024 " + line[:15], "%Y %b %d %H:%M:%S")


def analyse(text):
    fails, oks = {}, []
    for line in text.splitlines():
        if "sshd[" not in line:
            continue
        t, body = ts(line), line.split("]: ", 1)[1]
        n = 1
        m = REP.search(body)
        if m:
            n, body = int(m.group(1)), m.group(2)
        f = FAIL.search(body)
        if f:
            fails.setdefault(f.group(2), []).extend([(t, f.group(1))] * n)
        o = OK.search(body)
        if o:
            oks.append((t, o.group(1), o.group(2)))
    out = {}
    for ip, att in fails.items():
        times = [t for t, _ in att]
        flagged = None
        for i in range(4, len(times)):
            if (times[i] - times[i - 4]).total_seconds() <= 60:
                flagged = times[i]
                break
        if flagged is None:
            continue
        comp = sorted({u for t, u, oip in oks if oip == ip and t > flagged})
        out[ip] = {"flagged_at": flagged.strftime("%Y-%m-%d %H:%M:%S"), "failures": len(att),
                   "users": sorted({u for _, u in att}), "compromised_users": comp}
    return dict(sorted(out.items()))


def generate(seed):
    rnd = random.Random(seed)
    t = dt.datetime(2024, 3, 3, 23, 40, 0)
    ips = [f"203.0.113.{rnd.randint(1, 254)}" for _ in range(3)] + [f"198.51.100.{rnd.randint(1, 254)}" for _ in range(4)]
    users = ["root", "admin", "oracle", "deploy", "ubuntu", "git"]
    lines, pid = [], 4000
    for _ in range(260):
        t += dt.timedelta(seconds=rnd.choice([1, 2, 3, 5, 8, 13, 21, 40]))
        ip = rnd.choice(ips)
        pid += 1
        host = rnd.choice(["web1", "web2"])
        pre = f"{t.strftime('%b %d %H:%M:%S').replace(' 0', '  ', 1) if t.day < 10 else t.strftime('%b %d %H:%M:%S')} {host} sshd[{pid}]: "
        k = rnd.random()
        u = rnd.choice(users)
        port = rnd.randint(1024, 65535)
        if k < 0.55:
            inv = "invalid user " if rnd.random() < 0.3 else ""
            msg = f"Failed password for {inv}{u} from {ip} port {port} ssh2"
            if rnd.random() < 0.12:
                msg = f"message repeated {rnd.randint(2, 4)} times: [ {msg}]"
            lines.append(pre + msg)
        elif k < 0.68:
            lines.append(pre + f"Accepted {rnd.choice(['password', 'publickey'])} for {u} from {ip} port {port} ssh2")
        elif k < 0.8:
            lines.append(pre + f"Disconnected from authenticating user {u} {ip} port {port} [preauth]")
        elif k < 0.9:
            lines.append(pre.replace(f"sshd[{pid}]", f"CRON[{pid}]") + f"pam_unix(cron:session): session opened for user {u}")
        else:
            lines.append(pre + f"Failed publickey for {u} from {ip} port {port} ssh2")
        if rnd.random() < 0.05:
            t += dt.timedelta(seconds=rnd.randint(60, 400))
    return "\n".join(lines) + "\n"
