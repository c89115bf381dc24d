"""configs.py and experiments/settings.py: presets, the tyro CLI and start-up validation naming the
field."""

import ast
import copy
import dataclasses
import io
import os
import re
import subprocess
import sys
import tokenize
import typing
from pathlib import Path

import pytest

import configs
from configs import (
    PRESETS,
    ConfigError,
    EvalConfig,
    parse_cli,
    parse_eval_cli,
    validate,
    validate_eval,
)
from experiments import settings
from sandboxing import admission

ROOT = Path(__file__).resolve().parent.parent


def test_presets_are_the_eight_named_ones():
    assert list(PRESETS) == [
        "cpu-smollm2",
        "qwen3-4b-2xa100",
        "qwen3-8b-4xa100",
        "qwen3-14b-8xh100",
        "qwen3-32b-16xh100",
        "qwen3-32b-32xh100",
        "cpu-learn",
        "cpu-learn-multiturn",
    ]


def test_default_preset_is_two_cpu_ranks_on_the_embedded_model():
    cfg = parse_cli([])
    assert (cfg.policy.path, cfg.policy.engine, cfg.policy.action_format) == (
        "default",
        "torch",
        "markdown",
    )
    assert cfg.nproc_per_node == 2 and cfg.tasks == "data/tasks"


def test_multinode_preset_is_four_nodes_of_eight():
    cfg = PRESETS["qwen3-32b-32xh100"]
    assert (cfg.nnodes, cfg.nproc_per_node, cfg.policy.engine) == (4, 8, "vllm")


def test_cli_overrides_nested_fields():
    cfg = parse_cli(["--grpo.group-size", "6", "--rollout.max-turns", "5", "--steps", "3"])
    assert (cfg.grpo.group_size, cfg.rollout.max_turns, cfg.steps) == (6, 5, 3)


def test_unknown_preset_is_named_with_the_choices():
    with pytest.raises(ConfigError) as e:
        parse_cli(["--preset", "qwen9"])
    assert str(e.value) == (
        "preset = 'qwen9': unknown; choose one of cpu-smollm2, "
        "qwen3-4b-2xa100, qwen3-8b-4xa100, qwen3-14b-8xh100, "
        "qwen3-32b-16xh100, qwen3-32b-32xh100, cpu-learn, cpu-learn-multiturn"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--grpo.group-size", "1"],
            "grpo.group_size = 1: must be >= 2 (GRPO compares rollouts within a group)",
        ),
        (["--grpo.clip-low", "1.5"], "grpo.clip_low = 1.5: must be in (0, 1)"),
        (["--grpo.clip-high", "-0.1"], "grpo.clip_high = -0.1: must be > 0"),
        (["--reward.w-tests", "-1"], "reward.w_tests = -1.0: must be >= 0"),
        (
            ["--reward.w-tests", "0", "--reward.w-judge", "0"],
            "reward.w_tests + reward.w_judge = 0.0: must have a positive sum",
        ),
        (["--tasks", "/no/such/tasks"], "tasks = '/no/such/tasks': path does not exist"),
        (
            ["--policy.path", "/no/such/model"],
            "policy.path = '/no/such/model': must be a model folder or one of ('default', 'tiny-random-qwen3')",
        ),
        (
            ["--reward.judge-backends", "openai:qwen"],
            "reward.judge_backends = 'openai:qwen': an openai backend needs '@BASE_URL'",
        ),
        (
            ["--difficulties", "trivial"],
            "difficulties = ('trivial',): each must be one of easy, medium, hard, extremely_hard, unknown",
        ),
        (
            ["--sandbox.image-map", "nonsense"],
            "sandbox.image_map = 'nonsense': each entry must be 'pattern=image'",
        ),
        (
            ["--max-off-policy-steps", "1", "--policy.vllm-tensor-parallel-size", "2"],
            "max_off_policy_steps = 1: must be 0 with policy.vllm_tensor_parallel_size > 1 (the "
            "followers' collectives would interleave with the learner's)",
        ),
    ],
)
def test_bad_value_error_names_the_field(args, message):
    with pytest.raises(ConfigError) as e:
        parse_cli(args)
    assert str(e.value) == message


def test_presets_pass_validation_apart_from_missing_checkpoints():
    for name, cfg in PRESETS.items():
        assert validate(cfg, check_paths=False) is cfg, name


def test_presets_are_not_mutated_by_overrides():
    parse_cli(["--grpo.group-size", "7"])
    assert PRESETS["cpu-smollm2"].grpo.group_size == 4


def test_every_field_has_a_one_line_doc_in_help():
    out = subprocess.run(
        [sys.executable, "-c", "import configs; configs.parse_cli(['--help'])"],
        capture_output=True,
        text=True,
        cwd=configs.__file__.rsplit("/", 1)[0],
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0
    help_text = out.stdout
    sections = {
        "policy": configs.PolicyConfig,
        "sandbox": configs.SandboxConfig,
        "rollout": configs.RolloutConfig,
        "reward": configs.RewardConfig,
        "grpo": configs.GRPOConfig,
    }
    for prefix, cls in sections.items():
        for f in dataclasses.fields(cls):
            flag = f"--{prefix}.{f.name.replace('_', '-')}"
            assert flag in help_text, flag
    assert "--steps INT" in help_text and "optimizer steps" in help_text
    assert "group_size" not in help_text or "rollouts per task (G)" in help_text


def _field_comments() -> dict[tuple[str, str], str]:
    """(class, field) -> the comment written for that field in configs.py or experiments/settings.py:
    the `#` lines right above it, else the comment after the code on its first line; '' when it has
    neither."""
    comments = {}
    for module in (configs, settings):
        comments.update(_comments_in(Path(module.__file__).read_text()))
    return comments


def _comments_in(source: str) -> dict[tuple[str, str], str]:
    """_field_comments of one module's source."""
    lines = source.splitlines()
    after_code = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        row, col = tok.start
        if tok.type == tokenize.COMMENT and lines[row - 1][:col].strip():
            after_code[row] = tok.string
    comments = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.AnnAssign):
                continue
            above = []
            row = stmt.lineno - 1
            while row >= 1 and lines[row - 1].strip().startswith("#"):
                above.insert(0, lines[row - 1].strip())
                row -= 1
            written = above or [after_code.get(stmt.lineno, "")]
            text = " ".join(c.strip().removeprefix("#").strip() for c in written)
            comments[(node.name, stmt.target.id)] = text
    return comments


def _help_texts(module: str, command: str) -> dict[str, str]:
    """What `--help` of `module.command` shows, by flag ('--policy.path') and by section ('policy
    options': the text under the section's title), wrapped lines joined. COLUMNS=120: tyro lays the
    sections out in one column below 130."""
    out = subprocess.run(
        [sys.executable, "-c", f"import {module}; {module}.{command}(['--help'])"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"COLUMNS": "120", "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    texts: dict[str, list[str]] = {}
    key = None
    section = None
    for raw in out.stdout.splitlines():
        line = raw.rstrip()
        # With UTF-8 boxes every line of a section sits between two '│'.
        if line.startswith("│"):
            line = line[1:].rstrip("│").rstrip()
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        title = text.strip("╭╮─ ")
        if title.endswith("options") and not title.startswith("-"):
            section = title
            key = None
        elif not text or set(text) <= set("-─╭╮╰╯├┤ "):
            key = None
        elif text.startswith("-") and indent < 5:
            # the flag, then its help on the same line when the flag is short
            flag_and_help = re.split(r"\s{2,}", text, maxsplit=1)
            key = text.split()[0].rstrip(",")
            texts[key] = flag_and_help[1:]
            section = None
        elif key is not None:
            texts[key].append(text)
        elif section is not None:
            texts.setdefault(section, []).append(text)
    return {k: " ".join(v) for k, v in texts.items()}


def _without_default(help_text: str) -> str:
    start = help_text.rfind("(default:")
    return help_text[:start] if start >= 0 else help_text


@pytest.mark.parametrize(
    "module, command, root",
    [
        ("configs", "parse_cli", configs.TrainConfig),
        ("configs", "parse_eval_cli", configs.EvalConfig),
        ("experiments.settings", "parse_learn_single_cli", settings.LearnSingleConfig),
        ("experiments.settings", "parse_multiturn_learn_cli", settings.MultiTurnLearnConfig),
        ("experiments.settings", "parse_warm_start_cli", settings.WarmStartConfig),
    ],
)
def test_every_knobs_help_is_the_comment_written_for_it(module, command, root):
    # tyro reads a field's help from the comment above it or after it on its line; a field written
    # without one took the comment of the field above it (--reward.judge-default-price showed
    # "judge sampling temperature"), so every knob has its own, and --help shows exactly it.
    comments = _field_comments()
    texts = _help_texts(module, command)
    wrong = []
    for f in dataclasses.fields(root):
        kind = typing.get_type_hints(root)[f.name]
        if dataclasses.is_dataclass(kind):
            # a section: titled "<name> options", described by its own comment or its class docstring
            expected = comments[(root.__name__, f.name)] or kind.__doc__
            # tyro titles the section as it spells the flags: sft_best -> "sft-best options"
            shown = texts.get(f"{f.name.replace('_', '-')} options", "")
            knobs = [(kind, g.name, f"--{f.name}.{g.name}") for g in dataclasses.fields(kind)]
        else:
            expected = None
            knobs = [(root, f.name, f"--{f.name}")]
        if expected is not None and shown.split() != expected.split():
            wrong.append(f"{f.name} options: shows {shown!r}, written {expected!r}")
        for cls, name, flag in knobs:
            flag = flag.replace("_", "-")
            written = comments[(cls.__name__, name)]
            shown = _without_default(texts.get(flag, ""))
            if not written or shown.split() != written.split() or "noqa" in shown:
                wrong.append(f"{flag}: shows {shown.strip()!r}, written {written!r}")
    assert not wrong, "\n".join(wrong)


# ----------------------------------------------------------------------------- every numeric knob at its bound

_ONE_DEEP = "must be 0 or 1 (the pipeline is one rollout deep: more staleness is not implemented)"

# (field, value just inside, value just outside, the reason in the error message)
TRAIN_BOUNDS = [
    ("grpo.group_size", 2, 1, "must be >= 2 (GRPO compares rollouts within a group)"),
    ("grpo.clip_low", 0.01, 0.0, "must be in (0, 1)"),
    ("grpo.clip_low", 0.99, 1.0, "must be in (0, 1)"),
    ("grpo.clip_high", 0.01, 0.0, "must be > 0"),
    ("grpo.dual_clip", 1.01, 1.0, "must be 0 (off) or > 1"),
    ("grpo.kl_coef", 0.0, -0.01, "must be >= 0"),
    ("grpo.tis_cap", 1.0, 0.99, "must be 0 (off) or >= 1"),
    ("grpo.num_minibatches", 1, 0, "must be >= 1"),
    ("max_off_policy_steps", 0, -1, _ONE_DEEP),
    # one rollout deep: 2 would run as 1, so it is refused
    ("max_off_policy_steps", 1, 2, _ONE_DEEP),
    ("policy.max_seq_len", 2048, 2047, "must be >= rollout.max_context_tokens"),
    ("policy.engine_max_batch", 1, 0, "must be >= 1"),
    ("policy.engine_fast_cpu", False, 1, "must be true or false"),
    ("policy.engine_speculate_max_batch", 0, -1, "must be >= 0"),
    ("policy.engine_speculate_tokens", 1, 0, "must be >= 1"),
    ("policy.vllm_gpu_memory_utilization", 1.0, 1.01, "must be in (0, 1]"),
    ("policy.vllm_gpu_memory_utilization", 0.01, 0.0, "must be in (0, 1]"),
    ("sandbox.memory_mb", 64, 63, "must be >= 64"),
    ("sandbox.cpus", 0.01, 0.0, "must be > 0"),
    ("sandbox.pids", 16, 15, "must be >= 16"),
    ("sandbox.storage_mb", 16, 15, "must be >= 16"),
    ("sandbox.max_concurrent", 0, -1, "must be >= 0 (0 = auto)"),
    ("sandbox.output_limit_bytes", 256, 255, "must be >= 256"),
    ("sandbox.exec_timeout_s", 0.01, 0.0, "must be > 0"),
    ("sandbox.verify_wall_s", 0.0, -0.01, "must be finite and >= 0 (0 = auto)"),
    ("rollout.max_turns", 1, 0, "must be >= 1"),
    ("rollout.max_tokens_per_turn", 1, 0, "must be >= 1"),
    ("rollout.max_context_tokens", 129, 128, "must exceed rollout.max_tokens_per_turn"),
    ("rollout.episode_timeout_s", 0.01, 0.0, "must be > 0"),
    ("rollout.max_format_errors", 1, 0, "must be >= 1"),
    ("rollout.max_tool_arg_bytes", 1, 0, "must be >= 1"),
    ("rollout.temperature", 0.01, 0.0, "must be > 0 (GRPO needs sampled, not greedy, rollouts)"),
    ("rollout.top_p", 1.0, 1.01, "must be in (0, 1]"),
    ("rollout.top_p", 0.01, 0.0, "must be in (0, 1]"),
    ("rollout.top_k", 0, -1, "must be >= 0 (0 = off)"),
    ("rollout.max_concurrent_episodes", 1, 0, "must be >= 1"),
    ("reward.w_tests", 0.0, -0.01, "must be >= 0"),
    ("reward.w_judge", 0.0, -0.01, "must be >= 0"),
    ("reward.judge_timeout_s", 0.01, 0.0, "must be > 0"),
    ("reward.judge_max_retries", 0, -1, "must be >= 0"),
    ("reward.judge_cooldown_s", 0.0, -0.01, "must be >= 0"),
    ("reward.judge_backoff_s", 0.0, -0.01, "must be >= 0"),
    ("reward.judge_max_retry_after_s", 0.0, -0.01, "must be >= 0"),
    ("reward.judge_temperature", 0.0, -0.01, "must be >= 0"),
    ("reward.judge_max_concurrent", 1, 0, "must be >= 1"),
    ("reward.judge_transcript_tokens", 1, 0, "must be >= 1"),
    ("reward.judge_cooldown_after", 1, 0, "must be >= 1"),
    ("reward.judge_max_tokens", 1, 0, "must be >= 1"),
    ("reward.judge_backoff_max_s", 1.0, 0.99, "must be >= reward.judge_backoff_s"),
    (
        "reward.judge_default_price",
        (0.0, 0.0),
        (0.0, -0.01),
        "must be two prices >= 0 (USD per million input, output tokens)",
    ),
    ("steps", 1, 0, "must be >= 1"),
    ("tasks_per_step", 1, 0, "must be >= 1"),
    ("save_every", 1, 0, "must be >= 1"),
    ("curriculum_window", 1, 0, "must be >= 1"),
    ("nproc_per_node", 1, 0, "must be >= 1"),
    ("nnodes", 1, 0, "must be >= 1"),
    ("warmup_steps", 0, -1, "must be >= 0"),
    ("weight_decay", 0.0, -0.01, "must be >= 0"),
    ("seed", 0, -1, "must be >= 0"),
    ("lr", 1e-9, 0.0, "must be a finite number > 0"),
    ("lr", 1e-9, float("inf"), "must be a finite number > 0"),
    ("grad_clip", 0.0, -0.01, "must be >= 0 (0 = off)"),
    ("micro_batch_tokens", 64, 63, "must be >= 64"),
    (
        "grpo.refill_rounds",
        0,
        -1,
        "must be in 0..8 (0 = off; each round is one more rollout of the step)",
    ),
    (
        "grpo.refill_rounds",
        8,
        1_000_000,
        "must be in 0..8 (0 = off; each round is one more rollout of the step)",
    ),
]

EVAL_BOUNDS = [
    ("k", 1, 0, "must be >= 1"),
    ("seed", 0, -1, "must be >= 0"),
    ("script_delay_s", 0.0, -0.01, "must be >= 0"),
    (
        "rollout.temperature",
        0.0,
        -0.01,
        "must be >= 0 (0 = greedy)",
    ),  # greedy evaluation is allowed
    ("policy.max_seq_len", 2048, 2047, "must be >= rollout.max_context_tokens"),
    ("sandbox.memory_mb", 64, 63, "must be >= 64"),
    ("reward.judge_max_tokens", 1, 0, "must be >= 1"),
]


def _with(cfg, field: str, value):
    *parents, leaf = field.split(".")
    obj = cfg
    for name in parents:
        obj = getattr(obj, name)
    setattr(obj, leaf, value)
    return cfg


@pytest.mark.parametrize("field, inside, outside, why", TRAIN_BOUNDS)
def test_train_knob_passes_just_inside_its_bound_and_fails_just_outside(
    field, inside, outside, why
):
    preset = PRESETS["cpu-smollm2"]
    assert validate(_with(copy.deepcopy(preset), field, inside), check_paths=False) is not None
    with pytest.raises(ConfigError) as e:
        validate(_with(copy.deepcopy(preset), field, outside), check_paths=False)
    assert str(e.value) == f"{field} = {outside!r}: {why}"


@pytest.mark.parametrize("field, inside, outside, why", EVAL_BOUNDS)
def test_eval_knob_passes_just_inside_its_bound_and_fails_just_outside(field, inside, outside, why):
    assert validate_eval(_with(EvalConfig(), field, inside), check_paths=False) is not None
    with pytest.raises(ConfigError) as e:
        validate_eval(_with(EvalConfig(), field, outside), check_paths=False)
    assert str(e.value) == f"{field} = {outside!r}: {why}"


def test_eval_config_embeds_the_policy_config_and_model_is_short_for_policy_path():
    cfg = parse_eval_cli(["--model", "tiny-random-qwen3", "--k", "2"])
    assert cfg.policy.path == "tiny-random-qwen3" and cfg.model == "" and cfg.k == 2
    assert isinstance(cfg.policy, configs.PolicyConfig) and cfg.policy == dataclasses.replace(
        PRESETS["cpu-smollm2"].policy, path="tiny-random-qwen3"
    )
    with pytest.raises(ConfigError) as e:
        parse_eval_cli(["--model", "/no/such/model"])
    assert str(e.value) == (
        "policy.path = '/no/such/model': must be a model folder or one of "
        "('default', 'tiny-random-qwen3')"
    )


def test_the_output_folder_is_out_dir_in_every_command_and_the_old_out_is_refused():
    assert parse_eval_cli(["--out-dir", "runs/e1", "--oracle"]).out_dir == "runs/e1"
    assert settings.parse_learn_single_cli(["--out-dir", "runs/l1"]).out_dir == "runs/l1"
    assert configs.parse_cli(["--out-dir", "runs/t1"]).out_dir == "runs/t1"
    for parse in (parse_eval_cli, settings.parse_learn_single_cli):
        for argv in (["--out", "runs/x"], ["--out=runs/x"]):
            with pytest.raises(ConfigError) as e:
                parse(argv)
            assert str(e.value) == "--out is now --out-dir, the name train.py uses too"


@pytest.mark.parametrize(
    ("logger", "line"),
    [
        ("tensorboard", "logger = 'tensorboard': needs tensorboard: pip install tensorboard"),
        (
            "wandb",
            "logger = 'wandb': needs wandb: pip install wandb (without an account or network: "
            "WANDB_MODE=offline, `wandb sync` later)",
        ),
    ],
)
def test_a_logger_whose_package_is_missing_is_refused_at_start_up(logger, line, monkeypatch):
    real = configs.importlib.util.find_spec

    # this Python without the logger's package, whether or not this machine has it
    def find_spec(name, *args):
        return None if name == logger else real(name, *args)

    monkeypatch.setattr(configs.importlib.util, "find_spec", find_spec)
    with pytest.raises(ConfigError) as e:
        configs.parse_cli(["--logger", logger])
    assert str(e.value) == line
    # a preset of another machine is not checked for this machine's packages
    assert configs.parse_cli(["--logger", logger], check_paths=False).logger == logger
    assert configs.parse_cli(["--logger", "none"]).logger == "none"


def test_the_tensorboard_logger_writes_every_number_of_a_step_record(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from bookkeeping.logs import open_logger

    log = open_logger(configs.parse_cli(["--logger", "tensorboard"]), tmp_path)
    log({"reward_mean": 0.5, "loss": 0.125, "preset": "cpu-smollm2"}, 1)
    log({"reward_mean": 0.75, "loss": 0.0625}, 2)
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == ["loss", "reward_mean"]
    assert [(e.step, e.value) for e in events.Scalars("reward_mean")] == [(1, 0.5), (2, 0.75)]


def test_the_wandb_logger_runs_offline_without_an_account(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    from bookkeeping.logs import open_logger

    monkeypatch.setenv("WANDB_MODE", "offline")
    log = open_logger(configs.parse_cli(["--logger", "wandb"]), tmp_path)
    log({"reward_mean": 0.5, "loss": 0.125}, 1)
    wandb.finish()
    runs = list((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(runs) == 1 and runs[0].stat().st_size > 0


def test_eval_backends_name_their_missing_flag():
    with pytest.raises(ConfigError) as e:
        validate_eval(EvalConfig(engine="openai"), check_paths=False)
    assert str(e.value) == "openai_base_url = '': is required with engine = 'openai'"
    with pytest.raises(ConfigError) as e:
        validate_eval(EvalConfig(engine="scripted", script="/no/such.json"))
    assert str(e.value) == "script = '/no/such.json': file does not exist"


@pytest.mark.model_run
def test_training_does_not_offer_an_engine_it_cannot_update():
    assert typing.get_args(typing.get_type_hints(configs.PolicyConfig)["engine"]) == (
        "auto",
        "torch",
        "vllm",
    )
    r = subprocess.run(
        [sys.executable, "train.py", "--policy.engine", "openai"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        r.returncode == 2 and "openai" in r.stderr and "auto" in r.stderr
    )  # tyro lists the choices


@pytest.mark.parametrize(
    "cmd, line",
    [
        (["train.py", "--grpo.clip-low", "1.5"], "error: grpo.clip_low = 1.5: must be in (0, 1)"),
        (["evaluate.py", "--k", "0"], "error: k = 0: must be >= 1"),
        (
            ["evaluate.py", "--sandbox.memory-mb", "32"],
            "error: sandbox.memory_mb = 32: must be >= 64",
        ),
        (["-m", "tasks", "validate", "--jobs", "0"], "error: jobs = 0: must be >= 1"),
    ],
)
@pytest.mark.model_run
def test_every_entry_point_stops_on_a_bad_knob_with_one_line_before_any_work(cmd, line, tmp_path):
    env = {
        **os.environ,
        "TERMRL_CACHE": str(tmp_path / "cache"),
    }  # an empty cache: nothing may be imported
    r = subprocess.run(
        [sys.executable, *cmd], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 2
    assert (r.stderr + r.stdout).strip() == line
    assert not (tmp_path / "cache").exists()  # no model was resolved


def test_base_image_env_reaches_training_evaluation_and_image_builds():
    code = (
        "import configs; from sandboxing import images; print(configs.parse_cli([]).sandbox.base_image, "
        "configs.parse_eval_cli([]).sandbox.base_image, images.BASE_IMAGE)"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "BASE_IMAGE": "local/debian:test"},
    )
    assert r.stdout.split() == ["local/debian:test"] * 3, r.stderr[-2000:]
    assert configs.DEFAULT_BASE_IMAGE == configs.BASE_TAGS["bookworm"]


def test_learn_preset_is_the_cpu_default_with_single_turn_episodes_and_a_constant_lr():
    cfg, base = PRESETS["cpu-learn"], PRESETS["cpu-smollm2"]
    assert (
        cfg.rollout.max_turns,
        cfg.rollout.max_tokens_per_turn,
        cfg.steps,
        cfg.lr,
        cfg.lr_schedule,
    ) == (1, 64, 48, 2e-6, "constant")
    assert (cfg.policy, cfg.task_ids, cfg.grpo, cfg.tasks_per_step) == (
        base.policy,
        base.task_ids,
        base.grpo,
        2,
    )
    assert base.rollout.max_turns == 3  # the CPU default itself is unchanged


def test_build_network_is_one_of_three_values_before_any_build():
    cfg = configs._replace(configs.PRESETS["cpu-smollm2"], sandbox=dict(build_network="wifi"))
    with pytest.raises(ConfigError) as e:
        configs.validate(cfg, check_paths=False)
    assert str(e.value) == "sandbox.build_network = 'wifi': must be 'auto', 'bridge' or 'none'"


# ----------------------------------------------------------------------------- host admission (pure)

GiB = 1 << 30


def test_host_budget_admits_what_fits_and_prints_the_arithmetic():
    fits, line = admission.host_budget(8, 512, 2048, 2, ram_bytes=20 * GiB, disk_bytes=70 * GiB)
    assert fits == 8  # 2 ranks x 8 x 1 GiB = 16 of 20 GiB RAM; 2 x 8 x 4 GiB = 64 of 70 GiB disk
    assert line == (
        "[host] 2 rank(s) x 8 episodes x (2 x 512 MiB memory, 2 x 2048 MiB disk) = 16.0 GiB of 20.0 GiB "
        "available RAM, 64.0 GiB of 70.0 GiB free disk: room for 10 (RAM) and 8 (disk) per rank; fits"
    )


def test_host_budget_lowers_concurrency_to_the_scarcer_resource():
    # 64 episodes x 2 x 1 GiB on a 24 GiB host
    fits, line = admission.host_budget(64, 1024, 2048, 1, ram_bytes=24 * GiB, disk_bytes=1000 * GiB)
    assert fits == 12 and line.endswith(
        "room for 12 (RAM) and 250 (disk) per rank; "
        "rollout.max_concurrent_episodes lowered from 64 to 12"
    )
    fits, _ = admission.host_budget(64, 1024, 2048, 1, ram_bytes=24 * GiB, disk_bytes=20 * GiB)
    assert fits == 5  # disk: 20 GiB / 4 GiB


@pytest.mark.parametrize(
    "ram, disk, short", [(1 * GiB, 100 * GiB, "RAM"), (100 * GiB, 3 * GiB, "disk")]
)
def test_host_budget_refuses_when_not_one_episode_fits(ram, disk, short):
    with pytest.raises(ConfigError, match=f"not one episode fits in the host's {short}"):
        admission.host_budget(4, 1024, 2048, 1, ram_bytes=ram, disk_bytes=disk)


def test_host_budget_reserves_each_ranks_own_memory_before_episodes():
    # (20 GiB - 2 ranks x 3 GiB) / (2 ranks x 1 GiB per episode) = 7 per rank
    fits, line = admission.host_budget(
        4, 512, 2048, 2, ram_bytes=20 * GiB, disk_bytes=70 * GiB, rank_memory_mb=3072
    )
    assert fits == 4
    assert line == (
        "[host] 2 rank(s) x (3.0 GiB + 4 episodes x (2 x 512 MiB memory, 2 x 2048 MiB disk)) = "
        "14.0 GiB of 20.0 GiB available RAM, 32.0 GiB of 70.0 GiB free disk: room for 7 (RAM) and "
        "8 (disk) per rank; fits"
    )
    with pytest.raises(ConfigError, match="not one episode fits in the host's RAM"):
        admission.host_budget(
            4, 512, 2048, 2, ram_bytes=7 * GiB, disk_bytes=70 * GiB, rank_memory_mb=3072
        )


def test_the_host_rule_is_one_for_the_trainer_and_the_listed_engines():
    from sandboxing import hosts

    mem, disk = admission.episode_bytes(512, 2048)
    assert (mem, disk) == (1 * GiB, 4 * GiB)
    # a listed engine: 0.8 x MemTotal and 0.9 x free disk through the same rule
    assert hosts.episodes_fit(20 * GiB, mem, 50 * GiB, disk) == admission.episodes_fit(
        0.8 * 20 * GiB, mem, 0.9 * 50 * GiB, disk
    )
    assert admission.episodes_fit(16 * GiB, mem, 45 * GiB, disk) == 11  # floor(45 / 4) < 16
