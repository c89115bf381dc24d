"""lora.py against PEFT (the reference LoRA, a test-only dependency) on the tiny real Qwen3 model:
the same base and adapter weights give the same log-probs and adapter gradients; the export is a
PEFT adapter PEFT loads; only the adapters train, sync, checkpoint and shard (FSDP2 over 2 ranks)."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import configs
import lora
from bookkeeping import checkpoints
from engines import cpu_fast
from engines.torch_engine import TorchEngine
from hf import weights
from learner.sync import iter_full_weights, sync_weights
from learner.update import build_optimizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LORA = configs.LoRAConfig(rank=4, alpha=8.0, targets=("q_proj", "v_proj", "down_proj"))


pytestmark = pytest.mark.usefixtures("one_thread")


def adapted(tiny_dir, cfg: configs.LoRAConfig = LORA, seed: int = 1) -> torch.nn.Module:
    """The tiny model with adapters whose B is nonzero (a trained adapter, unlike step 0's B = 0)."""
    model = lora.add_lora(weights.load_hf(tiny_dir), cfg)
    lora.init_adapters(model, seed=0)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in lora.adapted_modules(model).values():
            m.lora_B.copy_(torch.randn(m.lora_B.shape, generator=g) * 0.05)
    return model


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids [2, 9] and their next-token targets [2, 9] (the last one ignored: -1)."""
    ids = torch.randint(0, 49152, (2, 10), generator=torch.Generator().manual_seed(3))
    targets = ids[:, 1:].clone()
    targets[:, -1] = -1
    return ids[:, :-1], targets


def hf_logprobs(hf_model, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-token log-probs [B, T] of `targets` under a transformers model (0.0 where target < 0)."""
    logp = torch.log_softmax(hf_model(ids).logits.float(), dim=-1)
    lp = logp.gather(-1, targets.clamp(min=0)[..., None])[..., 0]
    return lp * (targets >= 0)


def peft_model(tiny_dir, ours: torch.nn.Module):
    """PEFT's LoRA on transformers' model of the same base, its adapters copied from `ours`."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(tiny_dir), dtype=torch.float32)
    cfg = LoraConfig(
        r=LORA.rank, lora_alpha=LORA.alpha, target_modules=list(LORA.targets), lora_dropout=0.0
    )
    peft = get_peft_model(base, cfg)
    theirs = dict(peft.named_parameters())
    with torch.no_grad():
        for name, p in ours.named_parameters():
            if lora.is_adapter(name):
                key = lora.peft_name(name).replace(".weight", ".default.weight")
                theirs[key].copy_(p)
    return peft


def adapter_grads(model) -> dict[str, torch.Tensor]:
    return {n: p.grad for n, p in model.named_parameters() if lora.is_adapter(n)}


# ----------------------------------------------------------------------------- the module


def test_rank_zero_adds_no_adapter_and_freezes_nothing(tiny_dir):
    model = lora.add_lora(weights.load_hf(tiny_dir), configs.LoRAConfig())
    assert lora.adapted_modules(model) == {}
    assert all(p.requires_grad for p in model.parameters())


def test_adapters_start_at_the_base_model(tiny_dir):
    """B = 0 at initialisation: step 0's policy is exactly the base (A random, nonzero)."""
    base = weights.load_hf(tiny_dir)
    ids, targets = batch()
    want, _ = base(ids, targets=targets)
    model = lora.add_lora(weights.load_hf(tiny_dir), LORA)
    lora.init_adapters(model, seed=0)
    got, _ = model(ids, targets=targets)
    assert torch.equal(got, want)
    modules = lora.adapted_modules(model)
    assert len(modules) == 2 * 3  # 2 layers x (q_proj, v_proj, down_proj)
    assert all(m.lora_A.abs().max() > 0 for m in modules.values())
    # made to fail: a nonzero B moves the log-probs
    moved, _ = adapted(tiny_dir)(ids, targets=targets)
    assert (moved - want).abs().max() > 1e-4


def test_only_adapters_require_grad(tiny_dir):
    model = adapted(tiny_dir)
    trained = sorted(n for n, p in model.named_parameters() if p.requires_grad)
    assert trained == sorted(n for n, _ in model.named_parameters() if lora.is_adapter(n))
    assert len(trained) == 2 * 3 * 2
    assert "model.layers.0.self_attn.q_proj.lora_A" in trained
    # the base weight keeps its HF name and Parameter
    assert "model.layers.0.self_attn.q_proj.weight" in dict(model.named_parameters())


def test_unknown_target_is_a_config_error_naming_the_field():
    cfg = configs.TrainConfig()
    cfg.lora = configs.LoRAConfig(rank=8, targets=("q_proj", "qkv"))
    with pytest.raises(
        configs.ConfigError, match=r"^lora.targets = \('q_proj', 'qkv'\): each must"
    ):
        configs.validate(cfg, check_paths=False)
    cfg.lora = configs.LoRAConfig(rank=-1)
    with pytest.raises(configs.ConfigError, match=r"^lora.rank = -1: must be >= 0"):
        configs.validate(cfg, check_paths=False)


def test_cli_knobs_reach_the_config():
    cfg = configs.parse_cli(
        ["--lora.rank", "8", "--lora.alpha", "32", "--lora.targets", "q_proj", "k_proj"],
        check_paths=False,
    )
    assert cfg.lora == configs.LoRAConfig(rank=8, alpha=32.0, targets=("q_proj", "k_proj"))
    assert configs.parse_cli([], check_paths=False).lora.rank == 0


# ----------------------------------------------------------------------------- parity with PEFT


def test_logprobs_and_adapter_gradients_equal_peft(tiny_dir):
    ours = adapted(tiny_dir)
    peft = peft_model(tiny_dir, ours)
    ids, targets = batch()
    lp, _ = ours(ids, targets=targets)
    ref = hf_logprobs(peft, ids, targets)
    assert (lp - ref).abs().max() <= 1e-5
    weight = torch.linspace(-1.0, 1.0, lp.numel()).view_as(lp)  # a loss that weighs each token
    (lp * weight).sum().backward()
    (ref * weight).sum().backward()
    theirs = dict(peft.named_parameters())
    grads = adapter_grads(ours)
    assert len(grads) == 12
    for name, g in grads.items():
        want = theirs[lora.peft_name(name).replace(".weight", ".default.weight")].grad
        assert g.abs().max() > 0, name
        assert torch.allclose(g, want, atol=1e-6, rtol=1e-4), name


def test_peft_parity_fails_on_a_different_scaling(tiny_dir):
    """The parity check is sharp: alpha 8 vs 16 on the same adapters is caught."""
    ours = adapted(tiny_dir, configs.LoRAConfig(rank=4, alpha=16.0, targets=LORA.targets))
    peft = peft_model(tiny_dir, ours)
    ids, targets = batch()
    lp, _ = ours(ids, targets=targets)
    assert (lp - hf_logprobs(peft, ids, targets)).abs().max() > 1e-4


def test_export_is_merged_weights_and_a_peft_adapter_peft_loads(tmp_path, tiny_dir):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    ours = adapted(tiny_dir)
    ids, targets = batch()
    with torch.no_grad():
        want, _ = ours(ids, targets=targets)
    out = weights.save_hf(ours, tmp_path / "hf", tokenizer_dir=tiny_dir)
    # merged: our loader and transformers read plain weights, no adapter names
    merged = weights.load_hf(out)
    with torch.no_grad():
        got, _ = merged(ids, targets=targets)
    assert (got - want).abs().max() <= 1e-5
    # the adapter folder, onto transformers' base model through PEFT
    base = AutoModelForCausalLM.from_pretrained(str(tiny_dir), dtype=torch.float32)
    peft = PeftModel.from_pretrained(base, str(out / "adapter")).eval()
    with torch.no_grad():
        ref = hf_logprobs(peft, ids, targets)
    assert (ref - want).abs().max() <= 1e-5
    loaded = sum(1 for n, _ in peft.named_parameters() if "lora_B" in n)
    assert loaded == 6
    # made to fail: the base alone differs
    with torch.no_grad():
        with peft.disable_adapter():
            plain = hf_logprobs(peft, ids, targets)
    assert (plain - want).abs().max() > 1e-4


# ----------------------------------------------------------------------------- training


def test_optimizer_holds_state_for_the_adapters_alone_and_a_step_moves_only_them(tiny_dir):
    model = adapted(tiny_dir)
    cfg = configs.TrainConfig(lr=1e-3)
    optimizer, _ = build_optimizer(model, cfg)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    ids, targets = batch()
    lp, _ = model(ids, targets=targets)
    (-lp.sum()).backward()
    optimizer.step()
    adapters = {id(p) for n, p in model.named_parameters() if lora.is_adapter(n)}
    assert {id(p) for group in optimizer.param_groups for p in group["params"]} == adapters
    assert {id(p) for p in optimizer.state} == adapters
    for name, p in model.named_parameters():
        changed = not torch.equal(p, before[name])
        assert changed == lora.is_adapter(name), name
        if not lora.is_adapter(name):
            assert p.grad is None, name


# ----------------------------------------------------------------------------- engine sync


def test_sync_sends_the_merged_adapted_weights_only(tiny_dir):
    ours = adapted(tiny_dir)
    sent = [n for n, _ in iter_full_weights(ours, adapted_only=True)]
    assert sent == sorted(lora.adapted_modules(ours), key=sent.index)
    assert len(sent) == 6
    everything = [n for n, _ in iter_full_weights(ours)]
    assert not any(lora.is_adapter(n) for n in everything)
    assert len(everything) == len(weights.load_hf(tiny_dir).state_dict()) - 1  # tied lm_head

    engine = TorchEngine(weights.load_hf(tiny_dir), None, max_batch=1, stop_ids={0})
    # the engine decodes through fused q/k/v weights the linears are views of
    cpu_fast.fuse_projections(engine.model)
    ids, targets = batch()
    with torch.no_grad():
        want, _ = ours(ids, targets=targets)
        stale, _ = engine.model(ids, targets=targets)
    assert (stale - want).abs().max() > 1e-4  # made to fail: the base alone differs
    sync_weights(ours, engine)
    with torch.no_grad():
        got, _ = engine.model(ids, targets=targets)
    assert (got - want).abs().max() <= 1e-5
    attn = engine.model.model.layers[0].self_attn
    merged_q = dict(iter_full_weights(ours, adapted_only=True))[
        "model.layers.0.self_attn.q_proj.weight"
    ]
    assert torch.equal(attn.qkv_weight[: merged_q.shape[0]], merged_q)


# ----------------------------------------------------------------------------- checkpoints


class Sampler:
    """The state a checkpoint keeps beside the weights (TaskSampler's interface)."""

    def __init__(self):
        self.state = {"epoch": 0}

    def state_dict(self):
        return dict(self.state)

    def load_state_dict(self, state):
        self.state = dict(state)


def test_checkpoint_restores_adapters_and_their_optimizer_state_exactly(tmp_path, tiny_dir):
    model = adapted(tiny_dir)
    optimizer, scheduler = build_optimizer(model, configs.TrainConfig(lr=1e-3))
    ids, targets = batch()
    lp, _ = model(ids, targets=targets)
    (-lp.sum()).backward()
    optimizer.step()
    scheduler.step()
    path = tmp_path / "step_000001"
    checkpoints.save_checkpoint(path, model, optimizer, scheduler, Sampler(), 1, "abcd1234", {})

    fresh = adapted(tiny_dir, seed=2)  # other adapters: the load must overwrite them
    opt2, sched2 = build_optimizer(fresh, configs.TrainConfig(lr=1e-3))
    assert checkpoints.load_checkpoint(path, fresh, opt2, sched2, Sampler()) == 1
    for (name, p), q in zip(model.named_parameters(), fresh.parameters()):
        assert torch.equal(p, q), name
    saved = {n: optimizer.state[p] for n, p in model.named_parameters() if p in optimizer.state}
    loaded = {n: opt2.state[p] for n, p in fresh.named_parameters() if p in opt2.state}
    assert sorted(saved) == sorted(loaded) == sorted(adapter_grads(model))
    for name in saved:
        assert torch.equal(saved[name]["exp_avg"], loaded[name]["exp_avg"]), name
        assert torch.equal(saved[name]["exp_avg_sq"], loaded[name]["exp_avg_sq"]), name


# ----------------------------------------------------------------------------- FSDP2

FSDP_WORKER = textwrap.dedent("""
    import sys, torch, torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor
    sys.path.insert(0, sys.argv[1])
    import configs, lora, model as M
    from hf import weights
    from learner.update import build_optimizer
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    cfg = configs.LoRAConfig(rank=4, alpha=8.0, targets=("q_proj", "v_proj", "down_proj"))
    mesh = init_device_mesh("cpu", (world,))
    net = weights.load_hf_sharded(
        sys.argv[2], lambda m: M.apply_fsdp2(lora.add_lora(m, cfg), mesh), seed=0
    )
    a = net.model.layers[0].mlp.down_proj.lora_A
    assert isinstance(a, DTensor) and a.to_local().shape[0] == a.shape[0] // world, a.to_local().shape
    opt, _ = build_optimizer(net, configs.TrainConfig(lr=1e-3))
    ids = torch.randint(0, 49152, (1, 12), generator=torch.Generator().manual_seed(5 + rank))
    targets = torch.roll(ids, -1)
    lp, _ = net(ids, targets=targets)
    (-lp.sum()).backward()
    opt.step()
    weights.save_hf(net, sys.argv[3])  # gathers the shards, merges; rank 0 writes
    dist.barrier()
    dist.destroy_process_group()
""")


@pytest.mark.model_run
def test_fsdp2_two_cpu_ranks_shard_and_train_the_adapters(tmp_path, tiny_dir):
    """2 gloo ranks: the adapters are DTensor shards, one step trains them, and the export equals
    that of the same step in one process over both ranks' batches (each loss halved: FSDP2 averages)."""
    (tmp_path / "worker.py").write_text(FSDP_WORKER)
    env = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        # torchrun binds its own free loopback port: a port picked here and freed before torchrun binds
        # it may be taken meanwhile by another test's server, and a rank then talks to that server
        "--standalone",
        "--nproc_per_node=2",
        str(tmp_path / "worker.py"),
        ROOT,
        str(tiny_dir),
        str(tmp_path / "hf"),
    ]
    run = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]

    single = lora.add_lora(weights.load_hf(tiny_dir), LORA)
    lora.init_adapters(single, seed=0)
    opt, _ = build_optimizer(single, configs.TrainConfig(lr=1e-3))
    for rank in range(2):
        ids = torch.randint(0, 49152, (1, 12), generator=torch.Generator().manual_seed(5 + rank))
        lp, _ = single(ids, targets=torch.roll(ids, -1))
        # FSDP2 averages gradients over 2 ranks by default
        (-lp.sum() / 2).backward()
    opt.step()
    got = weights.load_hf(tmp_path / "hf").state_dict()
    base = weights.load_hf(tiny_dir).state_dict()
    merged = weights.save_hf(single, tmp_path / "single")
    want = weights.load_hf(merged).state_dict()
    assert sorted(got) == sorted(want)
    moved = max((want[k] - base[k]).abs().max().item() for k in base)
    assert moved > 1e-4  # the step changed the merged weights
    assert max((got[k] - want[k]).abs().max().item() for k in want) <= 1e-5
    assert (tmp_path / "hf" / "adapter" / "adapter_model.safetensors").is_file()
