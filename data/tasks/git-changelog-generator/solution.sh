#!/bin/bash
set -e
cat > /app/changelog <<'PY'
#!/usr/bin/env python3
import os, re, subprocess, sys
os.environ["TZ"] = "UTC"

def git(*a):
    return subprocess.run(["git", *a], capture_output=True, text=True, check=True).stdout

tags = []
for t in git("tag", "--merged", "HEAD").split():
    m = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)", t)
    if m:
        tags.append((tuple(map(int, m.groups())), t))
tags.sort(reverse=True)
SUBJ = re.compile(r"([a-z]+)(?:\(([^)]*)\))?(!)?: (\S.*)")

def section(rng):
    groups = {"Breaking Changes": [], "Features": [], "Bug Fixes": []}
    out = git("log", "--format=%H%x1f%B%x1e", *rng)
    for rec in out.split("\x1e"):
        rec = rec.strip("\n")
        if not rec:
            continue
        h, body = rec.split("\x1f", 1)
        lines = body.split("\n")
        m = SUBJ.fullmatch(lines[0])
        if not m:
            continue
        typ, scope, bang, desc = m.groups()
        entry = f"- {scope + ': ' if scope else ''}{desc} ({h[:7]})"
        if bang or any(l.startswith("BREAKING CHANGE: ") for l in lines[1:]):
            groups["Breaking Changes"].append(entry)
        elif typ == "feat":
            groups["Features"].append(entry)
        elif typ == "fix":
            groups["Bug Fixes"].append(entry)
    return groups

sections = []
top = ["HEAD"] + ([f"^{tags[0][1]}"] if tags else [])
sections.append(("## Unreleased", section(top)))
for i, (_, t) in enumerate(tags):
    rng = [t] + ([f"^{tags[i + 1][1]}"] if i + 1 < len(tags) else [])
    date = git("log", "-1", "--format=%cd", "--date=format-local:%Y-%m-%d", t + "^{commit}").strip()
    sections.append((f"## {t} ({date})", section(rng)))
lines = ["# Changelog"]
for head, groups in sections:
    if not any(groups.values()):
        continue
    lines += ["", head]
    for g, entries in groups.items():
        if entries:
            lines += ["", f"### {g}"] + entries
print("\n".join(lines))
PY
chmod +x /app/changelog
