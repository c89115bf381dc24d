"""The disaggregated layout (TrainConfig.rollout_ranks, learner/layout.py): rollout ranks only
generate, trainer ranks only train, the policy broadcast after each step. Real gloo ranks, the tiny
random Qwen3, real Docker tasks, the torch engine and the real vLLM CPU build."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import configs
import engines
from hf import weights

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from judge_server import JudgeServer  # noqa: E402
from train_helpers import E2E_ARGS, containers_of, run_ids_of, spawn  # noqa: E402

# -----------------------------------------------------------------------------
# start-up validation: one line naming the field


def test_rollout_ranks_must_leave_a_trainer():
    cfg = configs.TrainConfig(rollout_ranks=2, tasks_per_step=4)
    with pytest.raises(configs.ConfigError) as e:
        configs.check_layout(cfg, 2)
    assert str(e.value) == "rollout_ranks = 2: must be < the number of ranks (2): one trains"
    configs.check_layout(cfg, 3)  # 1 trainer + 2 rollout ranks


def test_rollout_ranks_must_not_be_negative():
    with pytest.raises(configs.ConfigError, match=r"^rollout_ranks = -1: must be >= 0$"):
        configs.validate(configs.TrainConfig(rollout_ranks=-1), check_paths=False)


def test_rollout_ranks_refuse_a_tensor_parallel_engine():
    cfg = configs.TrainConfig(rollout_ranks=1)
    cfg.policy.vllm_tensor_parallel_size = 2
    with pytest.raises(configs.ConfigError, match=r"^rollout_ranks = 1: must be 0 with policy\."):
        configs.validate(cfg, check_paths=False)


def test_each_rollout_rank_needs_a_task_per_step():
    cfg = configs.TrainConfig(rollout_ranks=3, tasks_per_step=2)
    with pytest.raises(configs.ConfigError) as e:
        configs.check_layout(cfg, 4)
    assert str(e.value) == (
        "rollout_ranks = 3: must be <= tasks_per_step (2): each rollout rank runs a task a step"
    )


def test_train_refuses_rollout_ranks_on_one_rank_before_writing_anything(tmp_path):
    import train

    out = tmp_path / "run"
    with pytest.raises(configs.ConfigError, match=r"^rollout_ranks = 1: must be < the number"):
        train.main(["--rollout-ranks", "1", "--out-dir", str(out)])
    assert not out.exists()


# -----------------------------------------------------------------------------
# the policy broadcast and the groups' exchange on real gloo ranks


def _transfer_worker(rank: int, world: int, store: str, model_dir: str, out: str) -> None:
    import torch.distributed as dist

    from learner import layout
    from learner.distributed import all_reduce, load_policy, set_learner_group
    from learner.sync import iter_full_weights

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    try:
        lay = layout.build_layout(rank, world, 1)
        cpu = torch.device("cpu")
        if lay.is_trainer:
            cfg = configs.TrainConfig()
            cfg.policy.dtype = "float32"
            policy = load_policy(Path(model_dir), cfg, layout.trainer_mesh(lay, cpu), cpu)
            summed = float(all_reduce(torch.ones(1))[0])  # over the two trainers only
            full = dict(iter_full_weights(policy, torch.bfloat16))
            sums = layout.send_update(
                lay, 1, False, iter_full_weights(policy, torch.bfloat16), bucket_bytes=1 << 16
            )
            items, stop = layout.exchange(lay, {"stop": False})
            if rank == 0:
                torch.save(dict(full=full, sums=sums, summed=summed, items=items), f"{out}/t.pt")
        else:
            version, stop, received = layout.receive_update(lay, cpu)
            got = {name: t.clone() for name, t in received}
            items, _ = layout.exchange(lay, {"stop": False, "indices": [3], "groups": ["g"]})
            got = dict(got=got, version=version, stop=stop, sums=received.checksum)
            torch.save(got, f"{out}/r.pt")
        set_learner_group(None)
    finally:
        dist.destroy_process_group()


@pytest.mark.model_run
def test_trainer_zero_broadcasts_the_full_policy_in_buckets_to_the_rollout_rank(tmp_path, tiny_dir):
    spawn(_transfer_worker, 3, str(tiny_dir), str(tmp_path))
    t, r = torch.load(tmp_path / "t.pt"), torch.load(tmp_path / "r.pt")
    assert t["summed"] == 2.0  # the learner's all_reduce spans the trainers, not the rollout rank
    assert (r["version"], r["stop"]) == (1, False)
    assert list(r["got"]) == list(t["full"])  # every parameter, in order (several buckets)
    for name, tensor in t["full"].items():
        assert r["got"][name].dtype == torch.bfloat16 and torch.equal(r["got"][name], tensor)
    assert r["sums"] == t["sums"] and t["sums"][1] > 0
    assert t["items"] == [{"stop": False, "indices": [3], "groups": ["g"]}]


# -----------------------------------------------------------------------------
# end to end: torchrun, trainers + rollout ranks, real tasks in Docker


def _torchrun(
    tmp_path: Path, model_dir: Path, nproc: int, *args: str, steps: int = 2
) -> tuple[int, str]:
    out = tmp_path / "run"
    log = tmp_path / "train.log"
    with (
        JudgeServer(default_score=0.8, input_tokens=1000, output_tokens=50) as judge,
        open(log, "w") as f,
    ):
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
        cmd += [f"--nproc_per_node={nproc}", "train.py", "--preset", "cpu-smollm2"]
        cmd += ["--policy.path", str(model_dir), "--out-dir", str(out), *E2E_ARGS]
        cmd += ["--steps", str(steps), "--save-every", "1", "--rollout.max-turns", "1"]
        cmd += ["--reward.judge-backends", f"openai:judge-m@{judge.url}", *args]
        env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
        rc = subprocess.run(
            cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, timeout=1200, env=env
        ).returncode
    return rc, log.read_text()


# the vLLM CPU build's engine for the tiny model (head_dim 64): a context and KV cache that fit
VLLM_CPU_ARGS = (
    "--policy.engine",
    "vllm",
    "--policy.max-seq-len",
    "2048",
    "--policy.vllm-kv-cache-mib",
    "64",
)


def _policy_sums(log: str) -> tuple[dict, dict, dict]:
    """version -> the (sum, sum of squares) trainer 0 sent, a rollout rank received, and its
    engine holds after the load ([layout] lines)."""
    num = r"([-0-9.e+]+)"
    sums = rf"\(sum {num}, sum of squares {num}\)"
    pat = rf"policy version (\d+) sent .*{sums}"
    sent = {int(v): (float(a), float(b)) for v, a, b in re.findall(pat, log)}
    got, held = {}, {}
    pat = rf"loaded policy version (\d+) {sums}; engine holds {sums}"
    for v, a, b, c, d in re.findall(pat, log):
        got[int(v)], held[int(v)] = (float(a), float(b)), (float(c), float(d))
    return sent, got, held


def _check_run(tmp_path: Path, log: str, staleness: list, versions: list) -> None:
    """The run of len(versions) steps: `versions` is the policy version each step's rollout ran
    on, `staleness` each step's (staleness_mean, staleness_max)."""
    out = tmp_path / "run"
    steps = list(range(1, len(versions) + 1))
    assert all(f"step {s}/{len(steps)} | reward" in log for s in steps)
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == steps
    for r in records:  # 2 tasks x 2 episodes, all on the rollout rank
        assert r["episodes"] == 4 and r["episodes_failed"] == 0 and r["groups"] == 2
        assert r["num_tokens"] == r["generated_tokens"] > 0 and r["skipped_update"] == 0.0
        assert len(r["rss_peak_gb_per_rank"]) == 3  # two trainers, then the rollout rank
    assert [(r["staleness_mean"], r["staleness_max"]) for r in records] == staleness
    assert records[0]["sync_s"] == 0.0  # the engine started from the same weights
    # the judge's calls so far: 4 episodes a step
    assert [(r["judge_calls"], r["judge_failed"]) for r in records] == [(4 * s, 0) for s in steps]
    for step, version in zip(steps, versions):
        lines = (out / "trajectories" / f"step_{step:06d}_rank2.jsonl").read_text().splitlines()
        assert [json.loads(x)["policy_version"] for x in lines] == [
            version
        ] * 4  # the step's 2 tasks x 2
        assert not (out / "trajectories" / f"step_{step:06d}_rank0.jsonl").exists()
        assert (out / "checkpoints" / f"step_{step:06d}" / "COMPLETE").read_text() == f"{step}\n"
    # the policy after every step but the last reached the rollout rank's engine whole
    # (sent = received = held)
    sent, got, held = _policy_sums(log)
    assert list(sent) == list(got) == list(held) == steps[:-1]
    for v in steps[:-1]:
        assert got[v] == pytest.approx(sent[v], rel=1e-12)
        assert held[v] == pytest.approx(sent[v], rel=1e-9)
    assert weights.load_hf(out / "hf").config.num_hidden_layers == 2
    assert containers_of(run_ids_of(log)) == []


@pytest.mark.model_run
@pytest.mark.docker
def test_two_trainers_and_a_torch_engine_rollout_rank_train_two_synchronous_steps(
    tmp_path, tiny_dir
):
    rc, log = _torchrun(tmp_path, tiny_dir, 3, "--rollout-ranks", "1", "--policy.engine", "torch")
    assert rc == 0, log[-4000:]
    assert "2 trainer rank(s) and 1 rollout rank(s)" in log
    # synchronous: step 2's rollout waited for the policy of step 1
    _check_run(tmp_path, log, staleness=[(0.0, 0.0)] * 2, versions=[0, 1])


@pytest.mark.model_run
@pytest.mark.docker
@pytest.mark.timeout(1500)
def test_a_vllm_rollout_rank_generates_while_two_trainers_train(tmp_path):
    # one step behind: step 2's rollout ran on the first policy beside step 1's update, step 3's on
    # the policy of step 1, loaded into vLLM while step 2 trained. The synchronous order (k = 0) is
    # the torch engine's run above: the layout's loops do not depend on the engine.
    model = weights.save_tiny_random(tmp_path / "qwen3-hd64", head_dim=64)  # vLLM CPU: head_dim 64
    rc, log = _torchrun(
        tmp_path,
        model,
        3,
        "--rollout-ranks",
        "1",
        "--max-off-policy-steps",
        "1",
        *VLLM_CPU_ARGS,
        steps=3,
    )
    assert rc == 0, log[-4000:]
    _check_run(tmp_path, log, staleness=[(0.0, 0.0)] + [(1.0, 1.0)] * 2, versions=[0, 0, 1])


# -----------------------------------------------------------------------------
# layout x overlap x sleep level x engine: an overlapped rollout rank runs its next
# rollout before the next policy arrives, so its engine's sleep must keep the weights


def test_an_overlapped_rollout_rank_engine_keeps_its_weights_through_sleep(tiny_dir, monkeypatch):
    policy = configs.PolicyConfig(path=str(tiny_dir), engine="torch", max_seq_len=256)
    tok = weights.load_tokenizer(tiny_dir)
    cpu = torch.device("cpu")
    kept = engines.build_engine(policy, tiny_dir, tok, cpu, 0, keep_weights=True)
    kept.sleep()
    assert not kept.weights_dropped
    # a rollout with no load before it: raised "weights dropped by sleep()" when they were dropped
    kept.wake_up()
    colocated = engines.build_engine(policy, tiny_dir, tok, cpu, 0)
    colocated.sleep()
    assert colocated.weights_dropped
    # vLLM: level 1 (weights to host RAM), not the config's level 2 (discarded: wake_up raised
    # "the weights were discarded" at the second rollout on GPUs)
    made = []
    monkeypatch.setattr(engines, "VLLMEngine", lambda *a, **kw: made.append(kw["sleep_level"]))
    vllm_policy = configs.PolicyConfig(path=str(tiny_dir), engine="vllm", vllm_sleep_level=2)
    engines.build_engine(vllm_policy, tiny_dir, tok, cpu, 0, keep_weights=True)
    engines.build_engine(vllm_policy, tiny_dir, tok, cpu, 0)
    assert made == [1, 2]
