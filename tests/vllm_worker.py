"""A torchrun worker for tests/test_vllm.py: VLLMEngine at tensor_parallel_size TP on the CPU ranks of this
world (gloo), driven as train.py drives it: the leader's agents generate concurrently (one of them times
out mid-generation) while the follower replays the leader's steps; then sleep, a weight sync (every 2-D
weight x 0.5) and a second rollout. Rank 0 writes the leader's completions to OUT (JSON).

Usage: python -m torch.distributed.run --standalone --nproc_per_node=N tests/vllm_worker.py MODEL TP OUT
"""

import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from engines import SamplingParams, VLLMEngine, follow_async, tp_groups  # noqa: E402
from hf import weights  # noqa: E402

PROMPTS = [
    [504, 3575, 282, 4649, 314],
    [1604, 3987, 46477, 24, 94, 727],
    [65, 42, 1812, 314, 216, 33],
]


async def agents(engine: VLLMEngine) -> dict:
    greedy = [
        engine.generate(p, SamplingParams(temperature=0.0, max_tokens=8 + 4 * i))
        for i, p in enumerate(PROMPTS)
    ]
    sampled = [
        engine.generate(
            p, SamplingParams(temperature=0.8, top_k=40, top_p=0.9, max_tokens=10, seed=7 + i)
        )
        for i, p in enumerate(PROMPTS)
    ]

    async def timed_out():  # an episode whose turn times out: its request is aborted mid-generation
        try:
            await asyncio.wait_for(
                engine.generate(PROMPTS[0], SamplingParams(temperature=1.0, max_tokens=900)),
                timeout=0.5,
            )
        except TimeoutError:
            return "timeout"
        return "finished"

    out = await asyncio.gather(*greedy, *sampled, timed_out())
    n = len(PROMPTS)
    return dict(
        greedy=[(c.token_ids, c.logprobs) for c in out[:n]],
        sampled=[(c.token_ids, c.logprobs) for c in out[n : 2 * n]],
        timed_out=out[-1],
    )


def rollout(engine: VLLMEngine, rank: int, tp: int):
    engine.wake_up()
    res = asyncio.run(follow_async(engine) if rank % tp else agents(engine))
    engine.sleep()  # the leader's sleep ends its follower's replay
    return res


def main() -> None:
    model, tp, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    group = tp_groups(world, tp)
    engine = VLLMEngine(
        model,
        max_seq_len=1024,
        dtype="float32",
        seed=0,
        device=torch.device("cpu"),
        kv_cache_bytes=64 << 20,
        tensor_parallel_size=tp,
        tp_group=group,
        sleep_level=1,
    )
    first = rollout(engine, rank, tp)
    halved = [
        (n, p.detach() * 0.5 if p.ndim == 2 else p.detach())
        for n, p in weights.load_hf(model, dtype=torch.float32).named_parameters()
    ]
    engine.load_weights(halved)
    second = rollout(engine, rank, tp)
    if rank == 0:
        with open(out, "w") as f:
            json.dump(
                dict(first=first, second=second, aborted=engine.aborted, steps=engine.steps), f
            )
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
