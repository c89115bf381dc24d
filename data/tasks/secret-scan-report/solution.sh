#!/bin/bash
python3 - <<'PY'
import json, os, re
pats = {
    "aws_access_key": re.compile(r"\bAKIA[A-Z0-9]{16}\b"),
    "github_token": re.compile(r"\bghp_[A-Za-z0-9]{36}\b"),
    "private_key": re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
    "url_password": re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:([^@\s/]+)@"),
    "slack_webhook": re.compile(r"https://hooks\.slack\.com/services/\S+"),
}
def placeholder(t, m):
    v = m.group(1) if t == "url_password" else m.group(0)
    if t == "url_password" and (v in ("password", "****") or v.startswith("$")):
        return True
    core = re.sub(r"^(AKIA|ghp_)", "", v)
    return "EXAMPLE" in v or set(core) <= set("xX")
out = set()
root = "/app/project"
for dp, dns, fns in os.walk(root):
    dns[:] = [d for d in dns if d != ".git"]
    for fn in fns:
        p = os.path.join(dp, fn)
        for i, line in enumerate(open(p, errors="replace").read().splitlines(), 1):
            for t, rx in pats.items():
                if any(not placeholder(t, m) for m in rx.finditer(line)):
                    out.add((os.path.relpath(p, root), i, t))
json.dump([{"file": f, "line": l, "type": t} for f, l, t in sorted(out)], open("/app/secrets_report.json", "w"), indent=1)
PY
