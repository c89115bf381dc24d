"""Stopping and resuming training: the stop request (bookkeeping/stop.py), torchrun under the
launcher that owns Ctrl-C (bookkeeping/launch.py), atomic checkpoints and what a start continues
(bookkeeping/checkpoints.py)."""

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from train_helpers import E2E_ARGS, ROOT, containers_of, run_ids_of

import configs
import train
from bookkeeping import checkpoints
from bookkeeping.stop import STOP_FILE_ENV, StopFlag
from training import setup

# -----------------------------------------------------------------------------
# what a start continues (checkpoints.plan_start): folders laid out as save_checkpoint lays them out


def _cfg(**changes) -> dict:
    return dataclasses.asdict(dataclasses.replace(configs.TrainConfig(), **changes))


def _checkpoint(out: Path, step: int, cfg: dict, run_id="a1b2c3d4", world=2, name=None) -> Path:
    """The metadata save_checkpoint publishes (plan_start reads nothing else)."""
    path = out / "checkpoints" / (name or f"step_{step:06d}")
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps(cfg))
    meta = dict(
        run_id=run_id, step=step, world_size=world, config_hash=checkpoints.config_hash(cfg)
    )
    (path / "meta.json").write_text(json.dumps(meta))
    (path / "COMPLETE").write_text(f"{step}\n")
    return path


def test_resume_picks_the_newest_complete_checkpoint_never_a_partial_one(tmp_path):
    cfg = _cfg()
    two = _checkpoint(tmp_path, 2, cfg)
    cut = tmp_path / "checkpoints" / "step_000004.tmp-a1b2c3d4"  # a write a kill cut off
    cut.mkdir()
    (cut / "__0_0.distcp").write_bytes(b"\0" * 64)
    unmarked = tmp_path / "checkpoints" / "step_000003"  # written before writes were atomic
    unmarked.mkdir()
    assert checkpoints.latest_checkpoint(tmp_path) == two
    assert checkpoints.partial_checkpoints(tmp_path) == [unmarked, cut]
    assert checkpoints.plan_start(tmp_path, cfg, resume=True, overwrite=False, world=2) == two


def test_a_resume_whose_config_differs_is_refused_naming_the_fields(tmp_path):
    _checkpoint(tmp_path, 2, _cfg())
    changed = _cfg(lr=2e-6, grpo=dataclasses.replace(configs.GRPOConfig(), group_size=4))
    with pytest.raises(configs.ConfigError) as e:
        checkpoints.plan_start(tmp_path, changed, resume=True, overwrite=False, world=2)
    assert str(e.value) == (
        f"resume: the config differs from run a1b2c3d4, checkpoint of step 2 "
        f"({tmp_path}/checkpoints/step_000002) in grpo.group_size (8 -> 4), lr (1e-06 -> 2e-06); "
        "resume with the same values, or start a new run in another --out-dir"
    )
    longer = _cfg(steps=200, save_every=5, out_dir="elsewhere")  # RESUME_MAY_DIFFER
    assert checkpoints.plan_start(tmp_path, longer, resume=True, overwrite=False, world=2)


def test_a_resume_that_changes_how_the_engine_batches_is_named_for_the_warning():
    saved = json.loads(json.dumps(_cfg()))
    policy = dataclasses.replace(configs.PolicyConfig(), engine_lockstep=False)
    rollout = dataclasses.replace(configs.RolloutConfig(), max_concurrent_episodes=8)
    changed = dataclasses.replace(configs.TrainConfig(), policy=policy, rollout=rollout, steps=99)
    # steps may differ and does not change batching; the two batching knobs are named
    assert setup.batching_changes(saved, changed) == [
        "policy.engine_lockstep (True -> False)",
        "rollout.max_concurrent_episodes (64 -> 8)",
    ]
    assert setup.batching_changes(saved, configs.TrainConfig()) == []
    # each may differ at a resume (else the resume would be refused, not warned about)
    assert set(setup.BATCHING_KNOBS) <= set(checkpoints.RESUME_MAY_DIFFER)


def test_a_resume_on_another_number_of_ranks_is_refused(tmp_path):
    _checkpoint(tmp_path, 2, _cfg(), world=2)
    with pytest.raises(configs.ConfigError, match="written by 2 ranks, this start has 4"):
        checkpoints.plan_start(tmp_path, _cfg(), resume=True, overwrite=False, world=4)


def test_a_new_run_into_an_out_dir_holding_a_run_is_refused_unless_overwrite(tmp_path):
    _checkpoint(tmp_path, 6, _cfg())
    with pytest.raises(configs.ConfigError) as e:
        checkpoints.plan_start(tmp_path, _cfg(), resume=False, overwrite=False, world=2)
    assert str(e.value).startswith(
        f"out_dir = '{tmp_path}' holds run a1b2c3d4, checkpoint of step 6 "
        f"({tmp_path}/checkpoints/step_000006): --resume continues it, --overwrite deletes"
    )
    assert checkpoints.plan_start(tmp_path, _cfg(), resume=False, overwrite=True, world=2) is None
    with pytest.raises(configs.ConfigError, match="--overwrite deletes what --resume continues"):
        checkpoints.plan_start(tmp_path, _cfg(), resume=True, overwrite=True, world=2)
    assert checkpoints.plan_start(tmp_path / "empty", _cfg(), False, False, 2) is None


def test_check_config_refuses_a_resume_with_a_changed_knob_before_anything_starts(tmp_path):
    cfg = configs.parse_cli(["--out-dir", str(tmp_path)])
    _checkpoint(tmp_path, 4, dataclasses.asdict(cfg))
    argv = ["--out-dir", str(tmp_path), "--resume", "--check-config"]
    assert train.main(argv) == 0
    with pytest.raises(configs.ConfigError, match=r"in rollout\.temperature \(0\.7 -> 0\.5\);"):
        train.main([*argv, "--rollout.temperature", "0.5"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoints"]  # nothing written


def test_resuming_a_complete_run_says_so_and_starts_nothing(tmp_path, capsys):
    cfg = configs.parse_cli(["--out-dir", str(tmp_path), "--steps", "8"])
    ckpt = _checkpoint(tmp_path, 8, dataclasses.asdict(cfg))
    argv = ["--out-dir", str(tmp_path), "--steps", "8", "--resume"]
    said = (
        f"[train] run a1b2c3d4 is complete: step 8 of 8 checkpointed ({ckpt}); "
        "nothing to train (a larger --steps continues it)\n"
    )
    # make's check: the status that keeps make from starting torchrun
    assert train.main([*argv, "--check-config"]) == train.RUN_COMPLETE == 3
    assert capsys.readouterr().out == said
    # train.py itself (a rank started anyway): 0, before any process group, model or container
    assert train.main(argv) == 0
    assert capsys.readouterr().out == said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoints"]
    # a larger --steps continues it
    assert (
        train.main(["--out-dir", str(tmp_path), "--steps", "9", "--resume", "--check-config"]) == 0
    )


@pytest.mark.model_run
def test_make_train_resuming_a_complete_run_exits_0_and_starts_no_torchrun(tmp_path):
    cfg = configs.parse_cli(["--preset", "cpu-smollm2", "--out-dir", str(tmp_path)])
    _checkpoint(tmp_path, cfg.steps, dataclasses.asdict(cfg))
    r = subprocess.run(
        ["make", "--no-print-directory", "-o", "setup", "train", f"ARGS=--out-dir {tmp_path} --resume"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert f"[train] run a1b2c3d4 is complete: step {cfg.steps} of {cfg.steps}" in r.stdout
    assert "bookkeeping.launch" not in out
    assert "resuming run" not in out and "sandbox run ids" not in out


def test_a_stop_file_made_before_the_handler_counts_as_a_sigint(tmp_path, monkeypatch, capsys):
    (tmp_path / "stop").touch()  # the launcher makes it before signalling the workers
    monkeypatch.setenv(STOP_FILE_ENV, str(tmp_path / "stop"))
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        flag = StopFlag("[train]", "cutting this step short").install()
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])
    assert flag.requested and flag.signum == signal.SIGINT
    assert (
        "[train] SIGINT: cutting this step short (again to stop at once)" in capsys.readouterr().err
    )


def test_one_stop_notice_per_run_the_other_ranks_stop_silently(capsys):
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        # as training/setup.py makes them on rank 0 and rank 1 of one run
        rank0 = StopFlag("[train]", "cutting this step short", announce=True).install()
        rank0._handle(signal.SIGINT, None)
        rank1 = StopFlag("[train]", "cutting this step short", announce=False).install()
        rank1._handle(signal.SIGINT, None)
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])
    assert rank0.requested and rank1.requested and rank1.signum == signal.SIGINT
    assert capsys.readouterr().err == (
        "[train] SIGINT: cutting this step short (again to stop at once)\n"
    )


# -----------------------------------------------------------------------------
# end to end: the launcher, 2 gloo ranks, the tiny model, real containers (Ctrl-C to make train in a
# terminal and its resume: tests/test_resume_exact.py, which compares the resumed run with one never stopped)

TINY = ["--policy.path", "tiny-random-qwen3", *E2E_ARGS, "--steps", "3", "--save-every", "10"]


@pytest.mark.model_run
@pytest.mark.docker
def test_sigterm_to_the_launcher_keeps_the_last_step_and_exits_0_with_no_container_left(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "bookkeeping.launch", "--nproc", "2", "train.py"]
    cmd += ["--preset", "cpu-smollm2", *TINY, "--out-dir", str(out)]
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    with open(tmp_path / "run.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while "step 1/3 | reward" not in (tmp_path / "run.log").read_text():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=300) == 0, (tmp_path / "run.log").read_text()[-4000:]
    text = (tmp_path / "run.log").read_text()
    assert "Traceback" not in text and text.count("SIGINT: cutting this step short") == 1
    done = text.count("/3 | reward")  # the signal may land in step 2's rollout or update
    assert done in (1, 2) and f"kept step {done} of run" in text
    assert (out / "checkpoints" / f"step_{done:06d}" / "COMPLETE").read_text() == f"{done}\n"
    assert (out / "hf" / "config.json").exists()  # a clean stop exports the policy trained so far
    assert containers_of(run_ids_of(text)) == []


# a rank that starts a sandbox and is killed before any teardown (as by the out-of-memory killer)
KILLED_RANK = """
import asyncio, os, signal, sys
import sandbox
from sandboxing import images
box = asyncio.run(sandbox.Sandbox.start(images.BASE_IMAGE, run_id=sys.argv[1]))
print("session", sandbox.SESSION, "container", box.id, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.model_run
@pytest.mark.docker
def test_the_launcher_reaps_a_killed_ranks_containers_and_nothing_of_a_live_process(tmp_path):
    import asyncio
    import uuid

    import sandbox
    from sandboxing import images

    (tmp_path / "rank.py").write_text(KILLED_RANK)
    ours = asyncio.run(sandbox.Sandbox.start(images.BASE_IMAGE, run_id=f"live-{uuid.uuid4().hex}"))
    run_ids = []
    try:
        # the suite's session, inherited; then none, as under `make train`: a fresh one
        for inherited in (True, False):
            run_ids.append(f"killed-{uuid.uuid4().hex[:8]}")
            env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
            if not inherited:
                env.pop("TERMRL_SESSION")
            cmd = [sys.executable, "-m", "bookkeeping.launch", "--nproc", "1"]
            r = subprocess.run(
                [*cmd, str(tmp_path / "rank.py"), run_ids[-1]],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert r.returncode == 128 + signal.SIGKILL, r.stdout[-3000:] + r.stderr[-3000:]
            session = re.search(r"session (\S+) container [0-9a-f]+", r.stdout).group(1)
            assert session == sandbox.SESSION if inherited else session.startswith("launch-")
            assert containers_of(run_ids[-1:]) == []
        assert containers_of([ours.run_id]) == [ours.id[:12]]  # the suite's session, live: kept
    finally:
        asyncio.run(ours.close())
        for run_id in run_ids:
            sandbox.reap(run_id=run_id)
