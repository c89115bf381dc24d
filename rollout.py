"""The agent loop, token-exact trajectories, generation engines, and the evaluation command.

An episode: the policy sees a system prompt (tools + action format) and the task instruction; each turn
it generates tokens, the tool calls in them run in the task's container, and the results come back as an
observation message. The trajectory keeps the token sequence the policy actually saw:

    token_ids = prompt | generated_1 | observation_1 | generated_2 | observation_2 | ... | generated_n
    loss_mask = 0...0  | 1.........1 | 0...........0 | 1.........1 | 0...........0 | ... | 1.........1
    logprobs  = 0...0  | engine lp   | 0...........0 | engine lp   | 0...........0 | ... | engine lp

Generated tokens are kept exactly as sampled (never re-tokenised). Observation tokens are what the
model's chat template renders for the observation message(s) after an assistant turn: the template is
applied to a fixed base conversation with and without the new message(s) and the suffix is taken, so the
whole sequence equals the template's rendering of `messages` (test_rollout checks it), except that
earlier `<think>` blocks are kept where a template (Qwen3) would strip them.

Action formats (PolicyConfig.action_format):
- `hermes` (Qwen3): `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, any number per turn, run
  in order; results come back as `tool` messages (Qwen3's template wraps them in <tool_response>).
- `markdown` (the CPU default for SmolLM2-135M): each fenced ```bash block is one bash call; a line
  `DONE` (or `finish`) ends the episode. A turn stops after its first action (the closing fence line of
  its first bash block, or a DONE line; `markdown_action_done`): the generated tokens are kept as sampled
  (loss_mask 1) and the end-of-turn token the template needs goes in after them with loss_mask 0.
  Results come back as one `user` message: SmolLM2's template
  would render a `tool` role verbatim, but the model was never trained on that role.

Limits (RolloutConfig; a task's max_turns / agent_timeout_s override) end the episode with a recorded
stop_reason and it is still verified: max_turns; max_context (the next generation or observation would not
fit in max_context_tokens); max_tokens_per_turn (a turn cut at the cap: the complete calls in it still run,
then the episode stops); timeout (wall clock; a pending generation is abandoned, commands are cut to the
time left); format_errors (max_format_errors malformed turns in a row). Malformed output (invalid JSON,
unknown tool, missing/extra/mistyped or oversized arguments, no call, an unclosed block) runs nothing and gets
an error observation that shows the expected format (FormatError messages).

Template match caveat: the match with `chat.render(messages)` is exact when the template tokenises the
decoded reply the way the engine sampled it; sampled text whose canonical tokenisation differs (e.g. a reply
starting with "\\n\\n", which the template merges with the preceding "\\n") keeps the sampled ids, by design.

Engines share one interface, `await engine.generate(prompt_ids, sampling) -> Completion`, and batch the
requests of many concurrent agents internally: TorchEngine (model.py KV cache, continuous batching),
VLLMEngine (colocated vllm.LLM), OpenAIEngine (HTTP), ScriptedEngine (replays fixed replies; tests).

    python rollout.py --model DIR --tasks tasks/data --k 4 [--engine torch|vllm|openai] [--oracle] [--out DIR]
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import random
import re
import signal
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Literal

import torch

from configs import PRESETS, RewardConfig, RolloutConfig, SandboxConfig, cache_dir

try:  # GPU-only engine
    import vllm
except ImportError:
    vllm = None

# ----------------------------------------------------------------------------- sampling and completions


@dataclass
class SamplingParams:
    """How to sample one completion. temperature 0 = greedy; top_k 0 = off; top_p 1.0 = off; max_tokens
    caps generated tokens; seed makes this request's samples reproducible whatever it is batched with.
    stop_check: called with the generated ids (list[int]) after each token; True ends the completion there
    (finish "stop", no end-of-turn token). TorchEngine checks it while decoding, so the tokens after the stop
    are never computed; for every engine the agent loop cuts the completion at the first such prefix too
    (`cut_at_stop`), so trajectories do not depend on the engine."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int = 512
    seed: int | None = None
    stop_check: Callable[[list[int]], bool] | None = None


@dataclass
class Completion:
    """token_ids: generated ids as sampled, ending with the stop token when finish_reason == "stop".
    logprobs: per generated token, log-prob under the engine's sampling distribution (see each engine).
    finish_reason: "stop" (a stop token, or sampling.stop_check) or "length" (max_tokens or the engine's max_seq_len).
    exact: False when the engine could not return the sampled ids (OpenAIEngine in chat mode)."""

    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str
    exact: bool = True


def sample_tokens(logits: torch.Tensor, temperature: torch.Tensor, top_p: torch.Tensor, top_k: torch.Tensor,
                  uniforms: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample one token per row by inverse-CDF with the given uniforms.

    logits fp32 [B, V]; temperature fp32 [B] (0 = greedy); top_p fp32 [B]; top_k int64 [B] (0 = off);
    uniforms fp32 [B] in [0, 1). Returns (tokens int64 [B], logprobs fp32 [B]) where

        logprob = log_softmax(logits / T)[token]     (T = 1 for greedy rows)

    i.e. the temperature-scaled distribution *before* top-k/top-p truncation: the same quantity
    `model.Transformer.forward(..., targets, temperature=T)` computes for the learner (equal when top-k and
    top-p are off, the training default).
    """
    B, V = logits.shape
    greedy = temperature <= 0
    t = torch.where(greedy, torch.ones_like(temperature), temperature)
    logp = torch.log_softmax(logits / t[:, None], dim=-1)
    if bool(((top_k > 0) | (top_p < 1)).any()):
        sorted_logp, order = logp.sort(dim=-1, descending=True)
        probs = sorted_logp.exp()
        rank = torch.arange(V, device=logits.device)[None]
        keep = (top_k[:, None] <= 0) | (rank < top_k[:, None])
        keep &= (probs.cumsum(-1) - probs) < top_p[:, None]  # nucleus: mass before this token < top_p
        probs = torch.where(keep, probs, torch.zeros_like(probs))
    else:
        probs, order = logp.exp(), None
    cdf = probs.cumsum(-1)
    choice = torch.searchsorted(cdf, (uniforms * cdf[:, -1])[:, None]).clamp_(max=V - 1)
    tokens = choice[:, 0] if order is None else order.gather(1, choice)[:, 0]
    tokens = torch.where(greedy, logits.argmax(-1), tokens)
    return tokens, logp.gather(1, tokens[:, None])[:, 0]


# ----------------------------------------------------------------------------- engines


class Engine:
    """The interface every engine implements. `generate` is safe to call from many asyncio tasks at once;
    engines batch concurrent requests internally. `stop_ids` are the token ids that end a completion."""

    max_seq_len: int = 1 << 30
    stop_ids: set[int] = set()

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> Completion:
        """Generate one completion of prompt_ids (list of token ids). Raises ValueError if the prompt does not
        leave room for one token within max_seq_len."""
        raise NotImplementedError

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Replace the policy weights from (HF parameter name, tensor) pairs."""
        raise NotImplementedError(f"{type(self).__name__} cannot load weights")

    def sleep(self) -> None:
        """Release accelerator memory between rollouts (no-op where there is nothing to release)."""

    def wake_up(self) -> None:
        """Undo sleep() before the next rollout."""

    async def aclose(self) -> None:
        """Stop background work and release clients."""


def _check_prompt(engine: Engine, prompt_ids: list[int], sampling: SamplingParams) -> None:
    if not prompt_ids:
        raise ValueError("prompt_ids: empty prompt")
    if len(prompt_ids) >= engine.max_seq_len:
        raise ValueError(f"prompt_ids: {len(prompt_ids)} tokens leave no room within max_seq_len={engine.max_seq_len}")
    if sampling.max_tokens < 1:
        raise ValueError(f"sampling.max_tokens = {sampling.max_tokens}: must be >= 1")


def stop_ids_of(tokenizer) -> set[int]:
    """Token ids that end an assistant turn: the chat template's end-of-turn token and the tokenizer's eos."""
    ids = {ChatFormat.end_of_turn(tokenizer)}
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    return ids


@dataclass
class _Request:
    prompt: list[int]
    sampling: SamplingParams
    future: asyncio.Future
    generator: torch.Generator
    slot: int = -1
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)


class TorchEngine(Engine):
    """Continuous batching on model.py's KV cache (gpt-fast style), CPU or GPU.

    Requests wait in an asyncio queue; a background task admits them into free cache slots (prefill) and
    steps all active sequences together with `decode_one_token`. A finished sequence frees its slot at
    once, so a new agent can join mid-batch. Each slot remembers the tokens whose K/V it holds; a request
    is placed in the free slot sharing the longest prefix with its prompt and prefills only the rest
    (`prefill(..., start_pos)`), so an agent's next turn usually recomputes only its new observation.

    Log-probs: log_softmax(logits / temperature) of the sampled token, before top-k/top-p truncation
    (see `sample_tokens`); greedy (temperature 0) uses temperature 1.

    Model calls run in a worker thread (torch releases the GIL) so the event loop keeps serving containers.
    The KV cache lives on the model (model.setup_cache), so use one TorchEngine per model at a time.
    """

    def __init__(self, model, tokenizer, max_batch: int = 8, max_seq_len: int = 2048, seed: int = 0,
                 stop_ids: set[int] | None = None):
        import model as model_lib  # local: engines must not be needed to import rollout for parsing

        self._lib = model_lib
        self.model = model.eval()
        self.device = next(model.parameters()).device
        self.max_batch, self.max_seq_len = max_batch, max_seq_len
        self.stop_ids = set(stop_ids) if stop_ids is not None else stop_ids_of(tokenizer)
        model_lib.setup_cache(self.model, max_batch, max_seq_len)
        self._rng = random.Random(seed)
        self._slot_tokens: list[list[int]] = [[] for _ in range(max_batch)]  # tokens whose K/V each slot holds
        self._slot_used = [0.0] * max_batch
        self._active: dict[int, _Request] = {}  # slot -> running request
        self._queue: asyncio.Queue | None = None
        self._loop_task: asyncio.Task | None = None
        self.generated_tokens = 0  # counters for the progress line and benchmarks

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> Completion:
        _check_prompt(self, prompt_ids, sampling)
        if self._loop_task is None or self._loop_task.done():
            self._queue = asyncio.Queue()
            self._loop_task = asyncio.get_running_loop().create_task(self._decode_loop())
        seed = sampling.seed if sampling.seed is not None else self._rng.getrandbits(63)
        req = _Request(list(prompt_ids), sampling, asyncio.get_running_loop().create_future(),
                       torch.Generator().manual_seed(seed))
        await self._queue.put(req)
        return await req.future

    async def _decode_loop(self) -> None:
        try:
            while True:
                if not self._active:
                    pending = [await self._queue.get()]
                else:
                    pending = []
                while not self._queue.empty() and len(self._active) + len(pending) < self.max_batch:
                    pending.append(self._queue.get_nowait())
                pending = [r for r in pending if not r.future.done()]  # agent gave up (timeout/cancel)
                if pending:
                    await asyncio.to_thread(self._admit, pending)
                    self._finish_done()
                for slot in [s for s, r in self._active.items() if r.future.done()]:
                    self._release(slot)
                if self._active:
                    await asyncio.to_thread(self._step)
                    self._finish_done()
        except Exception as e:  # fail every waiting request with the error; the next generate() restarts the loop
            for r in list(self._active.values()):
                if not r.future.done():
                    r.future.set_exception(e)
            self._active.clear()
            self._slot_tokens = [[] for _ in range(self.max_batch)]  # a slot may be half-written
            while self._queue is not None and not self._queue.empty():
                r = self._queue.get_nowait()
                if not r.future.done():
                    r.future.set_exception(e)

    def _pick_slot(self, prompt: list[int]) -> tuple[int, int]:
        """The free slot with the longest cached prefix of prompt (ties: least recently used), and that length."""
        best, best_len = -1, -1
        for s in range(self.max_batch):
            if s in self._active:
                continue
            cached, n = self._slot_tokens[s], 0
            limit = min(len(cached), len(prompt) - 1)  # at least one token must be prefilled to get logits
            while n < limit and cached[n] == prompt[n]:
                n += 1
            if n > best_len or (n == best_len and self._slot_used[s] < self._slot_used[best]):
                best, best_len = s, n
        return best, best_len

    @torch.no_grad()
    def _admit(self, pending: list[_Request]) -> None:
        logits, reqs = [], []
        for req in pending:
            slot, start = self._pick_slot(req.prompt)
            req.slot = slot
            self._active[slot] = req
            self._slot_used[slot] = time.monotonic()
            ids = torch.tensor(req.prompt[start:], dtype=torch.long, device=self.device)
            logits.append(self._lib.prefill(self.model, ids, slot, start))
            self._slot_tokens[slot] = list(req.prompt)
            reqs.append(req)
        self._sample(torch.stack(logits), reqs)

    @torch.no_grad()
    def _step(self) -> None:
        reqs = list(self._active.values())
        tokens = torch.tensor([r.tokens[-1] for r in reqs], dtype=torch.long, device=self.device)
        slots = torch.tensor([r.slot for r in reqs], dtype=torch.long, device=self.device)
        positions = torch.tensor([len(r.prompt) + len(r.tokens) - 1 for r in reqs], dtype=torch.long, device=self.device)
        logits = self._lib.decode_one_token(self.model, tokens, slots, positions)
        for r in reqs:  # the fed token's K/V is now cached
            self._slot_tokens[r.slot].append(r.tokens[-1])
        self._sample(logits, reqs)

    def _sample(self, logits: torch.Tensor, reqs: list[_Request]) -> None:
        dev = logits.device
        temperature = torch.tensor([r.sampling.temperature for r in reqs], dtype=torch.float32, device=dev)
        top_p = torch.tensor([r.sampling.top_p for r in reqs], dtype=torch.float32, device=dev)
        top_k = torch.tensor([r.sampling.top_k for r in reqs], dtype=torch.long, device=dev)
        uniforms = torch.cat([torch.rand(1, generator=r.generator) for r in reqs]).to(dev)
        tokens, logprobs = sample_tokens(logits, temperature, top_p, top_k, uniforms)
        for r, t, lp in zip(reqs, tokens.tolist(), logprobs.tolist()):
            r.tokens.append(t)
            r.logprobs.append(lp)
        self.generated_tokens += len(reqs)

    def _finish_done(self) -> None:
        for slot, r in list(self._active.items()):
            if r.future.done():
                self._release(slot)
                continue
            reason = None
            if r.tokens and r.tokens[-1] in self.stop_ids:
                reason = "stop"
            elif r.sampling.stop_check is not None and r.sampling.stop_check(r.tokens):
                reason = "stop"
            elif len(r.tokens) >= r.sampling.max_tokens or len(r.prompt) + len(r.tokens) >= self.max_seq_len:
                reason = "length"
            if reason:
                r.future.set_result(Completion(r.tokens, r.logprobs, reason))
                self._release(slot)

    def _release(self, slot: int) -> None:
        self._active.pop(slot, None)
        self._slot_used[slot] = time.monotonic()

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Copy (HF name, tensor) pairs into the model's parameters, then forget every cached prefix (its K/V
        came from the old weights). Raises KeyError for an unknown name, ValueError for a shape mismatch,
        RuntimeError while requests are running."""
        if self._active:
            raise RuntimeError("TorchEngine.load_weights: requests are still running")
        params = dict(self.model.named_parameters())
        with torch.no_grad():
            for name, t in weights:
                if name not in params:
                    raise KeyError(f"load_weights: unknown parameter {name!r}")
                if params[name].shape != t.shape:
                    raise ValueError(f"load_weights: {name} has shape {tuple(t.shape)}, expected {tuple(params[name].shape)}")
                params[name].copy_(t)
        self._slot_tokens = [[] for _ in range(self.max_batch)]

    async def aclose(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            try:
                await self._loop_task
            except (asyncio.CancelledError, Exception):
                pass
            self._loop_task = None


class ScriptedEngine(Engine):
    """Replays fixed replies through the real tokenizer (tests, demos). The reply for a request is chosen by
    the turn it continues: the number of assistant generation prompts already in prompt_ids, minus one.
    Each reply is `tokenizer.encode(text, add_special_tokens=False)` plus the end-of-turn token (finish
    "stop"), cut to max_tokens (finish "length"). Log-probs are a fixed -1.0 per token.

    replies: list of str (every episode plays the same script), or a callable (prompt_ids, turn) -> str.
    delay_s: seconds to wait before answering (holds episodes open, e.g. for the Ctrl-C test).
    Raises ValueError when the script has no reply for a turn.
    """

    def __init__(self, tokenizer, replies, delay_s: float = 0.0, max_seq_len: int = 1 << 30):
        self.tokenizer, self.replies, self.delay_s, self.max_seq_len = tokenizer, replies, delay_s, max_seq_len
        self.eot = ChatFormat.end_of_turn(tokenizer)
        self.stop_ids = stop_ids_of(tokenizer)
        chat = ChatFormat(tokenizer, "markdown")
        head = chat.render(ChatFormat.BASE[:2])
        self._gen_prompt = chat.render(ChatFormat.BASE[:2], add_generation_prompt=True)[len(head):]
        self.calls = 0

    def _turn(self, prompt_ids: list[int]) -> int:
        g, n = self._gen_prompt, len(self._gen_prompt)
        return sum(prompt_ids[i:i + n] == g for i in range(len(prompt_ids) - n + 1)) - 1

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> Completion:
        _check_prompt(self, prompt_ids, sampling)
        self.calls += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        turn = self._turn(prompt_ids)
        if callable(self.replies):
            text = self.replies(prompt_ids, turn)
        else:
            if not 0 <= turn < len(self.replies):
                raise ValueError(f"ScriptedEngine: no reply for turn {turn} (script has {len(self.replies)})")
            text = self.replies[turn]
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.eot]
        n = min(sampling.max_tokens, self.max_seq_len - len(prompt_ids))
        reason = "stop" if len(ids) <= n else "length"
        ids = ids[:n]
        return Completion(ids, [-1.0] * len(ids), reason)


class VLLMEngine(Engine):
    """A colocated `vllm.LLM` in this process (torchrun with distributed_executor_backend="external_launcher";
    one engine per rank, tensor_parallel_size=1), for GPU training and evaluation.

    Batching: requests that arrive while a batch runs are sent together as the next `llm.generate` call
    (vLLM schedules them continuously inside it).
    Log-probs: `logprobs=0` returns the sampled token's log-prob; `logprobs_mode="processed_logprobs"` makes
    it the log-prob after temperature scaling (and after top-k/top-p, which training leaves off), matching
    TorchEngine and the learner.
    Weight sync (docs: vLLM sleep mode; NOTES.md): after a rollout `sleep()` (level 1: weights to CPU, KV
    cache dropped); before the next `load_weights(iterator)`: `wake_up(tags=["weights"])`, load in buckets of
    about `bucket_bytes` through the in-process model's `load_weights`, `reset_prefix_cache()`; then
    `wake_up()` restores the KV cache (`tags=["kv_cache"]`). Waking both before loading would hold old
    weights, new weights and the KV cache at once.
    """

    def __init__(self, model_path: str, max_seq_len: int = 8192, gpu_memory_utilization: float = 0.5,
                 dtype: str = "bfloat16", seed: int = 0, bucket_bytes: int = 1 << 30, stop_ids: set[int] | None = None,
                 enforce_eager: bool = False):
        if vllm is None:
            raise ImportError("VLLMEngine needs vllm: pip install -r requirements-gpu.txt (on a CUDA machine)")
        self.llm = vllm.LLM(model=str(model_path), dtype=dtype, max_model_len=max_seq_len, seed=seed,
                            gpu_memory_utilization=gpu_memory_utilization, enable_sleep_mode=True,
                            enable_prefix_caching=True, distributed_executor_backend="external_launcher",
                            tensor_parallel_size=1, logprobs_mode="processed_logprobs", enforce_eager=enforce_eager)
        self.max_seq_len, self.bucket_bytes = max_seq_len, bucket_bytes
        tok = self.llm.get_tokenizer()
        self.stop_ids = set(stop_ids) if stop_ids is not None else stop_ids_of(tok)
        self._asleep: set[str] = set()  # tags currently asleep: "weights", "kv_cache"
        self._queue: asyncio.Queue | None = None
        self._loop_task: asyncio.Task | None = None
        self._rng = random.Random(seed)

    def _model(self):
        """The in-process torch model: llm.llm_engine.model_executor.driver_worker.worker.model_runner.model
        (vLLM V1; exists only with external_launcher or VLLM_ENABLE_V1_MULTIPROCESSING=0). Raises RuntimeError
        naming the path when this vLLM version lays it out differently."""
        engine = self.llm.llm_engine
        executor = getattr(engine, "model_executor", None)
        if executor is None:  # some V1 versions keep it only on the in-process engine core
            executor = engine.engine_core.engine_core.model_executor
        worker = executor.driver_worker
        try:
            return getattr(worker, "worker", worker).model_runner.model
        except AttributeError as e:
            raise RuntimeError("VLLMEngine: llm.llm_engine.model_executor.driver_worker.worker.model_runner.model "
                               f"not found in vllm {vllm.__version__}; is the engine in-process (external_launcher)?") from e

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> Completion:
        _check_prompt(self, prompt_ids, sampling)
        if self._asleep:
            raise RuntimeError(f"VLLMEngine.generate while asleep ({sorted(self._asleep)}): call wake_up() first")
        if self._loop_task is None or self._loop_task.done():
            self._queue = asyncio.Queue()
            self._loop_task = asyncio.get_running_loop().create_task(self._batch_loop())
        fut = asyncio.get_running_loop().create_future()
        await self._queue.put((list(prompt_ids), sampling, fut))
        return await fut

    async def _batch_loop(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            batch = [b for b in batch if not b[2].done()]
            if not batch:
                continue
            try:
                outs = await asyncio.to_thread(self._generate_sync, batch)
            except Exception as e:
                for _, _, fut in batch:
                    if not fut.done():
                        fut.set_exception(e)
                continue
            for (_, _, fut), out in zip(batch, outs):
                if not fut.done():
                    fut.set_result(out)

    def _generate_sync(self, batch) -> list[Completion]:
        prompts, params = [], []
        for ids, s, _ in batch:
            prompts.append(vllm.TokensPrompt(prompt_token_ids=ids))
            params.append(vllm.SamplingParams(
                temperature=s.temperature, top_p=s.top_p, top_k=s.top_k if s.top_k > 0 else -1,
                max_tokens=min(s.max_tokens, self.max_seq_len - len(ids)), logprobs=0,
                seed=(s.seed if s.seed is not None else self._rng.getrandbits(31)) & 0x7FFFFFFF,
                stop_token_ids=sorted(self.stop_ids), skip_special_tokens=False, detokenize=False))
        results = []
        for out in self.llm.generate(prompts, params, use_tqdm=False):
            o = out.outputs[0]
            lps = [float(step[tid].logprob) for tid, step in zip(o.token_ids, o.logprobs)]
            reason = "stop" if o.finish_reason == "stop" else "length"
            results.append(Completion(list(o.token_ids), lps, reason))
        return results

    def sleep(self) -> None:
        self.llm.sleep(level=1)
        self._asleep = {"weights", "kv_cache"}

    def wake_up(self) -> None:
        if "weights" in self._asleep:
            self.llm.wake_up(tags=["weights"])
        if "kv_cache" in self._asleep:
            self.llm.wake_up(tags=["kv_cache"])
        self._asleep = set()

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Push (HF name, tensor) pairs in ~bucket_bytes buckets; wakes only the weights if asleep (call
        wake_up() afterwards for the KV cache); resets the prefix cache (its K/V came from old weights)."""
        if "weights" in self._asleep:
            self.llm.wake_up(tags=["weights"])
            self._asleep.discard("weights")
        model = self._model()
        bucket, size = [], 0
        for name, t in weights:
            bucket.append((name, t))
            size += t.numel() * t.element_size()
            if size >= self.bucket_bytes:
                model.load_weights(bucket)
                bucket, size = [], 0
        if bucket:
            model.load_weights(bucket)
        self.llm.reset_prefix_cache()

    async def aclose(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            self._loop_task = None


class OpenAIEngine(Engine):
    """Any OpenAI-compatible server over HTTP (httpx), for evaluating served models.

    mode "completions" (default): POST {base_url}/v1/completions with the prompt as token ids (vLLM, SGLang
    and llama.cpp accept them), `logprobs: 1` and vLLM's `return_tokens_as_token_ids`, so the sampled ids and
    their log-probs come back exactly. A server that returns tokens as text is an error (ValueError naming
    the field), never a silent re-tokenisation.
    mode "chat": POST {base_url}/v1/chat/completions with `messages` (the prompt decoded back to text is not a
    chat, so the agent passes its messages); the reply text is re-tokenised, log-probs are 0.0 and
    Completion.exact is False: fine for evaluation, not for training.
    Concurrency: up to max_concurrent requests in flight; the server batches them.
    """

    def __init__(self, base_url: str, model: str, tokenizer, mode: Literal["completions", "chat"] = "completions",
                 api_key: str | None = None, timeout_s: float = 600.0, max_concurrent: int = 64,
                 max_seq_len: int = 1 << 30):
        import httpx

        self.base_url, self.model_name, self.tokenizer, self.mode = base_url.rstrip("/"), model, tokenizer, mode
        self.max_seq_len = max_seq_len
        self.stop_ids = stop_ids_of(tokenizer)
        self.eot = ChatFormat.end_of_turn(tokenizer)
        headers = {"Authorization": f"Bearer {api_key or os.environ.get('OPENAI_API_KEY', 'EMPTY')}"}
        self.client = httpx.AsyncClient(timeout=timeout_s, headers=headers)
        self._sem = asyncio.Semaphore(max_concurrent)

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams, messages: list[dict] | None = None) -> Completion:
        _check_prompt(self, prompt_ids, sampling)
        body: dict[str, Any] = {"model": self.model_name, "max_tokens": sampling.max_tokens,
                                "temperature": sampling.temperature, "top_p": sampling.top_p}
        if sampling.top_k > 0:
            body["top_k"] = sampling.top_k
        if sampling.seed is not None:
            body["seed"] = sampling.seed & 0x7FFFFFFF  # servers take 32-bit seeds
        async with self._sem:
            if self.mode == "chat":
                if messages is None:
                    raise ValueError("OpenAIEngine(mode='chat').generate needs messages")
                body["messages"] = [{"role": m["role"], "content": m["content"]} for m in messages]
                data = await self._post("/v1/chat/completions", body)
                choice = self._choice(data, "/v1/chat/completions")
                text = (choice.get("message") or {}).get("content") or ""
                stopped = choice.get("finish_reason") == "stop"
                ids = self.tokenizer.encode(text, add_special_tokens=False) + ([self.eot] if stopped else [])
                return Completion(ids, [0.0] * len(ids), "stop" if stopped else "length", exact=False)
            body.update(prompt=list(prompt_ids), logprobs=1, return_tokens_as_token_ids=True,
                        stop_token_ids=sorted(self.stop_ids), skip_special_tokens=False)
            data = await self._post("/v1/completions", body)
        choice = self._choice(data, "/v1/completions")
        lp = choice.get("logprobs") or {}
        tokens, token_logprobs = lp.get("tokens"), lp.get("token_logprobs")
        if not isinstance(tokens, list) or not isinstance(token_logprobs, list) or len(tokens) != len(token_logprobs):
            raise ValueError(f"{self.base_url}/v1/completions: choices[0].logprobs.tokens/token_logprobs missing or "
                             f"of unequal length; the server must support logprobs")
        ids = []
        for t in tokens:
            if not (isinstance(t, str) and t.startswith("token_id:")):
                raise ValueError(f"{self.base_url}/v1/completions: choices[0].logprobs.tokens item {t!r} is not "
                                 f"'token_id:N'; the server must support return_tokens_as_token_ids (vLLM)")
            ids.append(int(t.split(":", 1)[1]))
        reason = "stop" if choice.get("finish_reason") == "stop" else "length"
        return Completion(ids, [float(x) for x in token_logprobs], reason)

    async def _post(self, path: str, body: dict) -> dict:
        r = await self.client.post(self.base_url + path, json=body)
        if r.status_code != 200:
            raise RuntimeError(f"{self.base_url}{path}: HTTP {r.status_code}: {r.text[:300]}")
        try:
            return r.json()
        except ValueError as e:
            raise ValueError(f"{self.base_url}{path}: reply is not JSON: {r.text[:200]!r}") from e

    def _choice(self, data: dict, path: str) -> dict:
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices[0], dict):
            raise ValueError(f"{self.base_url}{path}: reply has no choices[0]: {str(data)[:200]}")
        return choices[0]

    async def aclose(self) -> None:
        await self.client.aclose()


# ----------------------------------------------------------------------------- tools and action formats

# name -> {argument: (accepted JSON types, required, type shown in errors)}
TOOLS: dict[str, dict[str, tuple[tuple[type, ...], bool, str]]] = {
    "bash": {"command": ((str,), True, "string"), "timeout_s": ((int, float), False, "number")},
    "read_file": {"path": ((str,), True, "string"), "offset": ((int,), False, "integer"), "limit": ((int,), False, "integer")},
    "write_file": {"path": ((str,), True, "string"), "content": ((str,), True, "string")},
    "edit_file": {"path": ((str,), True, "string"), "old": ((str,), True, "string"), "new": ((str,), True, "string"),
                  "replace_all": ((bool,), False, "boolean")},
    "finish": {"message": ((str,), True, "string")},
}

TOOL_SCHEMAS = [
    {"type": "function", "function": {"name": "bash", "description": "Run a bash command in the container's persistent shell (cwd and exported variables persist). Returns the exit code and the output (stdout and stderr interleaved, long output cut in the middle).",
     "parameters": {"type": "object", "properties": {"command": {"type": "string"}, "timeout_s": {"type": "number", "description": "seconds before the command is killed"}}, "required": ["command"]}}},
    {"type": "function", "function": {"name": "read_file", "description": "Read a text file, optionally lines offset..offset+limit-1 (1-based).",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}}, "required": ["path"]}}},
    {"type": "function", "function": {"name": "write_file", "description": "Create or overwrite a file with the given content.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}}},
    {"type": "function", "function": {"name": "edit_file", "description": "Replace the exact text `old` with `new` in a file. `old` must occur exactly once unless replace_all is true. Multi-line text is fine.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}, "replace_all": {"type": "boolean"}}, "required": ["path", "old", "new"]}}},
    {"type": "function", "function": {"name": "finish", "description": "End the episode when the task is done.",
     "parameters": {"type": "object", "properties": {"message": {"type": "string", "description": "what you did"}}, "required": ["message"]}}},
]

HERMES_EXAMPLE = '<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la"}}\n</tool_call>'
MARKDOWN_EXAMPLE = "```bash\nls -la\n```"

HERMES_SYSTEM = """You are an agent solving a task in a Linux terminal inside a Docker container. The working directory is /app. There is no network.
You may think inside <think></think> before acting.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{tools}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{{"name": <function-name>, "arguments": <args-json-object>}}
</tool_call>
Several calls in one reply run in order. Their results come back in the next message. When the task is done, call finish."""

# Short and concrete for a 135M model: one command per reply, one worked example (a made-up task, none of
# the task set), then DONE. Every reply stops after its first bash block (markdown_action_done).
MARKDOWN_SYSTEM = """You are a Linux terminal agent. The working directory is /app.
Reply with one shell command in a bash block. You then see its output. When the task is done, reply DONE.

Example task: Create the file /app/notes.txt containing hi
Your reply:
```bash
echo hi > /app/notes.txt
```
Output:
$ echo hi > /app/notes.txt
exit code: 0
Your reply:
DONE"""

HERMES_HINT = "\n\nCall a tool like this:\n" + HERMES_EXAMPLE
MARKDOWN_HINT = "\n\nRun a command like this:\n" + MARKDOWN_EXAMPLE + "\nWhen the task is done, write DONE on a line by itself."
BASH_LANGS = ("bash", "sh", "shell", "console", "")


def system_prompt(action_format: str) -> str:
    """The system prompt for an action format ('hermes' or 'markdown'). Raises ValueError for another name."""
    if action_format == "hermes":
        return HERMES_SYSTEM.format(tools="\n".join(json.dumps(s) for s in TOOL_SCHEMAS))
    if action_format == "markdown":
        return MARKDOWN_SYSTEM
    raise ValueError(f"action_format = {action_format!r}: must be 'hermes' or 'markdown'")


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]


class FormatError(ValueError):
    """Malformed model output. str(e) is the observation shown to the model (it includes the expected format)."""


def check_call(name: Any, args: Any, index: int, max_arg_bytes: int) -> ToolCall:
    """Validate one call against TOOLS. Raises FormatError: unknown tool, arguments not an object, missing or
    unexpected argument, wrong type, or a string argument longer than max_arg_bytes (UTF-8 bytes)."""
    if not isinstance(name, str) or name not in TOOLS:
        raise FormatError(f"tool call {index}: unknown tool {name!r}; the tools are {', '.join(TOOLS)}.")
    if not isinstance(args, dict):
        raise FormatError(f"tool call {index}: \"arguments\" must be a JSON object, got {json.dumps(args)[:80]}.")
    spec = TOOLS[name]
    for arg, (_, required, _) in spec.items():
        if required and arg not in args:
            raise FormatError(f"tool call {index}: {name} is missing the required argument {arg!r}.")
    for arg, value in args.items():
        if arg not in spec:
            raise FormatError(f"tool call {index}: {name} got an unexpected argument {arg!r}; "
                              f"its arguments are {', '.join(spec)}.")
        types, _, shown = spec[arg]
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            raise FormatError(f"tool call {index}: argument {arg!r} of {name} must be a {shown}, got {json.dumps(value)[:80]}.")
        if isinstance(value, str) and len(value.encode()) > max_arg_bytes:
            raise FormatError(f"tool call {index}: argument {arg!r} of {name} is {len(value.encode())} bytes; "
                              f"the limit is {max_arg_bytes} bytes.")
    return ToolCall(name, dict(args))


_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


def parse_hermes(text: str, max_arg_bytes: int = 65536) -> list[ToolCall]:
    """Tool calls of a Hermes-format reply, in order (<think> blocks are ignored, not parsed).

    Raises FormatError whose message is the observation to show: no tool call, <tool_call> without
    </tool_call>, invalid JSON, a call that is not {"name": ..., "arguments": {...}}, or any check_call error.
    """
    visible = re.sub(r"<think>.*?(</think>|$)", "", text, flags=re.S)
    calls, end = [], 0
    for i, m in enumerate(_TOOL_CALL.finditer(visible), start=1):
        end = m.end()
        body = m.group(1).strip()
        try:
            obj = json.loads(body)
        except json.JSONDecodeError as e:
            raise FormatError(f"Format error: tool call {i} is not valid JSON ({e.msg} at char {e.pos})." + HERMES_HINT)
        if not isinstance(obj, dict) or "name" not in obj or set(obj) - {"name", "arguments"}:
            raise FormatError(f'Format error: tool call {i} must be a JSON object with keys "name" and "arguments".'
                              + HERMES_HINT)
        try:
            calls.append(check_call(obj["name"], obj.get("arguments", {}), i, max_arg_bytes))
        except FormatError as e:
            raise FormatError(f"Format error: {e}" + HERMES_HINT)
    if "<tool_call>" in visible[end:]:
        raise FormatError("Format error: <tool_call> without a closing </tool_call>." + HERMES_HINT)
    if not calls:
        raise FormatError("Format error: no tool call found." + HERMES_HINT)
    return calls


_FENCE = re.compile(r"^```\s*([\w+-]*)\s*$")
_DONE = re.compile(r"^(DONE|finish(\(.*\))?)$")


def parse_markdown(text: str, max_arg_bytes: int = 65536) -> list[ToolCall]:
    """Calls of a markdown-format reply, in order: each fenced block tagged bash/sh/shell/console or untagged
    is a bash call with the block's text; a line `DONE` (or `finish`, `finish(...)`) outside blocks is a
    finish call. Blocks in other languages (```python) are text, not calls.

    Raises FormatError: no bash block and no DONE, an unclosed block, an empty block, or a block longer than
    max_arg_bytes.
    """
    calls, lang, buf = [], None, []
    for line in text.split("\n"):
        s = line.strip()
        if lang is None:
            m = _FENCE.match(s)
            if m:
                lang, buf = m.group(1).lower(), []
            elif _DONE.match(s):
                calls.append(ToolCall("finish", {"message": s}))
            continue
        if s == "```":
            if lang in BASH_LANGS:
                command = "\n".join(buf)
                i = sum(c.name == "bash" for c in calls) + 1
                if not command.strip():
                    raise FormatError(f"Format error: bash block {i} is empty." + MARKDOWN_HINT)
                if len(command.encode()) > max_arg_bytes:
                    raise FormatError(f"Format error: bash block {i} is {len(command.encode())} bytes; the limit is "
                                      f"{max_arg_bytes} bytes." + MARKDOWN_HINT)
                calls.append(ToolCall("bash", {"command": command}))
            lang = None
            continue
        buf.append(line)
    if lang is not None:
        raise FormatError("Format error: a ``` block is not closed." + MARKDOWN_HINT)
    if not calls:
        raise FormatError("Format error: no bash block and no DONE found." + MARKDOWN_HINT)
    return calls


def markdown_action_done(text: str) -> bool:
    """True once a markdown reply holds a complete action: a bash block (tagged as in parse_markdown) whose
    closing ``` line has ended (its newline was generated), or a complete `DONE`/`finish` line outside blocks.

    Used as the markdown stop rule: a reply ends after its first action, so a small model's rambling after its
    command is neither sampled nor trained on. Only complete lines count, so "```" followed by "bash" (a new
    opening fence) is not taken for a closing one.
    """
    lang = None
    for line in text.split("\n")[:-1]:  # the last piece is an unfinished line
        s = line.strip()
        if lang is None:
            m = _FENCE.match(s)
            if m:
                lang = m.group(1).lower()
            elif _DONE.match(s):
                return True
        elif s == "```":
            if lang in BASH_LANGS:
                return True
            lang = None
    return False


def markdown_stop_check(tokenizer) -> Callable[[list[int]], bool]:
    """SamplingParams.stop_check for the markdown format: markdown_action_done on the decoded generated ids."""
    return lambda ids: markdown_action_done(tokenizer.decode(ids, skip_special_tokens=False))


def cut_at_stop(c: Completion, stop_check: Callable[[list[int]], bool] | None) -> Completion:
    """c cut after its shortest prefix that satisfies stop_check (finish "stop"; tokens and log-probs kept as
    sampled), or c unchanged when no prefix does or c already ends with a stop token. Engines that check
    stop_check while decoding return completions this leaves unchanged."""
    if stop_check is None:
        return c
    for n in range(1, len(c.token_ids) + 1):
        if stop_check(c.token_ids[:n]):
            if n == len(c.token_ids) and c.finish_reason == "stop":
                return c
            return Completion(c.token_ids[:n], c.logprobs[:n], "stop", c.exact)
    return c


def parse_actions(text: str, action_format: str, max_arg_bytes: int) -> list[ToolCall]:
    """Dispatch to parse_hermes / parse_markdown."""
    return parse_hermes(text, max_arg_bytes) if action_format == "hermes" else parse_markdown(text, max_arg_bytes)


# ----------------------------------------------------------------------------- chat template rendering


class ChatFormat:
    """Token-level chat rendering for one tokenizer and action format.

    Observation tokens are the template's own: render BASE (system, user, assistant with a <think> block, so
    templates that strip reasoning from non-final turns render it the same either way) with and without the
    new observation message(s) appended, take the suffix, and prepend the tokens the template puts after the
    assistant's end-of-turn token (SmolLM2/Qwen: "\\n"). Raises ValueError at construction if the template
    does not render BASE as a prefix of BASE + observation.
    """

    BASE = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"},
            {"role": "assistant", "content": "<think>\nT\n</think>\n\nA"}]

    def __init__(self, tokenizer, action_format: str = "markdown"):
        system_prompt(action_format)  # validates the name
        self.tokenizer, self.action_format = tokenizer, action_format
        self.observation_role = "tool" if action_format == "hermes" else "user"
        self.eot_id = self.end_of_turn(tokenizer)
        base = self.render(self.BASE)
        i = len(base) - 1 - base[::-1].index(self.eot_id)
        self._base, self._after_eot = base, base[i + 1:]
        probe = self.render(self.BASE + [{"role": self.observation_role, "content": "O"}], add_generation_prompt=True)
        if probe[:len(base)] != base:
            raise ValueError(f"tokenizer chat_template: rendering of a conversation is not a prefix of its rendering "
                             f"with one more {self.observation_role!r} message; observations cannot be tokenised by suffix")
        self._cache: dict[str, list[int]] = {}

    @staticmethod
    def end_of_turn(tokenizer) -> int:
        """The special token that closes an assistant message in the tokenizer's chat template (the last special
        token of a rendered assistant turn, e.g. <|im_end|>)."""
        text = tokenizer.apply_chat_template(ChatFormat.BASE, tokenize=False)
        ids = tokenizer.encode(text, add_special_tokens=False)
        special = set(tokenizer.all_special_ids)
        for t in reversed(ids):
            if t in special:
                return int(t)
        raise ValueError("tokenizer chat_template: a rendered assistant turn contains no special end-of-turn token")

    def render(self, messages: list[dict], add_generation_prompt: bool = False) -> list[int]:
        """Token ids of the template applied to messages (only their role and content)."""
        msgs = [{"role": m["role"], "content": m["content"]} for m in messages]
        text = self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=add_generation_prompt)
        return self.tokenizer.encode(text, add_special_tokens=False)

    def prompt_ids(self, instruction: str) -> tuple[list[dict], list[int]]:
        """(messages, token ids) of an episode's start: system prompt, the instruction, the generation prompt."""
        messages = [{"role": "system", "content": system_prompt(self.action_format)}, {"role": "user", "content": instruction}]
        return messages, self.render(messages, add_generation_prompt=True)

    def observation_ids(self, observations: list[dict], closed: bool = True) -> list[int]:
        """Tokens that follow an assistant turn: [eot if not closed] + after-eot + observation message(s) +
        the next generation prompt. closed: the generated tokens already end with the end-of-turn token."""
        full = self.render(self.BASE + observations, add_generation_prompt=True)
        seg = self._after_eot + full[len(self._base):]
        return seg if closed else [self.eot_id] + seg

    def decode(self, token_ids: list[int]) -> str:
        """Assistant text of generated ids, without a trailing stop token (special tokens such as <think> kept)."""
        if token_ids and token_ids[-1] == self.eot_id:
            token_ids = token_ids[:-1]
        return self.tokenizer.decode(token_ids, skip_special_tokens=False)


# ----------------------------------------------------------------------------- trajectories and the agent loop


@dataclass
class Trajectory:
    """One episode.

    token_ids / loss_mask / logprobs: same length; loss_mask 1 exactly on generated tokens, whose logprobs
    are the engine's; 0 and 0.0 elsewhere. prompt_len: tokens before the first generated one.
    messages: the conversation ({"role", "content"} plus, for assistant turns, "tool_calls", "format_error",
    "finish_reason"; for observations, "in_tokens": False when a limit kept it out of token_ids).
    stop_reason: finish | max_turns | max_context | max_tokens_per_turn | timeout | format_errors | oracle | error.
    truncated: a limit ended the episode (not finish/oracle). reward: None when the episode failed
    (error says why), never a silent 0. exact: token_ids are exactly what the engine sampled.
    """

    task_id: str
    group_index: int
    token_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    prompt_len: int = 0
    messages: list[dict] = field(default_factory=list)
    stop_reason: str = ""
    num_turns: int = 0
    test_report: Any = None
    reward: float | None = None
    verification: Any = None
    judge_score: float | None = None
    resolved: bool = False
    truncated: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    difficulty: str = ""
    category: str = ""
    format_errors: int = 0
    error: str | None = None
    exact: bool = True

    def append(self, ids: list[int], mask: int, logprobs: list[float] | None = None) -> None:
        self.token_ids += ids
        self.loss_mask += [mask] * len(ids)
        self.logprobs += logprobs if logprobs is not None else [0.0] * len(ids)

    def to_json(self) -> dict:
        """A JSON-serialisable dict (test report and verification as dicts)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for k in ("test_report", "verification"):
            v = d[k]
            d[k] = dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v
        return d


LIMIT_REASONS = ("max_turns", "max_context", "max_tokens_per_turn", "timeout", "format_errors")


@dataclass
class _Episode:
    """Per-episode context for the agent loop."""

    task: Any
    sandbox: Any
    cfg: RolloutConfig
    chat: ChatFormat
    deadline: float
    exec_timeout_s: float
    output_limit_bytes: int


def _resolve(path: str) -> str:
    return path if path.startswith("/") else "/app/" + path


async def run_tool(ep: _Episode, call: ToolCall) -> tuple[str, dict]:
    """Run one call in the episode's sandbox. Returns (observation text, metadata). Tool failures (a missing
    file, `old` not found, a timeout) are observations, not exceptions; sandbox infrastructure errors raise."""
    sb, a = ep.sandbox, call.arguments
    remaining = max(1.0, ep.deadline - time.monotonic())
    if call.name == "bash":
        timeout = min(float(a.get("timeout_s", ep.exec_timeout_s)), remaining)
        if timeout <= 0:
            return f"Error: timeout_s must be > 0, got {a['timeout_s']}.", {"exit_code": None}
        try:
            r = await sb.exec(a["command"], timeout=timeout)
        except ValueError as e:  # the sandbox refuses the command itself (too long, NUL byte)
            return f"Error: {e}", {"exit_code": None}
        head = f"[timed out after {timeout:g} s; the command was killed]" if r.timed_out else f"exit code: {r.exit_code}"
        return f"{head}\n{r.output}" if r.output else head, {"exit_code": r.exit_code, "timed_out": r.timed_out}
    if call.name == "finish":
        return "", {}
    path = _resolve(a["path"])
    if call.name == "write_file":
        await sb.write_file(path, a["content"])
        return f"Wrote {len(a['content'].encode())} bytes to {path}.", {}
    try:
        data = await sb.read_file(path, max_bytes=1 << 20)
    except Exception as e:  # missing file, a directory, permissions: the agent should see why
        return f"Error: cannot read {path}: {e}", {"error": str(e)}
    text = data.decode("utf-8", errors="replace")
    if call.name == "read_file":
        offset, limit = a.get("offset", 1), a.get("limit")
        if offset < 1 or (limit is not None and limit < 1):
            return "Error: offset and limit must be >= 1.", {}
        lines = text.splitlines(keepends=True)[offset - 1:]
        out = "".join(lines if limit is None else lines[:limit])
        if len(out.encode()) > ep.output_limit_bytes:
            cut = out.encode()[:ep.output_limit_bytes].decode("utf-8", errors="ignore")
            out = cut + f"\n[... cut at {ep.output_limit_bytes} bytes; use offset/limit to read more]"
        return out if out else f"({path} has no lines from {offset})", {}
    # edit_file
    n = text.count(a["old"]) if a["old"] else 0
    if n == 0:
        return f"Error: the old text was not found in {path}; nothing changed.", {}
    if n > 1 and not a.get("replace_all", False):
        return f"Error: the old text occurs {n} times in {path}; make it unique or set replace_all; nothing changed.", {}
    new = text.replace(a["old"], a["new"]) if a.get("replace_all", False) else text.replace(a["old"], a["new"], 1)
    await sb.write_file(path, new)
    return f"Replaced {n if a.get('replace_all', False) else 1} occurrence(s) in {path}.", {}


def _markdown_observation(results: list[tuple[ToolCall, str]]) -> str:
    blocks = [f"$ {call.arguments['command']}\n{out}" for call, out in results]
    return "\n\n".join(blocks)


async def agent_loop(traj: Trajectory, ep: _Episode, engine: Engine, sampling: SamplingParams) -> str:
    """Run turns until a stop condition; fill traj (tokens, masks, messages). Returns the stop reason."""
    cfg, chat = ep.cfg, ep.chat
    max_turns = ep.task.max_turns or cfg.max_turns
    # markdown: a turn ends after its first action; the end-of-turn token then goes in as an observation token
    stop_check = markdown_stop_check(chat.tokenizer) if chat.action_format == "markdown" else None
    consecutive_errors = 0
    for turn in range(max_turns):
        room = cfg.max_context_tokens - len(traj.token_ids)
        if room < 1:
            return "max_context"
        remaining = ep.deadline - time.monotonic()
        if remaining <= 0:
            return "timeout"
        max_tokens = min(cfg.max_tokens_per_turn, room)
        t0 = time.monotonic()
        try:
            # Only the chat-mode HTTP engine needs the messages; every engine gets the exact token ids.
            kwargs = {"messages": traj.messages} if isinstance(engine, OpenAIEngine) else {}
            # Each turn its own seed: the same seed every turn would reuse the same uniforms.
            seed = None if sampling.seed is None else hash((sampling.seed, turn)) & (2**63 - 1)
            turn_sampling = dataclasses.replace(sampling, max_tokens=max_tokens, seed=seed, stop_check=stop_check)
            c = await asyncio.wait_for(engine.generate(traj.token_ids, turn_sampling, **kwargs), remaining)
        except asyncio.TimeoutError:
            return "timeout"
        traj.timings["generate_s"] = traj.timings.get("generate_s", 0.0) + time.monotonic() - t0
        if len(c.token_ids) != len(c.logprobs):
            raise ValueError(f"{type(engine).__name__}: completion has {len(c.token_ids)} tokens but "
                             f"{len(c.logprobs)} logprobs")
        c = cut_at_stop(c, stop_check)  # engines that ignore stop_check: the same cut, after the fact
        traj.exact &= c.exact
        traj.append(c.token_ids, 1, c.logprobs)
        traj.num_turns = turn + 1
        text = chat.decode(c.token_ids)
        msg = {"role": "assistant", "content": text, "finish_reason": c.finish_reason, "tool_calls": [], "format_error": None}
        traj.messages.append(msg)
        try:
            calls = parse_actions(text, chat.action_format, cfg.max_tool_arg_bytes)
        except FormatError as e:
            calls, msg["format_error"] = [], str(e)
        if c.finish_reason == "length" and not calls:
            return "max_context" if max_tokens < cfg.max_tokens_per_turn else "max_tokens_per_turn"
        if msg["format_error"]:
            traj.format_errors += 1
            consecutive_errors += 1
            obs = [{"role": chat.observation_role, "content": msg["format_error"]}]
            if consecutive_errors >= cfg.max_format_errors:
                traj.messages.extend({**o, "in_tokens": False} for o in obs)
                return "format_errors"
        else:
            consecutive_errors = 0
            t0 = time.monotonic()
            results, finished = [], False
            for call in calls:
                msg["tool_calls"].append({"name": call.name, "arguments": call.arguments})
                if call.name == "finish":
                    finished = True
                    break
                out, meta = await run_tool(ep, call)
                results.append((call, out, meta))
            skipped = calls[len(msg["tool_calls"]):]
            if skipped:
                msg["not_run"] = [{"name": s.name, "arguments": s.arguments} for s in skipped]
            traj.timings["tools_s"] = traj.timings.get("tools_s", 0.0) + time.monotonic() - t0
            if chat.observation_role == "tool":
                obs = [{"role": "tool", "content": out, "tool_name": call.name, **meta} for call, out, meta in results]
            else:
                obs = [{"role": "user", "content": _markdown_observation([(call, out) for call, out, _ in results])}] if results else []
            if finished:
                traj.messages.extend({**o, "in_tokens": False} for o in obs)
                return "finish"
            if c.finish_reason == "length":  # the turn was cut: its complete calls ran, the episode stops
                traj.messages.extend({**o, "in_tokens": False} for o in obs)
                return "max_context" if max_tokens < cfg.max_tokens_per_turn else "max_tokens_per_turn"
        closed = bool(c.token_ids) and c.token_ids[-1] == chat.eot_id
        obs_ids = chat.observation_ids(obs, closed=closed)
        if len(traj.token_ids) + len(obs_ids) >= cfg.max_context_tokens:
            traj.messages.extend({**o, "in_tokens": False} for o in obs)
            return "max_context"
        traj.messages.extend(obs)
        traj.append(obs_ids, 0)
    return "max_turns"


async def run_episode(task, engine: Engine | None, chat: ChatFormat, cfg: RolloutConfig, group_index: int = 0,
                      image: str | None = None, sandbox_cfg: SandboxConfig | None = None, run_id: str | None = None,
                      judge=None, reward_cfg: RewardConfig | None = None, seed: int | None = None,
                      oracle: bool = False) -> Trajectory:
    """One episode of `task` in a fresh sandbox, verified by the task's hidden tests (also when a limit cut
    it short), optionally scored by the judge. engine None with oracle=True runs the task's solution.sh.

    Never raises for a failed episode: the trajectory's error is set and its reward is None (docker errors,
    image build errors, engine errors). Cancellation (Ctrl-C) propagates after the sandbox is closed.
    """
    import sandbox as sandbox_lib
    import reward as reward_lib

    sandbox_cfg = sandbox_cfg or SandboxConfig()
    reward_cfg = reward_cfg or RewardConfig()
    traj = Trajectory(task.id, group_index, difficulty=task.difficulty, category=task.category)
    t_start = time.monotonic()
    sb = None
    try:
        if image is None:
            image = await asyncio.to_thread(sandbox_lib.build_image, task, sandbox_cfg.base_image)
        t0 = time.monotonic()
        sb = await sandbox_lib.Sandbox.start(image, limits=sandbox_lib.Limits.from_config(sandbox_cfg), run_id=run_id)
        traj.timings["start_s"] = time.monotonic() - t0
        timeout_s = min(cfg.episode_timeout_s, task.agent_timeout_s or cfg.episode_timeout_s)
        ep = _Episode(task, sb, cfg, chat, time.monotonic() + timeout_s, sandbox_cfg.exec_timeout_s,
                      sandbox_cfg.output_limit_bytes)
        if oracle:
            if task.solution is None:
                raise ValueError(f"task {task.id}: no solution.sh for --oracle")
            await sb.write_file("/tmp/solution.sh", Path(task.solution).read_bytes())
            r = await sb.exec("bash /tmp/solution.sh", timeout=timeout_s)
            traj.messages = [{"role": "oracle", "content": r.output, "exit_code": r.exit_code, "timed_out": r.timed_out}]
            traj.stop_reason = "oracle"
        else:
            traj.messages, ids = chat.prompt_ids(task.instruction)
            traj.append(ids, 0)
            traj.prompt_len = len(ids)
            sampling = SamplingParams(cfg.temperature, cfg.top_p, cfg.top_k, cfg.max_tokens_per_turn, seed)
            traj.stop_reason = await agent_loop(traj, ep, engine, sampling)
            traj.truncated = traj.stop_reason in LIMIT_REASONS
        traj.timings["agent_s"] = time.monotonic() - t_start
        t0 = time.monotonic()
        report = await sb.run_tests(task.tests_dir, timeout=task.test_timeout_s)
        traj.timings["verify_s"] = time.monotonic() - t0
        v = reward_lib.verify(report, task.weights)
        traj.test_report, traj.verification, traj.resolved = report, v, v.resolved
        if judge is not None and not oracle:
            t0 = time.monotonic()
            jr = await judge.score(task.instruction, [{"role": m["role"], "content": m["content"]} for m in traj.messages])
            traj.judge_score = jr.score
            traj.timings["judge_s"] = time.monotonic() - t0
        traj.reward = reward_lib.combine(v.score, traj.judge_score, reward_cfg.w_tests, reward_cfg.w_judge)
    except Exception as e:
        traj.error = f"{type(e).__name__}: {e}"
        traj.stop_reason = traj.stop_reason or "error"
        traj.reward = None
    finally:
        if sb is not None:
            await asyncio.shield(sb.close())
        traj.timings["total_s"] = time.monotonic() - t_start
    return traj


async def run_episodes(tasks: list, engine: Engine | None, tokenizer, n_per_task: int, cfg: RolloutConfig, judge=None,
                       *, action_format: str = "markdown", sandbox_cfg: SandboxConfig | None = None,
                       reward_cfg: RewardConfig | None = None, run_id: str | None = None, seed: int | None = None,
                       oracle: bool = False, progress: bool = True, on_trajectory=None) -> list[Trajectory]:
    """Run n_per_task episodes of every task concurrently (asyncio), at most cfg.max_concurrent_episodes at
    once; sandbox.py bounds the docker calls in flight. Images are built first, once per task.

    Returns trajectories ordered by task then group_index (group_index = 0..n_per_task-1). seed: when given,
    episode j of task i samples with seed (seed, i, j) mixed into one int, so runs are reproducible.
    on_trajectory: optional callback per finished trajectory (e.g. to stream JSONL). Progress line on stderr:
    episodes done, mean reward so far, generated tokens/s.
    """
    import sandbox as sandbox_lib
    from tqdm import tqdm

    if n_per_task < 1:
        raise ValueError(f"n_per_task = {n_per_task}: must be >= 1")
    if engine is None and not oracle:
        raise ValueError("engine: None is only allowed with oracle=True")
    sandbox_cfg = sandbox_cfg or SandboxConfig()
    chat = ChatFormat(tokenizer, action_format)
    images: dict[str, str | Exception] = {}

    async def build(task):
        try:
            images[task.id] = await asyncio.to_thread(sandbox_lib.build_image, task, sandbox_cfg.base_image)
        except Exception as e:  # reported per trajectory below
            images[task.id] = e

    await asyncio.gather(*(build(t) for t in {t.id: t for t in tasks}.values()))
    sem = asyncio.Semaphore(cfg.max_concurrent_episodes)
    bar = tqdm(total=len(tasks) * n_per_task, desc="rollout", file=sys.stderr, disable=not progress, dynamic_ncols=True)
    done: list[Trajectory] = []
    t_start = time.monotonic()

    async def one(i: int, task, j: int) -> Trajectory:
        image = images[task.id]
        if isinstance(image, Exception):
            traj = Trajectory(task.id, j, difficulty=task.difficulty, category=task.category, stop_reason="error",
                              error=f"image build failed: {type(image).__name__}: {image}")
        else:
            async with sem:
                s = None if seed is None else (seed * 1_000_003 + i) * 10_007 + j
                traj = await run_episode(task, engine, chat, cfg, j, image, sandbox_cfg, run_id, judge, reward_cfg, s, oracle)
        done.append(traj)
        rewards = [t.reward for t in done if t.reward is not None]
        tokens = sum(sum(t.loss_mask) for t in done)
        bar.set_postfix_str(f"reward {sum(rewards) / max(1, len(rewards)):.3f} | "
                            f"{tokens / max(1e-9, time.monotonic() - t_start):.1f} tok/s | errors {len(done) - len(rewards)}")
        bar.update(1)
        if on_trajectory is not None:
            on_trajectory(traj)
        return traj

    try:
        return list(await asyncio.gather(*(one(i, t, j) for i, t in enumerate(tasks) for j in range(n_per_task))))
    finally:
        bar.close()


# ----------------------------------------------------------------------------- metrics


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task with n samples of which c passed (Chen et al. 2021, "Evaluating Large
    Language Models Trained on Code", eq. 1):  pass@k = 1 - C(n - c, k) / C(n, k).
    Raises ValueError unless 0 <= c <= n and 1 <= k <= n."""
    if not (0 <= c <= n) or not (1 <= k <= n):
        raise ValueError(f"pass_at_k(n={n}, c={c}, k={k}): need 0 <= c <= n and 1 <= k <= n")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def summarize(trajs: list[Trajectory], k: int) -> dict:
    """Overall, by difficulty and by category: episodes, errors (excluded from every rate), tasks, resolved
    rate (episodes whose weighted tests all passed), pass@1 and unbiased pass@k (mean over tasks with >= k
    scored episodes), mean reward."""

    def stats(ts: list[Trajectory]) -> dict:
        ok = [t for t in ts if t.reward is not None]
        by_task: dict[str, list[bool]] = defaultdict(list)
        for t in ok:
            by_task[t.task_id].append(t.resolved)
        p1 = [pass_at_k(len(r), sum(r), 1) for r in by_task.values() if r]
        pk = [pass_at_k(len(r), sum(r), k) for r in by_task.values() if len(r) >= k]
        mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
        return {"episodes": len(ts), "errors": len(ts) - len(ok), "tasks": len({t.task_id for t in ts}),
                "resolved_rate": mean([float(t.resolved) for t in ok]), "pass@1": mean(p1), f"pass@{k}": mean(pk),
                "mean_reward": mean([t.reward for t in ok])}

    out = {"overall": stats(trajs), "by_difficulty": {}, "by_category": {}}
    for key, attr in (("by_difficulty", "difficulty"), ("by_category", "category")):
        groups: dict[str, list] = defaultdict(list)
        for t in trajs:
            groups[getattr(t, attr)].append(t)
        out[key] = {g: stats(ts) for g, ts in sorted(groups.items())}
    return out


def format_summary(summary: dict, k: int) -> str:
    """The summary as an aligned text table."""
    cols = ["episodes", "errors", "resolved_rate", "pass@1", f"pass@{k}", "mean_reward"]
    fmt = lambda v: "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))  # noqa: E731
    rows = [("overall", summary["overall"])]
    rows += [(f"difficulty={g}", s) for g, s in summary["by_difficulty"].items()]
    rows += [(f"category={g}", s) for g, s in summary["by_category"].items()]
    width = max(len(r[0]) for r in rows) + 2
    lines = ["".ljust(width) + "".join(c.rjust(14) for c in cols)]
    lines += [name.ljust(width) + "".join(fmt(s[c]).rjust(14) for c in cols) for name, s in rows]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- evaluation CLI


@dataclass
class EvalConfig:
    """Evaluate a policy (or the oracle solutions) on a task set: k episodes per task."""

    model: str = "default"  # HF folder, 'default' (embedded SmolLM2-135M-Instruct) or 'tiny-random-qwen3'
    tasks: str = "tasks/data"  # task folder, Terminal-Bench folder or CSV
    k: int = 4  # episodes per task; pass@k uses all of them
    engine: Literal["torch", "vllm", "openai", "scripted"] = "torch"  # scripted replays --script (demos, tests)
    oracle: bool = False  # run each task's solution.sh instead of a model (expect 100%)
    out: str = "runs/eval"  # trajectories.jsonl and summary.json go here
    task_ids: tuple[str, ...] = ()  # only these task ids (empty = all)
    difficulties: tuple[str, ...] = ()  # only these difficulties (empty = all)
    action_format: Literal["hermes", "markdown"] = "markdown"  # hermes for Qwen3, markdown for SmolLM2
    max_batch: int = 8  # sequences decoded together (torch engine; its KV cache is max_batch x max_seq_len)
    max_seq_len: int = 2048  # engine context length, tokens (>= rollout.max_context_tokens)
    dtype: Literal["float32", "bfloat16"] = "float32"  # model dtype (torch/vllm engines)
    device: str = "cpu"  # torch engine device ('cuda' on a GPU)
    openai_base_url: str = ""  # engine=openai: server base URL
    openai_model: str = ""  # engine=openai: model name on the server
    openai_mode: Literal["completions", "chat"] = "completions"  # engine=openai: token-id completions or chat
    script: str = ""  # engine=scripted: JSON list of assistant replies, replayed every episode
    script_delay_s: float = 0.0  # engine=scripted: seconds before each reply
    seed: int = 0  # sampling seed
    run_id: str = ""  # label of this run's containers ('' = sandbox.RUN_ID of this process)
    progress: bool = True  # progress line on stderr
    # Defaults: the cpu-smollm2 preset's limits; raise them for Qwen3 on GPUs (e.g. --rollout.max-turns 24).
    rollout: RolloutConfig = field(default_factory=lambda: dataclasses.replace(PRESETS["cpu-smollm2"].rollout))
    sandbox: SandboxConfig = field(default_factory=lambda: dataclasses.replace(PRESETS["cpu-smollm2"].sandbox))
    reward: RewardConfig = field(default_factory=RewardConfig)


def resolve_model_dir(name: str) -> Path:
    """'default' -> model.default_model_dir(); 'tiny-random-qwen3' -> a cached tiny random model; else a folder."""
    import model as model_lib

    if name == "default":
        return model_lib.default_model_dir()
    if name == "tiny-random-qwen3":
        root = cache_dir() / "tiny-random-qwen3"
        if not (root / "config.json").is_file():
            model_lib.save_tiny_random(root)
        return root
    path = Path(name)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"--model {name}: not a model folder (no config.json)")
    return path


def build_engine(cfg: EvalConfig, model_dir: Path, tokenizer) -> Engine | None:
    """The engine EvalConfig asks for (None for --oracle)."""
    if cfg.oracle:
        return None
    if cfg.engine == "torch":
        import model as model_lib

        dtype = torch.bfloat16 if cfg.dtype == "bfloat16" else torch.float32
        m = model_lib.load_hf(model_dir, dtype=dtype, device=cfg.device)
        return TorchEngine(m, tokenizer, max_batch=cfg.max_batch, max_seq_len=cfg.max_seq_len, seed=cfg.seed)
    if cfg.engine == "vllm":
        return VLLMEngine(str(model_dir), max_seq_len=cfg.max_seq_len, dtype=cfg.dtype, seed=cfg.seed)
    if cfg.engine == "openai":
        if not cfg.openai_base_url:
            raise ValueError("--openai-base-url is required with --engine openai")
        return OpenAIEngine(cfg.openai_base_url, cfg.openai_model or str(model_dir), tokenizer, mode=cfg.openai_mode,
                            max_seq_len=cfg.max_seq_len)
    if not cfg.script:
        raise ValueError("--script is required with --engine scripted")
    return ScriptedEngine(tokenizer, json.loads(Path(cfg.script).read_text()), delay_s=cfg.script_delay_s)


async def evaluate(cfg: EvalConfig) -> dict:
    """Load the tasks and the engine, run k episodes per task, write out/trajectories.jsonl and
    out/summary.json, print the table. Returns the summary."""
    import model as model_lib
    import reward as reward_lib
    from tasks import load_tasks

    tasks = load_tasks(cfg.tasks)
    if cfg.task_ids:
        unknown = set(cfg.task_ids) - {t.id for t in tasks}
        if unknown:
            raise ValueError(f"--task-ids: unknown {sorted(unknown)}")
        tasks = [t for t in tasks if t.id in cfg.task_ids]
    if cfg.difficulties:
        tasks = [t for t in tasks if t.difficulty in cfg.difficulties]
    if not tasks:
        raise ValueError(f"no tasks selected from {cfg.tasks}")
    model_dir = resolve_model_dir(cfg.model)
    tokenizer = model_lib.load_tokenizer(model_dir)
    engine = build_engine(cfg, model_dir, tokenizer)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    judge = None if cfg.oracle else reward_lib.build_judge(cfg.reward, out)
    jsonl = open(out / "trajectories.jsonl", "w")

    def write(t: Trajectory) -> None:
        jsonl.write(json.dumps(t.to_json(), default=str) + "\n")
        jsonl.flush()

    try:
        trajs = await run_episodes(tasks, engine, tokenizer, cfg.k, cfg.rollout, judge, action_format=cfg.action_format,
                                   sandbox_cfg=cfg.sandbox, reward_cfg=cfg.reward, run_id=cfg.run_id, seed=cfg.seed,
                                   oracle=cfg.oracle, progress=cfg.progress, on_trajectory=write)
    finally:
        jsonl.close()
        if engine is not None:
            await engine.aclose()
        if judge is not None:
            await judge.aclose()
    if _INTERRUPTED:  # episodes cut short by a signal are not results: no summary that looks complete
        raise KeyboardInterrupt
    summary = summarize(trajs, cfg.k)
    summary["config"] = {"model": str(model_dir), "tasks": cfg.tasks, "k": cfg.k, "engine": cfg.engine,
                         "oracle": cfg.oracle, "run_id": cfg.run_id}
    summary["stop_reasons"] = dict(sorted(Counter(t.stop_reason for t in trajs).items()))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(format_summary(summary, cfg.k))
    print(f"stop reasons: {summary['stop_reasons']}")
    print(f"wrote {out / 'trajectories.jsonl'} and {out / 'summary.json'}")
    return summary


def main(argv: list[str] | None = None) -> int:
    """CLI entry: parse EvalConfig with tyro, reap leftovers of dead runs, evaluate; on SIGINT/SIGTERM the
    episodes are cancelled, their sandboxes closed, and this run's containers reaped before exiting 130."""
    import tyro
    import sandbox as sandbox_lib

    cfg = tyro.cli(EvalConfig, args=argv, description=__doc__.split("\n\n")[0])
    if cfg.k < 1:
        raise SystemExit(f"--k {cfg.k}: must be >= 1")
    if cfg.max_seq_len < cfg.rollout.max_context_tokens:
        raise SystemExit(f"--max-seq-len {cfg.max_seq_len}: must be >= --rollout.max-context-tokens "
                         f"{cfg.rollout.max_context_tokens}")
    cfg.run_id = cfg.run_id or sandbox_lib.RUN_ID
    sandbox_lib.reap()  # containers of dead runs only; live runs on the same engine keep theirs
    # SIGINT/SIGTERM: this run's containers are removed at once, then KeyboardInterrupt cancels the episodes.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    sandbox_lib.install_signal_cleanup(cfg.run_id)
    cleanup = signal.getsignal(signal.SIGINT)

    def on_signal(signum, frame):
        _INTERRUPTED.append(signum)  # remembered even if the KeyboardInterrupt lands where it is absorbed
        cleanup(signum, frame)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        asyncio.run(evaluate(cfg))
    except KeyboardInterrupt:
        pass
    finally:
        sandbox_lib.reap(run_id=cfg.run_id)
    if _INTERRUPTED:
        print(f"\ninterrupted: removed the containers of run {cfg.run_id}; no summary written", file=sys.stderr)
        return 130
    return 0


_INTERRUPTED: list[int] = []  # signals received by the evaluation CLI


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (FileNotFoundError, ValueError) as e:  # bad --model / --tasks / flags: one line, no traceback
        if os.environ.get("TERMRL_DEBUG"):
            raise
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
