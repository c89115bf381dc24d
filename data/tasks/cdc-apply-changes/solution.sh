#!/bin/bash
set -e
python3 - <<'PY'
import json
def apply(snapshot, events):
    state = {r["id"]: dict(r) for r in snapshot}
    errors = []
    seen = set()
    for ev in sorted(events, key=lambda e: e["seq"]):
        if ev["seq"] in seen:
            continue
        seen.add(ev["seq"])
        op, rid = ev["op"], ev["id"]
        if op == "insert":
            if rid in state:
                errors.append((ev["seq"], "exists"))
                continue
            rec = {k: v for k, v in ev["data"].items() if v is not None}
            rec["id"] = rid
            state[rid] = rec
        elif op == "update":
            if rid not in state:
                errors.append((ev["seq"], "missing"))
                continue
            for k, v in ev["data"].items():
                if k == "id":
                    continue
                if v is None:
                    state[rid].pop(k, None)
                else:
                    state[rid][k] = v
        elif op == "delete":
            if rid not in state:
                errors.append((ev["seq"], "missing"))
                continue
            del state[rid]
    return [state[k] for k in sorted(state)], errors


events = [json.loads(l) for l in open("/app/changes.jsonl") if l.strip()]
final, errors = apply(json.load(open("/app/snapshot.json")), events)
json.dump(final, open("/app/final.json", "w"), indent=2)
open("/app/errors.txt", "w").write("".join(f"{s} {k}\n" for s, k in errors))
PY
