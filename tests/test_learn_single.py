"""learn_single.py (`make learn-single`): interval math on known inputs, the verdict on given numbers, and one
tiny run end to end (torchrun with 1 gloo rank, tiny random Qwen3, 1 step, 2 tasks x 2 episodes, real Docker;
about 1-2 minutes)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import configs
from experiments import learn_single as learn

ROOT = Path(__file__).resolve().parent.parent

# -----------------------------------------------------------------------------
# intervals


def test_wilson_interval_on_known_counts():
    assert learn.wilson_interval(3, 10) == pytest.approx((0.1078, 0.6032), abs=5e-5)
    assert learn.wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=5e-5)
    assert learn.wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=5e-5)
    assert learn.wilson_interval(48, 96) == pytest.approx(
        (0.4019, 0.5981), abs=5e-5
    )  # scipy binomtest(...).proportion_ci("wilson") agrees


def test_wilson_interval_rejects_impossible_counts():
    with pytest.raises(ValueError, match="got 11 of 10"):
        learn.wilson_interval(11, 10)
    with pytest.raises(ValueError, match="got 0 of 0"):
        learn.wilson_interval(0, 0)


def test_bootstrap_interval_of_the_mean_matches_the_normal_one_on_a_large_sample():
    # 50 zeros and 50 ones: mean 0.5, plug-in sd 0.5, normal interval 0.5 +- 1.96 * 0.05 = [0.402, 0.598]
    lo, hi = learn.bootstrap_mean_interval([0.0] * 50 + [1.0] * 50, resamples=20_000, seed=0)
    assert lo == pytest.approx(0.402, abs=0.011) and hi == pytest.approx(0.598, abs=0.011)
    assert learn.bootstrap_mean_interval([0.0] * 50 + [1.0] * 50, resamples=20_000, seed=0) == (
        lo,
        hi,
    )  # seeded


def test_bootstrap_interval_of_equal_values_is_that_value():
    assert learn.bootstrap_mean_interval([0.3] * 12, resamples=100) == pytest.approx(
        (0.3, 0.3), abs=1e-12
    )
    with pytest.raises(ValueError, match="no values"):
        learn.bootstrap_mean_interval([])


def test_policy_stats_counts_errored_episodes_but_never_scores_them():
    trajs = [
        {"task_id": "a", "reward": 1.0, "resolved": True},
        {"task_id": "a", "reward": 0.5, "resolved": False},
        {"task_id": "b", "reward": 0.0, "resolved": False},
        {"task_id": "b", "reward": None, "resolved": False},
    ]
    s = learn.policy_stats(trajs, resamples=200)
    assert (s["episodes"], s["errors"], s["scored"]) == (4, 1, 3)
    assert s["mean_reward"] == 0.5 and s["resolved_rate"] == pytest.approx(1 / 3, abs=1e-15)
    assert s["resolved_rate_ci95"] == pytest.approx(list(learn.wilson_interval(1, 3)), abs=1e-15)
    assert s["per_task_mean_reward"] == {"a": 0.75, "b": 0.0}
    empty = learn.policy_stats([{"task_id": "a", "reward": None, "resolved": False}])
    assert (empty["scored"], empty["mean_reward"], empty["mean_reward_ci95"]) == (0, None, None)


# -----------------------------------------------------------------------------
# verdict


def _stats(mean, lo, hi, scored=96):
    return {"scored": scored, "mean_reward": mean, "mean_reward_ci95": [lo, hi]}


def test_verdict_shows_learning_only_when_the_intervals_do_not_overlap():
    results = {
        "trained_tasks": {"base": _stats(0.19, 0.14, 0.25), "trained": _stats(0.41, 0.35, 0.47)},
        "heldout_tasks": {
            "base": _stats(0.05, 0.0, 0.12, 32),
            "trained": _stats(0.09, 0.03, 0.16, 32),
        },
    }
    assert learn.verdict(results) == (
        True,
        "learning: trained beats base on trained tasks: 0.41 [0.35,0.47] vs "
        "0.19 [0.14,0.25] (non-overlapping 95% CIs; mean reward, 96 vs 96 episodes); "
        "easy tasks not trained on: 0.09 [0.03,0.16] vs 0.05 [0.00,0.12]",
    )
    results["trained_tasks"]["trained"] = _stats(0.30, 0.24, 0.36)  # overlaps [0.14, 0.25]
    assert learn.verdict(results)[0] is False
    assert learn.verdict(results)[1].startswith(
        "not shown: trained vs base on trained tasks: 0.30 [0.24,0.36] vs "
        "0.19 [0.14,0.25] (95% CIs overlap"
    )
    results["trained_tasks"]["trained"] = _stats(0.05, 0.02, 0.09)
    assert learn.verdict(results)[1].startswith(
        "not shown: trained is worse than base on trained tasks"
    )


def test_verdict_without_scored_episodes_says_which_policy():
    results = {"trained_tasks": {"base": _stats(0.2, 0.1, 0.3), "trained": {"scored": 0}}}
    assert learn.verdict(results) == (
        False,
        "not shown: no scored episode of the trained policy on the trained tasks",
    )


def test_held_out_tasks_that_are_training_tasks_are_refused():
    with pytest.raises(
        configs.ConfigError, match=r"heldout_task_ids = .*\['rename-file'\] are training tasks"
    ):
        learn.parse_args(["--heldout-task-ids", "rename-file", "nested-dirs"])


# -----------------------------------------------------------------------------
# end to end, tiny


@pytest.mark.model_run
@pytest.mark.docker
def test_tiny_learn_run_writes_learning_json_png_and_a_verdict(tmp_path):
    out = tmp_path / "learn"
    cmd = [
        sys.executable,
        "-m",
        "experiments.learn_single",
        "--out-dir",
        str(out),
        "--nproc",
        "1",
        "--k",
        "2",
        "--heldout-task-ids",
        "create-empty-file",
        "--heldout-k",
        "2",
        "--bootstrap-resamples",
        "200",
        "--",
        "--policy.path",
        "tiny-random-qwen3",
        "--steps",
        "1",
        "--task-ids",
        "write-hello-file",
        "append-line",
        "--tasks-per-step",
        "2",
        "--grpo.group-size",
        "2",
        "--rollout.max-tokens-per-turn",
        "16",
        "--grpo.no-drop-zero-variance-groups",
    ]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    learning = json.loads((out / "learning.json").read_text())
    assert set(learning) == {"config", "policies", "results", "verdict", "seconds"}
    assert learning["policies"] == {
        "base": "tiny-random-qwen3",
        "trained": str(out / "train" / "hf"),
    }
    assert learning["config"]["trained_task_ids"] == ["append-line", "write-hello-file"]
    assert (learning["config"]["steps"], learning["config"]["eval_seed"]) == (1, 777)
    expected_episodes = {"trained_tasks": 4, "heldout_tasks": 2}
    for name, n in expected_episodes.items():
        for policy in ("base", "trained"):
            s = learning["results"][name][policy]
            assert s["episodes"] == n and s["scored"] + s["errors"] == n
            if s["scored"]:
                lo, hi = s["mean_reward_ci95"]
                assert 0.0 <= lo <= s["mean_reward"] <= hi <= 1.0
                lo, hi = s["resolved_rate_ci95"]
                assert 0.0 <= lo <= s["resolved_rate"] <= hi <= 1.0
    shown, line = learning["verdict"]["shown"], learning["verdict"]["line"]
    assert line.startswith("learning: " if shown else "not shown: ") and p.stdout.rstrip().endswith(
        line
    )
    assert (out / "learning.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "train" / "metrics.jsonl").read_text().splitlines()[0])["step"] == 1
