"""How the reward rule treats the judge: an additive rule against `reward.combine`.

    python bench/bench_judge_rule.py [--step 0.05]

No Docker, no model: the rules are pure functions of (tests, judge) and are compared on every
episode outcome of a grid (test score and judge score each from 0 to 1 in --step). Printed per rule:
- the most an unsolved episode (test score 0) can earn, i.e. what a note to the grader can buy;
- how often a resolved episode (test score 1) ranks at or below an unresolved one (grid pairs);
- how often the judge reverses the tests: episode a passed more tests than b yet earns less;
- the spread the judge leaves among resolved episodes (the GRPO signal within an all-solved group).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from reward import combine  # noqa: E402


def additive(tests: float, judge: float, w_tests: float = 0.65, w_judge: float = 0.35) -> float:
    """The additive rule reward.combine replaced: (w_tests * tests + w_judge * judge) / (w_tests + w_judge)."""
    return (w_tests * tests + w_judge * judge) / (w_tests + w_judge)


def measure(rule, grid: list[float]) -> dict[str, float]:
    episodes = [(t, j, rule(t, j)) for t in grid for j in grid]
    unsolved = [r for t, _, r in episodes if t == 0.0]
    resolved = [r for t, _, r in episodes if t == 1.0]
    unresolved = [r for t, _, r in episodes if t < 1.0]
    pairs = [(a, b) for a, b in itertools.product(episodes, repeat=2) if a[0] > b[0]]
    return {
        "unsolved_max": max(unsolved),
        "resolved_not_above_unresolved": sum(s <= u for s in resolved for u in unresolved)
        / (len(resolved) * len(unresolved)),
        "judge_reverses_tests": sum(a[2] < b[2] for a, b in pairs) / len(pairs),
        "resolved_spread": max(resolved) - min(resolved),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--step", type=float, default=0.05, help="grid step for test and judge scores")
    args = ap.parse_args()
    n = round(1 / args.step)
    grid = [i / n for i in range(n + 1)]
    print(f"grid: {len(grid)} x {len(grid)} (tests, judge) outcomes, weights 0.65 / 0.35")
    print(
        f"{'rule':<34}{'unsolved max':>14}{'resolved<=unres.':>18}{'judge reverses':>16}"
        f"{'resolved spread':>17}"
    )
    for name, rule in (("additive (main)", additive), ("scaled: reward.combine", combine)):
        m = measure(rule, grid)
        print(
            f"{name:<34}{m['unsolved_max']:>14.3f}{m['resolved_not_above_unresolved']:>18.3f}"
            f"{m['judge_reverses_tests']:>16.3f}{m['resolved_spread']:>17.3f}"
        )


if __name__ == "__main__":
    main()
