"""Reference evaluator of the task's sshd_config rules and a random config generator (tests only)."""
import fnmatch
import ipaddress
import random

ACCUM = {"hostkey", "acceptenv"}


def split(line):
    s = line.strip()
    if not s or s.startswith("#"):
        return None
    if "=" in s and (" " not in s.split("=", 1)[0].strip()):
        k, v = s.split("=", 1)
    else:
        parts = s.split(None, 1)
        k, v = parts[0], parts[1] if len(parts) > 1 else ""
    return k.strip().lower(), " ".join(v.split())


def pat_match(value, patterns, is_addr=False):
    ok = False
    for p in patterns.split(","):
        neg = p.startswith("!")
        p = p[1:] if neg else p
        if is_addr and "/" in p:
            try:
                hit = ipaddress.ip_address(value) in ipaddress.ip_network(p, strict=False)
            except ValueError:
                hit = False
        else:
            hit = fnmatch.fnmatchcase(value, p)
        if hit and neg:
            return False
        ok = ok or hit
    return ok


def match_line(args, ctx):
    words = args.split()
    if [w.lower() for w in words] == ["all"]:
        return True
    for crit, pats in zip(words[::2], words[1::2]):
        c = crit.lower()
        if c == "user":
            hit = pat_match(ctx["user"], pats)
        elif c == "group":
            neg = [p[1:] for p in pats.split(",") if p.startswith("!")]
            pos = [p for p in pats.split(",") if not p.startswith("!")]
            hit = any(fnmatch.fnmatchcase(g, p) for g in ctx["groups"] for p in pos) and \
                not any(fnmatch.fnmatchcase(g, p) for g in ctx["groups"] for p in neg)
        elif c == "host":
            hit = pat_match(ctx["host"], pats)
        elif c == "address":
            hit = pat_match(ctx["addr"], pats, True)
        else:
            hit = False
        if not hit:
            return False
    return True


def effective(text, ctx):
    glob, acc, matched = {}, {}, {}
    active = None
    for line in text.splitlines():
        kv = split(line)
        if kv is None:
            continue
        k, v = kv
        if k == "match":
            active = match_line(v, ctx)
            continue
        if active is None:
            if k in ACCUM:
                acc.setdefault(k, []).append(v)
            else:
                glob.setdefault(k, v)
        elif active and k not in ACCUM:
            matched.setdefault(k, v)
    res = dict(glob)
    res.update(matched)
    lines = []
    for k in sorted(set(res) | set(acc)):
        if k in acc:
            lines += [f"{k} {v}" for v in acc[k]]
        else:
            lines.append(f"{k} {res[k]}")
    return lines


KEYS = ["PermitRootLogin", "PasswordAuthentication", "X11Forwarding", "AllowTcpForwarding", "MaxSessions",
        "ForceCommand", "ChrootDirectory", "Banner", "ClientAliveInterval", "PubkeyAuthentication"]
VALUES = {"PermitRootLogin": ["no", "yes", "prohibit-password"], "PasswordAuthentication": ["yes", "no"],
          "X11Forwarding": ["yes", "no"], "AllowTcpForwarding": ["yes", "no", "local"], "MaxSessions": ["2", "10", "1"],
          "ForceCommand": ["internal-sftp", "/usr/bin/restricted shell"], "ChrootDirectory": ["/srv/sftp/%u", "none"],
          "Banner": ["/etc/issue.net", "none"], "ClientAliveInterval": ["0", "120", "300"],
          "PubkeyAuthentication": ["yes", "no"]}


def generate(seed):
    rnd = random.Random(seed)

    def kv():
        k = rnd.choice(KEYS)
        key = rnd.choice([k, k.lower(), k.upper()])
        sep = rnd.choice([" ", "\t", " = ", "="])
        return f"{key}{sep}{rnd.choice(VALUES[k])}"
    lines = ["# generated sshd_config", "Port 22"]
    for _ in range(rnd.randint(5, 9)):
        lines.append(kv() if rnd.random() < 0.85 else "# " + kv())
    lines += ["HostKey /etc/ssh/ssh_host_ed25519_key", "AcceptEnv LANG LC_*", "HostKey /etc/ssh/ssh_host_rsa_key",
              "acceptenv   TZ"]
    rnd.shuffle(lines)
    crits = [("User", ["alice", "bob", "sftp-*", "!root,*", "a*,!alice", "b?b"]),
             ("Group", ["sftponly", "admins", "dev*", "!admins,*"]),
             ("Address", ["10.0.0.0/8", "192.168.1.0/24,!192.168.1.13", "172.16.*", "2001:db8::/32", "10.1.2.3"]),
             ("Host", ["*.example.com", "jump?.corp"])]
    for _ in range(rnd.randint(3, 5)):
        if rnd.random() < 0.1:
            lines.append("Match all")
        else:
            chosen = rnd.sample(crits, rnd.randint(1, 2))
            lines.append("Match " + " ".join(f"{rnd.choice([c, c.lower()])} {rnd.choice(p)}" for c, p in chosen))
        for _ in range(rnd.randint(1, 4)):
            lines.append("    " + kv())
    return "\n".join(lines) + "\n"


def random_ctx(rnd):
    return {"user": rnd.choice(["alice", "bob", "root", "sftp-jane", "anna", "bab", "carol"]),
            "groups": rnd.sample(["sftponly", "admins", "developers", "users"], rnd.randint(1, 3)),
            "host": rnd.choice(["ws1.example.com", "jump1.corp", "unknown", "jump12.corp"]),
            "addr": rnd.choice(["10.2.3.4", "192.168.1.13", "192.168.1.77", "172.16.5.5", "8.8.8.8", "2001:db8::5", "10.1.2.3"])}
