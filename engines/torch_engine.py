"""TorchEngine: continuous batching on decode.py's KV cache (gpt-fast style), CPU or GPU."""

import asyncio
import logging
import random
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import torch

from engines import decode
from engines.base import Completion, Engine, SamplingParams, check_prompt
from engines.decode import sample_tokens
from engines.speculation import NgramIndex, PromptLookup
from hf.chat import stop_ids_of

log = logging.getLogger("termrl.engines")


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
    for speculate_max_batch < 0 or speculate_tokens < 1. Speculation is an option of this engine only: the
    decode functions know nothing of drafts (they just take T tokens per row).

    drop_weights_on_sleep: sleep() frees the weights as well (train.py pushes them every step).

    lockstep (`policy.engine_lockstep`, the default): while a rollout announced its episodes
    (`expect_episodes`; rollout.run_episodes does), requests are batched in rounds: a round starts once every
    episode still acting has asked (or `episode_done`), and its requests are admitted in a fixed order (their
    sampling seed, then prompt), later ones waiting for the next round. What each sequence is batched with,
    the slot and cached prefix it gets and the n-gram drafts it is fed then follow from the requests alone,
    not from when containers answered; with the per-request seeds the same rollout gives the same tokens and
    log-probs bitwise (a resumed run replays the uninterrupted one), as long as every episode of the rollout
    holds a concurrency slot from the start (rollout.max_concurrent_episodes >= its episodes, as in a
    training step; rollout.run_episodes announces each episode as it takes a slot, and when a slot frees
    depends on the verifier's time). The n-gram index of finished replies and
    the slots' use order start empty with each rollout. Costs the wait for the slowest agent command of each
    turn (BENCHMARKS.md, "Lockstep batching"). Off, or without expect_episodes: continuous batching, each
    request admitted as soon as a slot is free (the numerics then depend on the batch, ~1e-5 in log-probs).

    fast_cpu (`policy.engine_fast_cpu`): on a CPU model, step through engines/cpu_fast.py (fused projections,
    oneDNN-packed weights) instead of decode.py's plain forward; same greedy tokens.

    Log-probs: of each sampled token under the distribution it was sampled from (temperature, top-k, top-p
    applied, renormalised; see `decode.sample_tokens`); greedy (temperature 0) gives log_softmax(logits)[token].

    Model calls run in a worker thread (torch releases the GIL) so the event loop keeps serving containers.
    A call in that thread holds `_compute`; sleep, wake_up and load_weights take it first, so they wait for
    the one in flight: a stop signal cancels the rollout's requests, yet the thread finishes its decode step
    after the event loop moved on, and sleep() freeing the cache or the weights under it crashed a training
    rank (SIGSEGV: the overlapped run's SIGTERM test, CI of 2026-12-05).
    The KV cache lives on the model (decode.setup_cache), so use one TorchEngine per model at a time.
    """

    DRAFT_ROWS = 6  # budget of fed tokens (sequences x (1 + draft tokens)) per step, yet >= 1 draft per sequence
    REPLIES_INDEXED = (
        1 << 15
    )  # tokens of finished replies kept in the n-gram index for drafts (~10 MB)

    # load_weights copies each named tensor into its parameter and leaves the others as they are
    partial_load = True

    def __init__(
        self,
        model,
        tokenizer,
        max_batch: int = 8,
        max_seq_len: int = 2048,
        seed: int = 0,
        stop_ids: set[int] | None = None,
        speculate_max_batch: int = 4,
        speculate_tokens: int = 5,
        fast_cpu: bool = True,
        drop_weights_on_sleep: bool = False,
        lockstep: bool = True,
    ):
        self.model = model.eval()
        self.device = next(model.parameters()).device
        if speculate_max_batch < 0:
            raise ValueError(
                f"TorchEngine: speculate_max_batch={speculate_max_batch}: must be >= 0"
            )
        if speculate_tokens < 1:
            raise ValueError(f"TorchEngine: speculate_tokens={speculate_tokens}: must be >= 1")
        self.max_batch, self.max_seq_len, self.speculate_max_batch = (
            max_batch,
            max_seq_len,
            speculate_max_batch,
        )
        self.speculate_tokens = speculate_tokens
        self.stop_ids = set(stop_ids) if stop_ids is not None else stop_ids_of(tokenizer)
        self.fast_cpu = fast_cpu
        self.drop_weights_on_sleep = drop_weights_on_sleep
        self._dropped: dict[int, torch.Size] = {}  # id(parameter) -> shape, while dropped
        decode.setup_cache(self.model, max_batch, max_seq_len, fast=fast_cpu)
        self._rng = random.Random(seed)
        self._slot_tokens: list[list[int]] = [
            [] for _ in range(max_batch)
        ]  # tokens whose K/V each slot holds
        # when each slot was last taken or freed (a counter of admissions and releases: LRU ties)
        self._slot_used = [0] * max_batch
        self._tick = 0
        self.lockstep = lockstep
        # episodes announced by expect_episodes that may still call generate; None: no rollout
        # announced, continuous batching
        self._live: int | None = None
        # lockstep: requests for the next round, and the current round's not yet admitted
        self._waiting: list[_Request] = []
        self._round: list[_Request] = []
        self._active: dict[int, _Request] = {}  # slot -> running request
        self._queue: asyncio.Queue | None = None
        self._loop_task: asyncio.Task | None = None
        # held by the worker thread's model call (_in_worker); sleep, wake_up and load_weights wait on it
        self._compute = threading.Lock()
        self.generated_tokens = 0  # counters for the progress line and benchmarks
        self.prefilled_tokens = 0  # prompt tokens whose K/V were computed (not reused or copied)
        self.drafted_tokens = self.accepted_drafts = (
            0  # prompt-lookup draft tokens fed / kept (_step)
        )
        self._replies = (
            NgramIndex()
        )  # the finished replies' tokens, a second source of drafts (_drafts)

    async def generate(
        self, prompt_ids: list[int], sampling: SamplingParams, messages: list[dict] | None = None
    ) -> Completion:
        check_prompt(self, prompt_ids, sampling)
        self.wake_up()  # a no-op unless sleep() freed the KV cache
        if self._loop_task is None or self._loop_task.done():
            self._queue = asyncio.Queue()
            self._loop_task = asyncio.get_running_loop().create_task(self._decode_loop())
        seed = sampling.seed if sampling.seed is not None else self._rng.getrandbits(63)
        req = _Request(
            list(prompt_ids),
            sampling,
            asyncio.get_running_loop().create_future(),
            torch.Generator().manual_seed(seed),
        )
        await self._queue.put(req)
        return await req.future

    def expect_episodes(self, episodes: int, rollout_start: bool = True) -> None:
        """Lockstep (when on): `episodes` more episodes will call generate until each calls
        episode_done; rounds wait for every one still acting. rollout_start with none acting: a
        new rollout, with an empty n-gram index of replies and fresh slot use order, as after a
        resume (an episode announced later in the rollout, as a concurrency slot frees, keeps
        them even when none acts at that moment)."""
        if not self.lockstep or episodes < 1:
            return
        if rollout_start and not self._live:
            self._replies = NgramIndex()
            self._slot_used = [0] * self.max_batch
            self._tick = 0
        self._live = (self._live or 0) + episodes

    def episode_done(self) -> None:
        """Lockstep: one episode will ask no more; the round it was awaited for may start."""
        if self._live is None:
            return
        self._live -= 1
        if self._live <= 0:
            self._live = None
        if self._queue is not None and self._loop_task is not None and not self._loop_task.done():
            # wakes the decode loop waiting for a round
            self._queue.put_nowait(None)

    def _drain(self) -> list[_Request]:
        """The requests in the queue (None: a wake-up from episode_done), without waiting."""
        out = []
        while not self._queue.empty():
            r = self._queue.get_nowait()
            if r is not None:
                out.append(r)
        return out

    async def _round_pending(self) -> list[_Request]:
        """Lockstep: the requests to admit now. With nothing running and the round admitted, the next
        round starts once every episode still acting has a request waiting (in seed, then prompt,
        order); requests that come while a round runs wait for the next."""
        self._waiting += self._drain()
        if not self._active and not self._round:
            while self._live is not None:
                self._waiting = [r for r in self._waiting if not r.future.done()]
                if len(self._waiting) >= self._live:
                    break
                r = await self._queue.get()
                self._waiting += [r] if r is not None else []
                self._waiting += self._drain()
            self._round = sorted(
                (r for r in self._waiting if not r.future.done()),
                key=lambda r: (r.sampling.seed is None, r.sampling.seed or 0, r.prompt),
            )
            self._waiting = []
        free = self.max_batch - len(self._active)
        pending, self._round = self._round[:free], self._round[free:]
        return pending

    async def _decode_loop(self) -> None:
        try:
            while True:
                if self._live is not None or self._round or self._waiting:
                    pending = await self._round_pending()
                elif not self._active:
                    pending = [await self._queue.get()]
                else:
                    pending = []
                while (
                    self._live is None
                    and not self._round
                    and not self._queue.empty()
                    and len(self._active) + len(pending) < self.max_batch
                ):
                    pending.append(self._queue.get_nowait())
                # None: episode_done's wake-up; done: the agent gave up (timeout/cancel)
                pending = [r for r in pending if r is not None and not r.future.done()]
                if pending:
                    await asyncio.to_thread(self._in_worker, self._admit, pending)
                    self._finish_done()
                for slot in [s for s, r in self._active.items() if r.future.done()]:
                    self._release(slot)
                if self._active:
                    await asyncio.to_thread(self._in_worker, self._steps)
                    self._finish_done()
        except (
            Exception
        ) as e:  # fail every waiting request with the error; the next generate() restarts the loop
            for r in list(self._active.values()):
                if not r.future.done():
                    r.future.set_exception(e)
            self._active.clear()
            self._slot_tokens = [[] for _ in range(self.max_batch)]  # a slot may be half-written
            waiting = self._waiting + self._round + (self._drain() if self._queue else [])
            self._waiting, self._round = [], []
            for r in waiting:
                if not r.future.done():
                    r.future.set_exception(e)

    def _in_worker(self, call, *args) -> None:
        """Run a model call (_admit, _steps) in the worker thread holding `_compute`."""
        with self._compute:
            call(*args)

    @property
    def computing(self) -> bool:
        """True while the worker thread runs a model call (also one whose requests were all cancelled)."""
        return self._compute.locked()

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
        limit = min(
            len(cached), len(prompt) - 1
        )  # at least one token must be prefilled to get logits
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
            donor, shared = max(
                (
                    (s, self._shared_prefix(s, req.prompt))
                    for s in range(self.max_batch)
                    if s != slot
                ),
                key=lambda x: x[1],
                default=(-1, 0),
            )
            if shared > start:
                decode.copy_prefix(self.model, donor, slot, shared)
                start = shared
            req.slot = slot
            self._active[slot] = req
            self._tick += 1
            self._slot_used[slot] = self._tick
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
        a step over up to DRAFT_ROWS fed rows costs 1.0-1.15x a step over one (cpu_fast._linear)."""
        reqs = sorted(
            self._active.values(), key=lambda r: r.slot
        )  # consecutive slots: cache read as views
        newest = [r.tokens[-1] for r in reqs]
        positions = [
            len(r.prompt) + len(r.tokens) - 1 for r in reqs
        ]  # < max_seq_len - 1: unfinished
        drafts = self._drafts(reqs)
        width = min(
            max(map(len, drafts)), self.max_seq_len - 1 - max(positions)
        )  # padded positions fit too
        drafts = [d[:width] for d in drafts]
        fed = [[t, *d] + [t] * (width - len(d)) for t, d in zip(newest, drafts)]  # [B, 1 + width]
        fed_positions = [range(p, p + width + 1) for p in positions]
        logits = decode.decode_tokens(
            self.model,
            torch.tensor(fed, device=self.device),
            [r.slot for r in reqs],
            torch.tensor(fed_positions, device=self.device),
        )
        for r, t in zip(reqs, newest):  # the fed token's K/V is now cached
            self._slot_tokens[r.slot].append(t)
        self._sample(logits[:, 0], reqs)
        self.drafted_tokens += sum(map(len, drafts))
        rows = range(len(reqs))
        for col in range(width):
            rows = [
                i
                for i in rows
                if col < len(drafts[i])
                and reqs[i].tokens[-1] == drafts[i][col]
                and self._finish_reason(reqs[i]) is None
                and not reqs[i].future.done()
            ]
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
            left = (
                min(
                    r.sampling.max_tokens - len(r.tokens),
                    self.max_seq_len - len(r.prompt) - len(r.tokens),
                )
                - 1
            )
            n = min(k, left)
            drafts.append(
                (
                    r.lookup.draft(r.prompt, r.tokens, n)
                    or self._replies.propose(r.lookup.context, n)
                )
                if n > 0
                else []
            )
        return drafts

    def _sample(self, logits: torch.Tensor, reqs: list[_Request]) -> None:
        dev = logits.device
        temperature = torch.tensor(
            [r.sampling.temperature for r in reqs], dtype=torch.float32, device=dev
        )
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
            # lockstep: a request that comes now waits for the next round anyway
            arrived = self._live is None and not self._queue.empty()
            if arrived or any(
                r.future.done() or self._finish_reason(r) for r in self._active.values()
            ):
                return

    def _finish_reason(self, r: _Request) -> str | None:
        if r.tokens and r.tokens[-1] in self.stop_ids:
            return "stop"
        if r.sampling.stop_check is not None and r.sampling.stop_check(r.tokens):
            return "stop"
        if (
            len(r.tokens) >= r.sampling.max_tokens
            or len(r.prompt) + len(r.tokens) >= self.max_seq_len
        ):
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
        self._tick += 1
        self._slot_used[slot] = self._tick

    def sleep(self) -> None:
        """Between rollouts (train.py): free the KV cache and the packed weight copies
        (decode.free_cache; 0.75 + 0.75 GB for SmolLM2-135M at 8 x 2048 tokens), and with
        drop_weights_on_sleep the weights too (0.54 GB; vLLM's sleep level 2): the next
        load_weights brings them back. The update then holds none of it; the cached K/V would be
        stale after the next load_weights anyway. Kept while a request still runs. Waits for the
        worker thread's model call in flight (a cancelled rollout's last decode step: `_compute`)."""
        with self._compute:
            if any(not r.future.done() for r in self._active.values()):
                return
            self._active.clear()
            decode.free_cache(self.model)
            self._slot_tokens = [[] for _ in range(self.max_batch)]
            if self.drop_weights_on_sleep and not self._dropped:  # a second sleep keeps the shapes
                for block in self.model.model.layers:  # the fused tensors the linears are views of
                    block.self_attn.qkv_weight = block.mlp.gate_up_weight = None
                for p in self.model.parameters():  # a tied lm_head is embed_tokens' parameter
                    self._dropped[id(p)] = p.shape
                    p.data = torch.empty(0, dtype=p.dtype, device=p.device)

    @property
    def weights_dropped(self) -> bool:
        return bool(self._dropped)

    def wake_up(self) -> None:
        """Allocate the KV cache again after sleep (decode.setup_cache); packed copies are built on
        the first decode step. Raises RuntimeError while sleep dropped the weights and no
        load_weights brought them back."""
        if self._dropped:
            raise RuntimeError("TorchEngine: weights dropped by sleep(); call load_weights first")
        if getattr(self.model, "cache_shape", None) is None:
            # only here, not on every generate's call: a step in flight would stall the event loop
            with self._compute:
                decode.setup_cache(
                    self.model, self.max_batch, self.max_seq_len, fast=self.fast_cpu
                )

    def held_parameters(self) -> list[tuple[str, torch.Tensor]]:
        """The weights the engine's model holds now, (name, tensor) pairs (a shared one once)."""
        return [(name, p.detach()) for name, p in self.model.named_parameters()]

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Copy (HF name, tensor) pairs into the model's parameters, then forget every cached prefix (its K/V
        came from the old weights). Raises KeyError for an unknown name, ValueError for a shape mismatch,
        RuntimeError while requests are running. Waits for the worker thread's model call in flight."""
        with self._compute:
            if self._active:
                raise RuntimeError("TorchEngine.load_weights: requests are still running")
            params = dict(self.model.named_parameters())
            with torch.no_grad():
                for name, t in weights:
                    if name not in params:
                        raise KeyError(f"load_weights: unknown parameter {name!r}")
                    if id(params[name]) in self._dropped:  # sleep() dropped it: allocate again
                        shape = self._dropped.pop(id(params[name]))
                        params[name].data = t.new_empty(shape, dtype=params[name].dtype)
                    if params[name].shape != t.shape:
                        raise ValueError(
                            f"load_weights: {name} has shape {tuple(t.shape)}, expected {tuple(params[name].shape)}"
                        )
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
