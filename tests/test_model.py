"""model.py against transformers (the reference implementation) on tiny real models and the real
embedded SmolLM2-135M-Instruct imported from its GGUF."""

import copy
import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

import model as M
from engines import cpu_fast
from engines import decode as D
from hf import weights

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def hf_smol(smol_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(smol_dir), dtype=torch.float32).eval()


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    return weights.load_hf(tiny_dir).eval()


def greedy(model, prompt: list[int], n: int, fast: bool = True) -> list[int]:
    """n greedy tokens through the KV cache (prefill + decode_one_token), no stop token."""
    D.setup_cache(model, max_batch=1, max_seq_len=len(prompt) + n, fast=fast)
    logits = D.prefill(model, torch.tensor(prompt), slot=0, start_pos=0)
    out = []
    for i in range(n):
        tok = int(logits.argmax())
        out.append(tok)
        logits = D.decode_one_token(
            model, torch.tensor([tok]), torch.tensor([0]), torch.tensor([len(prompt) + i])
        )[0]
    return out


def hf_greedy(hf, prompt: list[int], n: int) -> list[int]:
    out = hf.generate(
        torch.tensor([prompt]),
        max_new_tokens=n,
        do_sample=False,
        attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
    )
    return out[0, len(prompt) :].tolist()


# ----------------------------------------------------------------------------- config


def test_from_hf_reads_qwen3_config_fields():
    cfg = M.ModelConfig.from_hf(
        {
            "architectures": ["Qwen3ForCausalLM"],
            "vocab_size": 151936,
            "hidden_size": 2560,
            "intermediate_size": 9728,
            "num_hidden_layers": 36,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "rms_norm_eps": 1e-6,
            "rope_theta": 1000000,
            "max_position_embeddings": 40960,
            "tie_word_embeddings": True,
            "hidden_act": "silu",
            "attention_bias": False,
            "use_sliding_window": False,
        }
    )
    assert (
        cfg.family,
        cfg.num_key_value_heads,
        cfg.head_dim,
        cfg.rope_theta,
        cfg.rope_scaling,
        cfg.tie_word_embeddings,
    ) == ("qwen3", 8, 128, 1e6, None, True)


def test_from_hf_reads_llama3_rope_scaling_in_old_and_new_style():
    base = {
        "architectures": ["LlamaForCausalLM"],
        "vocab_size": 128256,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 131072,
    }
    scaling = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    old = M.ModelConfig.from_hf({**base, "rope_theta": 500000.0, "rope_scaling": scaling})
    new = M.ModelConfig.from_hf({**base, "rope_parameters": {**scaling, "rope_theta": 500000.0}})
    assert old.rope_scaling == new.rope_scaling == scaling
    assert old.rope_theta == new.rope_theta == 500000.0
    assert old.head_dim == 128


def test_unknown_architecture_error_names_the_field():
    with pytest.raises(ValueError, match=r"field 'architectures' is \['MistralForCausalLM'\]"):
        M.ModelConfig.from_hf({"architectures": ["MistralForCausalLM"], "vocab_size": 10})


def test_unsupported_rope_type_error_names_the_field():
    with pytest.raises(ValueError, match=r"rope_scaling.rope_type' = 'longrope'"):
        M.ModelConfig.from_hf(
            {
                "architectures": ["LlamaForCausalLM"],
                "vocab_size": 10,
                "hidden_size": 8,
                "intermediate_size": 8,
                "num_hidden_layers": 1,
                "num_attention_heads": 2,
                "rope_scaling": {"rope_type": "longrope", "factor": 2.0},
            }
        )


def test_missing_weights_file_is_named(tmp_path, tiny_dir):
    (tmp_path / "config.json").write_text((tiny_dir / "config.json").read_text())
    with pytest.raises(
        FileNotFoundError, match=r"neither model.safetensors nor model.safetensors.index.json"
    ):
        weights.load_hf(tmp_path)


def test_load_hf_weights_own_their_memory_and_leave_no_map_of_the_file(tiny_dir):
    # a weight that stays a view of safetensors' private memory map of the file keeps the map (and
    # every page read through it) resident as long as the model lives; a resumed run's first weight
    # sync then copied those pages again: 0.25 GB more peak RSS per rank on cpu-smollm2. The tiny
    # model is stored in fp32, so loading as fp32 is the case where the cast is no copy.
    weights_file = str(tiny_dir / "model.safetensors")
    model = weights.load_hf(tiny_dir, dtype=torch.float32)
    with open("/proc/self/maps") as f:
        mapped = [line for line in f if line.rstrip().endswith(weights_file)]
    assert mapped == []
    assert model.model.embed_tokens.weight.shape == (49152, 64)


# ----------------------------------------------------------------------------- parity with transformers


def test_tiny_qwen3_matches_transformers(tiny_dir, tiny):
    from transformers import AutoModelForCausalLM

    hf = AutoModelForCausalLM.from_pretrained(str(tiny_dir), dtype=torch.float32).eval()
    assert type(hf).__name__ == "Qwen3ForCausalLM"
    ids = torch.randint(
        0, tiny.config.vocab_size, (2, 40), generator=torch.Generator().manual_seed(0)
    )
    with torch.no_grad():
        diff = (tiny(ids) - hf(ids).logits).abs().max().item()
    assert diff <= 1e-4
    prompt = ids[0, :12].tolist()
    assert greedy(tiny, prompt, 32) == hf_greedy(hf, prompt, 32)


@pytest.mark.parametrize(
    "scaling",
    [
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,
        },
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64},
    ],
)
def test_llama_rope_scaling_matches_transformers(tmp_path, scaling):
    from transformers import AutoModelForCausalLM

    cfg = M.ModelConfig(
        family="llama",
        vocab_size=256,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=16,
        rope_theta=10000.0,
        rope_scaling=scaling,
        max_position_embeddings=256,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    ours = M.Transformer(cfg).eval()
    weights.save_hf(ours, tmp_path)
    hf = AutoModelForCausalLM.from_pretrained(str(tmp_path), dtype=torch.float32).eval()
    assert hf.config.rope_parameters["rope_type"] == scaling["rope_type"]
    ids = torch.randint(0, 256, (1, 200), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert (ours(ids) - hf(ids).logits).abs().max().item() <= 1e-4


@pytest.mark.slow
def test_imported_smollm2_matches_transformers(smol, hf_smol, smol_dir):
    tok = weights.load_tokenizer(smol_dir)
    prompt = tok("The three primary colors are").input_ids
    with torch.no_grad():
        diff = (
            (smol(torch.tensor([prompt])) - hf_smol(torch.tensor([prompt])).logits)
            .abs()
            .max()
            .item()
        )
    assert diff <= 1e-4
    ours = greedy(smol, prompt, 32)
    assert len(ours) == 32 and ours == hf_greedy(hf_smol, prompt, 32)


@pytest.mark.slow
def test_imported_smollm2_answers_capital_of_france(smol, smol_dir):
    tok = weights.load_tokenizer(smol_dir)
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}],
        add_generation_prompt=True,
        return_dict=True,
    )["input_ids"]
    answer = tok.decode(greedy(smol, prompt, 9))
    assert answer == "The capital of France is Paris.<|im_end|>\n"


def test_import_save_hf_then_transformers_gives_same_logits(tmp_path, smol, smol_dir):
    from transformers import AutoModelForCausalLM

    # Small shards force the model.safetensors.index.json path in both loaders.
    out = weights.save_hf(
        smol, tmp_path / "resaved", tokenizer_dir=smol_dir, max_shard_bytes=200 * 2**20
    )
    index = json.loads((out / "model.safetensors.index.json").read_text())
    assert len(set(index["weight_map"].values())) == 3
    assert "lm_head.weight" not in index["weight_map"]  # tied: stored once, as HF does
    hf = AutoModelForCausalLM.from_pretrained(str(out), dtype=torch.float32).eval()
    reloaded = weights.load_hf(out).eval()
    ids = torch.tensor(
        [weights.load_tokenizer(out)("import numpy as np\nx = np.zeros(3)").input_ids]
    )
    with torch.no_grad():
        ref = smol(ids)
        assert (hf(ids).logits - ref).abs().max().item() <= 1e-4
        assert torch.equal(reloaded(ids), ref)


def test_imported_tokenizer_matches_chat_template_and_specials(smol_dir):
    tok = weights.load_tokenizer(smol_dir)
    assert (tok.bos_token, tok.eos_token, tok.pad_token, tok.eos_token_id) == (
        "<|im_start|>",
        "<|im_end|>",
        "<|im_end|>",
        2,
    )
    text = tok.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False
    )
    assert text == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )
    # SmolLM2 splits digits one by one and keeps specials whole.
    assert tok.convert_ids_to_tokens(tok("<|im_end|>x 123").input_ids) == [
        "<|im_end|>",
        "x",
        "Ġ",
        "1",
        "2",
        "3",
    ]


@pytest.mark.slow
def test_default_model_dir_is_cached_and_safe_under_concurrent_imports(tmp_path, monkeypatch):
    code = "from hf import weights; print(weights.default_model_dir())"
    env = {**os.environ, "TERMRL_CACHE": str(tmp_path), "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    paths = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    target = tmp_path / weights.DEFAULT_MODEL_NAME
    assert paths == [str(target)] * 2
    assert sorted(os.listdir(tmp_path)) == [weights.DEFAULT_MODEL_NAME]  # no temp dir left behind
    assert sorted(os.listdir(target)) == [
        "config.json",
        "generation_config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    mtime = (target / "model.safetensors").stat().st_mtime_ns
    monkeypatch.setenv("TERMRL_CACHE", str(tmp_path))
    assert weights.default_model_dir() == target
    assert (
        target / "model.safetensors"
    ).stat().st_mtime_ns == mtime  # second call did not re-import


def test_unpermute_qk_inverts_llama_cpp_permutation():
    w = torch.arange(4 * 8 * 3, dtype=torch.float32).reshape(4 * 8, 3)  # 4 heads of head_dim 8
    # llama.cpp (convert_hf_to_gguf.permute): reshape(heads, 2, hd/2, ...).swapaxes(1, 2)
    permuted = w.reshape(4, 2, 4, 3).transpose(1, 2).reshape(32, 3)
    assert torch.equal(weights.unpermute_qk(permuted, 4), w)


# ----------------------------------------------------------------------------- packing and log-probs


def test_packed_and_unpacked_forward_give_same_logprobs(tiny):
    g = torch.Generator().manual_seed(2)
    seqs = [torch.randint(0, tiny.config.vocab_size, (n,), generator=g) for n in (5, 11, 3)]
    targets = [torch.roll(s, -1) for s in seqs]
    packed_ids, packed_targets = torch.cat(seqs)[None], torch.cat(targets)[None]
    cu = torch.tensor([0, 5, 16, 19], dtype=torch.int32)
    with torch.no_grad():
        lp, ent = tiny(packed_ids, cu_seqlens=cu, targets=packed_targets)
        for s, t, (a, b) in zip(seqs, targets, [(0, 5), (5, 16), (16, 19)]):
            lp1, ent1 = tiny(s[None], targets=t[None])
            assert (lp[0, a:b] - lp1[0]).abs().max().item() <= 1e-5
            assert (ent[0, a:b] - ent1[0]).abs().max().item() <= 1e-5
        # The same through explicit position_ids, and the logits path.
        pos = torch.cat([torch.arange(5), torch.arange(11), torch.arange(3)])[None]
        logits = tiny(packed_ids, position_ids=pos, cu_seqlens=cu)
        assert (logits[0, 5:16] - tiny(seqs[1][None])[0]).abs().max().item() <= 1e-5


def test_packed_forward_rejects_inconsistent_cu_seqlens(tiny):
    with pytest.raises(
        ValueError, match=r"cu_seqlens \[0, 4, 9\] must be strictly increasing from 0 to T=8"
    ):
        tiny(
            torch.zeros(1, 8, dtype=torch.long),
            cu_seqlens=torch.tensor([0, 4, 9], dtype=torch.int32),
        )


@pytest.mark.parametrize("loss_of", ["logprobs", "entropy", "both"])
def test_chunked_logprobs_and_entropy_equal_naive_values_and_grads(loss_of):
    g = torch.Generator().manual_seed(3)
    hidden = torch.randn(37, 16, generator=g, requires_grad=True)
    weight = torch.randn(101, 16, generator=g, requires_grad=True)
    targets = torch.randint(0, 101, (37,), generator=g)
    targets[5] = -100  # ignored position
    combine = {
        "logprobs": lambda lp, ent: lp.sum(),
        "entropy": lambda lp, ent: ent.sum(),
        "both": lambda lp, ent: lp.sum() + 0.3 * ent.sum(),
    }[loss_of]

    lp, ent = M.logprobs_and_entropy(hidden, weight, targets, temperature=0.7, chunk_size=8)
    grads = torch.autograd.grad(combine(lp, ent), (hidden, weight))
    logp = F.log_softmax(hidden @ weight.t() / 0.7, dim=-1)
    ref_lp = logp.gather(1, targets.clamp(min=0)[:, None]).squeeze(1) * (targets >= 0)
    ref_ent = -(logp.exp() * logp).sum(-1)
    ref_grads = torch.autograd.grad(combine(ref_lp, ref_ent), (hidden, weight))
    assert lp[5].item() == 0.0
    assert (lp - ref_lp).abs().max().item() <= 1e-5
    assert (ent - ref_ent).abs().max().item() <= 1e-5
    assert (grads[0] - ref_grads[0]).abs().max().item() <= 1e-5
    assert (grads[1] - ref_grads[1]).abs().max().item() <= 1e-5


# ----------------------------------------------------------------------------- KV cache


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "plain"])
def test_kv_cache_batched_decode_equals_full_forward(tiny, fast):
    g = torch.Generator().manual_seed(4)
    a = torch.randint(0, tiny.config.vocab_size, (14,), generator=g)
    b = torch.randint(0, tiny.config.vocab_size, (9,), generator=g)
    D.setup_cache(tiny, max_batch=3, max_seq_len=32, fast=fast)
    # a lives in slot 2, b in slot 0: prompts of different lengths, then 4 batched decode steps.
    la, lb = (
        D.prefill(tiny, a[:10], slot=2, start_pos=0),
        D.prefill(tiny, b[:5], slot=0, start_pos=0),
    )
    with torch.no_grad():
        full_a, full_b = tiny(a[None])[0], tiny(b[None])[0]
    assert (la - full_a[9]).abs().max().item() <= 1e-5
    assert (lb - full_b[4]).abs().max().item() <= 1e-5
    for step in range(4):
        logits = D.decode_one_token(
            tiny,
            torch.stack([a[10 + step], b[5 + step]]),
            torch.tensor([2, 0]),
            torch.tensor([10 + step, 5 + step]),
        )
        assert logits.shape == (2, tiny.config.vocab_size) and logits.dtype == torch.float32
        assert (logits[0] - full_a[10 + step]).abs().max().item() <= 1e-5
        assert (logits[1] - full_b[5 + step]).abs().max().item() <= 1e-5


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "plain"])
def test_decode_tokens_of_draft_columns_equal_full_forward(tiny, fast):
    g = torch.Generator().manual_seed(7)
    a = torch.randint(0, tiny.config.vocab_size, (15,), generator=g)
    b = torch.randint(0, tiny.config.vocab_size, (8,), generator=g)
    D.setup_cache(tiny, max_batch=2, max_seq_len=32, fast=fast)
    D.prefill(tiny, a[:12], slot=1, start_pos=0)
    D.prefill(tiny, b[:5], slot=0, start_pos=0)
    # three new tokens per row at once (the newest token and two drafts), rows at different lengths
    logits = D.decode_tokens(
        tiny, torch.stack([b[5:8], a[12:15]]), [0, 1], torch.tensor([[5, 6, 7], [12, 13, 14]])
    )
    with torch.no_grad():
        full_a, full_b = tiny(a[None])[0], tiny(b[None])[0]
    assert logits.shape == (2, 3, tiny.config.vocab_size) and logits.dtype == torch.float32
    assert (logits[0] - full_b[5:8]).abs().max().item() <= 1e-5
    assert (logits[1] - full_a[12:15]).abs().max().item() <= 1e-5
    with pytest.raises(ValueError, match=r"must be \[B, T\]"):
        D.decode_tokens(tiny, a[None, :3], [0, 1], torch.tensor([[0, 1, 2]]))


@pytest.mark.parametrize(
    "out_features", [96, 9000]
)  # a layer, and a vocab-sized lm_head (rows <= 8 routed)
def test_few_row_linear_equals_f_linear(out_features):
    g = torch.Generator().manual_seed(8)
    w = torch.randn(out_features, 64, generator=g)
    for shape in [
        (1, 64),
        (1, 1, 64),
        (2, 1, 64),
        (3, 1, 64),
        (1, 4, 64),
        (5, 64),
        (8, 1, 64),
        (9, 1, 64),
        (2, 7, 64),
    ]:
        x = torch.randn(*shape, generator=g)
        y = cpu_fast._linear(x, w)
        assert y.shape == (*shape[:-1], out_features) and y.is_contiguous()
        assert (y - F.linear(x, w)).abs().max().item() <= 1e-4
        packed = {
            id(w): torch.ops.mkldnn._reorder_linear_weight(w, cpu_fast.PACK_ROWS)
        }  # as packed_weights stores it
        assert (cpu_fast._linear(x, w, packed) - F.linear(x, w)).abs().max().item() <= 1e-4
    x = torch.randn(3, 40, 64, generator=g)  # a prefill's rows through the packed weight
    assert (cpu_fast._linear(x, w, packed) - F.linear(x, w)).abs().max().item() <= 1e-4
    bf16 = torch.randn(2, 64, generator=g).bfloat16()  # not fp32: plain F.linear, bitwise
    assert torch.equal(cpu_fast._linear(bf16, w.bfloat16()), F.linear(bf16, w.bfloat16()))


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "plain"])
def test_prefix_continuation_equals_fresh_prefill(tiny, fast):
    ids = torch.randint(
        0, tiny.config.vocab_size, (20,), generator=torch.Generator().manual_seed(5)
    )
    D.setup_cache(tiny, max_batch=2, max_seq_len=32, fast=fast)
    D.prefill(tiny, ids[:12], slot=0, start_pos=0)
    continued = D.prefill(
        tiny, ids[12:], slot=0, start_pos=12
    )  # a new turn reuses the cached 12 tokens
    fresh = D.prefill(tiny, ids, slot=1, start_pos=0)
    assert (continued - fresh).abs().max().item() <= 1e-5
    nxt = D.decode_one_token(
        tiny, torch.tensor([7, 7]), torch.tensor([0, 1]), torch.tensor([20, 20])
    )
    assert (nxt[0] - nxt[1]).abs().max().item() <= 1e-5


@pytest.mark.slow
def test_fast_and_plain_decode_give_identical_greedy_tokens(smol, smol_dir):
    tok = weights.load_tokenizer(smol_dir)
    chat = [{"role": "user", "content": "List the files in /app, then count the lines of app.py."}]
    prompt = tok.apply_chat_template(chat, add_generation_prompt=True, return_dict=True)[
        "input_ids"
    ]
    fast = greedy(smol, prompt, 40, fast=True)
    assert smol in cpu_fast._PACKED  # the fast path ran: it packed the weights for oneDNN
    cpu_fast.forget_packed(smol)
    plain = greedy(smol, prompt, 40, fast=False)
    assert smol not in cpu_fast._PACKED  # the plain path never packs
    assert len(plain) == 40 and plain == fast
    # batched: three rows at different lengths, one step, same argmax on both paths
    rows = [prompt, prompt[:20], prompt[5:]]
    steps = {}
    for path in (True, False):
        D.setup_cache(smol, max_batch=3, max_seq_len=len(prompt) + 2, fast=path)
        for slot, ids in enumerate(rows):
            D.prefill(smol, torch.tensor(ids), slot=slot, start_pos=0)
        steps[path] = D.decode_one_token(
            smol, torch.tensor([11, 12, 13]), [0, 1, 2], torch.tensor([len(r) for r in rows])
        )
    assert torch.equal(steps[True].argmax(-1), steps[False].argmax(-1))
    assert (steps[True] - steps[False]).abs().max().item() <= 1e-4


@pytest.mark.parametrize("family", ["qwen3", "llama"])
def test_fused_projections_follow_parameter_updates(tmp_path, family):
    model = weights.load_hf(weights.save_tiny_random(tmp_path, family=family, seed=1)).eval()
    ids = torch.randint(
        0, model.config.vocab_size, (12,), generator=torch.Generator().manual_seed(6)
    )
    D.setup_cache(
        model, max_batch=1, max_seq_len=16, fast=True
    )  # fuses q/k/v, gate/up: params become views
    attn, mlp = model.model.layers[0].self_attn, model.model.layers[0].mlp
    before = D.prefill(model, ids, slot=0, start_pos=0)
    packed = cpu_fast.packed_weights(model)  # the oneDNN copies the 12-row prefill just used
    with (
        torch.no_grad()
    ):  # as TorchEngine.load_weights or an optimizer step writes into the parameters
        attn.k_proj.weight.mul_(1.5)
        mlp.up_proj.weight.add_(0.05)
        attn.o_proj.weight.mul_(
            1.1
        )  # o_proj, down_proj and lm_head are packed as they are, not fused
        model.lm_head.weight.add_(0.01)
        full = model(ids[None])[0, -1]
    after = D.prefill(model, ids, slot=0, start_pos=0)
    assert (after - full).abs().max().item() <= 1e-5  # the fused weights saw the update
    assert (
        cpu_fast.packed_weights(model) is not packed
    )  # and the packed copies were rebuilt from them
    assert (
        copy.deepcopy(model).lm_head.weight.shape == model.lm_head.weight.shape
    )  # they live outside the model
    assert (after - before).abs().max().item() > 1e-2  # and the update changed the logits
    D.setup_cache(
        model, max_batch=1, max_seq_len=16, fast=True
    )  # fusing again keeps the same tensors
    assert attn.k_proj.weight.data_ptr() == attn.qkv_weight[attn.q_proj.weight.shape[0]].data_ptr()
    assert (
        mlp.up_proj.weight.data_ptr()
        == mlp.gate_up_weight[mlp.gate_proj.weight.shape[0]].data_ptr()
    )


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "plain"])
def test_cache_position_beyond_capacity_is_an_error(tiny, fast):
    D.setup_cache(tiny, max_batch=1, max_seq_len=8, fast=fast)
    with pytest.raises(ValueError, match=r"position 9 >= cache max_seq_len=8"):
        D.prefill(tiny, torch.zeros(4, dtype=torch.long), slot=0, start_pos=6)


# ----------------------------------------------------------------------------- FSDP2

FSDP_WORKER = textwrap.dedent("""
    import sys, torch, torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    sys.path.insert(0, sys.argv[1])
    import model as M
    from hf import weights
    from fsdp_step import step
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    net = weights.load_hf(sys.argv[2])
    M.apply_fsdp2(net, init_device_mesh("cpu", (world,)), activation_checkpointing=True)
    step(net, rank, world)
    weights.save_hf(net, sys.argv[3])  # gathers the DTensor shards; rank 0 writes
    dist.barrier()  # no rank tears gloo down while rank 0 still writes (rank 1 aborted at exit otherwise)
    dist.destroy_process_group()
""")

FSDP_STEP = textwrap.dedent("""
    import torch

    def batch():
        g = torch.Generator().manual_seed(6)
        seqs = [torch.randint(0, 49152, (n,), generator=g) for n in (7, 12, 5, 9)]
        return seqs, sum(len(s) for s in seqs)

    def step(net, rank, world):
        # Rank r trains on sequences r, r+world, ...; loss = -sum(logprobs) / total tokens, times world
        # because FSDP2 averages gradients over ranks.
        # The optimizer is built before forward: FSDP2 swaps unsharded tensors in while a unit is gathered.
        opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.1)
        seqs, total = batch()
        mine = seqs[rank::world]
        ids = torch.cat(mine)[None]
        cu = torch.tensor([0] + [sum(len(s) for s in mine[:i + 1]) for i in range(len(mine))], dtype=torch.int32)
        targets = torch.cat([torch.roll(s, -1) for s in mine])[None]  # per sequence: packing-independent
        lp, _ = net(ids, cu_seqlens=cu, targets=targets)
        (-lp.sum() / total * world).backward()
        opt.step()
""")


@pytest.mark.model_run
def test_fsdp2_two_cpu_ranks_one_adamw_step_equals_single_process(tmp_path, tiny_dir):
    (tmp_path / "worker.py").write_text(FSDP_WORKER)
    (tmp_path / "fsdp_step.py").write_text(FSDP_STEP)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT}", "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes=1",
        "--nproc_per_node=2",
        "--master_addr=127.0.0.1",
        f"--master_port={port}",
        str(tmp_path / "worker.py"),
        ROOT,
        str(tiny_dir),
        str(tmp_path / "fsdp_hf"),
    ]
    run = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]

    sys.path.insert(0, str(tmp_path))
    try:
        from fsdp_step import step
    finally:
        sys.path.remove(str(tmp_path))
    single = weights.load_hf(tiny_dir)
    before = {k: v.clone() for k, v in single.state_dict().items()}
    step(single, rank=0, world=1)
    sharded = weights.load_hf(tmp_path / "fsdp_hf").state_dict()
    assert sorted(sharded) == sorted(single.state_dict())
    moved = max((single.state_dict()[k] - before[k]).abs().max().item() for k in before)
    assert moved > 1e-4  # the step really changed the weights
    worst = max((sharded[k] - v).abs().max().item() for k, v in single.state_dict().items())
    assert worst <= 1e-5
