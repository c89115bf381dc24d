"""The counterfactual-observation control: does a policy act on what its observations reveal?

    python -m experiments.counterfactual --policy PATH [--policy NAME=PATH ...] --tasks DIR --out FILE.json
        [--task-ids ID ...] [--preset cpu-learn-multiturn] [--n 4 | --greedy] [--seed 0] [--device cpu]

1. record: each instance's oracle (agent/oracle.py's OracleReplies through engines.ScriptedEngine, as the
   warm start's demonstrations are made) acted out through the real agent loop (rollout.run_episodes) in a
   real sandbox and verified; the prompt of each turn is read back from the trajectory: the token ids and
   messages the engine was given, with the preset's system prompt, chat template, observation rendering and
   observation cut (an instance whose oracle episode did not resolve is listed, not probed);
2. probes: for each turn whose observation reveals a value the next command needs (an oracle step with a
   capture, tasks/checks.read_oracle_turns), the next turn's prompt twice: as recorded (true), and with the
   revealed value, the span the step's capture regex finds, replaced by a fresh value of the same form
   (swapped; `fresh_value`: the family's words and numbers in the value's own shape, found nowhere in the
   instance's files or the conversation), the observation rendered again by the chat template
   (ChatFormat.observation_ids); the step's capture regex finds the fresh value in the swapped observation,
   so the swap reads as valid by the family's own rule;
3. ask: each policy for the next reply under both prompts, n samples at the rollout's temperature, top-p and
   top-k (or one greedy sample), each with its seed (the same for the true and the swapped prompt of a
   sample); the reply parsed as the agent loop parses it (agent/actions.py) and its first bash command
   classified: `swap` (holds the swapped value), `truth` (holds the true value), `neither`, or `no_command`;
4. report: per policy, the share of swapped prompts whose next command follows the swap and the share of
   true prompts whose next command follows the truth: per instance first (mean over its probes and samples:
   they share the instance), then the mean over instances with a 95% percentile-bootstrap interval over
   instances; overall, per step kind (`read`: the value leads to another read; `answer`: the code, which the
   next command writes to the answer file) and per (shape, hops) cell.

A policy that reads its observations follows the swap; one that ignores them cannot. Two scripted policies
run beside the named ones on the same prompts, as the control's own check: `oracle_reader` (the oracle's
next command, its values read out of the prompt's observations: follows every swap) and `template` (one
instance-agnostic command: follows none). experiments/learn.py calls `counterfactual` on its held-out
instances for the base, the warm start and GRPO.
"""

import argparse
import asyncio
import copy
import dataclasses
import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import torch

import configs
import sandbox as sandbox_lib
from agent.actions import FormatError, markdown_stop_check, parse_actions
from agent.chat import ChatFormat
from agent.oracle import OracleReplies, command_output, reply_text
from bookkeeping.sanitise import install_log_sanitiser
from engines import Engine, SamplingParams, ScriptedEngine, build_engine
from experiments.learn_single import bootstrap_mean_interval
from experiments.warm_start import oracle_plans
from hf import weights
from rollout import EpisodeOptions, Trajectory, cut_at_stop, run_episodes
from sandboxing import hosts
from tasks import family, select_tasks

LABELS = ("swap", "truth", "neither", "no_command")
# the scripted policies every report carries: what a reader and a non-reader score on these prompts
ORACLE_READER = "oracle_reader"
TEMPLATE = "template"
# the template policy's one command: it names no value any observation revealed
TEMPLATE_COMMAND = "ls -R /app | head -40"
# make learn's control: the first held-out instances (seeds cycle through the (hops, shape) cells) and
# samples per prompt, a few minutes per policy on the 2-core machine
LEARN_INSTANCES = 16
LEARN_SAMPLES = 4
# fresh values tried before giving up on a probe (each a draw of words and numbers)
FRESH_TRIES = 200

# -----------------------------------------------------------------------------
# probes (pure)


@dataclass
class Probe:
    """One turn after a reveal, asked twice. prompt_ids / swapped_ids: the next turn's prompt as recorded
    and with the revealed value swapped (token ids of the policy's chat template). value / swap: the true
    revealed value and its stand-in. step: the 0-based oracle step whose observation revealed it; kind:
    "read" (the value leads to another read) or "answer" (the code, written next); cell: `shape-hN`."""

    task_id: str
    cell: str
    kind: str
    step: int
    value: str
    swap: str
    prompt_ids: list[int]
    swapped_ids: list[int]


def fresh_value(value: str, avoid: str, rng: random.Random) -> str:
    """A value of the same form as `value`, found nowhere in `avoid`: its folder (up to the last `/`) kept,
    and in the rest each run of letters that is a family word (tasks/family.WORDS) drawn again from the
    words and each run of digits drawn again with as many digits; other text (`.txt`, `.sh`, `_`, `-`)
    kept; a part with letters (a file or program name) is fresh on its own too. Neither value holds the
    other, so a command cannot hold one by holding the other.
    e.g. `/app/oak/elm/fig-lime.txt` -> `/app/oak/elm/reef-onyx.txt`, `@key` values `sage_moss` ->
    `kelp_iris`, a code `amber-1234` -> `cobalt-8051`, a run call `/app/x/y/a_b.sh 4410` -> `/app/x/y/c_d.sh
    7302`. Raises ValueError when the value has nothing to draw again or no draw is fresh in FRESH_TRIES."""
    head, sep, tail = value.rpartition("/")
    words = set(family.WORDS)

    def redraw(m: re.Match) -> str:
        s = m.group(0)
        if s.isdigit():
            return str(rng.randrange(10 ** (len(s) - 1), 10 ** len(s)))
        return rng.choice(family.WORDS) if s in words else s

    if not any(s.isdigit() or s in words for s in re.findall(r"[a-z]+|[0-9]+", tail)):
        raise ValueError(f"fresh_value: {value!r} holds no family word or number to draw again")
    for _ in range(FRESH_TRIES):
        drawn = re.sub(r"[a-z]+|[0-9]+", redraw, tail)
        new = head + sep + drawn
        # a run call's program alone must be fresh too, not only with its number
        named = [part for part in drawn.split() if re.search("[a-z]", part)]
        fresh = new not in avoid and not any(part in avoid for part in named)
        if fresh and new not in value and value not in new:
            return new
    raise ValueError(f"fresh_value: no fresh value like {value!r} in {FRESH_TRIES} draws")


def swap_observation(
    content: str, command: str, regex: str, swap: str, action_format: str
) -> tuple[str, str]:
    """(the observation's content with the revealed value swapped, the true value): the value is group 1
    of `regex` searched in the output of `command` (agent.oracle.command_output: where the oracle reads
    it), replaced at exactly that span. Raises ValueError when the regex finds nothing, or when in the
    swapped content it does not find `swap` (the swap would not read as the value in force)."""
    output = command_output(content, command, action_format)
    start = len(content) - len(output)
    m = re.search(regex, output)
    if m is None:
        raise ValueError(f"swap_observation: {regex!r} finds nothing in the output of {command!r}")
    swapped = content[: start + m.start(1)] + swap + content[start + m.end(1) :]
    again = re.search(regex, command_output(swapped, command, action_format))
    if again is None or again.group(1) != swap:
        raise ValueError(f"swap_observation: {swap!r} does not read as the value {regex!r} finds")
    return swapped, m.group(1)


def turn_starts(loss_mask: list[int]) -> list[int]:
    """Where each generated turn starts in a trajectory's tokens: the 1s that follow a 0 (or open it)."""
    return [i for i, m in enumerate(loss_mask) if m == 1 and (i == 0 or loss_mask[i - 1] == 0)]


def probes_of(
    task, steps: list[dict], traj: Trajectory, chat: ChatFormat, rng: random.Random, avoid: str
) -> tuple[list[Probe], list[dict]]:
    """The probes of one instance's resolved oracle episode: for each step i with a capture, the prompt of
    turn i + 1 (the trajectory's tokens before that turn's reply; the messages before it), true and with
    the capture's value swapped (swap_observation, fresh_value). avoid: text a fresh value must not occur
    in (the instance's files); the conversation is added. Returns (probes, skipped: [{"task", "step",
    "why"}] for a step whose prompt cannot be probed, e.g. the value shown elsewhere too). Raises
    ValueError when the recorded tokens do not end with the observation as the template renders it."""
    starts = turn_starts(traj.loss_mask)
    replies = [i for i, m in enumerate(traj.messages) if m["role"] == "assistant"]
    conversation = "\n".join(str(m.get("content", "")) for m in traj.messages)
    cell = f"{task.meta.get('shape', '?')}-h{task.meta.get('hops', '?')}"
    probes, skipped = [], []
    for i, step in enumerate(steps):
        if not step.get("capture") or i + 1 >= len(starts):
            continue
        (regex,) = step["capture"].values()
        prompt = traj.token_ids[: starts[i + 1]]
        before = traj.messages[: replies[i + 1]]
        observed = before[replies[i] + 1 :]
        command = traj.messages[replies[i]]["tool_calls"][0]["arguments"]["command"]
        rendered = chat.observation_ids(observed, closed=True)
        if prompt[len(prompt) - len(rendered) :] != rendered:
            raise ValueError(
                f"{task.id} turn {i + 1}: the recorded prompt does not end with its observation as the "
                "chat template renders it"
            )
        m = re.search(regex, command_output(observed[-1]["content"], command, chat.action_format))
        if m is None:
            raise ValueError(f"{task.id} step {i}: {regex!r} finds nothing in its observation")
        value = m.group(1)
        earlier = "\n".join(str(x.get("content", "")) for x in before[:-1])
        if value in earlier:
            skipped.append(
                {"task": task.id, "step": i, "why": "the value is shown before its turn"}
            )
            continue
        swap = fresh_value(value, avoid + conversation, rng)
        content, _ = swap_observation(
            observed[-1]["content"], command, regex, swap, chat.action_format
        )
        swapped_obs = observed[:-1] + [{**observed[-1], "content": content}]
        swapped = prompt[: len(prompt) - len(rendered)] + chat.observation_ids(swapped_obs, True)
        kind = "answer" if i + 1 == len(steps) - 1 else "read"
        probes.append(Probe(task.id, cell, kind, i, value, swap, prompt, swapped))
    return probes, skipped


def classify(reply: str, probe: Probe, chat: ChatFormat, max_arg_bytes: int) -> tuple[str, str]:
    """(label, command) of a reply: its first bash command parsed as the agent loop parses it; label
    `swap` when the command holds the swapped value, `truth` when it holds the true value, `neither`,
    or `no_command` (a malformed reply, or no bash call first)."""
    try:
        calls = parse_actions(reply, chat.action_format, max_arg_bytes, chat.opens_think)
    except FormatError:
        return "no_command", ""
    if not calls or calls[0].name != "bash":
        return "no_command", ""
    command = str(calls[0].arguments.get("command", ""))
    if probe.swap in command:
        return "swap", command
    if probe.value in command:
        return "truth", command
    return "neither", command


# -----------------------------------------------------------------------------
# the report (pure)


def follow_rate(samples: list[dict], variant: str, resamples: int, seed: int = 0) -> dict:
    """The share of `variant`'s samples ("swapped" or "true") whose command follows its own value (the
    swap, the truth), instance-level: each instance's share over its probes and samples, then their mean
    with a 95% percentile bootstrap over instances (learn_single.bootstrap_mean_interval). Returns
    {"instances", "samples", "rate", "ci95"}; rate and ci95 None without a sample."""
    target = "swap" if variant == "swapped" else "truth"
    per: dict[str, list[bool]] = {}
    for s in samples:
        if s["variant"] == variant:
            per.setdefault(s["task"], []).append(s["label"] == target)
    means = [sum(v) / len(v) for _, v in sorted(per.items())]
    if not means:
        return {"instances": 0, "samples": 0, "rate": None, "ci95": None}
    return {
        "instances": len(means),
        "samples": sum(len(v) for v in per.values()),
        "rate": sum(means) / len(means),
        "ci95": list(bootstrap_mean_interval(means, resamples, seed)),
    }


def report(samples: list[dict], resamples: int) -> dict:
    """One policy's figures from its samples ({"task", "cell", "kind", "variant", "label", ...}):
    {"swap_follows_swap", "true_follows_truth"} (follow_rate) overall, "by_kind" and "cells" the same
    within each step kind and (shape, hops) cell, and "labels": {variant: {label: samples}}."""

    def both(subset: list[dict]) -> dict:
        return {
            "swap_follows_swap": follow_rate(subset, "swapped", resamples),
            "true_follows_truth": follow_rate(subset, "true", resamples),
        }

    out = both(samples)
    out["by_kind"] = {
        k: both([s for s in samples if s["kind"] == k])
        for k in sorted({s["kind"] for s in samples})
    }
    out["cells"] = {
        c: both([s for s in samples if s["cell"] == c])
        for c in sorted({s["cell"] for s in samples})
    }
    out["labels"] = {
        v: {
            label: sum(s["label"] == label for s in samples if s["variant"] == v)
            for label in LABELS
        }
        for v in ("swapped", "true")
    }
    return out


def line(name: str, figures: dict) -> str:
    """One policy's figures on one line: the swap followed and the truth followed, with their intervals."""

    def rate(r: dict) -> str:
        if r["rate"] is None:
            return "-"
        return f"{r['rate']:.3f} [{r['ci95'][0]:.3f},{r['ci95'][1]:.3f}]"

    swap, truth = figures["swap_follows_swap"], figures["true_follows_truth"]
    return (
        f"[counterfactual] {name}: follows the swap {rate(swap)}, follows the truth {rate(truth)} "
        f"({swap['instances']} instances, {swap['samples']} swapped samples)"
    )


# -----------------------------------------------------------------------------
# the policies and their samples


def template_engine(tokenizer, action_format: str) -> ScriptedEngine:
    """The template policy: every reply runs TEMPLATE_COMMAND, whatever the observations say."""
    return ScriptedEngine(
        tokenizer, lambda _ids, _turn: reply_text(TEMPLATE_COMMAND, action_format)
    )


async def ask(
    engine: Engine,
    probes: list[Probe],
    chat: ChatFormat,
    rollout: configs.RolloutConfig,
    n: int,
    greedy: bool,
    seed: int,
) -> list[dict]:
    """Each probe's next reply from `engine`, n samples under each variant (greedy: one sample at
    temperature 0), all requested at once (the engine batches them). Sample j of probe i has the same
    seed under both variants. The reply is cut at the markdown stop rule (rollout.cut_at_stop) and
    capped at rollout.max_tokens_per_turn, as in the agent loop. Returns one dict per sample: task, cell,
    kind, step, variant, sample, value, swap, label, command, reply."""
    stop = None
    if chat.action_format == "markdown":
        stop = markdown_stop_check(chat.tokenizer, chat.opens_think)
    temperature = 0.0 if greedy else rollout.temperature
    jobs = []
    for i, p in enumerate(probes):
        for variant, ids in (("true", p.prompt_ids), ("swapped", p.swapped_ids)):
            for j in range(1 if greedy else n):
                room = rollout.max_context_tokens - len(ids)
                sampling = SamplingParams(
                    temperature,
                    rollout.top_p,
                    rollout.top_k,
                    min(rollout.max_tokens_per_turn, room),
                    (seed * 1_000_003 + i) * 10_007 + j,
                    stop,
                )
                jobs.append((p, variant, j, ids, sampling))

    async def one(p: Probe, variant: str, j: int, ids: list[int], sampling: SamplingParams):
        c = cut_at_stop(await engine.generate(ids, sampling), stop)
        reply = chat.decode(c.token_ids)
        label, command = classify(reply, p, chat, rollout.max_tool_arg_bytes)
        return {
            "task": p.task_id,
            "cell": p.cell,
            "kind": p.kind,
            "step": p.step,
            "variant": variant,
            "sample": j,
            "value": p.value,
            "swap": p.swap,
            "label": label,
            "command": command,
            "reply": reply,
        }

    return list(await asyncio.gather(*(one(*job) for job in jobs)))


# -----------------------------------------------------------------------------
# the run


async def record(
    tasks: list,
    tokenizer,
    policy: configs.PolicyConfig,
    rollout: configs.RolloutConfig,
    sandbox: configs.SandboxConfig,
    run_id: str | None,
    progress: bool,
) -> tuple[dict[str, list[dict]], list[Trajectory]]:
    """The oracle's episodes of `tasks` through the agent loop in real sandboxes, one each, as the warm
    start's demonstrations (experiments/warm_start.py), with rollout.max_turns raised to each task's own
    max_turns so that every step is acted out. Returns (task id -> oracle steps, trajectories)."""
    rollout = dataclasses.replace(
        rollout, max_turns=max([rollout.max_turns] + [t.max_turns or 0 for t in tasks])
    )
    chat = ChatFormat(tokenizer, policy.action_format)
    plans = oracle_plans(tasks, rollout.max_turns)
    engine = ScriptedEngine(tokenizer, OracleReplies(chat, plans), max_seq_len=policy.max_seq_len)
    groups = await run_episodes(
        tasks,
        engine,
        tokenizer,
        1,
        rollout,
        opts=EpisodeOptions(policy.action_format, sandbox, run_id=run_id),
        progress=progress,
    )
    steps = {t.id: plans[t.instruction] for t in tasks}
    return steps, [g.trajectories[0] for g in groups]


def build_probes(
    tasks: list, steps: dict[str, list[dict]], trajectories: list[Trajectory], chat, seed: int
) -> tuple[list[Probe], list[dict]]:
    """probes_of every task whose oracle episode resolved (fresh values drawn from one generator seeded
    by `seed`, avoiding the instance's files); the others are in skipped with why."""
    rng = random.Random(seed)
    probes, skipped = [], []
    for task, traj in zip(tasks, trajectories):
        if traj.error is not None or not traj.resolved:
            why = traj.error or f"the oracle episode did not resolve ({traj.stop_reason})"
            skipped.append({"task": task.id, "step": None, "why": why})
            continue
        files = sorted(p for p in (Path(task.path) / "files").rglob("*") if p.is_file())
        # the paths too: a fresh note or program name must not be one the tree holds
        avoid = "\n".join(f"{p}\n{p.read_text(errors='replace')}" for p in files)
        found, left = probes_of(task, steps[task.id], traj, chat, rng, avoid)
        probes += found
        skipped += left
    return probes, skipped


def policy_engine(
    name: str, path: str, chat: ChatFormat, policy: configs.PolicyConfig, device: str, seed: int
):
    """The generation engine of the named policy at `path` (engines.build_engine with `policy`'s
    section, its path replaced). Raises configs.ConfigError when its tokenizer renders the prompts
    otherwise than `chat`'s (they were recorded with that one)."""
    model_dir = weights.resolve_model_dir(path)
    own = ChatFormat(weights.load_tokenizer(model_dir), policy.action_format)
    probe = [{"role": "user", "content": "ls /app"}]
    if own.render(probe, add_generation_prompt=True) != chat.render(
        probe, add_generation_prompt=True
    ):
        raise configs.ConfigError(
            f"policy {name} = {path}: its tokenizer renders the prompts otherwise than the one they "
            "were recorded with; probe it in a run of its own"
        )
    section = dataclasses.replace(policy, path=str(model_dir))
    return build_engine(section, model_dir, own.tokenizer, torch.device(device), seed)


def probe_policies(
    policies: dict[str, str],
    probes: list[Probe],
    plans: dict[str, list[dict]],
    chat: ChatFormat,
    policy: configs.PolicyConfig,
    rollout: configs.RolloutConfig,
    n: int = 4,
    greedy: bool = False,
    seed: int = 0,
    resamples: int = 10_000,
    device: str = "cpu",
) -> tuple[dict[str, dict], dict[str, list[dict]]]:
    """Steps 3-4 of the module docstring: every policy of `policies` (name -> HF folder or a name
    weights.resolve_model_dir takes; policy_engine), then ORACLE_READER (plans: instruction -> oracle
    steps) and TEMPLATE, asked on the probes (ask) one after the other, each engine closed after its
    samples. Prints one line per policy. Returns ({name: report with its "seconds"}, {name:
    samples})."""
    scripted = {
        ORACLE_READER: lambda: ScriptedEngine(chat.tokenizer, OracleReplies(chat, plans)),
        TEMPLATE: lambda: template_engine(chat.tokenizer, chat.action_format),
    }

    async def asked(engine: Engine) -> list[dict]:
        try:
            return await ask(engine, probes, chat, rollout, n, greedy, seed)
        finally:
            await engine.aclose()

    reports: dict[str, dict] = {}
    samples: dict[str, list[dict]] = {}
    for name, path in list(policies.items()) + [(ORACLE_READER, None), (TEMPLATE, None)]:
        if path is None:
            engine = scripted[name]()
        else:
            engine = policy_engine(name, path, chat, policy, device, seed)
        t0 = time.perf_counter()
        samples[name] = asyncio.run(asked(engine))
        reports[name] = report(samples[name], resamples)
        reports[name]["seconds"] = time.perf_counter() - t0
        print(line(name, reports[name]), flush=True)
    return reports, samples


def counterfactual(
    policies: dict[str, str],
    tasks: list,
    policy: configs.PolicyConfig,
    rollout: configs.RolloutConfig,
    sandbox: configs.SandboxConfig,
    n: int = 4,
    greedy: bool = False,
    seed: int = 0,
    resamples: int = 10_000,
    device: str = "cpu",
    run_id: str | None = None,
    progress: bool = False,
    samples_path: Path | None = None,
) -> dict:
    """Steps 1-4 of the module docstring on `tasks` (instances with oracle_turns.json) for `policies`
    (name -> HF folder), with the scripted ORACLE_READER and TEMPLATE beside them (probe_policies).
    policy, rollout, sandbox: the preset's sections (policy's path replaced per policy); the prompts
    are recorded with the first policy's tokenizer. Returns {"config", "probes": [{task, cell, kind,
    step, value, swap}], "skipped", "error", "policies": {name: report}, "samples": {name: [...]}};
    with samples_path, the samples are written there instead (JSON lines, each with its "policy") and
    "samples" is that path. error: None, or why no probe could be built (no oracle episode resolved;
    no policy is asked then). Raises configs.ConfigError for n < 1, no policy, or a policy whose
    tokenizer renders the prompts otherwise."""
    if n < 1:
        raise configs.ConfigError(f"n = {n}: must be >= 1")
    if not policies:
        raise configs.ConfigError("policies: name at least one policy (--policy PATH)")
    tokenizer = weights.load_tokenizer(weights.resolve_model_dir(next(iter(policies.values()))))
    chat = ChatFormat(tokenizer, policy.action_format)
    steps, trajectories = asyncio.run(
        record(tasks, tokenizer, policy, rollout, sandbox, run_id, progress)
    )
    probes, skipped = build_probes(tasks, steps, trajectories, chat, seed)
    reports, samples = {}, {}
    # none: said in the result (make learn calls this after its evaluations), no policy asked
    error = None if probes else f"no probe could be built; skipped: {skipped[:3]}"
    if probes:
        plans = {t.instruction: steps[t.id] for t in tasks}
        reports, samples = probe_policies(
            policies, probes, plans, chat, policy, rollout, n, greedy, seed, resamples, device
        )
    if samples_path is not None:
        with open(samples_path, "w") as f:
            for name, rows in samples.items():
                f.writelines(json.dumps({"policy": name, **row}) + "\n" for row in rows)
    return {
        "config": {
            "policies": dict(policies),
            "tasks": [t.id for t in tasks],
            "n": 1 if greedy else n,
            "greedy": greedy,
            "temperature": 0.0 if greedy else rollout.temperature,
            "top_p": rollout.top_p,
            "top_k": rollout.top_k,
            "max_tokens_per_turn": rollout.max_tokens_per_turn,
            "seed": seed,
            "resamples": resamples,
        },
        "probes": [
            {k: getattr(p, k) for k in ("task_id", "cell", "kind", "step", "value", "swap")}
            for p in probes
        ],
        "skipped": skipped,
        "error": error,
        "policies": reports,
        "samples": samples if samples_path is None else str(samples_path),
    }


# -----------------------------------------------------------------------------
# the command


def parse_policy(text: str) -> tuple[str, str]:
    """`NAME=PATH` or `PATH` (named by its text) -> (name, path). Raises configs.ConfigError naming
    --policy for an empty name or path, or a name taken by a scripted policy."""
    name, sep, path = text.partition("=")
    if not sep:
        name, path = text, text
    if not name or not path:
        raise configs.ConfigError(f"policy = {text!r}: must be PATH or NAME=PATH")
    if name in (ORACLE_READER, TEMPLATE):
        raise configs.ConfigError(f"policy = {text!r}: the name {name} is the scripted policy's")
    return name, path


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command's flags. Raises configs.ConfigError naming the flag for a bad value."""
    p = argparse.ArgumentParser(
        prog="python -m experiments.counterfactual", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--policy", action="append", required=True, help="PATH or NAME=PATH (repeat)")
    p.add_argument("--tasks", required=True, help="folder of family instances")
    p.add_argument("--task-ids", nargs="*", default=[], help="only these instances")
    p.add_argument("--out", required=True, help="the report, JSON")
    p.add_argument(
        "--preset", default="cpu-learn-multiturn", help="policy, rollout, sandbox sections"
    )
    p.add_argument("--n", type=int, default=4, help="samples per prompt and variant")
    p.add_argument("--greedy", action="store_true", help="one greedy sample instead of n")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    p.add_argument("--device", default="cpu")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.preset not in configs.PRESETS:
        raise configs.ConfigError(
            f"preset = {args.preset!r}: must be one of {', '.join(sorted(configs.PRESETS))}"
        )
    if args.n < 1:
        raise configs.ConfigError(f"n = {args.n}: must be >= 1")
    if args.resamples < 1:
        raise configs.ConfigError(f"resamples = {args.resamples}: must be >= 1")
    args.policies = dict(parse_policy(text) for text in args.policy)
    if len(args.policies) != len(args.policy):
        raise configs.ConfigError(f"policy: two policies share a name in {args.policy}")
    return args


def main(argv: list[str] | None = None) -> int:
    """CLI entry: flags checked before anything runs, the control run, FILE.json written; this run's
    containers reaped at the end. Returns 0, or 1 when no probe could be built (the line says why)."""
    install_log_sanitiser()
    args = parse_args(argv)
    preset = configs.PRESETS[args.preset]
    tasks = select_tasks(args.tasks, tuple(args.task_ids))
    for text in hosts.configure(preset.sandbox.docker_hosts, 2 * preset.sandbox.memory_mb << 20):
        print(text, file=sys.stderr)
    try:
        result = counterfactual(
            args.policies,
            tasks,
            copy.deepcopy(preset.policy),
            copy.deepcopy(preset.rollout),
            copy.deepcopy(preset.sandbox),
            n=args.n,
            greedy=args.greedy,
            seed=args.seed,
            resamples=args.resamples,
            device=args.device,
            run_id=sandbox_lib.RUN_ID,
            progress=not args.no_progress,
        )
    finally:
        sandbox_lib.reap(run_id=sandbox_lib.RUN_ID)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    if result["error"]:
        print(f"error: {result['error']} (written to {out})", file=sys.stderr)
        return 1
    counts = Counter(s["label"] for s in result["samples"][next(iter(args.policies))])
    print(
        f"[counterfactual] wrote {out} ({len(result['probes'])} probes; first policy's labels "
        f"{dict(counts)})"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (configs.ConfigError, ValueError, FileExistsError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
