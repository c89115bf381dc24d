"""The agent loop: a policy works in a task's sandbox through tool calls, turn by turn, and the tokens it
saw and sampled become a token-exact `Trajectory`.

An episode: the policy sees a system prompt (tools + action format) and the task instruction; each turn
it generates tokens, the tool calls in them run in the task's sandbox, and the results come back as an
observation message (`agent_loop`). When it stops, the task's hidden tests score the sandbox and a judge
may score the transcript (`run_episode`). `run_episodes` runs groups of episodes of many tasks
concurrently and scores each group by one reward rule (`score_group`, a `Group`). A Harbor multi-step
task's steps run in one episode, each step's instruction a new user turn, each step verified at its end
(`_act_steps`), their rewards rolled up as harbor does (reward.roll_up_steps).

Beside it: what the agent sees and says in agent/ (action formats and their parsers in actions.py, chat
rendering in chat.py, the tools run in tools.py), an episode's sandbox from sandbox.start_sandbox
(`start_episode_sandbox`), the engines in engines/, the evaluation command in
evaluate.py.
"""

import asyncio
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
from agent.tools import fit_observations, observations, run_tool
from configs import RewardConfig, RolloutConfig, SandboxConfig
from engines import Completion, Engine, SamplingParams
from judging.prompt import describe_outcome
from sandboxing import hosts
from sandboxing.images import build_error, build_images
from tasks.harbor import prepare_step

# ----------------------------------------------------------------------------- the trajectory


@dataclass
class Trajectory:
    """One episode: the token sequence the policy actually saw, and how the episode went.

        token_ids = prompt | generated_1 | observation_1 | generated_2 | observation_2 | ... | generated_n
        loss_mask = 0...0  | 1.........1 | 0...........0 | 1.........1 | 0...........0 | ... | 1.........1
        logprobs  = 0...0  | engine lp   | 0...........0 | engine lp   | 0...........0 | ... | engine lp

    token_ids / loss_mask / logprobs: same length; loss_mask 1 exactly on generated tokens, whose logprobs
    are the engine's; 0 and 0.0 elsewhere. prompt_len: tokens before the first generated one.
    Generated tokens are kept exactly as sampled (never re-tokenised). Observation tokens are what the
    model's chat template renders for the observation message(s) after an assistant turn (agent/chat.py:
    the template's rendering with and without them, the suffix), so the whole sequence equals the
    template's rendering of `messages` (test_rollout checks it), except that earlier `<think>` blocks are
    kept where a template (Qwen3) would strip them, and that sampled text whose canonical tokenisation
    differs (e.g. a reply starting with "\\n\\n", which the template merges with the preceding "\\n") keeps
    the sampled ids, by design.

    messages: the conversation ({"role", "content"} plus, for assistant turns, "tool_calls", "format_error",
    "finish_reason"; for observations, "in_tokens": False when a limit kept it out of token_ids).
    stop_reason: finish | max_turns | max_context | max_tokens_per_turn (with rollout.end_on_turn_cap) | timeout |
    format_errors | oracle | error |
    tampered (the agent changed the test toolchain: reward 0, verification.tampered says what) |
    disk_limit (the sandbox wrote past sandbox.storage_mb and was killed: not verified, reward 0,
    verification.error says how much).
    format_errors: malformed turns (a turn cut at max_tokens_per_turn without a complete action
    among them). observations_cut: observations cut to fit the context.
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
    # observations cut to fit the context (agent.tools.fit_observations)
    observations_cut: int = 0
    error: str | None = None
    exact: bool = True
    # the Docker engine the episode ran on (sandboxing/hosts.py)
    docker_host: str = ""
    # a multi-step task's steps as they went ({"name", "stop_reason", "turns", "parts", "cut"}:
    # `_act_steps`); empty for a single-step task
    steps: list[dict] = field(default_factory=list)
    # optimizer steps of the policy that generated it (set by train.py)
    policy_version: int = 0

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


async def start_episode_sandbox(task, image, opts: "EpisodeOptions", placed: Callable) -> Any:
    """An episode's sandbox: a slot on the least-loaded Docker engine (hosts.acquire; `placed` is
    told its url at once, so the episode gives the slot back however it ends), then
    sandbox.start_sandbox there from `image` (a tag, {engine url: tag}, or None: built there).
    Returns the started sandbox.Sandbox; raises what the start raises."""
    host = await hosts.acquire()
    placed(host)
    if isinstance(image, dict):
        image = image.get(host)
    return await sandbox_lib.start_sandbox(
        task, image, run_id=opts.run_id, host=host, cfg=opts.sandbox
    )


@dataclass
class EpisodeOptions:
    """What every episode of a run shares beside the rollout knobs (RolloutConfig): the agent's
    action format, the sandbox it works in, the reward rule and the judge (judging.judge.Judge;
    None: the tests alone), the label of its containers, whether the task's solution acts
    instead of a policy, and how an episode gets its sandbox (`start_episode_sandbox`'s
    signature; training/ahead.py hands over sandboxes started ahead of the rollout)."""

    action_format: str = "markdown"
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    judge: Any = None
    # the run id on the episodes' containers (sandbox.RUN_ID; None: this process's)
    run_id: str | None = None
    oracle: bool = False
    get_sandbox: Callable = start_episode_sandbox


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


# ----------------------------------------------------------------------------- the agent loop


def turn_limit(task_max_turns: int | None, cfg_max_turns: int) -> int:
    """An episode's assistant turns at most: the task's max_turns when it sets one, never above the
    config's rollout.max_turns (a task may ask for fewer turns, not more than the run allows)."""
    return min(task_max_turns or cfg_max_turns, cfg_max_turns)


def turn_cap_error(max_tokens_per_turn: int, error: str | None) -> str:
    """The observation of a turn cut at max_tokens_per_turn before it held a complete action: what
    happened, then the parser's own message (the expected format) when it had one."""
    head = (
        f"Your reply was cut at the limit of {max_tokens_per_turn} tokens per turn before its "
        "action was complete; nothing ran. Keep each reply short."
    )
    return f"{head}\n{error}" if error else head


async def agent_loop(
    traj: Trajectory, ep: _Episode, engine: Engine, sampling: SamplingParams
) -> str:
    """Run turns until a stop condition; fill traj (tokens, masks, messages). Returns the stop reason.

    A turn: the engine generates, the reply is parsed for tool calls (agent/actions.py: hermes or
    markdown), they run in order in the sandbox (agent/tools.py), and their observation goes in with
    loss_mask 0. markdown: a turn stops after its first action (the closing fence line of its first
    bash block, or a DONE line; `markdown_stop_check`); the generated tokens are kept as sampled and
    the end-of-turn token the template needs goes in after them with loss_mask 0.

    Observations: one that would leave the next turn less than max_tokens_per_turn of the context is
    cut to half the room left after that turn (agent.tools.fit_observations: head and tail of each
    long output around a marker saying how many tokens and bytes were cut; traj.observations_cut
    counts them), so later turns keep room for theirs. No observation
    follows the last allowed turn: it is recorded in messages with "in_tokens": False, never in
    token_ids, so the trajectory ends with the last action's tokens.

    Limits (RolloutConfig; a task's max_turns and agent_timeout_s only lower them: turn_limit) end
    the episode with a recorded stop reason, and it is still verified: max_turns; max_context (the
    context has no room for the next turn, or even the cut observation with its markers alone does
    not fit); max_tokens_per_turn (only with rollout.end_on_turn_cap: a turn cut at the cap runs its
    complete calls, then the episode stops); timeout (wall clock; a pending generation is abandoned,
    commands are cut to the time left); format_errors (max_format_errors malformed turns in a row);
    disk_limit (the sandbox went over its disk limit). Malformed output (invalid JSON, unknown tool,
    missing/extra/mistyped or oversized arguments, no call, an unclosed block, and by default a turn
    cut at max_tokens_per_turn without a complete action: turn_cap_error) runs nothing and gets an
    error observation that shows the expected format (FormatError messages). A turn cut at the cap
    after complete calls runs them and goes on, its observation saying the rest was cut.
    """
    cfg = ep.cfg
    chat = ep.chat
    max_turns = turn_limit(ep.task.max_turns, cfg.max_turns)
    # markdown: a turn ends after its first action; the end-of-turn token then goes in as an observation token
    stop_check = None
    if chat.action_format == "markdown":
        stop_check = markdown_stop_check(chat.tokenizer, chat.opens_think)
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
        # counted over the episode: a multi-step task's steps each run this loop
        traj.num_turns += 1
        text = chat.decode(c.token_ids)
        msg = {
            "role": "assistant",
            "content": text,
            "finish_reason": c.finish_reason,
            "tool_calls": [],
            "format_error": None,
        }
        traj.messages.append(msg)
        try:
            calls = parse_actions(
                text, chat.action_format, cfg.max_tool_arg_bytes, chat.opens_think
            )
        except FormatError as e:
            calls = []
            msg["format_error"] = str(e)
        capped = c.finish_reason == "length"
        # cut by the context's room, not the turn's cap: there is no room for another turn
        out_of_context = capped and max_tokens < cfg.max_tokens_per_turn
        ends = capped and (out_of_context or cfg.end_on_turn_cap)
        cut = "max_context" if out_of_context else "max_tokens_per_turn"
        if ends and not calls:
            return cut
        if capped and not calls:
            # cut at the turn's cap before a complete action: a malformed turn, the episode goes on
            msg["format_error"] = turn_cap_error(cfg.max_tokens_per_turn, msg["format_error"])
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
            obs = observations(chat, results)
            # a cut turn that ends the episode: its complete calls ran
            if finished or ends:
                traj.messages.extend({**o, "in_tokens": False} for o in obs)
                return "finish" if finished else cut
            if capped and obs:
                note = (
                    f"\n\n[your reply was cut at {cfg.max_tokens_per_turn} tokens per turn; "
                    "only its complete calls ran]"
                )
                obs[-1] = {**obs[-1], "content": obs[-1]["content"] + note}
        if turn == max_turns - 1:
            # no observation after the last turn: nothing would act on it
            traj.messages.extend({**o, "in_tokens": False} for o in obs)
            return "max_turns"
        closed = bool(c.token_ids) and c.token_ids[-1] == chat.eot_id
        # the next turn keeps its whole max_tokens_per_turn
        budget = cfg.max_context_tokens - len(traj.token_ids) - cfg.max_tokens_per_turn
        # a cut observation takes half the room, so the turns after it still have some
        fitted = fit_observations(chat, obs, budget, closed=closed, cut_to=budget // 2)
        if fitted is None:
            traj.messages.extend({**o, "in_tokens": False} for o in obs)
            return "max_context"
        obs, obs_ids = fitted
        traj.observations_cut += sum("cut_tokens" in o for o in obs)
        traj.messages.extend(obs)
        traj.append(obs_ids, 0)
    return "max_turns"


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
    # Each turn its own seed: the same seed every turn would reuse the same uniforms.
    seed = None if sampling.seed is None else hash((sampling.seed, turn)) & (2**63 - 1)
    try:
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
    # engines that ignore stop_check: the same cut, after the fact
    return cut_at_stop(c, stop_check)


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


async def _run_calls(
    traj: Trajectory, ep: _Episode, msg: dict, calls: list[ToolCall]
) -> tuple[list, bool] | None:
    """Run one turn's calls in order up to a finish call, each listed in msg["tool_calls"] (the
    ones after it in msg["not_run"]). Returns (results [(call, observation, metadata)], finished),
    or None when the sandbox went over its disk limit (a message in traj says so)."""
    t0 = time.monotonic()
    results = []
    finished = False
    for call in calls:
        msg["tool_calls"].append({"name": call.name, "arguments": call.arguments})
        if call.name == "finish":
            finished = True
            break
        try:
            out, meta = await run_tool(
                ep.sandbox, call, ep.deadline, ep.exec_timeout_s, ep.output_limit_bytes
            )
        except sandbox_lib.DiskLimitError as e:
            # the sandbox was killed: nothing more can run
            message = {"role": ep.chat.observation_role, "content": f"[termrl: {e}]"}
            traj.messages.append({**message, "in_tokens": False})
            return None
        results.append((call, out, meta))
    skipped = calls[len(msg["tool_calls"]) :]
    if skipped:
        msg["not_run"] = [{"name": s.name, "arguments": s.arguments} for s in skipped]
    traj.timings["tools_s"] = traj.timings.get("tools_s", 0.0) + time.monotonic() - t0
    return results, finished


# ----------------------------------------------------------------------------- one episode


async def run_episode(
    task,
    engine: Engine | None,
    chat: ChatFormat,
    cfg: RolloutConfig,
    opts: EpisodeOptions,
    group_index: int = 0,
    image: str | dict | None = None,
    seed: int | None = None,
    on_acted=None,
) -> Trajectory:
    """One episode of `task` in a fresh sandbox, verified by the task's hidden tests (also when a limit cut
    it short), optionally scored by the judge. engine None with opts.oracle runs the task's solution.sh.
    on_acted: optional callback, called once when the agent stops acting (its last generate call
    is over), before verification; also when the episode failed or was cancelled earlier.

    Its reward is left None: the group's rule sets it (`score_group`, reward.group_rewards).
    Never raises for a failed episode: the trajectory's error is set (docker errors, image build
    errors, engine errors) and score_group leaves its reward None. Cancellation (Ctrl-C)
    propagates after the sandbox is closed.
    The episode runs in the sandbox opts.get_sandbox gives it (start_episode_sandbox: on the Docker
    engine hosts.acquire() places it on); image: a tag present on every engine, {engine url: tag
    or the Exception its build raised} (built here where missing), or None (built here). An engine
    that stopped answering mid-episode backs off (hosts.release).
    """
    sandbox_cfg = opts.sandbox
    oracle = opts.oracle
    judge = opts.judge
    traj = Trajectory(task.id, group_index, difficulty=task.difficulty, category=task.category)
    t_start = time.monotonic()
    sb = None
    host = None
    error = None

    # once per episode, whichever way it stops acting
    def acted() -> None:
        nonlocal on_acted
        callback = on_acted
        on_acted = None
        if callback is not None:
            callback()

    # the engine slot the episode holds, from the moment it is taken
    def placed(url: str) -> None:
        nonlocal host
        host = url
        traj.docker_host = url

    try:
        sb = await opts.get_sandbox(task, image, opts, placed)
        traj.timings["start_s"] = sb.start_s
        timeout_s = min(cfg.episode_timeout_s, task.agent_timeout_s or cfg.episode_timeout_s)
        deadline = time.monotonic() + timeout_s
        ep = _Episode(
            task,
            sb,
            cfg,
            chat,
            deadline,
            sandbox_cfg.exec_timeout_s,
            sandbox_cfg.output_limit_bytes,
        )
        if task.steps:
            try:
                reports = await _act_steps(traj, ep, engine, seed, oracle)
            finally:
                acted()
            # the steps' verifications ran in between: not the agent's time
            agent_s = time.monotonic() - t_start - traj.timings.get("verify_s", 0.0)
            traj.timings["agent_s"] = agent_s
            # over the disk limit in a step: the episode is scored as unverified (_score)
            last = reports[-1] if reports and traj.stop_reason != "disk_limit" else None
            await _score(traj, task, sb, last, judge, oracle, reports)
        else:
            try:
                await _act(traj, ep, engine, seed, oracle, timeout_s)
            finally:
                # acted, failed or cancelled: this episode asks the engine for nothing more
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
        # the sandbox never started: the episode never acted
        acted()
        if sb is not None:
            await asyncio.shield(sb.close())
        if host is not None and await asyncio.shield(asyncio.to_thread(hosts.release, host, error)):
            traj.error = f"Docker engine {host} stopped answering: {traj.error}"
        traj.timings["total_s"] = time.monotonic() - t_start
    return traj


async def _act(
    traj: Trajectory, ep: _Episode, engine, seed, oracle: bool, timeout_s: float
) -> None:
    """The episode's actions: the task's solution.sh (oracle) or the agent loop; sets traj's
    messages, tokens, stop_reason and truncated."""
    task = ep.task
    sb = ep.sandbox
    cfg = ep.cfg
    if oracle:
        command = await sandbox_lib.put_solution(sb, task, "/tmp/solution.sh")
        r = await sb.exec(command, timeout=timeout_s)
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


async def _act_steps(traj: Trajectory, ep: _Episode, engine, seed, oracle: bool) -> list:
    """A Harbor multi-step episode (Task.steps), as harbor 0.25's MultiStepTrial runs one: per step,
    its workdir/ is copied into the working directory (its setup.sh run there), the policy acts
    (or the step's oracle runs), then the step's test.sh verifies a snapshot of the sandbox in a
    fresh container (Sandbox.run_tests) while the sandbox itself goes on into the next step.

    Step 1's instruction is the prompt; each later one arrives as the next user turn, loss_mask 0
    (`_next_instruction`). A step ends when its agent loop does (finish, its max_turns, its own
    agent_timeout_s, format_errors, a turn cut with end_on_turn_cap); when the context has no room
    left (max_context) the later steps get no turns and are verified on the sandbox as it is. A
    step under its min_reward ends the episode (harbor: the later steps do not run). disk_limit
    ends it unverified. Returns the verified steps' reports in order; sets traj.steps,
    stop_reason (the last step's), truncated (any step cut by a limit).
    Raises RuntimeError when a step's setup.sh fails (harbor aborts the trial there)."""
    task, cfg, chat = ep.task, ep.cfg, ep.chat
    reports, acting = [], True
    sampling = SamplingParams(cfg.temperature, cfg.top_p, cfg.top_k, cfg.max_tokens_per_turn, seed)
    for i, step in enumerate(task.steps):
        await prepare_step(ep.sandbox, task.id, step, ep.exec_timeout_s)
        timeout_s = min(cfg.episode_timeout_s, step.agent_timeout_s or cfg.episode_timeout_s)
        step_ep = dataclasses.replace(ep, deadline=time.monotonic() + timeout_s)
        turns = traj.num_turns
        if oracle:
            own = dataclasses.replace(task, solution=step.solution, solution_dir=step.solution_dir)
            command = await sandbox_lib.put_solution(ep.sandbox, own, "/tmp/solution.sh")
            r = await ep.sandbox.exec(command, timeout=timeout_s)
            out = {"role": "oracle", "content": r.output, "exit_code": r.exit_code}
            traj.messages.append({**out, "timed_out": r.timed_out, "step": step.name})
            stop = "oracle"
        elif acting and (i == 0 or _next_instruction(traj, chat, cfg, step)):
            if i == 0:
                traj.messages, ids = chat.prompt_ids(step.instruction)
                traj.append(ids, 0)
                traj.prompt_len = len(ids)
            # each step its own seeds: turn numbers restart with every step (ints only: a str's
            # hash differs between processes)
            mixed = None if seed is None else hash((seed, -1, i)) & (2**63 - 1)
            step_sampling = dataclasses.replace(sampling, seed=mixed if i else seed)
            stop = await agent_loop(traj, step_ep, engine, step_sampling)
        else:
            stop = "max_context"
        acting = acting and stop != "max_context"
        record = {"name": step.name, "stop_reason": stop, "turns": traj.num_turns - turns}
        traj.steps.append(record)
        traj.stop_reason = stop
        traj.truncated = traj.truncated or stop in LIMIT_REASONS
        report = None if stop == "disk_limit" else await _verify(traj, step, ep.sandbox)
        if report is None:  # over the disk limit: not verified (_score)
            return reports
        reports.append(report)
        record["parts"] = report.parts
        if report.tampered or _below(report.parts, step.min_reward):
            record["cut"] = True
            break
    return reports


def _below(parts: dict[str, float] | None, min_reward: dict[str, float] | None) -> bool:
    """A step's reward parts under any threshold of its min_reward (a missing key: -inf)."""
    if not min_reward:
        return False
    return any((parts or {}).get(k, float("-inf")) < x for k, x in min_reward.items())


def _next_instruction(traj: Trajectory, chat: ChatFormat, cfg: RolloutConfig, step) -> bool:
    """Append a later step's instruction as a user turn (loss_mask 0), rendered as the chat
    template renders it after the conversation so far. After a generated turn it follows that
    turn's end of turn; where the step ended with a generation prompt pending (its last turn's
    observation went in, then the clock ran out), that prompt is taken off and comes again after
    the instruction. Returns False, appending nothing, when the context has no room for it and one
    more turn. Raises RuntimeError when the pending prompt is not the template's."""
    msg = {"role": "user", "content": step.instruction, "step": step.name}
    base = chat.render(chat.BASE)
    seg = chat.render(chat.BASE + [msg], add_generation_prompt=True)[len(base) :]
    pending = []
    if traj.loss_mask and traj.loss_mask[-1] == 1:
        ids = chat.observation_ids([msg], closed=traj.token_ids[-1] == chat.eot_id)
    else:
        pending = chat.render(chat.BASE, add_generation_prompt=True)[len(base) :]
        if traj.token_ids[-len(pending) :] != pending:
            raise RuntimeError(
                f"task {traj.task_id} step {step.name}: the trajectory does not end with the chat "
                "template's generation prompt; the next instruction cannot follow it"
            )
        ids = seg
    if len(traj.token_ids) - len(pending) + len(ids) + cfg.max_tokens_per_turn > (
        cfg.max_context_tokens
    ):
        return False
    if pending:
        del traj.token_ids[-len(pending) :], traj.loss_mask[-len(pending) :]
        del traj.logprobs[-len(pending) :]
    traj.append(ids, 0)
    traj.messages.append(msg)
    return True


async def _verify(traj: Trajectory, task, sb):
    """The hidden tests of `task` (a Task, or one of its Steps: tests_dir, test_timeout_s,
    verifier_script) on the sandbox (not when it already went over its disk limit): the test
    report, or None when not verified (traj.stop_reason then "disk_limit")."""
    t0 = time.monotonic()
    report = None
    if traj.stop_reason != "disk_limit":
        try:
            report = await sb.run_tests(
                task.tests_dir,
                timeout=task.test_timeout_s,
                test_setup=getattr(task, "test_setup", None),
                agent_modules=getattr(task, "agent_modules", ()),
                script=task.verifier_script,
            )
        except sandbox_lib.DiskLimitError:
            # over the limit after the last command (a background job)
            traj.stop_reason = "disk_limit"
    traj.timings["verify_s"] = traj.timings.get("verify_s", 0.0) + time.monotonic() - t0
    return report


async def _score(
    traj: Trajectory, task, sb, report, judge, oracle: bool, reports: list | None = None
) -> None:
    """traj's verification from the report (a disk-limit verification when None; a multi-step
    task's from its steps' `reports`, rolled up as harbor does: reward.roll_up_steps), then the
    judge's score, once for the whole episode with every step's instruction, unless the episode
    tampered with its tests (then stop_reason "tampered")."""
    log = logging.getLogger("termrl.rollout")
    # not verified: a snapshot would copy a layer already over the limit
    if report is None:
        error = f"disk_limit: the sandbox {sb.disk_over}"
        v = reward_lib.Verification(0.0, False, [], list(task.weights), [], [], error=error)
        traj.verification = v
        # judged 0 when a judge is configured, as train.py scores tampering
        traj.judge_score = 0.0 if judge is not None and not oracle else None
        log.warning("task %s episode %d: %s", task.id, traj.group_index, v.error)
    elif task.steps:
        v = reward_lib.roll_up_steps(reports, task.step_reward)
        traj.test_report = report
        traj.verification = v
        traj.resolved = v.resolved
    else:
        v = reward_lib.verify(report, task.weights)
        traj.test_report = report
        traj.verification = v
        traj.resolved = v.resolved
    # scored 0 without the judge: a forged verification earns nothing
    if v.tampered:
        traj.stop_reason = "tampered"
        log.warning("task %s episode %d: tampered: %s", task.id, traj.group_index, v.tampered)
    elif judge is not None and not oracle and report is not None:
        t0 = time.monotonic()
        jr = await judge.score(
            "\n\n".join(s.instruction for s in task.steps) if task.steps else task.instruction,
            [{"role": m["role"], "content": m["content"]} for m in traj.messages],
            describe_outcome(v),
        )
        traj.judge_score = jr.score
        traj.timings["judge_s"] = time.monotonic() - t0


# ----------------------------------------------------------------------------- a group and a rollout


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
    *,
    opts: EpisodeOptions | None = None,
    seed: int | None = None,
    progress: bool = True,
    on_trajectory=None,
    on_generation_end=None,
) -> list[Group]:
    """Run n_per_task episodes of every task concurrently (asyncio), at most cfg.max_concurrent_episodes at
    once; sandboxing/calls.py bounds the Docker calls in flight. Images are built first, once per task.
    Each episode is verified (and judged) as soon as it ends, while the others still generate.

    Returns one Group per task in the order of `tasks` (score_group), trajectories by group_index.
    opts: what every episode shares (action format, sandbox, reward rule, judge, run id, oracle;
    None: EpisodeOptions()). seed: episode j of task i samples with seed (seed, i, j) mixed into one int (reproducible).
    on_trajectory: callback per trajectory when its group is scored (e.g. JSONL). Progress on
    stderr. on_generation_end: called once (in the event loop) when every episode stopped acting
    (training/overlap.py's update starts there); not when cancelled before."""
    if n_per_task < 1:
        raise ValueError(f"n_per_task = {n_per_task}: must be >= 1")
    opts = opts or EpisodeOptions()
    if engine is None and not opts.oracle:
        raise ValueError("engine: None is only allowed with opts.oracle")
    chat = ChatFormat(tokenizer, opts.action_format)
    images = await build_images(tasks, opts.sandbox)
    sem = asyncio.Semaphore(cfg.max_concurrent_episodes)
    bar = _Progress(len(tasks) * n_per_task, progress)
    # episodes that may still act (on_generation_end once none does)
    acting = len(tasks) * n_per_task
    # a lockstep engine (TorchEngine) batches each turn of the episodes that hold a slot of `sem`
    # and still act: each is announced as it takes its slot, since one still waiting for a slot
    # cannot ask, and a round that waited for it would wait until the others' timeouts
    announced = False

    def stopped_acting() -> None:
        nonlocal acting
        acting -= 1
        if acting == 0 and on_generation_end is not None:
            on_generation_end()

    def acted() -> None:
        # an episode that held a slot: the lockstep engine waits for it no more
        if engine is not None:
            engine.episode_done()
        stopped_acting()

    async def episode(i: int, task, j: int) -> Trajectory:
        nonlocal announced
        image = images[task.id]
        traj = _build_failed(task, j, image)
        if traj is not None:
            # its image failed to build: it never acts
            stopped_acting()
            bar.episode_done(traj)
            return traj
        async with sem:
            if engine is not None:
                # the rollout's first announcement starts the engine's rollout state afresh
                engine.expect_episodes(1, rollout_start=not announced)
                announced = True
            s = None if seed is None else (seed * 1_000_003 + i) * 10_007 + j
            traj = await run_episode(task, engine, chat, cfg, opts, j, image, s, on_acted=acted)
        bar.episode_done(traj)
        return traj

    async def group(i: int, task) -> Group:
        trajectories = await asyncio.gather(*(episode(i, task, j) for j in range(n_per_task)))
        judged = opts.judge is not None and not opts.oracle
        g = score_group(task, trajectories, opts.reward, judged)
        bar.rewards.extend(r for r in g.rewards if r is not None)
        if on_trajectory is not None:
            for t in g.trajectories:
                on_trajectory(t)
        return g

    try:
        return list(await asyncio.gather(*(group(i, t) for i, t in enumerate(tasks))))
    finally:
        bar.bar.close()


def _build_failed(task, j: int, image: dict) -> Trajectory | None:
    """Episode j's failed trajectory when task's image failed to build on every engine (one error
    per episode), else None."""
    x = build_error(image)
    if x is None:
        return None
    return Trajectory(
        task.id,
        j,
        difficulty=task.difficulty,
        category=task.category,
        stop_reason="error",
        error=f"image build failed: {type(x).__name__}: {x}",
    )


# running this file must not silently do nothing: it is a library
if __name__ == "__main__":
    sys.exit(
        "error: `python rollout.py` is no command: rollout.py is the agent loop's library. "
        "Evaluate (or run the oracle) with `python evaluate.py [--oracle] --tasks ...`"
    )
