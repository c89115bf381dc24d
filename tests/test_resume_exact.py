"""Resume is exact: `make train` stopped by Ctrl-C in a terminal during step 2's rollout stops
cleanly, keeps step 1, and the resume command it prints trains steps 2 and 3 as the run that was never
stopped, with the same seeds (the engine's lockstep batching, per-request seeds, the checkpoint's sampler
and RNG state from when its step was recorded); and the engine's lockstep mode gives the same tokens and
log-probs bitwise whatever order and timing the requests come in."""

import asyncio
import json
import os
import pty
import random
import re
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from train_helpers import E2E_ARGS, ROOT, containers_of, run_ids_of

from agent.chat import ChatFormat
from bookkeeping import checkpoints
from engines.base import SamplingParams
from engines.torch_engine import TorchEngine
from hf import weights

# -----------------------------------------------------------------------------
# the engine: lockstep rounds do not depend on when the requests come

INSTRUCTIONS = [
    "List the files in /tmp.",
    "Count the lines of a.txt.",
    "Make a directory named out.",
    "Delete /tmp/x.log.",
    "Rename a to b.",
]


def _rollout(model, tok, lockstep: bool, delays: random.Random) -> list:
    """Five episodes of up to two turns on one engine (4 slots: a round does not fit at once),
    each waiting a random time before each turn (as for its container); the first and fourth
    stop after one turn. Returns each episode's (tokens, log-probs) per turn."""
    chat = ChatFormat(tok, "markdown")
    prompts = [chat.prompt_ids(s)[1] for s in INSTRUCTIONS]
    observation = tok.encode("\nobservation\n")

    async def main():
        engine = TorchEngine(model, tok, max_batch=4, max_seq_len=512, lockstep=lockstep)
        engine.expect_episodes(len(prompts))

        async def episode(i: int) -> list:
            ids = list(prompts[i])
            turns = []
            try:
                for turn in range(1 if i % 3 == 0 else 2):
                    await asyncio.sleep(delays.random() * 0.2)
                    sampling = SamplingParams(0.7, 0.95, 40, 16, seed=1000 * i + turn)
                    c = await engine.generate(ids, sampling)
                    turns.append((c.token_ids, c.logprobs))
                    ids = ids + c.token_ids + observation
            finally:
                engine.episode_done()
            return turns

        try:
            return await asyncio.gather(*(episode(i) for i in range(len(prompts))))
        finally:
            await engine.aclose()

    return asyncio.run(main())


@pytest.mark.model_run
def test_lockstep_batching_gives_the_same_tokens_and_logprobs_whatever_the_arrival_order():
    d = weights.default_model_dir()
    model = weights.load_hf(d)
    tok = weights.load_tokenizer(d)
    first = _rollout(model, tok, True, random.Random(1))
    second = _rollout(model, tok, True, random.Random(2))
    assert [len(turns) for turns in first] == [1, 2, 2, 1, 2]
    assert all(len(tokens) > 0 for turns in first for tokens, _ in turns)
    # bitwise: the same floats, not merely close ones
    assert first == second


# -----------------------------------------------------------------------------
# end to end: 2 gloo ranks, the tiny model, real containers. One run never stopped; one run of
# `make train` in a terminal, stopped by Ctrl-C in step 2's rollout and resumed with the command it
# printed. Both are shared by the tests below, each asserting its own part of them.

TINY = ["--policy.path", "tiny-random-qwen3", *E2E_ARGS, "--steps", "3", "--save-every", "10"]
# what a step's record must repeat exactly; the loss and the other floats of the update to
# float tolerance
EXACT = [
    "reward_mean",
    "reward_std",
    "resolved_rate",
    "episodes",
    "episodes_failed",
    "truncated_rate",
    "tokens",
    "generated_tokens",
]
CLOSE = ["loss", "pg_loss", "grad_norm", "entropy"]
# make train's own environment beside the test's: one thread per rank, as the launcher runs them
ENV = dict(os.environ, OMP_NUM_THREADS="1")


def _terminal(cmd: list[str], log: Path, stop_when, env: dict) -> tuple[int, float | None]:
    """Run cmd in a new pseudo-terminal (its own session, as a shell's foreground job); type ^C
    once stop_when() is true. Returns (exit status, time.monotonic() of the ^C or None); the
    terminal's output goes to log."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execvpe(cmd[0], cmd, env)
    sent = None
    with open(log, "wb") as out:
        while True:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # EIO: every process of the terminal is gone
                    break
                if not data:
                    break
                out.write(data)
                out.flush()
            if sent is None and stop_when():
                os.write(fd, b"\x03")  # the line discipline sends SIGINT to the foreground group
                sent = time.monotonic()
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), sent


@pytest.fixture(scope="module")
def never_stopped(tmp_path_factory) -> Path:
    """The 3 steps of the run as make train runs them (the launcher, 2 ranks), never stopped: its
    out-dir."""
    root = tmp_path_factory.mktemp("never-stopped")
    cmd = [sys.executable, "-m", "bookkeeping.launch", "--nproc", "2", "train.py"]
    cmd += ["--preset", "cpu-smollm2", *TINY, "--out-dir", str(root / "run")]
    env = dict(ENV, PYTHONUNBUFFERED="1")
    with open(root / "run.log", "w") as log:
        r = subprocess.run(
            cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=900
        )
    assert r.returncode == 0, (root / "run.log").read_text()[-4000:]
    return root / "run"


@dataclass
class Stopped:
    """The stopped run, in order: `make train` stopped by ^C (exit code, the terminal's text), what
    was on disk and in Docker right after the stop, then its resume command run with a changed knob
    (refused) and as printed (resumed)."""

    out: Path
    code: int
    sent: float | None
    log: str
    checkpoints_at_stop: list[str]
    complete_at_stop: str
    run_id_at_stop: str
    containers_at_stop: list[str]
    refused: subprocess.CompletedProcess
    resumed: subprocess.CompletedProcess


@pytest.fixture(scope="module")
def stopped(tmp_path_factory) -> Stopped:
    root = tmp_path_factory.mktemp("stopped")
    out = root / "run"
    args = " ".join([*TINY, "--out-dir", str(out)])
    # opened as step 2's rollout starts
    rollout_2 = out / "trajectories" / "step_000002_rank0.jsonl"
    # setup is what the run before this one did; -o keeps make from redoing it
    make = ["make", "--no-print-directory", "-o", "setup", "train", f"ARGS={args}"]
    code, sent = _terminal(make, root / "stop.log", rollout_2.exists, ENV)
    log = (root / "stop.log").read_text(errors="replace")
    kept = re.search(r"kept step 1 of run (\w+) in (\S+); resume: (.+)", log)
    assert kept, log[-4000:]  # without the resume command it printed there is nothing to resume
    ckpt = out / "checkpoints" / "step_000001"
    at_stop = dict(
        checkpoints_at_stop=sorted(p.name for p in (out / "checkpoints").iterdir()),
        complete_at_stop=(ckpt / "COMPLETE").read_text(),
        run_id_at_stop=checkpoints.read_meta(ckpt)["run_id"],
        containers_at_stop=containers_of(run_ids_of(log)),
    )
    # a write a kill cut off is ignored and removed; a changed knob is refused by name
    (out / "checkpoints" / "step_000002.tmp-deadbeef").mkdir()
    resume = kept.group(3).strip().replace("make train", "make --no-print-directory -o setup train")
    refused = subprocess.run(
        resume.replace("--resume", "--lr 3e-6 --resume"),
        shell=True, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    resumed = subprocess.run(
        resume, shell=True, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=900
    )
    return Stopped(out, code, sent, log, **at_stop, refused=refused, resumed=resumed)


@pytest.mark.model_run
@pytest.mark.docker
def test_ctrl_c_mid_rollout_stops_make_train_cleanly_and_its_resume_command_continues(stopped):
    out, log = stopped.out, stopped.log
    assert stopped.sent is not None and stopped.code == 0, log[-4000:]
    assert "Traceback" not in log and "SignalException" not in log and "forcefully" not in log
    # every rank got the signal; rank 0 alone says so
    assert log.count("SIGINT: cutting this step short") == 1
    assert "stopped during the rollout of step 2; it is not trained on" in log
    run_id = re.search(r"new run ([0-9a-f]{8}) in ", log).group(1)
    kept = re.search(r"kept step 1 of run (\w+) in (\S+); resume: (.+)", log)
    assert kept.group(1) == run_id, log[-4000:]
    ckpt = out / "checkpoints" / "step_000001"
    assert Path(kept.group(2)) == ckpt and stopped.complete_at_stop == "1\n"
    assert stopped.run_id_at_stop == run_id
    assert stopped.checkpoints_at_stop == ["step_000001"]
    assert stopped.containers_at_stop == []
    refused = stopped.refused
    assert refused.returncode != 0 and "in lr (2e-06 -> 3e-06); resume" in refused.stderr
    r = stopped.resumed
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"resuming run {run_id} from step 1 ({ckpt})" in r.stdout
    assert "step_000002.tmp-deadbeef: a partial checkpoint" in r.stdout
    assert "step 2/3 | reward" in r.stdout and "step 3/3 | reward" in r.stdout
    assert "step 1/3" not in r.stdout
    steps = [json.loads(x)["step"] for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2, 3]
    assert checkpoints.read_meta(out / "checkpoints" / "step_000003")["run_id"] == run_id


def _records(out: Path) -> dict[int, dict]:
    lines = (out / "metrics.jsonl").read_text().splitlines()
    return {r["step"]: r for r in map(json.loads, lines)}


def _episodes(out: Path, step: int) -> list[tuple]:
    """What the agents did in `step`, both ranks: task, group index, tokens, loss mask, reward, stop
    reason, engine log-probs (timings left out: wall clock)."""
    rows = []
    for rank in (0, 1):
        path = out / "trajectories" / f"step_{step:06d}_rank{rank}.jsonl"
        for t in map(json.loads, path.read_text().splitlines()):
            rows.append(
                (
                    t["task_id"],
                    t["group_index"],
                    t["token_ids"],
                    t["loss_mask"],
                    t["reward"],
                    t["stop_reason"],
                    t["logprobs"],
                )
            )
    return sorted(rows, key=lambda r: (r[0], r[1]))


@pytest.mark.model_run
@pytest.mark.docker
def test_a_run_stopped_after_step_1_and_resumed_trains_steps_2_and_3_as_the_run_never_stopped(
    never_stopped, stopped
):
    r = stopped.resumed
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    a, b = _records(never_stopped), _records(stopped.out)
    assert sorted(a) == sorted(b) == [1, 2, 3]
    for step in (1, 2, 3):
        assert {k: b[step][k] for k in EXACT} == {k: a[step][k] for k in EXACT}, step
        for k in CLOSE:
            assert b[step][k] == pytest.approx(a[step][k], rel=1e-5, abs=1e-7), (step, k)
        resumed, straight = _episodes(stopped.out, step), _episodes(never_stopped, step)
        assert [e[:-1] for e in resumed] == [e[:-1] for e in straight], step
        # the engine's log-probs after a resume were seen 1 ulp apart (5e-7 at -10.8)
        for e, f in zip(resumed, straight):
            assert e[-1] == pytest.approx(f[-1], abs=1e-5), (step, e[0], e[1])
