import csv
import math
import subprocess
import sys

sys.path.insert(0, "/app")


def ref(step, c):
    if step < c["warmup_steps"]:
        return c["peak_lr"] * (step + 1) / c["warmup_steps"]
    if step >= c["total_steps"]:
        return c["min_lr"]
    p = (step - c["warmup_steps"]) / (c["total_steps"] - c["warmup_steps"])
    if c["decay"] == "cosine":
        return c["min_lr"] + 0.5 * (c["peak_lr"] - c["min_lr"]) * (1 + math.cos(math.pi * p))
    return c["peak_lr"] + (c["min_lr"] - c["peak_lr"]) * p


def check(cfg, steps):
    from schedule import lr_at
    for s in steps:
        got = lr_at(s, dict(cfg))
        assert math.isclose(got, ref(s, cfg), rel_tol=1e-9, abs_tol=1e-15), (cfg, s, got, ref(s, cfg))


def test_cosine_schedule():
    cfg = {"peak_lr": 1e-3, "min_lr": 1e-5, "warmup_steps": 37, "total_steps": 501, "decay": "cosine"}
    check(cfg, list(range(0, 520)))
    cfg = {"peak_lr": 2.0, "min_lr": 0.0, "warmup_steps": 1, "total_steps": 3, "decay": "cosine"}
    check(cfg, [0, 1, 2, 3, 10])


def test_linear_and_no_warmup():
    cfg = {"peak_lr": 0.5, "min_lr": 0.05, "warmup_steps": 0, "total_steps": 90, "decay": "linear"}
    check(cfg, list(range(0, 100)))
    cfg = {"peak_lr": 0.1, "min_lr": 0.01, "warmup_steps": 10, "total_steps": 20, "decay": "linear"}
    check(cfg, list(range(0, 25)))
    cfg = {"peak_lr": 0.3, "min_lr": 0.0, "warmup_steps": 0, "total_steps": 50, "decay": "cosine"}
    check(cfg, [0, 25, 49, 50])


def test_lr_table():
    cfg = {"peak_lr": 0.0003, "min_lr": 0.00003, "warmup_steps": 100, "total_steps": 1000, "decay": "cosine"}
    rows = list(csv.DictReader(open("/app/lr_table.csv")))
    assert [int(r["step"]) for r in rows] == list(range(1000))
    for r in rows:
        assert math.isclose(float(r["lr"]), ref(int(r["step"]), cfg), rel_tol=1e-9), r
    out = subprocess.run(["python3", "-c", "import schedule"], cwd="/app", capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout == "", out.stdout + out.stderr
