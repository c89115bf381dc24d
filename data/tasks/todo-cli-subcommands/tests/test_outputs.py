import os
import random
import subprocess
import sys


class Todo:
    def __init__(self, path, use_env=False):
        self.path, self.use_env = str(path), use_env

    def __call__(self, *args):
        env = {k: v for k, v in os.environ.items() if k != "TODO_FILE"}
        if self.use_env:
            env["TODO_FILE"] = self.path
            argv = list(args)
        else:
            argv = ["--file", self.path, *args]
        return subprocess.run([sys.executable, "/app/todo.py", *argv], capture_output=True, text=True, env=env, timeout=60)

    def ok(self, *args):
        r = self(*args)
        assert r.returncode == 0, (args, r.stderr)
        return r.stdout.splitlines()


def test_add_and_list_format(tmp_path):
    t = Todo(tmp_path / "t.json")
    assert t.ok("add", "Buy milk") == ["added 1"]
    assert t.ok("add", "File taxes", "--priority", "high", "--due", "2025-04-15", "--tag", "money", "--tag", "admin") == ["added 2"]
    assert t.ok("add", "Call mom", "--priority", "low", "--tag", "family") == ["added 3"]
    assert t.ok("list") == ["2. [ ] File taxes (high) due:2025-04-15 #money #admin", "1. [ ] Buy milk (normal)",
                            "3. [ ] Call mom (low) #family"]
    env = Todo(tmp_path / "t.json", use_env=True)
    assert env.ok("stats") == ["open: 3, done: 0, overdue-ready: 1"]
    assert Todo(tmp_path / "empty.json").ok("list") == ["no tasks"]


def test_filters_and_order(tmp_path):
    t = Todo(tmp_path / "t.json")
    rng = random.Random(3)
    tasks = []
    for i in range(1, 16):
        pr = rng.choice(["low", "normal", "high"])
        due = rng.choice([None, "2025-0%d-1%d" % (rng.randint(1, 9), rng.randint(0, 9))])
        tags = rng.sample(["a", "b", "c"], rng.randint(0, 2))
        args = ["add", "task %d" % i, "--priority", pr]
        if due:
            args += ["--due", due]
        for g in tags:
            args += ["--tag", g]
        t.ok(*args)
        tasks.append({"id": i, "p": pr, "due": due, "tags": tags, "done": False})
    for i in rng.sample(range(1, 16), 4):
        t.ok("done", str(i))
        tasks[i - 1]["done"] = True
    order = {"high": 0, "normal": 1, "low": 2}

    def expect(ts):
        ts = sorted(ts, key=lambda x: (order[x["p"]], x["due"] is None, x["due"] or "", x["id"]))
        return [int(l.split(".")[0]) for l in [("%d." % x["id"]) for x in ts]]

    def ids(lines):
        return [] if lines == ["no tasks"] else [int(l.split(".")[0]) for l in lines]
    assert ids(t.ok("list")) == expect([x for x in tasks if not x["done"]])
    assert ids(t.ok("list", "--all")) == expect(tasks)
    assert ids(t.ok("list", "--tag", "b")) == expect([x for x in tasks if not x["done"] and "b" in x["tags"]])
    assert ids(t.ok("list", "--all", "--priority", "high")) == expect([x for x in tasks if x["p"] == "high"])
    assert ids(t.ok("list", "--overdue", "2025-05-01")) == expect(
        [x for x in tasks if not x["done"] and x["due"] and x["due"] < "2025-05-01"])
    done_line = [l for l in t.ok("list", "--all") if "[x]" in l]
    assert len(done_line) == 4


def test_done_undo_rm_edit(tmp_path):
    t = Todo(tmp_path / "t.json")
    for title in ["one", "two", "three"]:
        t.ok("add", title)
    assert t.ok("done", "1", "3") == ["done 1", "done 3"]
    assert t.ok("undo", "3") == ["reopened 3"]
    assert t.ok("rm", "2") == ["removed 2"]
    assert t.ok("add", "four") == ["added 4"]
    assert t.ok("edit", "4", "--title", "FOUR", "--priority", "high", "--due", "2024-02-29", "--add-tag", "x",
                "--add-tag", "y") == ["updated 4"]
    assert t.ok("edit", "4", "--rm-tag", "x", "--add-tag", "z") == ["updated 4"]
    assert t.ok("list", "--all") == ["4. [ ] FOUR (high) due:2024-02-29 #y #z", "1. [x] one (normal)", "3. [ ] three (normal)"]
    t.ok("edit", "4", "--due", "none")
    assert t.ok("list")[0] == "4. [ ] FOUR (high) #y #z"
    assert t.ok("stats") == ["open: 2, done: 1, overdue-ready: 0"]


def test_errors_change_nothing(tmp_path):
    t = Todo(tmp_path / "t.json")
    t.ok("add", "keep me", "--due", "2025-01-01")
    before = open(tmp_path / "t.json").read()
    for args in [["add", "x", "--due", "2025-02-30"], ["add", "x", "--priority", "urgent"], ["add", "   "],
                 ["done", "1", "7"], ["rm", "9"], ["undo", "5"], ["edit", "1", "--due", "tomorrow"],
                 ["edit", "1", "--title", ""], ["list", "--overdue", "2025-13-01"]]:
        r = t(*args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert r.stderr.startswith("error: ") and r.stdout == ""
        assert open(tmp_path / "t.json").read() == before
    assert t("frobnicate").returncode == 2
    assert t.ok("list") == ["1. [ ] keep me (normal) due:2025-01-01"]
