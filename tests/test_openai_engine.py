"""OpenAIEngine against a real third-party OpenAI-compatible server, and the evaluation command's run verdict.

The server is `transformers serve` (pip transformers[serving]) on 127.0.0.1, serving the embedded SmolLM2-135M
on the CPU: chat completions work; /v1/completions takes text prompts only (no token ids, no log-probs), and
any field outside the OpenAI API (top_k, stop_token_ids, ...) is refused with HTTP 422. The scripted
server in test_evaluate.py covers the vLLM-style replies (token ids, log-probs) and malformed ones.
"""

import asyncio
import json
import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

import engines as E
import evaluate as EV
from engines.openai_engine import OpenAIEngine
from hf import weights

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASK = os.path.join(ROOT, "data", "tasks", "write-hello-file")
MODEL = str(weights.default_model_dir())
SERVE = "import sys; from transformers.cli.transformers import main; sys.argv[0] = 'transformers'; sys.exit(main())"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`transformers serve MODEL` on 127.0.0.1:<free port>; yields its base URL. One torch thread: the
    server's default thread count makes every request ~6x slower when the machine's cores are busy."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    log = log_path.open("w")  # noqa: SIM115 (the server writes to it until teardown)
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_UPDATE_CHECK": "1",
    }
    p = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SERVE,
            "serve",
            MODEL,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--device",
            "cpu",
            "--format",
            "quiet",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert p.poll() is None, (
                f"transformers serve exited {p.returncode}: {log_path.read_text()[-2000:]}"
            )
            assert time.monotonic() < deadline, (
                f"transformers serve not up in 180 s: {log_path.read_text()[-2000:]}"
            )
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        yield url
    finally:
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
        log.close()


def _run(coro_fn):
    return asyncio.run(coro_fn())


@pytest.mark.server
def test_chat_probe_says_no_extension_is_in_use_and_what_the_server_cannot_honour(served, tok):
    async def go():
        eng = OpenAIEngine(served, MODEL, tok, mode="chat")
        try:
            return await eng.probe(), eng.extensions, eng.refused
        finally:
            await eng.aclose()

    line, extensions, refused = _run(go)
    assert (extensions, refused) == (set(), ["top_k"])
    assert line == (
        f"OpenAIEngine {served}/v1/chat/completions: chat, not token-exact (reply text re-tokenised, "
        "no log-probs: evaluation only, not training); extensions in use: none; "
        "not honoured (not sent): top_k, logprobs, token ids"
    )


@pytest.mark.server
def test_chat_generate_with_top_k_set_is_answered_without_the_refused_field(served, tok):
    # a server that does not know top_k refuses it with HTTP 422 ("Unexpected fields in the request:
    # {'top_k'}"), so chat mode must not send it
    async def go():
        eng = OpenAIEngine(served, MODEL, tok, mode="chat")
        try:
            return await eng.generate(
                [1, 2, 3],
                E.SamplingParams(temperature=1.0, top_k=5, max_tokens=8, seed=1),
                messages=[{"role": "user", "content": "Say hi."}],
            )
        finally:
            await eng.aclose()

    c = _run(go)
    assert c.exact is False and c.finish_reason in ("stop", "length")
    assert 1 <= len(c.token_ids) <= 9 and c.logprobs == [0.0] * len(
        c.token_ids
    )  # 8 tokens + end-of-turn at most


@pytest.mark.server
def test_completions_mode_is_refused_at_start_up_naming_the_missing_capability(served, tok):
    async def go():
        eng = OpenAIEngine(served, MODEL, tok)  # mode="completions"
        try:
            with pytest.raises(ValueError) as e:
                await eng.probe()
            with pytest.raises(
                ValueError
            ) as again:  # a later request fails with the same message, not a new one
                await eng.generate([1, 2, 3], E.SamplingParams(max_tokens=4))
            return str(e.value), str(again.value)
        finally:
            await eng.aclose()

    first, again = _run(go)
    assert first.startswith(
        f"{served}/v1/completions cannot do token-exact completions: prompt as token ids "
        "refused (HTTP 400: {'detail': 'prompt must be a string.'}). Use --openai-mode chat"
    )
    assert "not usable for training" in first and again == first


def _eval(tmp_path, *args, timeout=240):
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    if not (tasks / "write-hello-file").exists():
        (tasks / "write-hello-file").symlink_to(TASK)
    return subprocess.run(
        [
            sys.executable,
            "evaluate.py",
            "--tasks",
            str(tasks),
            "--k",
            "1",
            "--out-dir",
            str(tmp_path / "out"),
            "--no-progress",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.model_run
@pytest.mark.docker
def test_eval_cli_chat_mode_completes_an_episode_without_errors_and_says_what_it_is_for(
    served, tmp_path
):
    r = _eval(
        tmp_path,
        "--engine",
        "openai",
        "--openai-base-url",
        served,
        "--openai-mode",
        "chat",
        "--rollout.max-turns",
        "1",
        "--rollout.max-tokens-per-turn",
        "24",
        "--rollout.top-k",
        "5",
    )
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["overall"]["episodes"], summary["overall"]["errors"], summary["top_error"]) == (
        1,
        0,
        None,
    )
    assert summary["token_exact"] is False
    assert (
        "trajectories: not token-exact (chat mode re-tokenises the reply text): usable for evaluation, not for training"
        in r.stdout
    )
    assert (
        "extensions in use: none; not honoured (not sent): top_k, logprobs, token ids" in r.stderr
    )


@pytest.mark.model_run
def test_eval_cli_completions_mode_refuses_with_one_line_before_any_episode(served, tmp_path):
    r = _eval(tmp_path, "--engine", "openai", "--openai-base-url", served, timeout=120)
    # besides the start-up [host] admission line, one line: the refusal
    lines = [x for x in r.stderr.splitlines() if x.strip() and not x.startswith("[host] ")]
    assert r.returncode == 2 and len(lines) == 1, r.stderr[-2000:]
    assert lines[0].startswith(
        f"error: {served}/v1/completions cannot do token-exact completions: prompt as token ids"
    )
    assert "Use --openai-mode chat" in lines[0]
    assert not (tmp_path / "out").exists()  # no episode ran, nothing written


# ----------------------------------------------------------------------------- the run's verdict and table


@pytest.mark.model_run
@pytest.mark.docker
def test_eval_cli_run_whose_every_episode_errored_exits_1_with_one_line(tmp_path):
    script = tmp_path / "script.json"
    script.write_text("[]")  # ScriptedEngine has no reply for turn 0: every episode errors
    r = _eval(tmp_path, "--engine", "scripted", "--script", str(script))
    assert r.returncode == 1, r.stderr[-2000:]
    assert r.stderr.strip().splitlines()[-1] == (
        "error: all 1 episodes errored, nothing was scored; most common error: "
        "ValueError: ScriptedEngine: no reply for turn 0 (script has 0)"
    )
    header = r.stdout.splitlines()[0].split()
    assert header == [
        "episodes",
        "errors",
        "resolved_rate",
        "resolved_all",
        "pass@1",
        "mean_reward",
    ]  # k=1


def test_failed_run_line_when_any_episode_errored_unless_allowed():
    def summary(episodes, errors):
        return {
            "overall": {"episodes": episodes, "errors": errors},
            "top_error": "RuntimeError: boom",
        }

    assert EV.failed_run_line(summary(3, 3)) == (
        "error: all 3 episodes errored, nothing was scored; most common error: RuntimeError: boom"
    )
    assert EV.failed_run_line(summary(3, 3), allow_errors=True) == EV.failed_run_line(summary(3, 3))
    assert EV.failed_run_line(summary(3, 2)) == (
        "error: 2 of 3 episodes errored (resolved_rate leaves them out, resolved_all counts them unresolved; "
        "--allow-errors to exit 0); most common error: RuntimeError: boom"
    )
    assert EV.failed_run_line(summary(3, 2), allow_errors=True) is None
    assert EV.failed_run_line(summary(3, 0)) is None
    assert EV.failed_run_line(summary(0, 0)) is None


def test_format_summary_prints_pass_at_k_beside_pass_at_1_only_when_k_above_1():
    stats = {
        "episodes": 2,
        "errors": 0,
        "resolved_rate": 0.5,
        "resolved_all": 0.5,
        "pass@1": 0.5,
        "pass@2": 1.0,
        "mean_reward": 0.5,
    }
    s = {"overall": stats, "by_difficulty": {}, "by_category": {}}
    assert EV.format_summary(s, 2).splitlines()[0].split() == [
        "episodes",
        "errors",
        "resolved_rate",
        "resolved_all",
        "pass@1",
        "pass@2",
        "mean_reward",
    ]
    assert EV.format_summary(s, 1).splitlines()[1].split() == [
        "overall",
        "2",
        "0",
        "0.500",
        "0.500",
        "0.500",
        "0.500",
    ]
