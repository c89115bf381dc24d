"""Reward: weighted test verification and its combination with the LLM judge's score (judge.py).

    reward = verification * (w_tests + w_judge * judge) / (w_tests + w_judge)   (defaults 0.65 / 0.35)
    reward = verification                                                      (no judge, or it failed)

verification is the weight of the task's hidden tests that passed over the weight of all of them
(`verify`). The judge scales what the tests earned, from w_tests / (w_tests + w_judge) of it (judge 0)
to all of it (judge 1): it can only take reward away, so an unsolved episode (verification 0) gets 0
whatever it said to the grader, and reward <= verification always (an additive rule
0.65 * tests + 0.35 * judge would pay 0.35 for a note to the grader). A failed judge is never scored 0 (or 1):
that trajectory falls back to the tests alone. Rewards inside one group share one scale
(`group_rewards`, the one rule of training and evaluation): if any member's judge failed, the whole
group is scored on the tests alone.

Test reports are sandboxing.verifier.TestReport values (.tests, .timed_out, .error, .skipped, .tampered,
.parts), read by attribute: no Docker here.
"""

from __future__ import annotations

import logging
import math
import re
import unicodedata
from dataclasses import dataclass, field

log = logging.getLogger("termrl.reward")

# -----------------------------------------------------------------------------
# verification: weighted test pass fraction


@dataclass
class Verification:
    """What the hidden tests say about one trajectory.

    score: weight of passed weighted tests / weight of all weighted tests, in [0, 1].
    resolved: every weighted test passed.
    passed / failed: weight keys (task.toml [weights]) that passed / failed; a key whose tests did not
        run (`missing`) or were skipped (`skipped`: skip is not a pass) is in failed too.
    unweighted: reported test names no weight key covers (surfaced, not scored).
    timed_out / error: copied from the report; such a report is still scored by its tests but flagged.
    tampered: the agent blocked a file the verifier mounts over its own (verifier.py): score 0, nothing passed.
    """

    score: float
    resolved: bool
    passed: list[str]
    failed: list[str]
    missing: list[str]
    unweighted: list[str]
    timed_out: bool = False
    error: str | None = None
    skipped: list[str] = field(default_factory=list)
    tampered: str | None = None

    @property
    def flagged(self) -> bool:
        """The report says the run timed out or erred; it is still scored by the tests it has."""
        return self.timed_out or self.error is not None

    def metrics(self) -> dict[str, float]:
        """Counts for the training log: verification, resolved, tests_missing, tests_unweighted,
        report_flagged, tampered."""
        return {
            "verification": self.score,
            "resolved": float(self.resolved),
            "tests_missing": float(len(self.missing)),
            "tests_unweighted": float(len(self.unweighted)),
            "report_flagged": float(self.flagged),
            "tampered": float(self.tampered is not None),
        }


_ID_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[\\tnrfv0])")
_ID_CHARS = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "0": "\0"}


def normalize_test_id(name: str) -> str:
    """pytest's ASCII escapes of parametrized ids undone (`test_x[caf\\xe9]` -> `test_x[café]`; also \\u, \\U, \\\\,
    \\t, ...), then Unicode NFC: a key matches whether written as pytest prints the id or as the parameter reads."""

    def undo(m: re.Match) -> str:
        e = m.group(1)
        return chr(int(e[1:], 16)) if e[0] in "xuU" else _ID_CHARS[e]

    return unicodedata.normalize("NFC", _ID_ESCAPE.sub(undo, name))


def _covers(key: str, test: str) -> bool:
    """A key names one test exactly; a key without brackets also covers its parametrized cases `key[...]`."""
    return test == key or ("[" not in key and test.startswith(key + "["))


def verify(report, weights: dict[str, float]) -> Verification:
    """Score a TestReport (sandboxing/verifier.py: .tests dict[str, bool], .timed_out, .error, .skipped,
    .tampered, .parts) against task weights.

    A key `test_x` covers the test `test_x` and every parametrized case `test_x[...]` (compared after
    `normalize_test_id`); it passes only if one of its tests ran and all passed. A weighted test that did not
    run counts as failed; a skipped one too, its key also in `skipped`. Tampered: 0, every key failed.
    score = sum(w_k for k passed) / sum(w_k for all k)

    Raises:
        ValueError: weights empty, a weight negative / not finite / not a number, or all weights zero;
            report.tests not a dict of name -> bool.
    """
    if not isinstance(weights, dict) or not weights:
        raise ValueError(f"weights: expected a non-empty dict test name -> weight, got {weights!r}")
    for name, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise ValueError(f"weights[{name!r}] = {w!r}: must be a finite number >= 0")
    total = float(sum(weights.values()))
    if total <= 0:
        raise ValueError(f"weights: all weights are zero ({weights!r}); at least one must be > 0")
    tests = report.tests
    if not isinstance(tests, dict):
        raise ValueError(f"report.tests: expected dict[str, bool], got {type(tests).__name__}")
    for name, ok in tests.items():
        if not isinstance(ok, bool):
            raise ValueError(f"report.tests[{name!r}] = {ok!r}: expected a bool")
    tampered = report.tampered
    if tampered:
        return Verification(
            score=0.0,
            resolved=False,
            passed=[],
            failed=list(weights),
            missing=[],
            unweighted=[],
            timed_out=bool(report.timed_out),
            error=report.error,
            skipped=[],
            tampered=tampered,
        )
    parts = report.parts
    # a Harbor test.sh scored itself: weights are not test names
    if parts is not None:
        return _verify_parts(parts, bool(report.timed_out), report.error)

    skipped_names = {normalize_test_id(t) for t in report.skipped}
    names = {t: normalize_test_id(t) for t in tests}
    passed = []
    failed = []
    missing = []
    skipped = []
    covered = set()
    for key in weights:
        cases = [t for t in tests if _covers(normalize_test_id(key), names[t])]
        covered.update(cases)
        if not cases:
            missing.append(key)
        if any(names[t] in skipped_names for t in cases):
            skipped.append(key)
        if cases and all(tests[t] for t in cases):
            passed.append(key)
        else:
            failed.append(key)
    score = sum(float(weights[k]) for k in passed) / total
    unweighted = [t for t in tests if t not in covered]
    v = Verification(
        score=score,
        resolved=not failed,
        passed=passed,
        failed=failed,
        missing=missing,
        unweighted=unweighted,
        timed_out=bool(report.timed_out),
        error=report.error,
        skipped=skipped,
    )
    if v.flagged:
        log.warning(
            "test report flagged (timed_out=%s, error=%r); scored by the tests it has: %.4f",
            v.timed_out,
            v.error,
            v.score,
        )
    return v


def _verify_parts(parts: dict[str, float], timed_out: bool, error: str | None) -> Verification:
    """A Harbor test.sh's named rewards (reward.json, or reward.txt as {"reward": x}) -> Verification.

    score = parts["reward"] when that key exists, else the mean of the parts (harbor defines no fold; the
    mean weighs each named part the same); resolved = every part is 1. A timeout has no parts: 0.
    """
    if not parts:
        return Verification(0.0, False, [], ["reward"], ["reward"], [], timed_out, error)
    score = parts["reward"] if "reward" in parts else sum(parts.values()) / len(parts)
    passed = [k for k, v in parts.items() if v >= 1.0]
    failed = [k for k in parts if k not in passed]
    return Verification(score, not failed, passed, failed, [], [], timed_out, error)


def roll_up_steps(reports: list, strategy: str = "mean") -> Verification:
    """The verification of a Harbor multi-step episode from its verified steps' reports, in step
    order (each a Harbor test.sh's: .parts, .tampered, .timed_out, .error), as harbor 0.25's
    Trial._select_multi_step_reward rolls them up.

    strategy "mean": per-key mean of the steps' reward parts, a key a step lacks counting 0;
    "final": the last step's parts. The parts are then scored as one test.sh's (`_verify_parts`:
    the "reward" key, else the parts' mean). Steps an earlier step's min_reward cut off are not in
    `reports` and not in the mean, as in harbor. A tampered step: 0, tampered.
    Raises ValueError: no reports, or an unknown strategy.
    """
    if not reports:
        raise ValueError("roll_up_steps: no verified step")
    if strategy not in ("mean", "final"):
        raise ValueError(f"roll_up_steps: strategy {strategy!r}: expected 'mean' or 'final'")
    timed_out = any(bool(r.timed_out) for r in reports)
    error = next((r.error for r in reports if r.error), None)
    tampered = next((r.tampered for r in reports if r.tampered), None)
    if tampered:
        return Verification(0.0, False, [], ["reward"], [], [], timed_out, error, tampered=tampered)
    if strategy == "final":
        return _verify_parts(dict(reports[-1].parts or {}), timed_out, error)
    keys = dict.fromkeys(k for r in reports for k in (r.parts or {}))
    parts = {k: sum((r.parts or {}).get(k, 0.0) for r in reports) / len(reports) for k in keys}
    return _verify_parts(parts, timed_out, error)


# -----------------------------------------------------------------------------
# combination


def combine(
    verification: float, judge: float | None, w_tests: float = 0.65, w_judge: float = 0.35
) -> float:
    """Final reward in [0, 1], never above verification.

        judge given: verification * (w_tests + w_judge * judge) / (w_tests + w_judge)
        judge None:  verification           (no judge configured, or every backend failed: the tests alone)

    The judge is a multiplicative penalty on what the tests earned (at judge 0 the episode keeps
    w_tests / (w_tests + w_judge) of it): verification 0 gives 0 for any judge score, and a solved episode
    (1.0) always gets at least w_tests / (w_tests + w_judge) = 0.65, above every unsolved one.

    Raises:
        ValueError: verification or judge not a number in [0, 1] (the weights are trusted: configs.validate).
    """
    for name, x in (("verification", verification), ("judge", judge)):
        if x is None and name == "judge":
            continue
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0.0 <= x <= 1.0:
            raise ValueError(f"{name} = {x!r}: must be a number in [0, 1]")
    if judge is None:
        return float(verification)
    return verification * (w_tests + w_judge * judge) / (w_tests + w_judge)


def group_rewards(
    verification_scores: list[float | None],
    judge_scores: list[float | None],
    w_tests: float = 0.65,
    w_judge: float = 0.35,
) -> tuple[list[float | None], bool]:
    """The reward of every episode of one group: the one rule, in training and in evaluation.

    `combine` for every member when every scored member has a judge score; the tests alone for
    the whole group when any scored member's judge failed (None), so the group keeps one scale.
    A member scored on tests alone next to siblings scored w_tests * tests + w_judge * judge
    would be compared across scales: judges [0.8, 0.8, 0.8, failed] with every test passed
    would give [0.93, 0.93, 0.93, 1.0] and GRPO advantages [-0.5, -0.5, -0.5, +1.5] for identical
    outcomes; here they give [1.0] * 4 (advantages 0).

    verification_scores: one per episode of the group, in [0, 1]; None for a failed episode (no
        reward: its reward stays None, never 0).
    judge_scores: aligned; None where the judge failed or none is configured.
    Returns (rewards, judge_dropped): judge_dropped is True when the judge part was dropped because
    some but not all scored members had a judge score (a group with no judge score at all: False).
    Raises ValueError: the lists differ in length; a score outside [0, 1] (`combine`).
    """
    if len(judge_scores) != len(verification_scores):
        raise ValueError(
            f"group_rewards: {len(verification_scores)} verification scores but "
            f"{len(judge_scores)} judge scores; one of each per episode"
        )
    scored = [i for i, v in enumerate(verification_scores) if v is not None]
    judged = [i for i in scored if judge_scores[i] is not None]
    one_scale = len(judged) == len(scored)
    rewards: list[float | None] = [None] * len(verification_scores)
    for i in scored:
        judge = judge_scores[i] if one_scale else None
        rewards[i] = combine(verification_scores[i], judge, w_tests, w_judge)
    return rewards, not one_scale and bool(judged)
