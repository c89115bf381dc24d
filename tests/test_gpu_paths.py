"""The GPU paths that a CPU can check: fp32 master weights with bf16 compute (FSDP2 mixed precision on
gloo), the per-GPU memory budget of the presets against 80 GiB, sharded loading and streaming export
within a fraction of the model size per rank, and the tensor-parallel rollout split. vLLM runs on CPU
(tests/test_vllm.py); what only a GPU shows is scripts/gpu_smoke.sh's."""

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest
import torch

import configs
from hf import weights
from learner import gpu_memory
from model import ModelConfig, Transformer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GiB = 2**30

# config.json of Qwen/Qwen3-8B and Qwen/Qwen3-32B (Hugging Face hub).
QWEN3_8B = dict(
    model_type="qwen3",
    hidden_size=4096,
    intermediate_size=12288,
    num_hidden_layers=36,
    num_attention_heads=32,
    num_key_value_heads=8,
    head_dim=128,
    vocab_size=151936,
    tie_word_embeddings=False,
)
QWEN3_32B = dict(
    QWEN3_8B,
    hidden_size=5120,
    intermediate_size=25600,
    num_hidden_layers=64,
    num_attention_heads=64,
)


def torchrun(
    tmp_path, script: str, nproc: int, *args: str, timeout: int = 600
) -> subprocess.CompletedProcess:
    (tmp_path / "worker.py").write_text(textwrap.dedent(script))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes=1",
        f"--nproc_per_node={nproc}",
        "--master_addr=127.0.0.1",
        f"--master_port={port}",
        str(tmp_path / "worker.py"),
        *args,
    ]
    run = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


# ----------------------------------------------------------------------------- 1. fp32 master weights

MASTER_WORKER = """
    import json, sys, torch, torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    import model as M
    from hf import weights
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (1,))
    ids = torch.randint(0, 49152, (1, 48), generator=torch.Generator().manual_seed(3))

    def two_steps(load_dtype, param_dtype, master_dtype):
        net = M.apply_fsdp2(weights.load_hf(sys.argv[1], dtype=load_dtype), mesh, param_dtype=param_dtype,
                            master_dtype=master_dtype)
        before = {n: p.full_tensor().detach().double() for n, p in net.named_parameters()}
        opt = torch.optim.AdamW(net.parameters(), lr=1e-6, weight_decay=0.0)
        for _ in range(2):
            lp, _ = net(ids, targets=torch.roll(ids, -1, 1))
            (-lp.mean()).backward()
            opt.step()
            opt.zero_grad()
        update = torch.cat([(p.full_tensor().detach().double() - before[n]).flatten() for n, p in net.named_parameters()])
        dtypes = sorted({str(p.dtype) for p in net.parameters()} | {str(s["exp_avg"].dtype) for s in opt.state.values()})
        return update, dtypes

    mixed, mixed_dtypes = two_steps(torch.float32, torch.bfloat16, torch.float32)  # fp32 master, bf16 compute
    pure, pure_dtypes = two_steps(torch.bfloat16, None, None)  # bf16 parameters and AdamW state
    ref, _ = two_steps(torch.float32, None, torch.float32)  # fp32 throughout
    cos = lambda a, b: float(a @ b / (a.norm() * b.norm()))
    print(json.dumps(dict(mixed_changed=float((mixed != 0).double().mean()), pure_changed=float((pure != 0).double().mean()),
                          cos_mixed=cos(mixed, ref), cos_pure=cos(pure, ref), mixed_dtypes=mixed_dtypes,
                          pure_dtypes=pure_dtypes)))
    dist.destroy_process_group()
"""  # noqa: E501


@pytest.mark.model_run
def test_bf16_compute_with_fp32_master_weights_updates_every_weight_like_fp32(tmp_path):
    tiny = weights.save_tiny_random(tmp_path / "tiny", seed=0)
    run = torchrun(tmp_path, MASTER_WORKER, 1, str(tiny))
    r = json.loads(run.stdout.strip().splitlines()[-1])
    # Parameters and AdamW state stay fp32; FSDP2 casts to bf16 for forward/backward.
    assert r["mixed_dtypes"] == ["torch.float32"]
    assert r["pure_dtypes"] == ["torch.bfloat16"]
    # Two AdamW steps at lr 1e-6 move every weight by ~2e-6: below bf16's spacing (7.8e-3 near 1.0).
    assert r["mixed_changed"] >= 0.99
    assert r["pure_changed"] < 0.05  # measured 0.0196
    assert r["cos_mixed"] > 0.99  # measured 1.000 (0.9996 of the signs agree)
    assert r["cos_pure"] < 0.5  # measured 0.13


# ----------------------------------------------------------------------------- 2. memory budget


def test_qwen3_parameter_counts_from_config():
    assert gpu_memory.count_params(QWEN3_8B)[0] == 8_190_735_360  # "8.2B"
    assert gpu_memory.count_params(QWEN3_32B)[0] == 32_762_123_264  # "32.8B"


QWEN3_4B = gpu_memory.QWEN3_CONFIGS["Qwen3-4B"]
QWEN3_14B = gpu_memory.QWEN3_CONFIGS["Qwen3-14B"]


@pytest.mark.parametrize(
    "preset,hf,world",
    [
        ("qwen3-4b-2xa100", QWEN3_4B, 2),
        ("qwen3-8b-4xa100", QWEN3_8B, 4),
        ("qwen3-14b-8xh100", QWEN3_14B, 8),
        ("qwen3-32b-16xh100", QWEN3_32B, 16),
        ("qwen3-32b-32xh100", QWEN3_32B, 32),
    ],
)
def test_gpu_presets_fit_in_80_gib(preset, hf, world):
    fits, report = gpu_memory.memory_budget(configs.PRESETS[preset], hf, world, 80 * GiB)
    assert fits, report


def test_qwen3_table_matches_the_published_shapes():
    # The same fields as the hub's config.json: parameter counts 1.7B, 4.0B, 8.2B, 14.8B, 32.8B.
    counts = {name: gpu_memory.count_params(hf)[0] for name, hf in gpu_memory.QWEN3_CONFIGS.items()}
    assert counts == {
        "Qwen3-1.7B": 1_720_574_976,
        "Qwen3-4B": 4_022_468_096,
        "Qwen3-8B": 8_190_735_360,
        "Qwen3-14B": 14_768_307_200,
        "Qwen3-32B": 32_762_123_264,
    }
    for name, hf in (("Qwen3-8B", QWEN3_8B), ("Qwen3-32B", QWEN3_32B)):
        assert {k: v for k, v in gpu_memory.QWEN3_CONFIGS[name].items() if k in hf} == hf


def test_each_gpu_preset_names_a_checkpoint_of_the_table():
    for name, cfg in configs.PRESETS.items():
        if cfg.policy.engine == "vllm":
            assert os.path.basename(cfg.policy.path) in gpu_memory.QWEN3_CONFIGS, name


def test_qwen3_4b_2xa100_preset_numbers():
    # P = 4.022e9; W = 2; tp = 1; u = 0.5; G = 80 GiB (A100 80GB):
    #   fp32 master 4P/2 = 7.49 GiB, AdamW 8P/2 = 14.98 GiB              -> resident 22.48 GiB
    #   (1) 22.48 + 0.5 * 80 = 62.48 <= 80
    #   engine weights 2P/1 = 7.49 GiB; KV 2*36*8*128*2 B = 144 KiB/token
    #   x 0.25 * 24 * 32768 = 196,608 tokens = 27.00 GiB; + 2 GiB reserve -> (2) 36.49 <= 40
    #   grads 7.49 + gathered 1.10 + activations 4.62 + head 1.70 + reserve 2 -> (3) 39.39 <= 80
    report = gpu_memory.check_memory_budget(
        configs.PRESETS["qwen3-4b-2xa100"], QWEN3_4B, 2, 80 * GiB
    )
    assert "(1) start-up: learner resident + u*G <= G: 62.48 <= 80.00 GiB ok" in report
    assert "(2) rollout: engine <= u*G: 36.49 <= 40.00 GiB ok" in report
    assert "(3) training: resident + extra + reserve <= G: 39.39 <= 80.00 GiB ok" in report
    assert "144 KiB/token x 196,608 tokens" in report


def test_qwen3_4b_2xa100_preset_is_refused_on_40_gib_a100s():
    # resident 22.48 + 0.5 * 40 = 42.48 > 40; the engine's 36.49 GiB > its 20 GiB share.
    with pytest.raises(configs.ConfigError) as e:
        gpu_memory.check_memory_budget(configs.PRESETS["qwen3-4b-2xa100"], QWEN3_4B, 2, 40 * GiB)
    msg = str(e.value)
    assert "(1) start-up: learner resident + u*G <= G: 42.48 <= 40.00 GiB DOES NOT FIT" in msg
    assert "(2) rollout: engine <= u*G: 36.49 <= 20.00 GiB DOES NOT FIT" in msg


def test_qwen3_14b_8xh100_preset_numbers():
    # P = 14.768e9; W = 8; tp = 2; u = 0.6; G = 80 GiB (H100 80GB):
    #   fp32 master 4P/8 = 6.88 GiB, AdamW 8P/8 = 13.75 GiB              -> resident 20.63 GiB
    #   (1) 20.63 + 0.6 * 80 = 68.63 <= 80
    #   engine weights 2P/2 = 13.75 GiB; KV 2*40*(8/2)*128*2 B = 80 KiB/token
    #   x 0.25 * 40 * 32768 = 327,680 tokens = 25.00 GiB; + 2 GiB reserve -> (2) 40.75 <= 48
    #   grads 6.88 + gathered 4.13 + activations 9.62 + head 3.15 + reserve 2 -> (3) 46.41 <= 80
    cfg = configs.PRESETS["qwen3-14b-8xh100"]
    report = gpu_memory.check_memory_budget(cfg, QWEN3_14B, 8, 80 * GiB)
    assert "(1) start-up: learner resident + u*G <= G: 68.63 <= 80.00 GiB ok" in report
    assert "(2) rollout: engine <= u*G: 40.75 <= 48.00 GiB ok" in report
    assert "(3) training: resident + extra + reserve <= G: 46.41 <= 80.00 GiB ok" in report
    assert "80 KiB/token x 327,680 tokens" in report


def test_qwen3_32b_preset_numbers():
    # P = 32.762e9; W = 16; tp = 4; u = 0.6:
    #   fp32 master 4P/16 = 7.63 GiB, AdamW 8P/16 = 15.26 GiB         -> resident 22.88 GiB
    #   (1) 22.88 + 0.6 * 80 = 70.88 <= 80
    #   engine weights 2P/4 = 15.26 GiB; KV 2*64*(8/4)*128*2 B = 64 KiB/token
    #   x 0.25 * 48 * 32768 = 393,216 tokens = 24.00 GiB; + 2 GiB reserve -> (2) 41.26 <= 48
    #   grads 7.63 + gathered 4.71 + activations 14.38 + head 3.15 -> (3) 54.75 <= 80
    _, report = gpu_memory.memory_budget(
        configs.PRESETS["qwen3-32b-16xh100"], QWEN3_32B, 16, 80 * GiB
    )
    assert "(1) start-up: learner resident + u*G <= G: 70.88 <= 80.00 GiB ok" in report
    assert "(2) rollout: engine <= u*G: 41.26 <= 48.00 GiB ok" in report
    assert "(3) training: resident + extra + reserve <= G: 54.75 <= 80.00 GiB ok" in report
    assert "64 KiB/token x 393,216 tokens" in report


def test_32b_on_8_gpus_with_one_gpu_engines_is_refused_with_the_arithmetic():
    # The old qwen3-32b-8xh100 layout: W = 8, tp = 1, u = 0.5.
    cfg = configs._replace(
        configs.PRESETS["qwen3-32b-16xh100"],
        nnodes=1,
        policy=dict(vllm_tensor_parallel_size=1, vllm_gpu_memory_utilization=0.5),
    )
    with pytest.raises(configs.ConfigError) as e:
        gpu_memory.check_memory_budget(cfg, QWEN3_32B, 8, 80 * GiB)
    msg = str(e.value)
    # resident 12P/8 = 45.77 GiB: + 40 = 85.77 > 80; the bf16 engine weights alone are 61.02 GiB > 40;
    # KV 256 KiB/token x 393,216 tokens = 96 GiB: 61.02 + 96 + 2 = 159.02.
    assert "(1) start-up: learner resident + u*G <= G: 85.77 <= 80.00 GiB DOES NOT FIT" in msg
    assert "engine weights 2P/tp (tp=1)           61.02 GiB" in msg
    assert "(2) rollout: engine <= u*G: 159.02 <= 40.00 GiB DOES NOT FIT" in msg


def test_8b_on_2_gpus_does_not_fit_with_fp32_master_weights():
    cfg = configs._replace(configs.PRESETS["qwen3-8b-4xa100"], nproc_per_node=2)
    fits, report = gpu_memory.memory_budget(cfg, QWEN3_8B, 2, 80 * GiB)
    assert not fits
    # resident 12P/2 = 45.77 GiB; 45.77 + 0.5 * 80 = 85.77 > 80
    assert "(1) start-up: learner resident + u*G <= G: 85.77 <= 80.00 GiB DOES NOT FIT" in report


def test_tensor_parallel_size_must_divide_the_world():
    with pytest.raises(
        configs.ConfigError, match="policy.vllm_tensor_parallel_size = 4: must divide the 6 ranks"
    ):
        gpu_memory.check_memory_budget(configs.PRESETS["qwen3-32b-16xh100"], QWEN3_32B, 6, 80 * GiB)


def test_sleep_level_and_tp_knobs_are_validated():
    cfg = configs._replace(configs.PRESETS["cpu-smollm2"], policy=dict(vllm_sleep_level=3))
    with pytest.raises(configs.ConfigError, match="policy.vllm_sleep_level = 3"):
        configs.validate(cfg, check_paths=False)
    cfg = configs._replace(configs.PRESETS["cpu-smollm2"], policy=dict(vllm_tensor_parallel_size=0))
    with pytest.raises(configs.ConfigError, match="policy.vllm_tensor_parallel_size = 0"):
        configs.validate(cfg, check_paths=False)


# ----------------------------------------------------------------------------- 2. sharded load, streaming export

MEMORY_WORKER = """
    import json, resource, sys, torch, torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    import model as M
    from hf import weights
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    page = resource.getpagesize()
    rss_now = lambda: int(open("/proc/self/statm").read().split()[1]) * page
    peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    # Warm-up: FSDP2's and safetensors' lazy imports and first-call state (~30 MiB, independent of the model).
    with torch.device("meta"):
        M.apply_fsdp2(M.Transformer(M.ModelConfig(vocab_size=64, hidden_size=16, intermediate_size=32,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=8)), mesh)
    import safetensors.torch
    base = rss_now()  # growth = later peak - current RSS now: never understates the growth
    net = weights.load_hf_sharded(sys.argv[1], lambda m: M.apply_fsdp2(m, mesh), device="cpu")
    load_growth = peak() - base
    weights.save_hf(net, sys.argv[2], max_shard_bytes=16 * 2**20, dtype=torch.bfloat16)
    save_growth = peak() - base
    dtypes = sorted({str(p.dtype) for p in net.parameters()})
    print(json.dumps(dict(rank=dist.get_rank(), load=load_growth, save=save_growth, dtypes=dtypes)))
    dist.barrier()  # no rank tears gloo down while the other is still in save_hf (rank 1 aborted at exit otherwise)
    dist.destroy_process_group()
"""


@pytest.mark.model_run
def test_sharded_load_and_streaming_export_stay_within_a_fraction_of_the_model_per_rank(tmp_path):
    from safetensors import safe_open

    # ~395 MB in fp32: 98.8M parameters; the largest tensor (embeddings, lm_head) is 4% of the model
    # (Qwen3-32B's: 2.4%).
    cfg = ModelConfig(
        family="qwen3",
        vocab_size=4096,
        hidden_size=1024,
        intermediate_size=2816,
        num_hidden_layers=8,
        num_attention_heads=16,
        num_key_value_heads=4,
        head_dim=64,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        max_position_embeddings=1024,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    src = weights.save_hf(Transformer(cfg), tmp_path / "src", max_shard_bytes=128 * 2**20)
    model_bytes = sum(f.stat().st_size for f in src.glob("*.safetensors"))
    assert (src / "model.safetensors.index.json").is_file() and 390e6 < model_bytes < 400e6
    run = torchrun(tmp_path, MEMORY_WORKER, 2, str(src), str(tmp_path / "out"))
    ranks = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert len(ranks) == 2
    # Each rank must hold its half of the fp32 master weights (0.5 x model). Loading the whole model first
    # (the old load_hf) costs >= 1.0 x per rank, gathering it on rank 0 for export >= 1.5 x; 0.75 x leaves
    # a quarter of the model for one tensor's slice, one gathered tensor and one 16 MiB shard file
    # (measured: about 0.53 x after loading, 0.66 x after the export).
    for r in ranks:
        assert r["dtypes"] == ["torch.float32"]
        assert r["load"] < 0.75 * model_bytes, (r, model_bytes)
        assert r["save"] < 0.75 * model_bytes, (r, model_bytes)
    # The export holds exactly the source weights, cast to bf16, in shards of <= 16 MiB.
    out = tmp_path / "out"
    index = json.loads((out / "model.safetensors.index.json").read_text())["weight_map"]
    assert len(set(index.values())) >= 12
    for name, fname in index.items():
        src_file = json.loads((src / "model.safetensors.index.json").read_text())["weight_map"][
            name
        ]
        with safe_open(str(out / fname), "pt") as f, safe_open(str(src / src_file), "pt") as g:
            a, b = f.get_tensor(name), g.get_tensor(name)
            assert a.dtype == torch.bfloat16 and torch.equal(a, b.to(torch.bfloat16)), name
    print(
        {
            r["rank"]: (round(r["load"] / model_bytes, 3), round(r["save"] / model_bytes, 3))
            for r in ranks
        }
    )
