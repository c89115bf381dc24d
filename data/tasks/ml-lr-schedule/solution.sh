#!/bin/bash
set -e
cat > /app/schedule.py <<'PY'
import math


def lr_at(step, cfg):
    peak, lo, warm, total = cfg["peak_lr"], cfg["min_lr"], cfg["warmup_steps"], cfg["total_steps"]
    if step < warm:
        return peak * (step + 1) / warm
    if step >= total:
        return lo
    p = (step - warm) / (total - warm)
    if cfg["decay"] == "cosine":
        return lo + 0.5 * (peak - lo) * (1 + math.cos(math.pi * p))
    return peak + (lo - peak) * p


if __name__ == "__main__":
    import json
    cfg = json.load(open("/app/config.json"))
    with open("/app/lr_table.csv", "w") as f:
        f.write("step,lr\n")
        for s in range(cfg["total_steps"]):
            f.write(f"{s},{lr_at(s, cfg)!r}\n")
PY
cd /app && python3 schedule.py
