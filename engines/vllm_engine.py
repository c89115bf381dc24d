"""VLLMEngine: a colocated vllm.LLM in this process, its tensor-parallel groups and followers."""

import asyncio
import logging
import os
import random
from typing import Iterable

import torch

from engines.base import Completion, Engine, SamplingParams, check_prompt
from hf.chat import stop_ids_of

try:  # GPU-only engine
    import vllm
except ImportError:
    vllm = None

log = logging.getLogger("termrl.engines")


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
        check_prompt(self, prompt_ids, sampling)
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


def split_for_tp(groups: list | None, tp: int, tp_group) -> list | None:
    """Share a tensor-parallel leader's rollout with its group: the leader's groups (rollout.Group,
    in order) are broadcast, and rank j of the group keeps groups j, j+tp, ... so the learner's
    work is spread over every rank. Collective over tp_group; the identity when tp == 1.
    Followers pass None. Returns this rank's groups (None when the leader's rollout was
    cancelled)."""
    if tp == 1:
        return groups
    rank = torch.distributed.get_rank()
    box = [groups]
    torch.distributed.broadcast_object_list(box, src=rank - rank % tp, group=tp_group)
    return None if box[0] is None else box[0][rank % tp::tp]
