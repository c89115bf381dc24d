"""configs.py: presets, the tyro CLI and start-up validation naming the field."""

import dataclasses
import subprocess
import sys

import pytest

import configs
from configs import PRESETS, ConfigError, parse_cli, validate


def test_presets_are_the_four_named_ones():
    assert list(PRESETS) == ["cpu-smollm2", "qwen3-8b-4xa100", "qwen3-32b-16xh100", "qwen3-32b-32xh100"]


def test_default_preset_is_two_cpu_ranks_on_the_embedded_model():
    cfg = parse_cli([])
    assert (cfg.policy.path, cfg.policy.engine, cfg.policy.action_format) == ("default", "torch", "markdown")
    assert cfg.nproc_per_node == 2 and cfg.tasks == "tasks/data"


def test_multinode_preset_is_four_nodes_of_eight():
    cfg = PRESETS["qwen3-32b-32xh100"]
    assert (cfg.nnodes, cfg.nproc_per_node, cfg.policy.engine) == (4, 8, "vllm")


def test_cli_overrides_nested_fields():
    cfg = parse_cli(["--grpo.group-size", "6", "--rollout.max-turns", "5", "--steps", "3"])
    assert (cfg.grpo.group_size, cfg.rollout.max_turns, cfg.steps) == (6, 5, 3)


def test_unknown_preset_is_named_with_the_choices():
    with pytest.raises(ConfigError) as e:
        parse_cli(["--preset", "qwen9"])
    assert str(e.value) == ("preset = 'qwen9': unknown; choose one of cpu-smollm2, qwen3-8b-4xa100, "
                            "qwen3-32b-16xh100, qwen3-32b-32xh100")


@pytest.mark.parametrize("args, message", [
    (["--grpo.group-size", "1"], "grpo.group_size = 1: must be >= 2 (GRPO compares rollouts within a group)"),
    (["--grpo.clip-low", "0"], "grpo.clip_low = 0.0: must be > 0"),
    (["--grpo.clip-high", "-0.1"], "grpo.clip_high = -0.1: must be > 0"),
    (["--reward.w-tests", "-1"], "reward.w_tests = -1.0: must be >= 0"),
    (["--reward.w-tests", "0", "--reward.w-judge", "0"], "reward.w_tests + reward.w_judge = 0.0: must have a positive sum"),
    (["--tasks", "/no/such/tasks"], "tasks = '/no/such/tasks': path does not exist"),
    (["--policy.path", "/no/such/model"],
     "policy.path = '/no/such/model': must be a model folder or one of ('default', 'tiny-random-qwen3')"),
    (["--reward.judge-backends", "openai:qwen"], "reward.judge_backends = 'openai:qwen': an openai backend needs '@BASE_URL'"),
    (["--difficulties", "trivial"], "difficulties = ('trivial',): each must be one of easy, medium, hard, extremely_hard"),
])
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
    out = subprocess.run([sys.executable, "-c", "import configs; configs.parse_cli(['--help'])"],
                         capture_output=True, text=True, cwd=configs.__file__.rsplit("/", 1)[0], env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0
    help_text = out.stdout
    sections = {"policy": configs.PolicyConfig, "sandbox": configs.SandboxConfig, "rollout": configs.RolloutConfig,
                "reward": configs.RewardConfig, "grpo": configs.GRPOConfig}
    for prefix, cls in sections.items():
        for f in dataclasses.fields(cls):
            flag = f"--{prefix}.{f.name.replace('_', '-')}"
            assert flag in help_text, flag
    assert "--steps INT" in help_text and "optimizer steps" in help_text
    assert "group_size" not in help_text or "rollouts per task (G)" in help_text
