"""Episode metrics, pass@k, the evaluation command (evaluate.py) and OpenAIEngine over real HTTP on
127.0.0.1."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from openai_server import CompletionsServer
from rollout_helpers import (
    ROOT,
    containers_of,
    task_dir,
)

import engines as E
import evaluate as EV
import rollout as R
from engines.openai_engine import OpenAIEngine
from hf.chat import end_of_turn, stop_ids_of

# ----------------------------------------------------------------------------- metrics


def test_pass_at_k_matches_chen_et_al_formula():
    assert EV.pass_at_k(5, 0, 1) == 0.0
    assert EV.pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert EV.pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert EV.pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)  # 1 - C(7,5)/C(10,5)
    assert EV.pass_at_k(4, 1, 4) == 1.0
    with pytest.raises(ValueError):
        EV.pass_at_k(3, 1, 4)


def test_summarize_by_difficulty_and_category_excludes_failed_episodes():
    def t(task, diff, cat, resolved, reward):
        return R.Trajectory(
            task, 0, difficulty=diff, category=cat, resolved=resolved, reward=reward
        )

    trajs = [
        t("a", "easy", "files", True, 1.0),
        t("a", "easy", "files", False, 0.5),
        t("b", "hard", "git", False, 0.0),
        t("b", "hard", "git", False, 0.25),
        t("b", "hard", "git", False, None),
    ]
    s = EV.summarize(trajs, k=2)
    assert s["overall"] == {
        "episodes": 5,
        "errors": 1,
        "tasks": 2,
        "resolved_rate": 0.25,
        "resolved_all": 0.2,
        "pass@1": 0.25,
        "pass@2": 0.5,
        "mean_reward": 0.4375,
    }
    assert s["by_difficulty"]["easy"]["pass@2"] == 1.0 and s["by_category"]["git"]["pass@2"] == 0.0


# ----------------------------------------------------------------------------- the evaluation command


@pytest.mark.model_run
@pytest.mark.docker
def test_eval_cli_oracle_resolves_starter_tasks_and_writes_outputs(tmp_path):
    out = tmp_path / "eval"
    r = subprocess.run(
        [
            sys.executable,
            "evaluate.py",
            "--oracle",
            "--tasks",
            task_dir(tmp_path),
            "--k",
            "2",
            "--out-dir",
            str(out),
            "--no-progress",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"] == {
        "episodes": 4,
        "errors": 0,
        "tasks": 2,
        "resolved_rate": 1.0,
        "resolved_all": 1.0,
        "pass@1": 1.0,
        "pass@2": 1.0,
        "mean_reward": 1.0,
    }
    lines = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    assert len(lines) == 4 and {x["stop_reason"] for x in lines} == {"oracle"}
    assert all(x["test_report"]["tests"] and all(x["test_report"]["tests"].values()) for x in lines)
    assert "pass@2" in r.stdout and "difficulty=easy" in r.stdout
    assert (
        "[host] 1 rank(s) x 4 episodes x (2 x 512 MiB memory, 2 x 2048 MiB disk) = 4.0 GiB of "
        in r.stderr
    )


@pytest.mark.model_run
def test_eval_cli_refuses_when_not_one_episode_fits_the_host(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            "evaluate.py",
            "--oracle",
            "--tasks",
            task_dir(tmp_path),
            "--out-dir",
            str(tmp_path / "eval"),
            "--no-progress",
            "--sandbox.memory-mb",
            str(1 << 30),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.startswith("error: [host] 1 rank(s) x 8 episodes x (2 x 1073741824 MiB memory")
    assert "not one episode fits in the host's RAM" in r.stderr and not (tmp_path / "eval").exists()


@pytest.mark.model_run
@pytest.mark.docker
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_during_eval_exits_130_with_no_summary_and_no_container(tmp_path, signum):
    run_id = f"test-{signum.name.lower()}-{os.getpid()}"
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["```bash\nsleep 600\n```"] * 4))
    p = subprocess.Popen(
        [
            sys.executable,
            "evaluate.py",
            "--engine",
            "scripted",
            "--script",
            str(script),
            "--tasks",
            task_dir(tmp_path),
            "--task-ids",
            "write-hello-file",
            "--k",
            "3",
            "--run-id",
            run_id,
            "--out-dir",
            str(tmp_path / "o"),
            "--no-progress",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(containers_of(run_id)) < 3 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.5)
        assert len(containers_of(run_id)) == 3, "the episodes never started"
        time.sleep(1.0)  # the agents are now inside `sleep 600`
        p.send_signal(signum)
        _, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err[-2000:]
    assert containers_of(run_id) == []
    assert not (tmp_path / "o" / "summary.json").exists()
    assert f"[eval] {signum.name}: cancelling the episodes" in err


# ----------------------------------------------------------------------------- OpenAIEngine over real HTTP


@pytest.mark.server
def test_openai_engine_returns_exact_token_ids_and_logprobs_from_completions(tok):
    reply = tok.encode("```bash\nls\n```", add_special_tokens=False) + [end_of_turn(tok)]
    lps = [-0.5] * len(reply)
    srv = CompletionsServer(reply, lps)

    async def go():
        eng = OpenAIEngine(srv.url, "smol", tok)
        c = await eng.generate(
            [1, 2, 3], E.SamplingParams(temperature=0.7, top_k=5, max_tokens=16, seed=3)
        )
        await eng.aclose()
        return c, await eng.probe()

    try:
        c, line = asyncio.run(go())
    finally:
        srv.close()
    assert (c.token_ids, c.logprobs, c.finish_reason, c.exact) == (reply, lps, "stop", True)
    # a server accepting every extension (as vLLM does) gets them all, after 3 token-exact + 3 extension probes
    assert line == (
        f"OpenAIEngine {srv.url}/v1/completions: token-exact (ids and log-probs as sampled: evaluation and "
        "training); extensions in use: prompt as token ids, return_tokens_as_token_ids, "
        "skip_special_tokens, stop_token_ids, top_k; not honoured (not sent): none"
    )
    assert len(srv.bodies) == 7
    path, body = srv.bodies[-1]
    assert path == "/v1/completions"
    assert body == {
        "model": "smol",
        "prompt": [1, 2, 3],
        "max_tokens": 16,
        "temperature": 0.7,
        "top_p": 1.0,
        "top_k": 5,
        "seed": 3,
        "logprobs": 1,
        "return_tokens_as_token_ids": True,
        "stop_token_ids": sorted(stop_ids_of(tok)),
        "skip_special_tokens": False,
    }


@pytest.mark.server
def test_openai_engine_rejects_text_tokens_and_chat_mode_is_marked_inexact(tok):
    srv = CompletionsServer([5, 6], [-1.0, -1.0], as_token_ids=False)

    async def go():
        eng = OpenAIEngine(srv.url, "smol", tok)
        with pytest.raises(ValueError, match="return_tokens_as_token_ids"):
            await eng.generate([1, 2, 3], E.SamplingParams(max_tokens=4))
        chat_eng = OpenAIEngine(srv.url, "smol", tok, mode="chat")
        c = await chat_eng.generate(
            [1, 2, 3],
            E.SamplingParams(max_tokens=4),
            messages=[{"role": "user", "content": "hi", "extra": 1}],
        )
        await eng.aclose()
        await chat_eng.aclose()
        return c

    try:
        c = asyncio.run(go())
    finally:
        srv.close()
    assert c.exact is False and c.finish_reason == "stop"
    assert c.token_ids == tok.encode("```bash\nls\n```", add_special_tokens=False) + [
        end_of_turn(tok)
    ]
    assert srv.bodies[-1] == (
        "/v1/chat/completions",
        {
            "model": "smol",
            "max_tokens": 4,
            "temperature": 1.0,
            "top_p": 1.0,
            "messages": [{"role": "user", "content": "hi"}],
        },
    )
