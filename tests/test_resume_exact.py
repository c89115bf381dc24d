"""Resume is exact: a run stopped after step 1 and resumed trains steps 2 and 3 as the run
that was never stopped, with the same seeds (the engine's lockstep batching, per-request seeds, the
checkpoint's sampler and RNG state from when its step was recorded); and the engine's lockstep mode
gives the same tokens and log-probs bitwise whatever order and timing the requests come in."""

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from train_helpers import E2E_ARGS, ROOT, containers_of, run_ids_of

from agent.chat import ChatFormat
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
# end to end: stop after step 1, resume, compare steps 2-3 with the run never stopped

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


def _launch(out: Path, log: Path, *args: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "bookkeeping.launch", "--nproc", "2", "train.py"]
    cmd += ["--preset", "cpu-smollm2", *TINY, "--out-dir", str(out), *args]
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)


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
    tmp_path,
):
    straight, cut = tmp_path / "straight", tmp_path / "cut"
    proc = _launch(straight, tmp_path / "straight.log")
    assert proc.wait(timeout=900) == 0, (tmp_path / "straight.log").read_text()[-4000:]
    # the second run is stopped as Ctrl-C stops make train, in step 2
    proc = _launch(cut, tmp_path / "cut.log")
    deadline = time.monotonic() + 600
    while "step 1/3 | reward" not in (tmp_path / "cut.log").read_text():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=600) == 0, (tmp_path / "cut.log").read_text()[-4000:]
    text = (tmp_path / "cut.log").read_text()
    assert "kept step 1 of run" in text, text[-4000:]
    assert containers_of(run_ids_of(text)) == []
    proc = _launch(cut, tmp_path / "resumed.log", "--resume")
    assert proc.wait(timeout=900) == 0, (tmp_path / "resumed.log").read_text()[-4000:]
    assert "resuming run" in (tmp_path / "resumed.log").read_text()

    a, b = _records(straight), _records(cut)
    assert sorted(a) == sorted(b) == [1, 2, 3]
    for step in (1, 2, 3):
        assert {k: b[step][k] for k in EXACT} == {k: a[step][k] for k in EXACT}, step
        for k in CLOSE:
            assert b[step][k] == pytest.approx(a[step][k], rel=1e-5, abs=1e-7), (step, k)
        resumed, never_stopped = _episodes(cut, step), _episodes(straight, step)
        assert [e[:-1] for e in resumed] == [e[:-1] for e in never_stopped], step
        # the engine's log-probs after a resume were seen 1 ulp apart (5e-7 at -10.8)
        for e, f in zip(resumed, never_stopped):
            assert e[-1] == pytest.approx(f[-1], abs=1e-5), (step, e[0], e[1])
