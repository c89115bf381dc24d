#!/bin/bash
cat > /app/fwcheck.py <<'PY'
import ipaddress, shlex, sys


def parse(path):
    chains, rules, table = {}, {}, None
    for raw in open(path):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("*"):
            table = line[1:]; continue
        if table != "filter" or line == "COMMIT":
            continue
        if line.startswith(":"):
            name, pol = line[1:].split()[:2]
            chains[name] = pol; rules.setdefault(name, []); continue
        tok = shlex.split(line)
        if tok[0] == "-A":
            rules.setdefault(tok[1], []).append(tok[2:])
    return chains, rules


def matches(tok, pkt):
    i, neg, target = 0, False, None
    ok = True
    def check(cond):
        nonlocal ok, neg
        if cond == neg:
            ok = False
        neg = False
    while i < len(tok):
        t = tok[i]
        if t == "!":
            neg = True; i += 1; continue
        if t in ("-s", "-d"):
            net = ipaddress.ip_network(tok[i + 1], strict=False)
            check(ipaddress.ip_address(pkt["src" if t == "-s" else "dst"]) in net); i += 2
        elif t == "-i":
            v = tok[i + 1]
            check(pkt["iface"].startswith(v[:-1]) if v.endswith("+") else pkt["iface"] == v); i += 2
        elif t == "-p":
            v = tok[i + 1]
            check(v == "all" or v == pkt["proto"]); i += 2
        elif t == "--dport":
            lo, _, hi = tok[i + 1].partition(":")
            check(pkt["proto"] in ("tcp", "udp") and int(lo) <= pkt["dport"] <= int(hi or lo)); i += 2
        elif t == "--dports":
            hit = False
            for part in tok[i + 1].split(","):
                lo, _, hi = part.partition(":")
                hit |= int(lo) <= pkt["dport"] <= int(hi or lo)
            check(pkt["proto"] in ("tcp", "udp") and hit); i += 2
        elif t == "--ctstate":
            check("NEW" in tok[i + 1].split(",")); i += 2
        elif t == "-m":
            i += 2
        elif t == "-j":
            target = tok[i + 1]; break
        elif t.startswith("--"):
            i += 2
        else:
            i += 1
    return ok, target


def run(chain, chains, rules, pkt, depth=0):
    for tok in rules.get(chain, []):
        ok, target = matches(tok, pkt)
        if not ok or target is None or target == "LOG":
            continue
        if target in ("ACCEPT", "DROP"):
            return target
        if target == "REJECT":
            return "DROP"
        if target == "RETURN":
            return None
        if target in rules or target in chains:
            r = run(target, chains, rules, pkt, depth + 1)
            if r:
                return r
    return None


def main():
    path, iface, src, dst, proto, dport = sys.argv[1:7]
    chains, rules = parse(path)
    pkt = {"iface": iface, "src": src, "dst": dst, "proto": proto, "dport": int(dport)}
    r = run("INPUT", chains, rules, pkt)
    print(r or ("ACCEPT" if chains.get("INPUT", "ACCEPT") == "ACCEPT" else "DROP"))


main()
PY
