#!/bin/bash
set -e
cat > /app/todo.py <<'PY'
import argparse
import datetime
import json
import os
import sys

PRIOS = ["high", "normal", "low"]


class Err(Exception):
    pass


def date(s):
    try:
        if len(s) != 10:
            raise ValueError(s)
        return datetime.date.fromisoformat(s).isoformat()
    except ValueError:
        raise Err("invalid date %r" % s)


def prio(p):
    if p not in PRIOS:
        raise Err("invalid priority %r" % p)
    return p


def fmt(t):
    s = "%d. [%s] %s (%s)" % (t["id"], "x" if t["done"] else " ", t["title"], t["priority"])
    if t["due"]:
        s += " due:" + t["due"]
    if t["tags"]:
        s += " " + " ".join("#" + g for g in t["tags"])
    return s


def find(db, ids):
    out = []
    for i in ids:
        m = [t for t in db["tasks"] if t["id"] == i]
        if not m:
            raise Err("unknown id %d" % i)
        out.append(m[0])
    return out


def run(a, db):
    out = []
    if a.cmd == "add":
        if not a.title.strip():
            raise Err("empty title")
        t = {"id": db["next_id"], "title": a.title, "priority": prio(a.priority), "due": date(a.due) if a.due else None,
             "tags": a.tag or [], "done": False}
        db["next_id"] += 1
        db["tasks"].append(t)
        out.append("added %d" % t["id"])
    elif a.cmd == "list":
        ts = [t for t in db["tasks"] if a.all or not t["done"]]
        if a.tag:
            ts = [t for t in ts if a.tag in t["tags"]]
        if a.priority:
            ts = [t for t in ts if t["priority"] == prio(a.priority)]
        if a.overdue:
            today = date(a.overdue)
            ts = [t for t in ts if not t["done"] and t["due"] and t["due"] < today]
        ts.sort(key=lambda t: (PRIOS.index(t["priority"]), t["due"] is None, t["due"] or "", t["id"]))
        out += [fmt(t) for t in ts] or ["no tasks"]
        return out, False
    elif a.cmd in ("done", "rm"):
        ts = find(db, a.ids)
        for t in ts:
            if a.cmd == "done":
                t["done"] = True
                out.append("done %d" % t["id"])
            else:
                db["tasks"] = [x for x in db["tasks"] if x["id"] != t["id"]]
                out.append("removed %d" % t["id"])
    elif a.cmd == "undo":
        find(db, [a.id])[0]["done"] = False
        out.append("reopened %d" % a.id)
    elif a.cmd == "edit":
        t = dict(find(db, [a.id])[0])
        if a.title is not None:
            if not a.title.strip():
                raise Err("empty title")
            t["title"] = a.title
        if a.priority is not None:
            t["priority"] = prio(a.priority)
        if a.due is not None:
            t["due"] = None if a.due == "none" else date(a.due)
        tags = list(t["tags"])
        for g in a.add_tag or []:
            if g not in tags:
                tags.append(g)
        tags = [g for g in tags if g not in (a.rm_tag or [])]
        t["tags"] = tags
        db["tasks"] = [t if x["id"] == a.id else x for x in db["tasks"]]
        out.append("updated %d" % a.id)
    elif a.cmd == "stats":
        op = [t for t in db["tasks"] if not t["done"]]
        out.append("open: %d, done: %d, overdue-ready: %d" % (len(op), len(db["tasks"]) - len(op), sum(1 for t in op if t["due"])))
        return out, False
    return out, True


def main():
    p = argparse.ArgumentParser(prog="todo")
    p.add_argument("--file")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("add")
    s.add_argument("title")
    s.add_argument("--priority", default="normal")
    s.add_argument("--due")
    s.add_argument("--tag", action="append")
    s = sub.add_parser("list")
    s.add_argument("--all", action="store_true")
    s.add_argument("--tag")
    s.add_argument("--priority")
    s.add_argument("--overdue")
    for name in ("done", "rm"):
        sub.add_parser(name).add_argument("ids", nargs="+", type=int)
    sub.add_parser("undo").add_argument("id", type=int)
    s = sub.add_parser("edit")
    s.add_argument("id", type=int)
    s.add_argument("--title")
    s.add_argument("--priority")
    s.add_argument("--due")
    s.add_argument("--add-tag", action="append")
    s.add_argument("--rm-tag", action="append")
    sub.add_parser("stats")
    a = p.parse_args()
    path = a.file or os.environ.get("TODO_FILE") or os.path.expanduser("~/.todo.json")
    db = json.load(open(path)) if os.path.exists(path) else {"next_id": 1, "tasks": []}
    try:
        out, changed = run(a, db)
    except Err as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(1)
    if changed:
        with open(path, "w") as f:
            json.dump(db, f)
    for line in out:
        print(line)


main()
PY
