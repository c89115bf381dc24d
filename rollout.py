"""The agent loop: action formats, chat rendering, token-exact trajectories, `run_episodes`.

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
  in order; the JSON is decoded as JSON (tags inside its strings are text); results come back as `tool`
  messages (Qwen3's template wraps them in <tool_response>).
- `markdown` (the CPU default for SmolLM2-135M): each fenced bash block (CommonMark ``` or ~~~ fences; a
  fence line inside a heredoc body does not close the block) is one bash call; a line
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

Reasoning (`split_reasoning`): a leading `<think>...</think>` block, or everything up to the first `</think>`
when the chat template's generation prompt opens `<think>` (ChatFormat.opens_think), is not parsed for actions.

Template match caveat: the match with `chat.render(messages)` is exact when the template tokenises the
decoded reply the way the engine sampled it; sampled text whose canonical tokenisation differs (e.g. a reply
starting with "\\n\\n", which the template merges with the preceding "\\n") keeps the sampled ids, by design.

Engines share one interface, `await engine.generate(prompt_ids, sampling) -> Completion`, and batch the
requests of many concurrent agents internally: TorchEngine (model.py KV cache, continuous batching),
VLLMEngine (colocated vllm.LLM), OpenAIEngine (HTTP), ScriptedEngine (replays fixed replies; tests).


Engines live in engines.py; the parsers of both action formats in actions.py; the evaluation command in
evaluate.py.
"""

import asyncio
import contextlib
import dataclasses
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

import reward as reward_lib
import sandbox as sandbox_lib
from agent.actions import FormatError, ToolCall, markdown_stop_check, parse_actions
from agent.chat import ChatFormat
from configs import RewardConfig, RolloutConfig, SandboxConfig
from engines import Completion, Engine, SamplingParams
from judging.prompt import describe_outcome
from sandboxing import compose as compose_lib
from sandboxing import hosts
from sandboxing import images as images_lib


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


# ----------------------------------------------------------------------------- trajectories and the agent loop


@dataclass
class Trajectory:
    """One episode.

    token_ids / loss_mask / logprobs: same length; loss_mask 1 exactly on generated tokens, whose logprobs
    are the engine's; 0 and 0.0 elsewhere. prompt_len: tokens before the first generated one.
    messages: the conversation ({"role", "content"} plus, for assistant turns, "tool_calls", "format_error",
    "finish_reason"; for observations, "in_tokens": False when a limit kept it out of token_ids).
    stop_reason: finish | max_turns | max_context | max_tokens_per_turn | timeout | format_errors | oracle | error |
    tampered (the agent changed the test toolchain: reward 0, verification.tampered says what) |
    disk_limit (the sandbox wrote past sandbox.storage_mb and was killed: not verified, reward 0,
    verification.error says how much).
    truncated: a limit ended the episode (not finish/oracle). reward: set by its group's rule
    (`score_group`); None when the episode failed (error says why), never a silent 0.
    exact: token_ids are exactly what the engine sampled.
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
    docker_host: str = ""  # the Docker engine the episode ran on (sandboxing/hosts.py)
    policy_version: int = 0  # optimizer steps of the policy that generated it (set by train.py)

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
        head = (
            f"[timed out after {timeout:g} s; the command was killed]"
            if r.timed_out
            else f"exit code: {r.exit_code}"
        )
        return f"{head}\n{r.output}" if r.output else head, {
            "exit_code": r.exit_code,
            "timed_out": r.timed_out,
        }
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
        lines = text.splitlines(keepends=True)[offset - 1 :]
        out = "".join(lines if limit is None else lines[:limit])
        if len(out.encode()) > ep.output_limit_bytes:
            cut = out.encode()[: ep.output_limit_bytes].decode("utf-8", errors="ignore")
            out = (
                cut + f"\n[... cut at {ep.output_limit_bytes} bytes; use offset/limit to read more]"
            )
        return out if out else f"({path} has no lines from {offset})", {}
    # edit_file
    n = text.count(a["old"]) if a["old"] else 0
    if n == 0:
        return f"Error: the old text was not found in {path}; nothing changed.", {}
    if n > 1 and not a.get("replace_all", False):
        return (
            f"Error: the old text occurs {n} times in {path}; make it unique or set replace_all; nothing changed.",
            {},
        )
    new = (
        text.replace(a["old"], a["new"])
        if a.get("replace_all", False)
        else text.replace(a["old"], a["new"], 1)
    )
    await sb.write_file(path, new)
    return f"Replaced {n if a.get('replace_all', False) else 1} occurrence(s) in {path}.", {}


def _markdown_observation(results: list[tuple[ToolCall, str]]) -> str:
    blocks = [f"$ {call.arguments['command']}\n{out}" for call, out in results]
    return "\n\n".join(blocks)


async def _generate(
    traj: Trajectory,
    engine: Engine,
    sampling: SamplingParams,
    turn: int,
    max_tokens: int,
    remaining: float,
    stop_check,
) -> Completion | None:
    """One turn's completion (cut at stop_check, as sampled), or None when the episode's wall clock
    ran out while it was generating. Raises ValueError when tokens and log-probs differ in length."""
    t0 = time.monotonic()
    try:
        # Each turn its own seed: the same seed every turn would reuse the same uniforms.
        seed = None if sampling.seed is None else hash((sampling.seed, turn)) & (2**63 - 1)
        turn_sampling = dataclasses.replace(
            sampling, max_tokens=max_tokens, seed=seed, stop_check=stop_check
        )
        c = await asyncio.wait_for(
            engine.generate(traj.token_ids, turn_sampling, traj.messages), remaining
        )
    except TimeoutError:
        return None
    traj.timings["generate_s"] = traj.timings.get("generate_s", 0.0) + time.monotonic() - t0
    if len(c.token_ids) != len(c.logprobs):
        raise ValueError(
            f"{type(engine).__name__}: completion has {len(c.token_ids)} tokens but "
            f"{len(c.logprobs)} logprobs"
        )
    return cut_at_stop(
        c, stop_check
    )  # engines that ignore stop_check: the same cut, after the fact


async def _run_calls(
    traj: Trajectory, ep: _Episode, msg: dict, calls: list[ToolCall]
) -> tuple[list, bool] | None:
    """Run one turn's calls in order up to a finish call, each listed in msg["tool_calls"] (the
    ones after it in msg["not_run"]). Returns (results [(call, observation, metadata)], finished),
    or None when the sandbox went over its disk limit (a message in traj says so)."""
    t0 = time.monotonic()
    results, finished = [], False
    for call in calls:
        msg["tool_calls"].append({"name": call.name, "arguments": call.arguments})
        if call.name == "finish":
            finished = True
            break
        try:
            out, meta = await run_tool(ep, call)
        except sandbox_lib.DiskLimitError as e:  # the sandbox was killed: nothing more can run
            traj.messages.append(
                {"role": ep.chat.observation_role, "content": f"[termrl: {e}]", "in_tokens": False}
            )
            return None
        results.append((call, out, meta))
    skipped = calls[len(msg["tool_calls"]) :]
    if skipped:
        msg["not_run"] = [{"name": s.name, "arguments": s.arguments} for s in skipped]
    traj.timings["tools_s"] = traj.timings.get("tools_s", 0.0) + time.monotonic() - t0
    return results, finished


def _observations(chat: ChatFormat, results: list) -> list[dict]:
    """The observation messages of a turn's results: one `tool` message per call (Hermes), or
    one `user` message of all of them (markdown; none when nothing ran)."""
    if chat.observation_role == "tool":
        return [
            {"role": "tool", "content": out, "tool_name": call.name, **meta}
            for call, out, meta in results
        ]
    if not results:
        return []
    return [{"role": "user", "content": _markdown_observation([(c, out) for c, out, _ in results])}]


async def agent_loop(
    traj: Trajectory, ep: _Episode, engine: Engine, sampling: SamplingParams
) -> str:
    """Run turns until a stop condition; fill traj (tokens, masks, messages). Returns the stop reason."""
    cfg, chat = ep.cfg, ep.chat
    max_turns = ep.task.max_turns or cfg.max_turns
    # markdown: a turn ends after its first action; the end-of-turn token then goes in as an observation token
    stop_check = (
        markdown_stop_check(chat.tokenizer, chat.opens_think)
        if chat.action_format == "markdown"
        else None
    )
    consecutive_errors = 0
    for turn in range(max_turns):
        room = cfg.max_context_tokens - len(traj.token_ids)
        if room < 1:
            return "max_context"
        remaining = ep.deadline - time.monotonic()
        if remaining <= 0:
            return "timeout"
        max_tokens = min(cfg.max_tokens_per_turn, room)
        c = await _generate(traj, engine, sampling, turn, max_tokens, remaining, stop_check)
        if c is None:
            return "timeout"
        traj.exact &= c.exact
        traj.append(c.token_ids, 1, c.logprobs)
        traj.num_turns = turn + 1
        text = chat.decode(c.token_ids)
        msg = {"role": "assistant", "content": text, "finish_reason": c.finish_reason}
        msg.update(tool_calls=[], format_error=None)
        traj.messages.append(msg)
        try:
            calls = parse_actions(
                text, chat.action_format, cfg.max_tool_arg_bytes, chat.opens_think
            )
        except FormatError as e:
            calls, msg["format_error"] = [], str(e)
        cut = "max_context" if max_tokens < cfg.max_tokens_per_turn else "max_tokens_per_turn"
        if c.finish_reason == "length" and not calls:
            return cut
        if msg["format_error"]:
            traj.format_errors += 1
            consecutive_errors += 1
            obs = [{"role": chat.observation_role, "content": msg["format_error"]}]
            if consecutive_errors >= cfg.max_format_errors:
                traj.messages.extend({**o, "in_tokens": False} for o in obs)
                return "format_errors"
        else:
            consecutive_errors = 0
            ran = await _run_calls(traj, ep, msg, calls)
            if ran is None:
                return "disk_limit"
            results, finished = ran
            obs = _observations(chat, results)
            if finished or c.finish_reason == "length":  # a cut turn: its complete calls ran
                traj.messages.extend({**o, "in_tokens": False} for o in obs)
                return "finish" if finished else cut
        closed = bool(c.token_ids) and c.token_ids[-1] == chat.eot_id
        obs_ids = chat.observation_ids(obs, closed=closed)
        if len(traj.token_ids) + len(obs_ids) >= cfg.max_context_tokens:
            traj.messages.extend({**o, "in_tokens": False} for o in obs)
            return "max_context"
        traj.messages.extend(obs)
        traj.append(obs_ids, 0)
    return "max_turns"


async def _start(task, host: str, image, sandbox_cfg: SandboxConfig, run_id, traj: Trajectory):
    """The episode's sandbox on Docker engine `host` from `image` (built here when it is None or
    its build failed on this engine alone); its seconds in traj.timings["start_s"]."""
    if image is None or isinstance(image, Exception):  # failed on this engine alone: try again here
        image = await asyncio.to_thread(
            images_lib.build_image,
            task,
            sandbox_cfg.base_image,
            sandbox_cfg.image_map,
            sandbox_cfg.build_network,
            host,
        )
    t0 = time.monotonic()
    limits = sandbox_lib.Limits.from_config(sandbox_cfg).for_task(task)
    build = (sandbox_cfg.base_image, sandbox_cfg.image_map, sandbox_cfg.build_network)
    sb = await compose_lib.start_sandbox(task, image, limits, run_id, host, build)  # +sidecars
    traj.timings["start_s"] = time.monotonic() - t0
    return sb


async def _act(
    traj: Trajectory, ep: _Episode, engine, seed, oracle: bool, timeout_s: float
) -> None:
    """The episode's actions: the task's solution.sh (oracle) or the agent loop; sets traj's
    messages, tokens, stop_reason and truncated."""
    task, sb, cfg = ep.task, ep.sandbox, ep.cfg
    if oracle:
        r = await sb.exec(
            await sandbox_lib.put_solution(sb, task, "/tmp/solution.sh"), timeout=timeout_s
        )
        out = {"role": "oracle", "content": r.output, "exit_code": r.exit_code}
        traj.messages = [{**out, "timed_out": r.timed_out}]
        traj.stop_reason = "oracle"
        return
    traj.messages, ids = ep.chat.prompt_ids(task.instruction)
    traj.append(ids, 0)
    traj.prompt_len = len(ids)
    sampling = SamplingParams(cfg.temperature, cfg.top_p, cfg.top_k, cfg.max_tokens_per_turn, seed)
    traj.stop_reason = await agent_loop(traj, ep, engine, sampling)
    traj.truncated = traj.stop_reason in LIMIT_REASONS


async def _verify(traj: Trajectory, task, sb):
    """The task's hidden tests on the sandbox (not when it already went over its disk limit):
    the test report, or None when not verified (traj.stop_reason then "disk_limit")."""
    t0 = time.monotonic()
    report = None
    if traj.stop_reason != "disk_limit":
        try:
            report = await sb.run_tests(
                task.tests_dir,
                timeout=task.test_timeout_s,
                test_setup=getattr(task, "test_setup", None),
                agent_modules=getattr(task, "agent_modules", ()),
                script=getattr(task, "verifier_script", None),
            )
        except sandbox_lib.DiskLimitError:  # over the limit after the last command (background)
            traj.stop_reason = "disk_limit"
    traj.timings["verify_s"] = time.monotonic() - t0
    return report


async def _score(traj: Trajectory, task, sb, report, judge, oracle: bool) -> None:
    """traj's verification from the report (a disk-limit verification when None), then the
    judge's score unless the episode tampered with its tests (then stop_reason "tampered")."""
    log = logging.getLogger("termrl.rollout")
    if report is None:  # not verified: a snapshot would copy a layer already over the limit
        error = f"disk_limit: the sandbox held {sb.disk_exceeded} bytes, over sandbox.storage_mb"
        v = reward_lib.Verification(0.0, False, [], list(task.weights), [], [], error=error)
        traj.verification = v
        # judged 0 when a judge is configured, as train.py scores tampering
        traj.judge_score = 0.0 if judge is not None and not oracle else None
        log.warning("task %s episode %d: %s", task.id, traj.group_index, v.error)
    else:
        v = reward_lib.verify(report, task.weights)
        traj.test_report, traj.verification, traj.resolved = report, v, v.resolved
    if v.tampered:  # scored 0 without the judge: a forged verification earns nothing
        traj.stop_reason = "tampered"
        log.warning("task %s episode %d: tampered: %s", task.id, traj.group_index, v.tampered)
    elif judge is not None and not oracle and report is not None:
        t0 = time.monotonic()
        jr = await judge.score(
            task.instruction,
            [{"role": m["role"], "content": m["content"]} for m in traj.messages],
            describe_outcome(v),
        )
        traj.judge_score = jr.score
        traj.timings["judge_s"] = time.monotonic() - t0


async def run_episode(
    task,
    engine: Engine | None,
    chat: ChatFormat,
    cfg: RolloutConfig,
    group_index: int = 0,
    image: str | dict | None = None,
    sandbox_cfg: SandboxConfig | None = None,
    run_id: str | None = None,
    judge=None,
    reward_cfg: RewardConfig | None = None,
    seed: int | None = None,
    oracle: bool = False,
    on_acted=None,
    ahead: asyncio.Future | None = None,
) -> Trajectory:
    """One episode of `task` in a fresh sandbox, verified by the task's hidden tests (also when a limit cut
    it short), optionally scored by the judge. engine None with oracle=True runs the task's solution.sh.
    on_acted: optional callback, called once when the agent stops acting (its last generate call
    is over), before verification; also when the episode failed or was cancelled earlier.
    ahead: the episode's sandbox started before the rollout (`start_ahead`): a future of
    (engine url, sandbox, start seconds) taking the place of acquire and start here.

    Its reward is left None: the group's rule sets it (`score_group`, reward.group_rewards).
    Never raises for a failed episode: the trajectory's error is set (docker errors, image build
    errors, engine errors) and score_group leaves its reward None. Cancellation (Ctrl-C)
    propagates after the sandbox is closed.
    The episode runs on the Docker engine hosts.acquire() places it on; image: a tag present on every
    engine, {engine url: tag or the Exception its build raised} (built here where missing), or None
    (built here). An engine that stopped answering mid-episode backs off (hosts.release).
    """

    sandbox_cfg = sandbox_cfg or SandboxConfig()
    traj = Trajectory(task.id, group_index, difficulty=task.difficulty, category=task.category)
    t_start = time.monotonic()
    sb, host, error = None, None, None
    once = [on_acted]

    def acted() -> None:  # once per episode, whichever way it stops acting
        callback, once[0] = once[0], None
        if callback is not None:
            callback()

    try:
        if ahead is not None:  # shielded: a start cut short would leave its container unseen
            host, sb, traj.timings["start_s"] = await asyncio.shield(ahead)
            traj.docker_host = host
        else:
            traj.docker_host = host = await hosts.acquire()
            image = image.get(host) if isinstance(image, dict) else image
            sb = await _start(task, host, image, sandbox_cfg, run_id, traj)
        timeout_s = min(cfg.episode_timeout_s, task.agent_timeout_s or cfg.episode_timeout_s)
        deadline = time.monotonic() + timeout_s
        limits = (sandbox_cfg.exec_timeout_s, sandbox_cfg.output_limit_bytes)
        ep = _Episode(task, sb, cfg, chat, deadline, *limits)
        try:
            await _act(traj, ep, engine, seed, oracle, timeout_s)
        finally:  # acted, failed or cancelled: this episode asks the engine for nothing more
            acted()
        traj.timings["agent_s"] = time.monotonic() - t_start
        report = await _verify(traj, task, sb)
        await _score(traj, task, sb, report, judge, oracle)
    except Exception as e:
        error = e
        traj.error = f"{type(e).__name__}: {e}"
        traj.stop_reason = traj.stop_reason or "error"
        traj.reward = None
    finally:
        acted()  # the sandbox never started: the episode never acted
        if ahead is not None and host is None:  # cancelled while its start went on: close it
            with contextlib.suppress(Exception):
                host, sb, _ = await asyncio.shield(ahead)
        if sb is not None:
            await asyncio.shield(sb.close())
        if host is not None and await asyncio.shield(asyncio.to_thread(hosts.release, host, error)):
            traj.error = f"Docker engine {host} stopped answering: {traj.error}"
        traj.timings["total_s"] = time.monotonic() - t_start
    return traj


@dataclass
class Group:
    """The episodes of one task run together: GRPO's unit, built once (`score_group`) and passed
    on to the reward, the advantages and the learner samples (learner/packing.py), and to
    evaluation.

    task: the task (tasks.Task). trajectories: its episodes, by group_index. rewards: one per
    trajectory (reward.group_rewards; None for a failed episode). judge_dropped: some but not all
    scored members had a judge score, so the whole group is scored on the tests alone (counted as
    judge_dropped_groups).
    """

    task: Any
    trajectories: list[Trajectory]
    rewards: list[float | None]
    judge_dropped: bool = False


def score_group(
    task, trajectories: list[Trajectory], reward_cfg: RewardConfig, judged: bool
) -> Group:
    """The Group of `task`'s finished episodes, each member's reward (also set as .reward) by the
    one rule, reward.group_rewards of the tests' score and the judge's. judged: a judge scored
    this run's episodes; then a tampered episode, never sent to it, counts as judged 0 (the
    rubric scores gaming 0) and keeps the group on one scale. A failed episode (.error set, or
    no verification) has reward None."""
    tests = [
        None if t.error is not None or t.verification is None else t.verification.score
        for t in trajectories
    ]
    judge = [0.0 if judged and t.stop_reason == "tampered" else t.judge_score for t in trajectories]
    rewards, dropped = reward_lib.group_rewards(
        tests, judge, reward_cfg.w_tests, reward_cfg.w_judge
    )
    for t, r in zip(trajectories, rewards):
        t.reward = r
    return Group(task, list(trajectories), rewards, dropped)


async def _build_images(tasks: list, sandbox_cfg: SandboxConfig) -> dict[str, dict]:
    """Each task's image on every listed Docker engine, built at once: task id -> engine url ->
    tag, or the Exception its build raised (reported per trajectory, never raised here)."""
    images: dict[str, dict[str, str | Exception]] = {}

    async def build(task, host: str):
        try:
            tag = await asyncio.to_thread(
                images_lib.build_image,
                task,
                sandbox_cfg.base_image,
                sandbox_cfg.image_map,
                sandbox_cfg.build_network,
                host,
            )
        except Exception as e:  # reported per trajectory
            tag = e
        images.setdefault(task.id, {})[host] = tag

    unique = {t.id: t for t in tasks}.values()
    await asyncio.gather(*(build(t, h) for t in unique for h in hosts.urls()))
    return images


async def start_ahead(
    tasks: list, n_per_task: int, cfg: RolloutConfig, sandbox_cfg: SandboxConfig, run_id
) -> dict[tuple[int, int], asyncio.Task]:
    """Start the sandboxes of a rollout's first cfg.max_concurrent_episodes episodes before it
    (train.py's overlapped loop: while the learner trains), for run_episodes(tasks, ...,
    ahead=<a future of this>). Returns (task index, group index) -> a task resolving to (engine
    url, sandbox, start seconds). Raises nothing itself: a failed start (its engine slot given
    back) is that episode's error when it runs; a task whose image failed gets none."""
    images = await _build_images(tasks, sandbox_cfg)

    async def one(task, image: dict):
        host = await hosts.acquire()
        traj = Trajectory(task.id, 0)
        try:
            sb = await _start(task, host, image.get(host), sandbox_cfg, run_id, traj)
        except BaseException as e:  # the slot goes back; the episode reports the error
            err = e if isinstance(e, Exception) else None
            await asyncio.shield(asyncio.to_thread(hosts.release, host, err))
            raise
        return host, sb, traj.timings["start_s"]

    keys = [(i, j) for i, t in enumerate(tasks) for j in range(n_per_task)]
    return {
        (i, j): asyncio.ensure_future(one(tasks[i], images[tasks[i].id]))
        for i, j in keys[: cfg.max_concurrent_episodes]
        if _build_failed(tasks[i], j, images[tasks[i].id]) is None
    }


async def close_ahead(ahead: asyncio.Future) -> None:
    """Close the sandboxes of `start_ahead` that no episode took (run_episodes takes an entry out
    of the mapping when an episode owns it; a stop or an error before or during their rollout
    leaves the rest) and give their engine slots back; waits for the starts still in flight, whose
    containers a reap would otherwise miss. A start that failed already gave its slot back; an
    `ahead` cancelled before its starts were made started nothing. Idempotent."""
    if ahead.cancelled():
        return
    started = await ahead
    untaken = list(started.values())
    started.clear()
    await asyncio.gather(*(_close_one(t) for t in untaken))


async def _close_one(start: asyncio.Future) -> None:
    """One sandbox of start_ahead that no episode took: closed, its engine slot given back."""
    try:
        host, sb, _ = await start
    except Exception:  # its start failed and gave the slot back
        return
    await asyncio.shield(sb.close())
    await asyncio.to_thread(hosts.release, host)


def _build_failed(task, j: int, image: dict) -> Trajectory | None:
    """Episode j's failed trajectory when task's image failed to build on every engine (one error
    per episode), else None."""
    if not all(isinstance(x, Exception) for x in image.values()):
        return None
    x = next(iter(image.values()))
    return Trajectory(
        task.id,
        j,
        difficulty=task.difficulty,
        category=task.category,
        stop_reason="error",
        error=f"image build failed: {type(x).__name__}: {x}",
    )


class _Progress:
    """The rollout's progress line on stderr: episodes done, mean reward of the scored groups,
    generated tokens/s, errors."""

    def __init__(self, total: int, enabled: bool):
        self.bar = tqdm(
            total=total, desc="rollout", file=sys.stderr, disable=not enabled, dynamic_ncols=True
        )
        self.done: list[Trajectory] = []
        self.rewards: list[float] = []
        self.t_start = time.monotonic()

    def episode_done(self, traj: Trajectory) -> None:
        self.done.append(traj)
        tokens = sum(sum(t.loss_mask) for t in self.done)
        errors = sum(t.error is not None for t in self.done)
        tokens_per_s = tokens / max(1e-9, time.monotonic() - self.t_start)
        self.bar.set_postfix_str(
            f"reward {sum(self.rewards) / max(1, len(self.rewards)):.3f} | "
            f"{tokens_per_s:.1f} tok/s | errors {errors}"
        )
        self.bar.update(1)


async def run_episodes(
    tasks: list,
    engine: Engine | None,
    tokenizer,
    n_per_task: int,
    cfg: RolloutConfig,
    judge=None,
    *,
    action_format: str = "markdown",
    sandbox_cfg: SandboxConfig | None = None,
    reward_cfg: RewardConfig | None = None,
    run_id: str | None = None,
    seed: int | None = None,
    oracle: bool = False,
    progress: bool = True,
    on_trajectory=None,
    on_generation_end=None,
    ahead: asyncio.Future | None = None,
) -> list[Group]:
    """Run n_per_task episodes of every task concurrently (asyncio), at most cfg.max_concurrent_episodes at
    once; sandbox.py bounds the docker calls in flight. Images are built first, once per task.
    Each episode is verified (and judged) as soon as it ends, while the others still generate.

    Returns one Group per task in the order of `tasks` (score_group), trajectories by group_index.
    seed: episode j of task i samples with seed (seed, i, j) mixed into one int (reproducible).
    on_trajectory: callback per trajectory when its group is scored (e.g. JSONL). Progress on
    stderr. on_generation_end: called once (in the event loop) when every episode stopped acting
    (train.py's overlapped update starts there); not when cancelled before. ahead: a future of
    `start_ahead(tasks, ...)`'s sandboxes, taken instead of starting their own; what no episode
    took (cancelled before they ran) is the caller's to close (close_ahead)."""
    if n_per_task < 1:
        raise ValueError(f"n_per_task = {n_per_task}: must be >= 1")
    if engine is None and not oracle:
        raise ValueError("engine: None is only allowed with oracle=True")
    sandbox_cfg = sandbox_cfg or SandboxConfig()
    reward_cfg = reward_cfg or RewardConfig()
    chat = ChatFormat(tokenizer, action_format)
    started = await ahead if ahead is not None else {}
    images = await _build_images(tasks, sandbox_cfg)
    sem = asyncio.Semaphore(cfg.max_concurrent_episodes)
    bar = _Progress(len(tasks) * n_per_task, progress)
    args = (sandbox_cfg, run_id, judge, reward_cfg)
    acting = [len(tasks) * n_per_task]  # episodes that may still call the engine

    def acted() -> None:
        acting[0] -= 1
        if acting[0] == 0 and on_generation_end is not None:
            on_generation_end()

    async def episode(i: int, task, j: int) -> Trajectory:
        image = images[task.id]
        traj = _build_failed(task, j, image)
        if traj is None:
            # this episode owns its sandbox started ahead from here (close_ahead closes the rest)
            kw, entered = dict(on_acted=acted, ahead=started.pop((i, j), None)), []
            try:
                async with sem:
                    s = None if seed is None else (seed * 1_000_003 + i) * 10_007 + j
                    entered.append(True)
                    traj = await run_episode(
                        task, engine, chat, cfg, j, image, *args, s, oracle, **kw
                    )
            finally:  # cancelled before it ran: its sandbox started ahead is closed here
                if not entered and kw["ahead"] is not None:
                    await asyncio.shield(_close_one(kw["ahead"]))
        else:  # its image failed to build: it never acts
            acted()
        bar.episode_done(traj)
        return traj

    async def group(i: int, task) -> Group:
        trajectories = await asyncio.gather(*(episode(i, task, j) for j in range(n_per_task)))
        g = score_group(task, trajectories, reward_cfg, judged=judge is not None and not oracle)
        bar.rewards.extend(r for r in g.rewards if r is not None)
        for t in g.trajectories if on_trajectory is not None else ():
            on_trajectory(t)
        return g

    try:
        return list(await asyncio.gather(*(group(i, t) for i, t in enumerate(tasks))))
    finally:
        bar.bar.close()


# ----------------------------------------------------------------------------- metrics


if (
    __name__ == "__main__"
):  # the command moved (issue 23); running this file must not silently do nothing
    sys.exit(
        "error: `python rollout.py` is no command: rollout.py is the agent loop's library. "
        "Evaluate (or run the oracle) with `python evaluate.py [--oracle] --tasks ...`"
    )
