"""Shared by the rollout, engine and evaluation tests: the starter tasks they use, a rollout config, a
recording engine and trajectory checks (the `tasks` fixture is in conftest.py)."""

import asyncio
import os
import subprocess

import engines as E
import rollout as R
from configs import RolloutConfig, SandboxConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = os.path.join(ROOT, "data", "tasks")
CFG = RolloutConfig(
    max_turns=6,
    max_context_tokens=4096,
    max_tokens_per_turn=256,
    episode_timeout_s=120.0,
    max_format_errors=3,
    max_concurrent_episodes=8,
)


USED = ("write-hello-file", "count-lines")  # easy starter tasks


def task_dir(tmp_path):
    """A task folder holding only USED (symlinks), so the CLI tests do not depend on the rest of the set."""
    d = tmp_path / "tasks"
    d.mkdir()
    for i in USED:
        (d / i).symlink_to(os.path.join(TASKS, i))
    return str(d)


class RecordingEngine(E.ScriptedEngine):
    """A ScriptedEngine that keeps every completion it returned, to check the trajectory against them."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.completions = []

    async def generate(self, prompt_ids, sampling, messages=None):
        c = await super().generate(prompt_ids, sampling, messages)
        self.completions.append(c)
        return c


def run(tasks, engine, tok, cfg=CFG, fmt="markdown", n=1, sandbox_cfg=None, **kw):
    """The trajectories of run_episodes' groups, by task then group_index."""
    opts = R.EpisodeOptions(fmt, sandbox_cfg or SandboxConfig())
    groups = asyncio.run(
        R.run_episodes(tasks, engine, tok, n, cfg, opts=opts, progress=False, **kw)
    )
    assert [g.task.id for g in groups] == [t.id for t in tasks]
    return [t for g in groups for t in g.trajectories]


def observations(traj):
    return [m["content"] for m in traj.messages[2:] if m["role"] != "assistant"]


def assert_aligned(traj, completions, prompt_len):
    """loss_mask is 1 exactly on the generated tokens, which appear verbatim with their engine log-probs."""
    assert len(traj.token_ids) == len(traj.loss_mask) == len(traj.logprobs)
    assert traj.prompt_len == prompt_len and traj.loss_mask[:prompt_len] == [0] * prompt_len
    generated = [t for t, m in zip(traj.token_ids, traj.loss_mask) if m == 1]
    assert generated == [t for c in completions for t in c.token_ids]
    assert [lp for lp, m in zip(traj.logprobs, traj.loss_mask) if m == 1] == [-1.0] * len(generated)
    assert all(lp == 0.0 for lp, m in zip(traj.logprobs, traj.loss_mask) if m == 0)


def assert_matches_template(traj, chat):
    """token_ids == the chat template's rendering of the same messages (up to the template's trailing "\\n")."""
    shown = [m for m in traj.messages if m.get("in_tokens", True)]
    rendered = chat.render(shown)
    assert traj.token_ids == rendered[: len(traj.token_ids)]
    assert rendered[len(traj.token_ids) :] == chat._after_eot


def containers_of(run_id: str) -> list[str]:
    """Ids of the termrl containers of run `run_id` still on the engine."""
    out = subprocess.run(
        [
            "docker",
            "ps",
            "-aq",
            "--filter",
            "label=termrl=1",
            "--filter",
            f"label=termrl.run_id={run_id}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout.split()
