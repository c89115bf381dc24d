"""Turns per episode and stop reasons of a policy on `make learn`'s held-out instances under the turn-cap
rule's two settings: `rollout.end_on_turn_cap` True (the earlier rule: a turn cut at max_tokens_per_turn
ends the episode) and False (the default: it is a malformed turn and the episode goes on, up to
max_format_errors).

    python bench/bench_turn_cap.py --out-dir runs/learn [--policy default] [--k 1]

Needs the held-out instances of a `make learn` run (<out-dir>/tasks/validation; any run's, or
`python -m experiments.learn --no-train` makes them). Runs experiments.learn.evaluate_policy with the
preset's policy, rollout and sandbox sections, k episodes per instance, once per setting, and prints per
setting: resolved rate with its 95% Wilson interval, mean turns per episode, stop reasons and the count of
malformed turns. Episodes go to <out-dir>/eval/turn_cap_<setting>/. The observation cut and the other
long-episode mechanics have no switch back and are not compared here.
"""

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import configs  # noqa: E402
from experiments import learn  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--out-dir", default="runs/learn", help="a make learn run's folder (tasks/validation)"
    )
    ap.add_argument("--policy", default="", help="HF folder ('' = the preset's base policy)")
    ap.add_argument("--k", type=int, default=1, help="episodes per held-out instance and setting")
    args = ap.parse_args()
    out = Path(args.out_dir)
    eval_dir = out / "tasks" / "validation"
    if not eval_dir.is_dir():
        sys.exit(
            f"bench_turn_cap: {eval_dir} is not a folder: run make learn (or --no-train) first"
        )
    cfg, _ = learn.parse_args(["--out-dir", str(out)])
    for end_on_turn_cap in (True, False):
        train_cfg = configs.parse_cli(
            ["--preset", cfg.preset, "--tasks", str(out / "tasks" / "train")], check_paths=False
        )
        train_cfg.rollout = dataclasses.replace(train_cfg.rollout, end_on_turn_cap=end_on_turn_cap)
        trajectories = learn.evaluate_policy(
            cfg,
            train_cfg,
            args.policy or train_cfg.policy.path,
            eval_dir,
            args.k,
            train_cfg.rollout.max_turns,
            out / "eval" / f"turn_cap_{'ends' if end_on_turn_cap else 'malformed'}",
        )
        stats = learn.policy_stats(trajectories, 2000)
        shape = learn.episode_shape(trajectories)
        low, high = stats["resolved_rate_ci95"]
        malformed = sum(t.get("format_errors", 0) for t in trajectories)
        print(
            f"end_on_turn_cap={end_on_turn_cap}: resolved {stats['resolved_rate']:.3f} "
            f"[{low:.3f}, {high:.3f}] of {stats['episodes']}; {shape['turns_mean']:.2f} turns per "
            f"episode; stops {shape['stop_reasons']}; {malformed} malformed turns",
            flush=True,
        )


if __name__ == "__main__":
    main()
