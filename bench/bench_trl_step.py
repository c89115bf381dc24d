"""One single-turn GRPO step, termrl against TRL's GRPOTrainer: same model, prompts, group size and token budget.

    python bench/bench_trl_step.py [--prompts 2] [--group-size 4] [--max-tokens 32] [--pairs 3] [--threads 1]

Both sides train the embedded SmolLM2-135M-Instruct (hf.weights.default_model_dir, fp32, activation
checkpointing on) in one process on the CPU with the same torch thread count. Each step: group_size completions
of each chat prompt (T 1.0, no top-k/top-p, at most --max-tokens tokens, ending at the end-of-turn token), the same
reward (`reward_of`: distinct words), group advantages, one AdamW step at lr 1e-6 on the clipped token-mean loss
(clip 0.2 / 0.28, no KL: termrl's `token_mean`, TRL's `dapo`), gradient clipping at 1.0.

- termrl (A): train.py's step on one gloo rank with preset cpu-smollm2's engine and learner settings (KV cache
  of engine_max_batch x max_seq_len 8 x 2048): weight sync into the TorchEngine (from the second step), wake-up,
  the engine's rollout of the groups (lockstep, prompt K/V shared), sleep, advantages, learner.update.update
  (FSDP2 policy, packed micro-batches).
- TRL (B): GRPOTrainer 1.16 (requirements-test.txt) in its own training loop (`trainer.train()`), generation by
  transformers' `generate` on the CPU (no vLLM), bf16 off (its default is bf16 autocast). termrl's step runs in a
  TrainerCallback's on_step_begin, so each pair is A then B, seconds apart under the same load.

Split: generation = the engine's rollout (A) / `_generate_single_turn` (B); update = the rest of the step (A: sync,
wake-up, sleep, advantages, forward, backward, optimizer; B: reward, advantages, loss, backward, optimizer). One
warm-up pair, then --pairs measured. Printed per pair and as medians with the min..max spread of the ratio: wall
seconds, CPU seconds (time.process_time, all threads: on a machine loaded past its cores wall time is mostly
waiting for a core, CPU time the steadier measure of the work) and generated tokens of both, the ratio TRL /
termrl of each; the load average (os.getloadavg) before and after.
"""

import argparse
import asyncio
import copy
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from transformers import TrainerCallback  # noqa: E402
from trl import GRPOConfig as TRLConfig  # noqa: E402
from trl import GRPOTrainer  # noqa: E402

import configs  # noqa: E402
import engines  # noqa: E402
import grpo  # noqa: E402
from engines.base import SamplingParams  # noqa: E402
from hf import weights  # noqa: E402
from learner import distributed, packing, sync  # noqa: E402
from learner.update import build_optimizer, update  # noqa: E402

PROMPTS = [
    "List three shell commands that show how much disk space is free.",
    "Explain in two sentences what a Dockerfile is.",
    "Write a bash one-liner that counts the lines of every .py file in a folder.",
    "What does `chmod 755 script.sh` do?",
]


def reward_of(text: str) -> float:
    """Distinct words of the completion, capped at 20, over 20: a reward in [0, 1] that varies inside a group."""
    return min(len(set(text.split())), 20) / 20.0


def trl_reward(completions, **_) -> list[float]:
    return [reward_of(c[-1]["content"] if isinstance(c, list) else c) for c in completions]


class TermrlStep:
    """termrl's single-turn GRPO step (train.py's order: sync, rollout, advantages, update)."""

    def __init__(self, model_dir: Path, args):
        cfg = copy.deepcopy(
            configs.PRESETS["cpu-smollm2"]
        )  # its engine cache and activation checkpointing
        cfg.policy.engine_max_batch = max(
            cfg.policy.engine_max_batch, args.prompts * args.group_size
        )
        cfg.grpo.group_size = args.group_size
        cfg.grpo.drop_zero_variance_groups = False  # train on every group, as TRL does
        cfg.rollout.temperature, cfg.rollout.top_p, cfg.rollout.top_k = 1.0, 1.0, 0
        cfg.steps = 100  # the lr schedule's length: constant over these few steps, as TRL's linear decay nearly is
        cfg.lr_schedule = "constant"
        self.cfg, self.args = cfg, args
        _, world, _, self.device = distributed.init_distributed()
        self.tokenizer = weights.load_tokenizer(model_dir)
        mesh = init_device_mesh(self.device.type, (world,))
        self.policy = distributed.load_policy(model_dir, cfg, mesh, self.device)
        self.optimizer, self.scheduler = build_optimizer(self.policy, cfg)
        self.engine = engines.build_engine(
            cfg.policy, model_dir, self.tokenizer, self.device, cfg.seed
        )
        self.loop = asyncio.new_event_loop()
        texts = [
            self.tokenizer.apply_chat_template(
                [{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False
            )
            for p in PROMPTS[: args.prompts]
        ]
        self.prompt_ids = [self.tokenizer(t, add_special_tokens=False).input_ids for t in texts]
        self.steps = 0

    async def _rollout(self, step: int):
        n = len(self.prompt_ids) * self.args.group_size
        self.engine.expect_episodes(n)

        async def one(i: int, ids: list[int]):
            sampling = SamplingParams(1.0, 1.0, 0, self.args.max_tokens, seed=step * 1000 + i)
            try:
                return await self.engine.generate(ids, sampling)
            finally:
                self.engine.episode_done()

        jobs = [
            one(i, ids)
            for i, ids in enumerate(p for p in self.prompt_ids for _ in range(self.args.group_size))
        ]
        return await asyncio.gather(*jobs)

    def step(self) -> dict:
        t0, c0 = time.perf_counter(), time.process_time()
        if self.steps > 0:
            sync.sync_weights(self.policy, self.engine)
        self.engine.wake_up()
        t_gen, c_gen = time.perf_counter(), time.process_time()
        completions = self.loop.run_until_complete(self._rollout(self.steps))
        gen = time.perf_counter() - t_gen
        gen_cpu = time.process_time() - c_gen
        self.engine.sleep()
        rewards = torch.tensor(
            [
                reward_of(self.tokenizer.decode(c.token_ids, skip_special_tokens=True))
                for c in completions
            ]
        )
        advantages = grpo.compute_advantages(rewards, self.args.group_size).tolist()
        samples = []
        prompts = [p for p in self.prompt_ids for _ in range(self.args.group_size)]
        for ids, c, a in zip(prompts, completions, advantages):
            samples.append(
                packing.Sample(
                    list(ids) + c.token_ids,
                    [0] * len(ids) + [1] * len(c.token_ids),
                    [0.0] * len(ids) + list(c.logprobs),
                    a,
                )
            )
        update(self.policy, self.optimizer, self.scheduler, samples, self.cfg, self.device)
        self.steps += 1
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        tokens = sum(len(c.token_ids) for c in completions)
        return dict(wall=wall, gen=gen, update=wall - gen, cpu=cpu, gen_cpu=gen_cpu, tokens=tokens)

    def close(self):
        self.loop.run_until_complete(self.engine.aclose())
        self.loop.close()
        torch.distributed.destroy_process_group()


class Interleave(TrainerCallback):
    """Runs termrl's step before each TRL step and times both; TRL's generation is timed by `timed_generation`."""

    def __init__(self, termrl: TermrlStep):
        self.termrl = termrl
        self.pairs: list[tuple[dict, dict]] = []
        self.gen: list[float] = []
        self.gen_cpu: list[float] = []
        self.tokens: list[int] = []
        self._a: dict | None = None
        self._t0 = self._c0 = 0.0

    def on_step_begin(self, args, state, control, **kwargs):
        self._a = self.termrl.step()
        self.gen.clear()
        self.gen_cpu.clear()
        self.tokens.clear()
        self._t0, self._c0 = time.perf_counter(), time.process_time()

    def on_step_end(self, args, state, control, **kwargs):
        wall, cpu = time.perf_counter() - self._t0, time.process_time() - self._c0
        gen = sum(self.gen)
        b = dict(
            wall=wall,
            gen=gen,
            update=wall - gen,
            cpu=cpu,
            gen_cpu=sum(self.gen_cpu),
            tokens=sum(self.tokens),
        )
        self.pairs.append((self._a, b))
        kind = "warm-up" if len(self.pairs) == 1 else "pair"
        print(
            f"{kind} {len(self.pairs) - 1}: termrl {self._a['wall']:.2f} s "
            f"(gen {self._a['gen']:.2f}, update {self._a['update']:.2f}, {self._a['tokens']} tokens)  "
            f"TRL {wall:.2f} s (gen {gen:.2f}, update {b['update']:.2f}, {b['tokens']} tokens)  "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )


def timed_generation(trainer: GRPOTrainer, cb: Interleave) -> None:
    """Wrap the trainer's generation call (transformers generate on CPU) to add its seconds and tokens to cb."""
    inner = trainer._generate_single_turn

    def timed(*a, **k):
        t0, c0 = time.perf_counter(), time.process_time()
        out = inner(*a, **k)
        cb.gen.append(time.perf_counter() - t0)
        cb.gen_cpu.append(time.process_time() - c0)
        completion_ids = out[
            0
        ]  # (completion_ids, logprobs): ids cut after the first end-of-turn token
        cb.tokens.append(sum(len(c) for c in completion_ids))
        return out

    trainer._generate_single_turn = timed


def build_trl(model_dir: Path, out_dir: str, args) -> GRPOTrainer:
    n = args.prompts * args.group_size
    config = TRLConfig(
        output_dir=out_dir,
        per_device_train_batch_size=n,  # one optimizer step per generation of every prompt's group
        num_generations=args.group_size,
        max_completion_length=args.max_tokens,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        learning_rate=1e-6,
        lr_scheduler_type="constant",
        max_grad_norm=1.0,
        bf16=False,  # TRL's default is bf16 autocast; termrl's CPU learner computes in fp32
        gradient_checkpointing=True,  # TRL's default, and the preset's activation_checkpointing
        loss_type="dapo",
        epsilon=0.2,
        epsilon_high=0.28,
        beta=0.0,
        max_steps=1 + args.pairs,
        shuffle_dataset=False,
        report_to="none",
        logging_steps=1000,
        save_strategy="no",
        use_cpu=True,
        seed=0,
    )
    prompts = Dataset.from_dict(
        {"prompt": [[{"role": "user", "content": p}] for p in PROMPTS[: args.prompts]]}
    )
    return GRPOTrainer(
        model=str(model_dir), reward_funcs=trl_reward, args=config, train_dataset=prompts
    )


def summary(pairs: list[tuple[dict, dict]]) -> None:
    med = lambda xs: statistics.median(xs)
    for p in pairs:
        for side in p:
            side["update_cpu"] = side["cpu"] - side["gen_cpu"]
    rows = [
        ("step", "wall"),
        ("generation", "gen"),
        ("update", "update"),
        ("step CPU", "cpu"),
        ("gen. CPU", "gen_cpu"),
        ("update CPU", "update_cpu"),
    ]
    print(f"\nmedian over {len(pairs)} pairs (min..max)")
    print(f"{'part':12s} {'termrl s':>10s} {'TRL s':>10s} {'TRL / termrl':>14s}  spread")
    for label, key in rows:
        a = [p[0][key] for p in pairs]
        b = [p[1][key] for p in pairs]
        r = [y / x for x, y in zip(a, b)]
        print(
            f"{label:12s} {med(a):10.2f} {med(b):10.2f} {med(r):13.2f}x  {min(r):.2f}..{max(r):.2f}"
        )
    ta = [p[0]["tokens"] for p in pairs]
    tb = [p[1]["tokens"] for p in pairs]
    print(f"generated tokens per step: termrl {ta}, TRL {tb}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--prompts", type=int, default=2, help="chat prompts per step (at most 4)")
    ap.add_argument("--group-size", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=32, help="most tokens per completion")
    ap.add_argument("--pairs", type=int, default=3, help="measured pairs after one warm-up pair")
    ap.add_argument("--threads", type=int, default=1, help="torch threads, both sides")
    args = ap.parse_args()
    if not 1 <= args.prompts <= len(PROMPTS):
        ap.error(f"--prompts: expected 1..{len(PROMPTS)}, got {args.prompts}")
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    load_before = os.getloadavg()
    model_dir = weights.default_model_dir()
    with tempfile.TemporaryDirectory(prefix="bench-trl-") as out_dir:
        trainer = build_trl(model_dir, out_dir, args)
        termrl = TermrlStep(model_dir, args)
        cb = Interleave(termrl)
        timed_generation(trainer, cb)
        trainer.add_callback(cb)
        print(
            f"bench_trl_step: {args.prompts} prompts x {args.group_size}, <= {args.max_tokens} tokens each, "
            f"model {model_dir}, torch threads {torch.get_num_threads()}, 1 warm-up pair + {args.pairs}"
        )
        try:
            trainer.train()
        finally:
            termrl.close()
    summary(cb.pairs[1:])
    load_after = os.getloadavg()
    print(
        f"load average (1, 5, 15 min): before {load_before}, after {load_after} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
