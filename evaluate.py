"""The evaluation command: k episodes per task, resolved rate, pass@1 and unbiased pass@k, summaries.

    python evaluate.py --model DIR --tasks tasks/data --k 4 [--engine torch|vllm|openai] [--oracle] [--out DIR]
"""


import asyncio
import dataclasses
import json
import math
import os
import signal
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import torch
import tyro

import reward as reward_lib
import sandbox as sandbox_lib
import weights
from configs import PRESETS, RewardConfig, RolloutConfig, SandboxConfig, cache_dir
from engines import Engine, OpenAIEngine, ScriptedEngine, TorchEngine, VLLMEngine
from rollout import Trajectory, run_episodes
from tasks import load_tasks


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
    cols = ["episodes", "errors", "resolved_rate", "pass@1"] + ([f"pass@{k}"] if k > 1 else []) + ["mean_reward"]
    fmt = lambda v: "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))  # noqa: E731
    rows = [("overall", summary["overall"])]
    rows += [(f"difficulty={g}", s) for g, s in summary["by_difficulty"].items()]
    rows += [(f"category={g}", s) for g, s in summary["by_category"].items()]
    width = max(len(r[0]) for r in rows) + 2
    lines = ["".ljust(width) + "".join(c.rjust(14) for c in cols)]
    lines += [name.ljust(width) + "".join(fmt(s[c]).rjust(14) for c in cols) for name, s in rows]
    return "\n".join(lines)


def failed_run_line(summary: dict) -> str | None:
    """The one line explaining why a run failed as a whole (every episode errored, so no rate means anything),
    or None when at least one episode was scored. Shared by model and --oracle runs: the CLI exits 1 on it."""
    o = summary["overall"]
    if o["episodes"] == 0 or o["errors"] < o["episodes"]:
        return None
    top = summary.get("top_error") or "unknown"
    return f"error: all {o['episodes']} episodes errored, nothing was scored; most common error: {top}"


TRAINING_USE = {True: "token-exact: usable for evaluation and training",
                False: "not token-exact (chat mode re-tokenises the reply text): usable for evaluation, not for training"}


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
    """'default' -> weights.default_model_dir(); 'tiny-random-qwen3' -> a cached tiny random model; else a folder."""

    if name == "default":
        return weights.default_model_dir()
    if name == "tiny-random-qwen3":
        root = cache_dir() / "tiny-random-qwen3"
        if not (root / "config.json").is_file():
            weights.save_tiny_random(root)
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

        dtype = torch.bfloat16 if cfg.dtype == "bfloat16" else torch.float32
        m = weights.load_hf(model_dir, dtype=dtype, device=cfg.device)
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
    tokenizer = weights.load_tokenizer(model_dir)
    engine = build_engine(cfg, model_dir, tokenizer)
    if isinstance(engine, OpenAIEngine):  # once, before any episode: a server that cannot serve the mode is one line
        try:
            print(await engine.probe(), file=sys.stderr)
        except BaseException:
            await engine.aclose()
            raise
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
    errors = Counter(t.error for t in trajs if t.error).most_common(1)
    summary["top_error"] = errors[0][0] if errors else None
    summary["token_exact"] = all(t.exact for t in trajs)  # False: chat-mode trajectories, evaluation only
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(format_summary(summary, cfg.k))
    print(f"stop reasons: {summary['stop_reasons']}")
    if not cfg.oracle:
        print(f"trajectories: {TRAINING_USE[summary['token_exact']]}")
    print(f"wrote {out / 'trajectories.jsonl'} and {out / 'summary.json'}")
    return summary


def main(argv: list[str] | None = None) -> int:
    """CLI entry: parse EvalConfig with tyro, reap leftovers of dead runs, evaluate; on SIGINT/SIGTERM the
    episodes are cancelled, their sandboxes closed, and this run's containers reaped before exiting 130."""


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
    summary = None
    try:
        summary = asyncio.run(evaluate(cfg))
    except KeyboardInterrupt:
        pass
    finally:
        sandbox_lib.reap(run_id=cfg.run_id)
    if _INTERRUPTED:
        print(f"\ninterrupted: removed the containers of run {cfg.run_id}; no summary written", file=sys.stderr)
        return 130
    why = failed_run_line(summary) if summary is not None else None
    if why:
        print(why, file=sys.stderr)
        return 1
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
