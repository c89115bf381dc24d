"""The evaluation command: k episodes per task, resolved rate, pass@1 and unbiased pass@k, summaries.

    python evaluate.py --model DIR --tasks data/tasks --k 4 [--policy.engine torch|vllm] [--engine openai|scripted]
                       [--oracle] [--out-dir DIR]                    # every knob: python evaluate.py --help

The knobs are configs.EvalConfig (policy, rollout, sandbox and reward sections as in training),
validated at start-up (configs.validate_eval). --model is short for --policy.path.
"""

import asyncio
import json
import math
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

import torch

import sandbox as sandbox_lib
from bookkeeping.sanitise import install_log_sanitiser, printable
from bookkeeping.stop import StopFlag
from configs import EvalConfig, parse_eval_cli
from engines import Engine, ScriptedEngine, build_engine, engine_kind
from engines.openai_engine import OpenAIEngine
from hf import weights
from judging import judge as judge_lib
from rollout import EpisodeOptions, Trajectory, run_episodes
from sandboxing import admission, hosts
from tasks import select_tasks


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
    scored episodes), mean reward (each episode's reward by its group's rule, reward.group_rewards
    as in training: tests and judge combined, or the whole group on the tests alone when a judge
    call failed)."""

    def stats(ts: list[Trajectory]) -> dict:
        ok = [t for t in ts if t.reward is not None]
        by_task: dict[str, list[bool]] = defaultdict(list)
        for t in ok:
            by_task[t.task_id].append(t.resolved)
        p1 = [pass_at_k(len(r), sum(r), 1) for r in by_task.values() if r]
        pk = [pass_at_k(len(r), sum(r), k) for r in by_task.values() if len(r) >= k]
        mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
        # resolved_all: an errored episode counts as unresolved (its task was not shown to be solvable)
        return {
            "episodes": len(ts),
            "errors": len(ts) - len(ok),
            "tasks": len({t.task_id for t in ts}),
            "resolved_rate": mean([float(t.resolved) for t in ok]),
            "resolved_all": mean([float(t.reward is not None and bool(t.resolved)) for t in ts]),
            "pass@1": mean(p1),
            f"pass@{k}": mean(pk),
            "mean_reward": mean([t.reward for t in ok]),
        }

    out = {"overall": stats(trajs), "by_difficulty": {}, "by_category": {}}
    for key, attr in (("by_difficulty", "difficulty"), ("by_category", "category")):
        groups: dict[str, list] = defaultdict(list)
        for t in trajs:
            groups[getattr(t, attr)].append(t)
        out[key] = {g: stats(ts) for g, ts in sorted(groups.items())}
    return out


def format_summary(summary: dict, k: int) -> str:
    """The summary as an aligned text table."""
    cols = (
        ["episodes", "errors", "resolved_rate", "resolved_all", "pass@1"]
        + ([f"pass@{k}"] if k > 1 else [])
        + ["mean_reward"]
    )
    fmt = lambda v: "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))  # noqa: E731
    rows = [("overall", summary["overall"])]
    rows += [(f"difficulty={g}", s) for g, s in summary["by_difficulty"].items()]
    rows += [(f"category={g}", s) for g, s in summary["by_category"].items()]
    width = max(len(r[0]) for r in rows) + 2
    lines = ["".ljust(width) + "".join(c.rjust(14) for c in cols)]
    lines += [name.ljust(width) + "".join(fmt(s[c]).rjust(14) for c in cols) for name, s in rows]
    return "\n".join(lines)


def per_engine(trajs: list[Trajectory]) -> dict[str, dict[str, int]]:
    """{Docker engine url: {"episodes": placed there, "errors": of them with reward None}}, in listed order
    (sandboxing/hosts.py); episodes never placed (no engine had room) count under "none"."""
    out = {url: {"episodes": 0, "errors": 0} for url in hosts.urls()}
    for t in trajs:
        e = out.setdefault(t.docker_host or "none", {"episodes": 0, "errors": 0})
        e["episodes"] += 1
        e["errors"] += t.reward is None
    return out


def failed_run_line(summary: dict, allow_errors: bool = False) -> str | None:
    """The one line explaining why a run failed: every episode errored (no rate means anything), or, unless
    allow_errors, some did (resolved_rate leaves them out; resolved_all counts them unresolved). None when
    the run is fine. Shared by model and --oracle runs: the CLI exits 1 on it."""
    o = summary["overall"]
    top = printable(summary.get("top_error") or "unknown")  # an agent program's output, as text
    if o["episodes"] == 0 or o["errors"] == 0 or (allow_errors and o["errors"] < o["episodes"]):
        return None
    if o["errors"] < o["episodes"]:
        return (
            f"error: {o['errors']} of {o['episodes']} episodes errored (resolved_rate leaves them out, "
            f"resolved_all counts them unresolved; --allow-errors to exit 0); most common error: {top}"
        )
    return (
        f"error: all {o['episodes']} episodes errored, nothing was scored; most common error: {top}"
    )


TRAINING_USE = {
    True: "token-exact: usable for evaluation and training",
    False: "not token-exact (chat mode re-tokenises the reply text): usable for evaluation, not for training",
}


# ----------------------------------------------------------------------------- evaluation CLI


def build_eval_engine(cfg: EvalConfig, model_dir: Path, tokenizer) -> Engine | None:
    """The engine EvalConfig asks for: None for --oracle; an OpenAI-compatible server; a scripted replay;
    else the policy's own engine (engines.build_engine, as in training) on cfg.device."""
    if cfg.oracle:
        return None
    if cfg.engine == "openai":
        return OpenAIEngine(
            cfg.openai_base_url,
            cfg.openai_model or str(model_dir),
            tokenizer,
            mode=cfg.openai_mode,
            max_seq_len=cfg.policy.max_seq_len,
        )
    if cfg.engine == "scripted":
        return ScriptedEngine(
            tokenizer, json.loads(Path(cfg.script).read_text()), delay_s=cfg.script_delay_s
        )
    return build_engine(cfg.policy, model_dir, tokenizer, torch.device(cfg.device), cfg.seed)


async def open_engine(cfg: EvalConfig, model_dir: Path, tokenizer) -> Engine | None:
    """build_eval_engine, then its probe once, before any episode: a server that cannot serve the mode is
    one line on stderr (the engine is closed again if the probe raises)."""
    engine = build_eval_engine(cfg, model_dir, tokenizer)
    if engine is not None:
        try:
            line = await engine.probe()
        except BaseException:
            await engine.aclose()
            raise
        if line:
            print(line, file=sys.stderr)
    return engine


async def evaluate(cfg: EvalConfig, stop: StopFlag | None = None) -> dict:
    """Load the tasks and the engine, run k episodes per task, write out/trajectories.jsonl and
    out/summary.json, print the table. Returns the summary. cfg must be validated (configs.validate_eval).
    Raises asyncio.CancelledError when `stop` was requested: episodes cut short are not results."""

    tasks = select_tasks(cfg.tasks, cfg.task_ids, cfg.difficulties)
    in_flight = min(cfg.rollout.max_concurrent_episodes, len(tasks) * cfg.k)
    fits, line = admission.host_budget(
        in_flight, cfg.sandbox.memory_mb, cfg.sandbox.storage_mb, 1, *sandbox_lib.host_resources()
    )
    print(line, file=sys.stderr)
    cfg.rollout.max_concurrent_episodes = fits
    model_dir = weights.resolve_model_dir(cfg.policy.path)
    tokenizer = weights.load_tokenizer(model_dir)
    engine = await open_engine(cfg, model_dir, tokenizer)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    judge = None if cfg.oracle else judge_lib.build_judge(cfg.reward, out)
    jsonl = open(out / "trajectories.jsonl", "w")

    def write(t: Trajectory) -> None:
        jsonl.write(json.dumps(t.to_json(), default=str) + "\n")
        jsonl.flush()

    try:
        groups = await run_episodes(
            tasks,
            engine,
            tokenizer,
            cfg.k,
            cfg.rollout,
            opts=EpisodeOptions(
                cfg.policy.action_format, cfg.sandbox, cfg.reward, judge, cfg.run_id, cfg.oracle
            ),
            seed=cfg.seed,
            progress=cfg.progress,
            on_trajectory=write,
        )
    finally:
        jsonl.close()
        if engine is not None:
            await engine.aclose()
        if judge is not None:
            await judge.aclose()
    if stop is not None and stop.requested:  # no summary that looks complete
        raise asyncio.CancelledError
    summary = run_summary(cfg, model_dir, groups, judge)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print_summary(summary, cfg, out)
    return summary


def run_summary(cfg: EvalConfig, model_dir: Path, groups: list, judge) -> dict:
    """summarize() of the groups' trajectories plus the run's record: config (model, tasks, k, engine,
    oracle, run_id), stop_reasons, judge metrics and dropped groups (with a judge), top_error, engines
    (per_engine) and token_exact (False: chat-mode trajectories; None: nothing generated, oracle)."""
    trajs = [t for g in groups for t in g.trajectories]
    summary = summarize(trajs, cfg.k)
    if cfg.oracle:
        engine_name = "oracle"
    elif cfg.engine != "policy":
        engine_name = cfg.engine
    else:
        engine_name = engine_kind(cfg.policy, torch.device(cfg.device))
    summary["config"] = {
        "model": None if cfg.oracle else str(model_dir),
        "tasks": cfg.tasks,
        "k": cfg.k,
        "engine": engine_name,
        "oracle": cfg.oracle,
        "run_id": cfg.run_id,
    }
    summary["stop_reasons"] = dict(sorted(Counter(t.stop_reason for t in trajs).items()))
    if judge is not None:
        summary["judge"] = dict(judge.metrics)
        summary["judge_dropped_groups"] = sum(int(g.judge_dropped) for g in groups)
    errors = Counter(t.error for t in trajs if t.error).most_common(1)
    summary["top_error"] = errors[0][0] if errors else None
    summary["engines"] = per_engine(trajs)
    summary["token_exact"] = None if cfg.oracle else all(t.exact for t in trajs)
    return summary


def print_summary(summary: dict, cfg: EvalConfig, out: Path) -> None:
    """The run's table, stop reasons, per-engine counts (several engines or any errors), what the
    trajectories may be used for, and where they were written."""
    print(format_summary(summary, cfg.k))
    print(f"stop reasons: {summary['stop_reasons']}")
    if len(summary["engines"]) > 1 or any(e["errors"] for e in summary["engines"].values()):
        print(
            "engines: "
            + "; ".join(
                f"{url}: {e['episodes']} episodes, {e['errors']} errors"
                for url, e in summary["engines"].items()
            )
        )
    if not cfg.oracle and summary["overall"]["errors"] < summary["overall"]["episodes"]:
        print(f"trajectories: {TRAINING_USE[summary['token_exact']]}")
    print(f"wrote {out / 'trajectories.jsonl'} and {out / 'summary.json'}")


def main(argv: list[str] | None = None) -> int:
    """CLI entry: parse and validate EvalConfig (before any model, container or API is touched), reap
    leftovers of dead runs, evaluate. SIGINT/SIGTERM (stop.StopFlag) cancel the episodes, their sandboxes
    close, this run's containers are reaped, and the exit status is 130 with no summary.
    Raises configs.ConfigError naming a bad field."""
    install_log_sanitiser()
    cfg = parse_eval_cli(argv, description=__doc__.split("\n\n")[0])
    cfg.run_id = cfg.run_id or sandbox_lib.RUN_ID
    stop = StopFlag("[eval]", "cancelling the episodes").install()
    loop = asyncio.new_event_loop()
    summary = None
    for line in hosts.configure(cfg.sandbox.docker_hosts, 2 * cfg.sandbox.memory_mb << 20):
        print(
            line, file=sys.stderr
        )  # one per listed engine: what it reports, the episodes it takes
    try:
        sandbox_lib.reap()  # containers of dead runs only; live runs on the same engine keep theirs
        job = loop.create_task(evaluate(cfg, stop))
        stop.cancel_on_signal(loop, job)
        summary = loop.run_until_complete(job)
    except (asyncio.CancelledError, KeyboardInterrupt):
        if not stop.requested:
            raise
    finally:
        stop.cancel_on_signal(loop, None)
        loop.close()
        sandbox_lib.reap_run(cfg.run_id)  # also what Docker calls still in flight create
    if stop.requested:
        print(
            f"\ninterrupted: removed the containers of run {cfg.run_id}; no summary written",
            file=sys.stderr,
        )
        return 130
    why = failed_run_line(summary, cfg.allow_errors) if summary is not None else None
    if why:
        print(why, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (
        FileNotFoundError,
        ValueError,
    ) as e:  # bad --model / --tasks / flags: one line, no traceback
        if os.environ.get("TERMRL_DEBUG"):
            raise
        print(f"error: {printable(e)}", file=sys.stderr)
        sys.exit(2)
