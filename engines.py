"""Generation engines: one interface, `await engine.generate(prompt_ids, sampling) -> Completion`.

Each engine batches the requests of many concurrent agents internally:
- TorchEngine: decode.py's KV cache with continuous batching (CPU or GPU; the CPU default).
- VLLMEngine: a colocated vllm.LLM in this process (torchrun `external_launcher`), sleep mode between
  rollouts, weights pushed through `load_weights`, prefix cache reset after every sync.
- OpenAIEngine (openai_engine.py): any OpenAI-compatible server over HTTP (evaluation of served models).
- ScriptedEngine: replays fixed replies (demos and tests).

`build_engine` turns a configs.PolicyConfig into the torch or vLLM engine, for training and evaluation alike.
"""


import asyncio
import logging
import os
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Literal

import torch

import decode
from decode import sample_tokens
import weights
from configs import ConfigError, PolicyConfig
from speculation import NgramIndex, PromptLookup

try:  # GPU-only engine
    import vllm
except ImportError:
    vllm = None

log = logging.getLogger("termrl.engines")

# ----------------------------------------------------------------------------- sampling and completions


@dataclass
class SamplingParams:
    """How to sample one completion. temperature 0 = greedy; top_k 0 = off; top_p 1.0 = off; max_tokens
    caps generated tokens; seed makes this request's samples reproducible whatever it is batched with.
    Completion.logprobs are log-probs under exactly this distribution (temperature, top-k, top-p applied,
    renormalised), so with truncation on they differ from the learner's untruncated log_softmax(logits / T).
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
    logprobs: per generated token, its log-prob under the distribution it was sampled from: softmax(logits / T)
    with top-k and top-p applied and renormalised (`decode.sample_tokens`; vLLM's processed_logprobs); for greedy
    requests (temperature 0) log_softmax(logits)[token].
    finish_reason: "stop" (a stop token, or sampling.stop_check) or "length" (max_tokens or the engine's max_seq_len).
    exact: False when the engine could not return the sampled ids (OpenAIEngine in chat mode)."""

    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str
    exact: bool = True


# ----------------------------------------------------------------------------- engines


class Engine:
    """The interface every engine implements. `generate` is safe to call from many asyncio tasks at once;
    engines batch concurrent requests internally. `stop_ids` are the token ids that end a completion."""

    max_seq_len: int = 1 << 30
    stop_ids: set[int] = set()

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams,
                       messages: list[dict] | None = None) -> Completion:
        """Generate one completion of prompt_ids (list of token ids). `messages` is the same conversation as
        chat messages, for engines that can only take text (OpenAIEngine in chat mode); others ignore it.
        Completion.logprobs: each sampled token's log-prob under the distribution it was sampled from
        (softmax(logits / T), top-k and top-p applied, renormalised), as `decode.sample_tokens` defines it.
        Raises ValueError if the prompt does not leave room for one token within max_seq_len."""
        raise NotImplementedError

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Replace the policy weights from (HF parameter name, tensor) pairs."""
        raise NotImplementedError(f"{type(self).__name__} cannot load weights")

    def sleep(self) -> None:
        """Release accelerator memory between rollouts (no-op where there is nothing to release)."""

    def wake_up(self) -> None:
        """Undo sleep() before the next rollout."""

    async def probe(self) -> str | None:
        """Check once, before any episode, that the engine can serve its mode; returns a line to log (None:
        nothing to say). Raises ValueError naming what is missing (OpenAIEngine: the server's capabilities)."""
        return None

    async def aclose(self) -> None:
        """Stop background work and release clients."""


def _check_prompt(engine: Engine, prompt_ids: list[int], sampling: SamplingParams) -> None:
    if not prompt_ids:
        raise ValueError("prompt_ids: empty prompt")
    if len(prompt_ids) >= engine.max_seq_len:
        raise ValueError(f"prompt_ids: {len(prompt_ids)} tokens leave no room within max_seq_len={engine.max_seq_len}")
    if sampling.max_tokens < 1:
        raise ValueError(f"sampling.max_tokens = {sampling.max_tokens}: must be >= 1")


# A conversation every chat template renders: system, user, and an assistant turn with a <think> block (so
# templates that strip reasoning from non-final turns render it the same either way).
BASE_CONVERSATION = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"},
                     {"role": "assistant", "content": "<think>\nT\n</think>\n\nA"}]


def render_ids(tokenizer, messages: list[dict], add_generation_prompt: bool = False) -> list[int]:
    """Token ids of the tokenizer's chat template applied to messages (only their role and content)."""
    msgs = [{"role": m["role"], "content": m["content"]} for m in messages]
    text = tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=add_generation_prompt)
    return tokenizer.encode(text, add_special_tokens=False)


def end_of_turn(tokenizer) -> int:
    """The special token that closes an assistant message in the tokenizer's chat template (the last special
    token of a rendered assistant turn, e.g. <|im_end|>). Raises ValueError if the template has none."""
    special = set(tokenizer.all_special_ids)
    for t in reversed(render_ids(tokenizer, BASE_CONVERSATION)):
        if t in special:
            return int(t)
    raise ValueError("tokenizer chat_template: a rendered assistant turn contains no special end-of-turn token")


def stop_ids_of(tokenizer, model_dir: str | os.PathLike | None = None) -> set[int]:
    """Token ids that end an assistant turn, the same for every engine: the chat template's end-of-turn token,
    the tokenizer's eos, and the eos ids of the model's generation_config.json (`eos_token_id`, an int or a
    list: Qwen3 lists <|im_end|> and <|endoftext|>), as HF `generate` and vLLM stop at them.

    model_dir: the HF dir holding generation_config.json; None reads it from the tokenizer's own dir
    (tokenizer.name_or_path, where weights.load_tokenizer and vLLM loaded it), none when that is not a dir.
    Raises ValueError (weights.generation_eos_ids) when eos_token_id is neither an int nor a list of ints."""
    ids = {end_of_turn(tokenizer)}
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    src = model_dir if model_dir is not None else getattr(tokenizer, "name_or_path", "")
    return ids | set(weights.generation_eos_ids(src)) if src else ids


@dataclass
class _Request:
    prompt: list[int]
    sampling: SamplingParams
    future: asyncio.Future
    generator: torch.Generator
    slot: int = -1
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    lookup: PromptLookup = field(default_factory=PromptLookup)


class TorchEngine(Engine):
    """Continuous batching on decode.py's KV cache (gpt-fast style), CPU or GPU.

    Requests wait in an asyncio queue; a background task admits them into free cache slots (prefill) and
    steps all active sequences together with `decode_tokens`. A finished sequence frees its slot at
    once, so a new agent can join mid-batch. Each slot remembers the tokens whose K/V it holds; a request
    is placed in the free slot sharing the longest prefix with its prompt and prefills only the rest
    (`prefill(..., start_pos)`), so an agent's next turn usually recomputes only its new observation. When
    another slot (running or free) holds a longer prefix, its K/V are copied (`copy_prefix`): a GRPO group's
    episodes compute their common prompt once. Decoding steps pass the slots in order, so consecutive slots
    are read from the cache as views. While at most speculate_max_batch sequences run, each step also feeds up
    to speculate_tokens n-gram draft tokens per sequence (`_step`, `_drafts`, speculation.py: prompt lookup in
    the sequence's context, else in the replies this engine finished; within DRAFT_ROWS fed tokens per step, yet
    at least 1 per sequence; speculate_max_batch 0 turns it off): the tokens of plain decoding (up to the
    rounding of the model's dtype) in fewer steps. Measured on CPU only (bench_generate.py). Raises ValueError
    for speculate_max_batch < 0 or speculate_tokens < 1.

    Log-probs: of each sampled token under the distribution it was sampled from (temperature, top-k, top-p
    applied, renormalised; see `decode.sample_tokens`); greedy (temperature 0) gives log_softmax(logits)[token].

    Model calls run in a worker thread (torch releases the GIL) so the event loop keeps serving containers.
    The KV cache lives on the model (decode.setup_cache), so use one TorchEngine per model at a time.
    """

    DRAFT_ROWS = 6  # budget of fed tokens (sequences x (1 + draft tokens)) per step, yet >= 1 draft per sequence
    REPLIES_INDEXED = 1 << 15  # tokens of finished replies kept in the n-gram index for drafts (~10 MB)

    def __init__(self, model, tokenizer, max_batch: int = 8, max_seq_len: int = 2048, seed: int = 0,
                 stop_ids: set[int] | None = None, speculate_max_batch: int = 4, speculate_tokens: int = 5):
        self.model = model.eval()
        self.device = next(model.parameters()).device
        if speculate_max_batch < 0:
            raise ValueError(f"TorchEngine: speculate_max_batch={speculate_max_batch}: must be >= 0")
        if speculate_tokens < 1:
            raise ValueError(f"TorchEngine: speculate_tokens={speculate_tokens}: must be >= 1")
        self.max_batch, self.max_seq_len, self.speculate_max_batch = max_batch, max_seq_len, speculate_max_batch
        self.speculate_tokens = speculate_tokens
        self.stop_ids = set(stop_ids) if stop_ids is not None else stop_ids_of(tokenizer)
        decode.setup_cache(self.model, max_batch, max_seq_len)
        self._rng = random.Random(seed)
        self._slot_tokens: list[list[int]] = [[] for _ in range(max_batch)]  # tokens whose K/V each slot holds
        self._slot_used = [0.0] * max_batch
        self._active: dict[int, _Request] = {}  # slot -> running request
        self._queue: asyncio.Queue | None = None
        self._loop_task: asyncio.Task | None = None
        self.generated_tokens = 0  # counters for the progress line and benchmarks
        self.prefilled_tokens = 0  # prompt tokens whose K/V were computed (not reused or copied)
        self.drafted_tokens = self.accepted_drafts = 0  # prompt-lookup draft tokens fed / kept (_step)
        self._replies = NgramIndex()  # the finished replies' tokens, a second source of drafts (_drafts)

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams,
                       messages: list[dict] | None = None) -> Completion:
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
                    await asyncio.to_thread(self._steps)
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
            n = self._shared_prefix(s, prompt)
            if n > best_len or (n == best_len and self._slot_used[s] < self._slot_used[best]):
                best, best_len = s, n
        return best, best_len

    def _shared_prefix(self, slot: int, prompt: list[int]) -> int:
        """Length of the common prefix of prompt and the tokens cached in slot, leaving >= 1 token to prefill."""
        cached, n = self._slot_tokens[slot], 0
        limit = min(len(cached), len(prompt) - 1)  # at least one token must be prefilled to get logits
        while n < limit and cached[n] == prompt[n]:
            n += 1
        return n

    @torch.no_grad()
    def _admit(self, pending: list[_Request]) -> None:
        logits, reqs = [], []
        for req in pending:
            slot, start = self._pick_slot(req.prompt)
            # Any other slot (running or free) holding a longer prefix lends its K/V: a GRPO group's episodes
            # share the whole first prompt and every episode shares the system prompt.
            donor, shared = max(((s, self._shared_prefix(s, req.prompt)) for s in range(self.max_batch) if s != slot),
                                key=lambda x: x[1], default=(-1, 0))
            if shared > start:
                decode.copy_prefix(self.model, donor, slot, shared)
                start = shared
            req.slot = slot
            self._active[slot] = req
            self._slot_used[slot] = time.monotonic()
            ids = torch.tensor(req.prompt[start:], dtype=torch.long, device=self.device)
            self.prefilled_tokens += ids.numel()
            logits.append(decode.prefill(self.model, ids, slot, start))
            self._slot_tokens[slot] = list(req.prompt)
            reqs.append(req)
        self._sample(torch.stack(logits), reqs)

    @torch.no_grad()
    def _step(self) -> None:
        """One decode step for every running sequence, each feeding [newest token, d1 .. dk] at positions p .. p + k:
        its draft tokens (`_drafts`), padded with the newest token (their K/V are overwritten later). The next token
        is sampled from the first logits with the request's next uniform, as without drafts; only while it equals
        the draft at its place, and the sequence goes on, is the token after it sampled from the next column: the
        tokens and log-probs of plain decoding in fewer steps, up to rounding (fp32 ~1e-5, bf16 more). On CPU fp32
        a step over up to DRAFT_ROWS fed rows costs 1.0-1.15x a step over one (decode._linear)."""
        reqs = sorted(self._active.values(), key=lambda r: r.slot)  # consecutive slots: cache read as views
        newest = [r.tokens[-1] for r in reqs]
        positions = [len(r.prompt) + len(r.tokens) - 1 for r in reqs]  # < max_seq_len - 1: unfinished
        drafts = self._drafts(reqs)
        width = min(max(map(len, drafts)), self.max_seq_len - 1 - max(positions))  # padded positions fit too
        drafts = [d[:width] for d in drafts]
        fed = [[t, *d] + [t] * (width - len(d)) for t, d in zip(newest, drafts)]  # [B, 1 + width]
        fed_positions = [range(p, p + width + 1) for p in positions]
        logits = decode.decode_tokens(self.model, torch.tensor(fed, device=self.device), [r.slot for r in reqs],
                                      torch.tensor(fed_positions, device=self.device))
        for r, t in zip(reqs, newest):  # the fed token's K/V is now cached
            self._slot_tokens[r.slot].append(t)
        self._sample(logits[:, 0], reqs)
        self.drafted_tokens += sum(map(len, drafts))
        rows = range(len(reqs))
        for col in range(width):
            rows = [i for i in rows if col < len(drafts[i]) and reqs[i].tokens[-1] == drafts[i][col]
                    and self._finish_reason(reqs[i]) is None and not reqs[i].future.done()]
            if not rows:
                break
            self.accepted_drafts += len(rows)
            for i in rows:  # the draft's K/V, written above, is now the slot's
                self._slot_tokens[reqs[i].slot].append(drafts[i][col])
            self._sample(logits[rows, col + 1], [reqs[i] for i in rows])

    def _drafts(self, reqs: list[_Request]) -> list[list[int]]:
        """Draft tokens per request: none above speculate_max_batch running, else up to speculate_tokens and
        DRAFT_ROWS // running - 1 (at least 1), and only as many as could be kept before max_tokens or max_seq_len
        ends the sequence; prompt lookup on the request's own context, else on the replies this engine finished."""
        if len(reqs) > self.speculate_max_batch:
            return [[] for _ in reqs]
        k = min(self.speculate_tokens, max(1, self.DRAFT_ROWS // len(reqs) - 1))
        drafts = []
        for r in reqs:
            # a draft token can only be kept if the sequence goes on after it: within max_tokens and max_seq_len
            left = min(r.sampling.max_tokens - len(r.tokens), self.max_seq_len - len(r.prompt) - len(r.tokens)) - 1
            n = min(k, left)
            drafts.append((r.lookup.draft(r.prompt, r.tokens, n) or self._replies.propose(r.lookup.context, n))
                          if n > 0 else [])
        return drafts

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

    def _steps(self, max_steps: int = 16) -> None:
        """Decode steps in the worker thread until a request finishes or is abandoned, a new one waits, or
        max_steps: one thread hand-off per several tokens (each costs a scheduler wake-up on a loaded CPU)."""
        for _ in range(max_steps):
            self._step()
            if not self._queue.empty() or any(r.future.done() or self._finish_reason(r) for r in self._active.values()):
                return

    def _finish_reason(self, r: _Request) -> str | None:
        if r.tokens and r.tokens[-1] in self.stop_ids:
            return "stop"
        if r.sampling.stop_check is not None and r.sampling.stop_check(r.tokens):
            return "stop"
        if len(r.tokens) >= r.sampling.max_tokens or len(r.prompt) + len(r.tokens) >= self.max_seq_len:
            return "length"
        return None

    def _finish_done(self) -> None:
        for slot, r in list(self._active.items()):
            if r.future.done():
                self._release(slot)
                continue
            reason = self._finish_reason(r)
            if reason:
                r.future.set_result(Completion(r.tokens, r.logprobs, reason))
                if len(self._replies.context) + len(r.tokens) > self.REPLIES_INDEXED:
                    self._replies = NgramIndex()  # bounded memory: start over
                self._replies.extend(r.tokens)
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
    "stop"), or cut after its first stop id (`stop_ids_of`) when it holds one, as a sampling engine stops
    there; then cut to max_tokens (finish "length"). Log-probs are a fixed -1.0 per token.

    replies: list of str (every episode plays the same script), or a callable (prompt_ids, turn) -> str.
    delay_s: seconds to wait before answering (holds episodes open, e.g. for the Ctrl-C test).
    Raises ValueError when the script has no reply for a turn.
    """

    def __init__(self, tokenizer, replies, delay_s: float = 0.0, max_seq_len: int = 1 << 30):
        self.tokenizer, self.replies, self.delay_s, self.max_seq_len = tokenizer, replies, delay_s, max_seq_len
        self.eot = end_of_turn(tokenizer)
        self.stop_ids = stop_ids_of(tokenizer)
        head = render_ids(tokenizer, BASE_CONVERSATION[:2])
        self._gen_prompt = render_ids(tokenizer, BASE_CONVERSATION[:2], add_generation_prompt=True)[len(head):]
        self.calls = 0

    def _turn(self, prompt_ids: list[int]) -> int:
        g, n = self._gen_prompt, len(self._gen_prompt)
        return sum(prompt_ids[i:i + n] == g for i in range(len(prompt_ids) - n + 1)) - 1

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams,
                       messages: list[dict] | None = None) -> Completion:
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
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        stop = next((k for k, t in enumerate(ids) if t in self.stop_ids), None)  # as a sampling engine would stop
        ids = ids[:stop + 1] if stop is not None else ids + [self.eot]
        n = min(sampling.max_tokens, self.max_seq_len - len(prompt_ids))
        reason = "stop" if len(ids) <= n else "length"
        ids = ids[:n]
        return Completion(ids, [-1.0] * len(ids), reason)


class VLLMEngine(Engine):
    """A colocated `vllm.LLM` in this process (torchrun with distributed_executor_backend="external_launcher"),
    for GPU training and evaluation; API checked against vllm 0.30.0 (see the README, "Running on GPUs").

    Tensor parallelism: with tensor_parallel_size tp > 1 vLLM joins consecutive ranks [g*tp, (g+1)*tp) of the
    torchrun world into one engine (vllm/distributed/parallel_state.py: `all_ranks.view(-1, tp)`); all its
    ranks must call `llm.generate` with the same prompts, sampling params and seeds, in the same order. Only
    the group leader (rank % tp == 0) runs agents: its `generate` batches requests, sends each batch to the
    other ranks of the group over `tp_group` (a gloo group, `tp_groups`), and every rank runs the same
    `llm.generate`. The other ranks call `follow()`, which replays the leader's batches until the leader's
    `sleep()` ends the rollout. Engine seed: seed + rank // tp (the same on the whole group).

    Batching: requests that arrive while a batch runs are sent together as the next `llm.generate` call
    (vLLM schedules them continuously inside it). The call runs in a worker thread, which first makes
    `device` its current CUDA device (a new thread's current device is cuda:0).
    Log-probs: `logprobs=0` returns the sampled token's log-prob; `logprobs_mode="processed_logprobs"` makes
    it the log-prob under the distribution it was sampled from (temperature, top-k, top-p applied,
    renormalised), the learner's convention. finish_reason "abort" or "error" raises RuntimeError.
    Weight sync (docs: vLLM sleep mode; NOTES.md): after a rollout `sleep()` (sleep_level 1: weights to host
    RAM; 2: weights discarded, since every step pushes them again; the KV cache is dropped either way);
    before the next rollout `load_weights(iterator)`: `wake_up(tags=["weights"])`, load in buckets of about
    `bucket_bytes` through the in-process model's `load_weights`, `reset_prefix_cache()` (must return True);
    then `wake_up()` restores the KV cache (`tags=["kv_cache"]`). Waking both before loading would hold old
    weights, new weights and the KV cache at once.
    """

    def __init__(self, model_path: str, max_seq_len: int = 8192, gpu_memory_utilization: float = 0.5,
                 dtype: str = "bfloat16", seed: int = 0, bucket_bytes: int = 1 << 30, stop_ids: set[int] | None = None,
                 enforce_eager: bool = False, tensor_parallel_size: int = 1, sleep_level: int = 2,
                 device: torch.device | None = None, tp_group=None):
        if vllm is None:
            raise ImportError("VLLMEngine needs vllm: pip install -r requirements-gpu.txt (on a CUDA machine)")
        if sleep_level not in (1, 2):
            raise ValueError(f"sleep_level = {sleep_level!r}: must be 1 or 2")
        rank = int(os.environ.get("RANK", "0"))
        self.tp, self.sleep_level, self.tp_group = tensor_parallel_size, sleep_level, tp_group
        self.leader_rank = rank - rank % self.tp
        self.is_leader = rank == self.leader_rank
        if self.tp > 1 and tp_group is None:
            raise ValueError("VLLMEngine: tensor_parallel_size > 1 needs tp_group (engines.tp_groups)")
        self.device = device or torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        self._set_device()
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # in-process engine (vLLM sets it too)
        self.llm = vllm.LLM(model=str(model_path), dtype=dtype, max_model_len=max_seq_len, seed=seed,
                            gpu_memory_utilization=gpu_memory_utilization, enable_sleep_mode=True,
                            enable_prefix_caching=True, distributed_executor_backend="external_launcher",
                            tensor_parallel_size=self.tp, logprobs_mode="processed_logprobs",
                            enforce_eager=enforce_eager)
        self.max_seq_len, self.bucket_bytes = max_seq_len, bucket_bytes
        tok = self.llm.get_tokenizer()
        self.stop_ids = set(stop_ids) if stop_ids is not None else stop_ids_of(tok)
        self._asleep: set[str] = set()  # tags currently asleep: "weights", "kv_cache"
        self._weights_discarded = False  # sleep level 2 freed the weights; only load_weights restores them
        self._queue: asyncio.Queue | None = None
        self._loop_task: asyncio.Task | None = None
        self._rng = random.Random(seed)

    def _set_device(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)

    def _model(self):
        """The in-process torch model: llm.llm_engine.model_executor.driver_worker.worker.model_runner.model
        (vllm 0.30.0, Model Runner V1 and V2; exists only with external_launcher or
        VLLM_ENABLE_V1_MULTIPROCESSING=0). Raises RuntimeError naming the path when it is laid out differently."""
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

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams,
                       messages: list[dict] | None = None) -> Completion:
        _check_prompt(self, prompt_ids, sampling)
        if not self.is_leader:
            raise RuntimeError("VLLMEngine.generate on a non-leader rank of a tensor-parallel group: call follow()")
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
                outs = await asyncio.to_thread(self._lead, self.requests_of(batch))
            except Exception as e:
                for _, _, fut in batch:
                    if not fut.done():
                        fut.set_exception(e)
                continue
            for (_, _, fut), out in zip(batch, outs):
                if not fut.done():
                    fut.set_result(out)

    def requests_of(self, batch) -> list[tuple[list[int], dict]]:
        """(prompt ids, vllm.SamplingParams keyword arguments) per queued request, with concrete seeds, so
        the batch replays identically on every rank of a tensor-parallel group (plain data: it is pickled)."""
        out = []
        for ids, s, _ in batch:
            seed = (s.seed if s.seed is not None else self._rng.getrandbits(31)) & 0x7FFFFFFF
            out.append((ids, dict(temperature=s.temperature, top_p=s.top_p, top_k=s.top_k if s.top_k > 0 else -1,
                                  max_tokens=min(s.max_tokens, self.max_seq_len - len(ids)), seed=seed)))
        return out

    def _lead(self, requests: list[tuple[list[int], dict]]) -> list[Completion]:
        if self.tp > 1:
            torch.distributed.broadcast_object_list([requests], src=self.leader_rank, group=self.tp_group)
        return self._run(requests)

    def follow(self) -> int:
        """On a non-leader rank of a tensor-parallel group: run the leader's batches until its sleep() ends
        the rollout. Returns the number of batches run. A no-op (0) on a leader or with tp == 1."""
        if self.is_leader or self.tp == 1:
            return 0
        self._set_device()
        n = 0
        while True:
            box = [None]
            torch.distributed.broadcast_object_list(box, src=self.leader_rank, group=self.tp_group)
            if box[0] is None:
                return n
            self._run(box[0])
            n += 1

    def _run(self, requests: list[tuple[list[int], dict]]) -> list[Completion]:
        self._set_device()  # this may be a fresh worker thread, whose current device is cuda:0
        prompts = [vllm.TokensPrompt(prompt_token_ids=ids) for ids, _ in requests]
        params = [vllm.SamplingParams(**kw, logprobs=0, stop_token_ids=sorted(self.stop_ids), skip_special_tokens=False,
                                      detokenize=False) for _, kw in requests]
        results = []
        for out in self.llm.generate(prompts, params, use_tqdm=False):
            o = out.outputs[0]
            if o.finish_reason not in ("stop", "length"):  # "abort", "error" (vllm/v1/engine/__init__.py)
                raise RuntimeError(f"vLLM request {out.request_id}: finish_reason = {o.finish_reason!r}")
            lps = [float(step[tid].logprob) for tid, step in zip(o.token_ids, o.logprobs)]
            results.append(Completion(list(o.token_ids), lps, o.finish_reason))
        return results

    def sleep(self) -> None:
        """End the rollout (a leader releases its followers first) and free the GPU memory: level 1 moves the
        weights to host RAM, level 2 discards them (the next load_weights must push every parameter)."""
        if self.tp > 1 and self.is_leader:
            torch.distributed.broadcast_object_list([None], src=self.leader_rank, group=self.tp_group)
        self.llm.sleep(level=self.sleep_level)
        self._asleep = {"weights", "kv_cache"}
        self._weights_discarded = self.sleep_level == 2

    def wake_up(self) -> None:
        """Wake the weights (if load_weights has not) and then the KV cache. Raises RuntimeError after a
        level-2 sleep without load_weights: the weights were discarded."""
        if self._weights_discarded:
            raise RuntimeError("VLLMEngine.wake_up: the weights were discarded (sleep level 2); load_weights first")
        if "weights" in self._asleep:
            self.llm.wake_up(tags=["weights"])
        if "kv_cache" in self._asleep:
            self.llm.wake_up(tags=["kv_cache"])
        self._asleep = set()

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Push (HF name, full tensor) pairs in ~bucket_bytes buckets (each tensor cast to the engine's dtype on
        its device; every rank of a tensor-parallel group pushes the full tensors, vLLM's weight loaders
        slice their shard). Wakes only the weights if asleep (call wake_up() afterwards for the KV cache);
        resets the prefix cache (its K/V came from old weights). Raises RuntimeError if, after a level-2
        sleep, some engine parameter was not loaded, or if the prefix cache could not be reset."""
        self._set_device()
        if "weights" in self._asleep:
            self.llm.wake_up(tags=["weights"])
            self._asleep.discard("weights")
        model = self._model()
        dtype = next(model.parameters()).dtype
        loaded: set[str] = set()
        bucket, size = [], 0
        for name, t in weights:
            t = t.to(device=self.device, dtype=dtype)
            bucket.append((name, t))
            size += t.numel() * t.element_size()
            if size >= self.bucket_bytes:
                loaded |= model.load_weights(bucket) or set()
                bucket, size = [], 0
        if bucket:
            loaded |= model.load_weights(bucket) or set()
        if self._weights_discarded:
            missing = sorted({n for n, _ in model.named_parameters()} - loaded)
            if missing:
                raise RuntimeError(f"VLLMEngine.load_weights after a level-2 sleep left parameters unloaded: {missing[:8]}")
            self._weights_discarded = False
        if not self.llm.reset_prefix_cache():
            raise RuntimeError("VLLMEngine: reset_prefix_cache() returned False (requests still hold KV blocks)")

    async def aclose(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            self._loop_task = None


def tp_groups(world_size: int, tp: int):
    """This rank's tensor-parallel group for VLLMEngine: consecutive ranks [g*tp, (g+1)*tp), the blocks vLLM
    forms, as a gloo group (the batches sent in it are pickled Python objects). Collective: every rank must
    call it (torch.distributed.new_group). Returns None when tp == 1. Raises ValueError if tp does not
    divide world_size."""
    if tp == 1:
        return None
    if world_size % tp:
        raise ValueError(f"tensor_parallel_size = {tp} must divide the world size {world_size}")
    rank, mine = torch.distributed.get_rank(), None
    for g in range(world_size // tp):
        group = torch.distributed.new_group(list(range(g * tp, (g + 1) * tp)), backend="gloo")
        if rank // tp == g:
            mine = group
    return mine


async def follow_async(engine: "VLLMEngine") -> None:
    """`engine.follow()` in a worker thread, for a non-leader rank of a tensor-parallel group. Returns None
    (the rank's trajectories come from its leader, `split_for_tp`). Not cancellable: the thread stays inside
    the group's collectives until the leader's sleep() ends the rollout, so a cancel waits for that."""
    fut = asyncio.ensure_future(asyncio.to_thread(engine.follow))
    while True:
        try:
            await asyncio.shield(fut)
            return None
        except asyncio.CancelledError:
            if fut.done():
                raise


def split_for_tp(trajectories: list | None, group_size: int, tp: int, tp_group) -> list:
    """Share a tensor-parallel leader's rollout with its group: the leader's trajectories (GRPO groups of
    group_size, in order) are broadcast, and rank j of the group keeps groups j, j+tp, ... so the learner's
    work is spread over every rank. Collective over tp_group; the identity when tp == 1.
    Followers pass None. Returns this rank's trajectories (None when the leader's rollout was cancelled)."""
    if tp == 1:
        return trajectories
    rank = torch.distributed.get_rank()
    box = [trajectories]
    torch.distributed.broadcast_object_list(box, src=rank - rank % tp, group=tp_group)
    if box[0] is None:
        return None
    groups = [box[0][i:i + group_size] for i in range(0, len(box[0]), group_size)]
    return [t for g in groups[rank % tp::tp] for t in g]




# ----------------------------------------------------------------------------- the policy's engine


def engine_kind(policy: PolicyConfig, device: torch.device) -> Literal["torch", "vllm"]:
    """policy.engine resolved on `device`: auto = vllm on CUDA when the vllm package is installed, else torch.
    Raises ConfigError when vllm is asked for without CUDA or the package (checked before any model loads)."""
    if policy.engine == "auto":
        return "vllm" if device.type == "cuda" and vllm is not None else "torch"
    if policy.engine == "vllm" and (device.type != "cuda" or vllm is None):
        raise ConfigError("policy.engine = 'vllm': needs CUDA and the vllm package (requirements-gpu.txt)")
    return policy.engine


def build_engine(policy: PolicyConfig, model_dir, tokenizer, device: torch.device, seed: int,
                 tp_group=None) -> Engine:
    """The policy's generation engine on `device` (train.py: one per rank; evaluate.py: one).

    vLLM (engine_kind "vllm"): a colocated vllm.LLM on model_dir, policy.max_seq_len context,
    policy.vllm_gpu_memory_utilization of the GPU, tensor-parallel over policy.vllm_tensor_parallel_size
    consecutive ranks (tp_group from `tp_groups`; seed must be equal within the group), sleeping at
    policy.vllm_sleep_level. torch: a full copy of the weights in policy.dtype on `device`, decoding up to
    policy.engine_max_batch sequences together. Raises ConfigError as engine_kind.
    """
    if engine_kind(policy, device) == "vllm":
        return VLLMEngine(str(model_dir), max_seq_len=policy.max_seq_len, dtype=policy.dtype, seed=seed,
                          gpu_memory_utilization=policy.vllm_gpu_memory_utilization,
                          tensor_parallel_size=policy.vllm_tensor_parallel_size, sleep_level=policy.vllm_sleep_level,
                          device=device, tp_group=tp_group)
    engine_model = weights.load_hf(model_dir, dtype=weights.DTYPES[policy.dtype], device=device)
    return TorchEngine(engine_model, tokenizer, max_batch=policy.engine_max_batch, max_seq_len=policy.max_seq_len,
                       seed=seed, speculate_max_batch=policy.engine_speculate_max_batch,
                       speculate_tokens=policy.engine_speculate_tokens)
