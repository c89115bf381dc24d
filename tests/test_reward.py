"""reward.py: weighted verification, combination with the judge's score, and group-consistent rewards."""

import logging
import math

import pytest

from reward import combine, group_rewards, verify
from sandboxing.verifier import (
    TestReport as Report,  # aliased so pytest does not try to collect it as a test class
)


def report(tests, timed_out=False, error=None):
    return Report(tests=tests, timed_out=timed_out, error=error, duration_s=1.0, output="")


# -----------------------------------------------------------------------------
# verification


def test_score_is_passed_weight_over_total_weight():
    v = verify(report({"test_a": True, "test_b": False}), {"test_a": 0.4, "test_b": 0.6})
    assert v.score == 0.4
    assert (v.resolved, v.passed, v.failed, v.missing, v.unweighted) == (
        False,
        ["test_a"],
        ["test_b"],
        [],
        [],
    )


def test_all_weighted_tests_passing_is_resolved_with_score_one():
    v = verify(report({"test_a": True, "test_b": True}), {"test_a": 1.0, "test_b": 3.0})
    assert (v.score, v.resolved, v.failed) == (1.0, True, [])


def test_bare_key_covers_all_parametrized_cases_and_needs_all_of_them():
    tests = {"test_p[1]": True, "test_p[2]": True, "test_q[x]": True, "test_q[y]": False}
    v = verify(report(tests), {"test_p": 0.5, "test_q": 0.5})
    assert (v.score, v.passed, v.failed, v.unweighted) == (0.5, ["test_p"], ["test_q"], [])


def test_bracketed_key_names_one_case_and_other_cases_are_surfaced_as_unweighted():
    v = verify(report({"test_p[1]": True, "test_p[2]": False}), {"test_p[1]": 1.0})
    assert (v.score, v.resolved, v.unweighted) == (1.0, True, ["test_p[2]"])


def test_key_does_not_cover_a_longer_name_sharing_its_prefix():
    v = verify(report({"test_ab": True}), {"test_a": 1.0})
    assert (v.score, v.missing, v.unweighted) == (0.0, ["test_a"], ["test_ab"])


def test_weighted_test_that_did_not_run_counts_as_failed():
    v = verify(report({"test_a": True}), {"test_a": 0.25, "test_b": 0.75})
    assert (v.score, v.resolved, v.failed, v.missing) == (0.25, False, ["test_b"], ["test_b"])
    assert verify(report({"test_a": True}), {"test_a": 0.25, "test_b": 0.75}).score == 0.25


def test_unweighted_reported_tests_are_surfaced_in_metrics():
    v = verify(report({"test_a": True, "test_extra": False, "test_more": True}), {"test_a": 1.0})
    assert v.unweighted == ["test_extra", "test_more"]
    assert v.metrics() == {
        "verification": 1.0,
        "resolved": 1.0,
        "tests_missing": 0.0,
        "tests_unweighted": 2.0,
        "report_flagged": 0.0,
        "tampered": 0.0,
    }


def test_timed_out_or_errored_report_is_scored_by_its_tests_and_flagged(caplog):
    caplog.set_level(logging.WARNING, logger="termrl.reward")
    v = verify(
        report({"test_a": True, "test_b": False}, timed_out=True), {"test_a": 0.5, "test_b": 0.5}
    )
    assert (v.score, v.flagged, v.timed_out) == (0.5, True, True)
    v = verify(report({}, error="pytest crashed: no junit xml"), {"test_a": 0.5, "test_b": 0.5})
    assert (v.score, v.flagged, v.error, v.missing) == (
        0.0,
        True,
        "pytest crashed: no junit xml",
        ["test_a", "test_b"],
    )
    assert v.metrics()["report_flagged"] == 1.0
    assert "flagged" in caplog.text


@pytest.mark.parametrize(
    "weights, match",
    [
        ({}, "weights: expected a non-empty dict"),
        ({"test_a": -0.1}, r"weights\['test_a'\] = -0.1"),
        ({"test_a": float("nan")}, r"weights\['test_a'\] = nan"),
        ({"test_a": 0.0, "test_b": 0}, "all weights are zero"),
    ],
)
def test_bad_weights_raise_naming_the_field(weights, match):
    with pytest.raises(ValueError, match=match):
        verify(report({"test_a": True}), weights)


def test_non_bool_test_outcome_raises_naming_the_test():
    with pytest.raises(ValueError, match=r"report.tests\['test_a'\] = 'passed'"):
        verify(report({"test_a": "passed"}), {"test_a": 1.0})


# -----------------------------------------------------------------------------
# combination


def test_combine_scales_what_the_tests_earned_by_the_judge():
    assert combine(0.5, 0.8) == pytest.approx(0.5 * (0.65 + 0.35 * 0.8), abs=1e-15)
    assert combine(0.5, 0.8) == pytest.approx(0.465, abs=1e-15)
    assert combine(1.0, 0.0) == pytest.approx(
        0.65, abs=1e-15
    )  # a solved episode keeps 0.65 at judge 0


def test_the_judge_cannot_pay_for_an_unsolved_episode():
    # the additive rule 0.65 * tests + 0.35 * judge gave 0.35 to a note to the grader that solved nothing
    assert combine(0.0, 1.0) == 0.0
    grid = [i / 20 for i in range(21)]
    assert all(combine(v, j) <= v for v in grid for j in grid)


def test_every_solved_episode_ranks_above_every_unsolved_one():
    grid = [i / 20 for i in range(21)]
    worst_solved = min(combine(1.0, j) for j in grid)
    best_unsolved = max(combine(v, j) for v in grid[:-1] for j in grid)
    assert (worst_solved, best_unsolved) == (pytest.approx(0.65), pytest.approx(0.95))
    assert min(combine(1.0, j) for j in grid) > max(combine(0.0, j) for j in grid) == 0.0


def test_combine_without_judge_is_the_tests_alone():
    assert combine(0.5, None) == 0.5
    assert combine(0.0, None) == 0.0


def test_combine_renormalises_weights_that_do_not_sum_to_one():
    assert combine(1.0, 0.0, w_tests=1.0, w_judge=1.0) == 0.5


@pytest.mark.parametrize(
    "args, match",
    [
        ((1.2, 0.5), "verification = 1.2"),
        ((0.5, -0.1), "judge = -0.1"),
        ((None, 0.5), "verification = None"),
        ((0.5, True), "judge = True"),
    ],
)
def test_combine_rejects_values_outside_unit_interval(args, match):
    with pytest.raises(ValueError, match=match):
        combine(*args)


# -----------------------------------------------------------------------------
# one scale per group


def test_a_judge_failure_drops_the_judge_part_for_the_whole_group():
    # every test passed everywhere; judges 0.8, 0.8, 0.8 and one failure: per-episode combine would give
    # [0.93, 0.93, 0.93, 1.0] (GRPO advantages [-0.5, -0.5, -0.5, +1.5]) for identical outcomes
    assert [combine(1.0, j) for j in (0.8, 0.8, 0.8, None)] == pytest.approx(
        [0.93, 0.93, 0.93, 1.0], abs=1e-12
    )
    rewards, dropped = group_rewards([1.0, 1.0, 1.0, 1.0], [0.8, 0.8, 0.8, None])
    assert (rewards, dropped) == ([1.0, 1.0, 1.0, 1.0], True)


def test_a_fully_judged_group_combines_tests_and_judge():
    rewards, dropped = group_rewards([1.0, 0.5], [0.8, 0.6])
    assert (
        rewards == pytest.approx([0.65 + 0.35 * 0.8, 0.5 * (0.65 + 0.35 * 0.6)], abs=1e-15)
        and dropped is False
    )


def test_a_group_without_any_judge_score_is_on_the_tests_and_not_a_drop():
    rewards, dropped = group_rewards([0.0, 1.0], [None, None])
    assert (rewards, dropped) == ([0.0, 1.0], False)


def test_a_failed_episode_stays_unscored_and_does_not_drop_its_group_judge():
    rewards, dropped = group_rewards([1.0, None, 0.0], [0.8, None, 0.2])
    assert rewards == pytest.approx([0.65 + 0.35 * 0.8, None, 0.0], abs=1e-15) and dropped is False
    assert rewards[1] is None and not math.isnan(rewards[2])


def test_group_rewards_rejects_misaligned_input():
    with pytest.raises(ValueError, match="2 verification scores but 1 judge scores"):
        group_rewards([1.0, 1.0], [0.5])
