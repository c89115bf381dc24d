"""The experiments' settings, as configs.py holds training's: one section per command, its knobs as a
typed dataclass, the rules that check them once at start-up, and the parser of its flags (tyro, so
`--help` lists every knob with its one-line doc).

    make learn                       MultiTurnLearnConfig   (experiments/learn.py)
    make learn-single                LearnSingleConfig      (experiments/learn_single.py)
    python -m experiments.warm_start WarmStartConfig        (experiments/warm_start.py)

The training presets these commands run (cpu-learn-multiturn, cpu-learn) are configs.PRESETS, beside
the others: train.py takes them by name. Errors are configs.ConfigError, one line naming the field.
"""

from __future__ import annotations

import copy
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tyro

from configs import (
    DEFAULT_PRESET,
    POLICY_RULES,
    PRESETS,
    ROLLOUT_RULES,
    SANDBOX_RULES,
    SFT_RULES,
    PolicyConfig,
    RolloutConfig,
    Rule,
    SandboxConfig,
    SFTConfig,
    check_context,
    check_lengths,
    check_model_path,
    check_rules,
    check_sandbox_lists,
    check_task_selection,
    need,
    refuse_renamed_flags,
)

# ----------------------------------------------------------------------------- make learn


@dataclass
class MultiTurnLearnConfig:
    """`make learn` (experiments/learn.py): multi-turn learning on the generated task family (tasks/family.py).
    Train, validation and test instances from disjoint generator seeds; a warm start from demonstrations on
    train instances only; GRPO from it (train.py, the preset, flags after `--` override it); evaluation of the
    warm start and of warm start + GRPO (and the base) on one held-out split (validation unless asked), with
    the preset's policy, rollout, sandbox and reward sections and a sampling seed training never used; the
    shortcut suite (tasks/shortcuts.py) on a sample of that split as the control."""

    # training preset (PRESETS): the policy, rollout, sandbox and GRPO settings of every stage
    preset: str = "cpu-learn-multiturn"
    # learning.json, learning.png, tasks/, warm_start/, train/, eval/ go here
    out_dir: str = "runs/learn"
    # training ranks (torchrun --nproc_per_node)
    nproc: int = 2
    # train instances: seeds 0..train_instances-1 of the train split (GRPO trains on all of them)
    train_instances: int = 48
    # held-out instances per held-out split: seeds 0..eval_instances-1 of the validation split into
    # OUT/tasks/validation and of the family's eval split into OUT/tasks/test (disjoint generator seeds)
    eval_instances: int = 64
    # the held-out split every evaluation runs on: validation (every choice of knobs is made here) or test
    # (once per trained run, after training; OUT/test_evaluated.json records it)
    evaluate_on: str = "validation"
    # evaluate the test split again for a trained run whose test evaluation is already recorded in
    # OUT/test_evaluated.json (refused without it: a second look at the test split is a choice made on it)
    reevaluate_test: bool = False
    # the family's shapes (tasks/family.py SHAPES)
    shapes: tuple[str, ...] = ("pointer", "run", "config")
    # hops per instance, LO-HI or N (1-8; an instance takes hops + 2 turns with the write and DONE)
    hops: str = "1-2"
    # leave-one-shape-out: this shape (one of shapes) is held out of training and the demonstrations; the
    # held-out instances keep every shape, and learning.json reports this one apart ('' = none)
    held_out_shape: str = ""
    # train instances the oracle acts out for the warm start (the first ones; <= train_instances)
    demonstrations: int = 24
    # warm start: passes over the demonstrations (light on purpose: it leaves GRPO room to improve)
    sft_epochs: int = 2
    # warm start: peak learning rate of AdamW: light enough to leave GRPO room to improve (the trials
    # that chose it are in BENCHMARKS.md, "make learn")
    sft_lr: float = 3e-5
    # warm start: demonstrations per optimizer step
    sft_batch_size: int = 4
    # episodes per held-out instance and policy: the verdict's unit is the instance (its mean over k
    # episodes), so k >= 4 keeps each instance's mean from being a coin flip
    k: int = 4
    # the control: the shortcut suite (tasks/shortcuts.py) runs on the first shortcut_instances instances
    # of the evaluated split (a sample: about 10 s an instance in real containers; 0 = every instance)
    shortcut_instances: int = 12
    # episodes per held-out instance of the base policy (0 = the base is not evaluated)
    base_k: int = 1
    # False (--no-train): evaluate the policies already in <out_dir>/warm_start/hf and <out_dir>/train/hf
    train: bool = True
    # GRPO once per training seed (train.py --seed), each from the one warm start, each evaluated on the
    # same instances: learning.json reports the headline's mean and spread over them (() = one run at
    # the preset's seed, or the --seed given after `--`); the first seed's run is "grpo", in OUT/train
    train_seeds: tuple[int, ...] = ()
    # evaluation sampling seed (training mixes (seed, step, rank); 777 is not one of its seeds)
    seed: int = 777
    # percentile bootstrap of the mean reward's 95% interval
    bootstrap_resamples: int = 10_000
    # progress bars on stderr (tqdm) during the warm start's demonstrations and SFT, and the evaluations
    progress: bool = True
    # -- the demonstrations' horizon and the best SFT-only baseline (experiments/warm_start.py, SFTBestConfig)
    # demonstrations only from train instances of at most this many hops (the first `demonstrations` of them)
    demo_max_hops: int = 2
    # also train the best SFT-only policy from the same demonstrations (early-stopped on the validation
    # split OUT/tasks/validation, eval_instances of them) and evaluate it beside the others as "sft_best"
    sft_best: bool = False
    # evaluations on the validation split without improvement before it stops
    sft_best_patience: int = 3
    # optimizer steps it trains at least (-1 = GRPO's steps: the preset's, or `-- --steps N`)
    sft_best_min_steps: int = -1
    # passes over the demonstrations at most
    sft_best_max_epochs: int = 30
    # -- LoRA beside the full fine-tune (lora.py)
    # a second GRPO run from the one warm start with `--lora.rank lora_rank` (the preset's alpha and
    # targets), into OUT/train-lora, evaluated on the same instances as "grpo_lora" and paired against the
    # warm start and the full fine-tune (0 = no such run)
    lora_rank: int = 0
    # that run's learning rate (0 = 10 x the full fine-tune's: "LoRA Without Regret" (Schulman et al.,
    # Thinking Machines 2025) finds LoRA's best learning rate about 10 x full fine-tuning's)
    lora_lr: float = 0.0


# the held-out splits `make learn` can evaluate on (folders under OUT/tasks)
EVALUATION_SPLITS = ("validation", "test")

MULTITURN_LEARN_RULES: list[Rule] = [
    ("preset", lambda v: v in PRESETS, f"unknown; choose one of {', '.join(PRESETS)}"),
    ("nproc", lambda v: v >= 1, "must be >= 1"),
    ("train_instances", lambda v: v >= 1, "must be >= 1"),
    ("eval_instances", lambda v: v >= 1, "must be >= 1"),
    ("demonstrations", lambda v: v >= 1, "must be >= 1"),
    ("sft_epochs", lambda v: v >= 1, "must be >= 1"),
    ("sft_lr", lambda v: math.isfinite(v) and v > 0, "must be a finite number > 0"),
    ("sft_batch_size", lambda v: v >= 1, "must be >= 1"),
    ("k", lambda v: v >= 1, "must be >= 1"),
    (
        "evaluate_on",
        lambda v: v in EVALUATION_SPLITS,
        f"must be one of {', '.join(EVALUATION_SPLITS)}",
    ),
    ("shortcut_instances", lambda v: v >= 0, "must be >= 0 (0 = every evaluated instance)"),
    (
        "train_seeds",
        lambda v: len(set(v)) == len(v) and all(x >= 0 for x in v),
        "must be distinct seeds >= 0",
    ),
    ("base_k", lambda v: v >= 0, "must be >= 0 (0 = the base is not evaluated)"),
    ("seed", lambda v: v >= 0, "must be >= 0"),
    ("bootstrap_resamples", lambda v: v >= 1, "must be >= 1"),
    ("demo_max_hops", lambda v: v >= 1, "must be >= 1"),
    ("sft_best_patience", lambda v: v >= 1, "must be >= 1"),
    ("sft_best_min_steps", lambda v: v >= -1, "must be >= 0 (-1 = GRPO's steps)"),
    ("sft_best_max_epochs", lambda v: v >= 1, "must be >= 1"),
    ("lora_rank", lambda v: v >= 0, "must be >= 0 (0 = no LoRA run)"),
    (
        "lora_lr",
        lambda v: math.isfinite(v) and v >= 0,
        "must be a finite number >= 0 (0 = 10 x the full fine-tune's lr)",
    ),
]


def validate_multiturn_learn(cfg: MultiTurnLearnConfig) -> MultiTurnLearnConfig:
    """Check the knobs of `make learn` (experiments/learn.py; the training flags are checked by configs.parse_cli).
    Returns cfg. Raises ConfigError naming the field, e.g. "demonstrations = 60: must be <= train_instances
    (48)"; shapes and hops by tasks/family.py's own checks (field names shapes, hops)."""
    check_rules(cfg, MULTITURN_LEARN_RULES)
    need(
        cfg.demonstrations <= cfg.train_instances,
        "demonstrations",
        cfg.demonstrations,
        f"must be <= train_instances ({cfg.train_instances}): demonstrations are train instances",
    )
    return cfg


def parse_multiturn_learn_cli(
    args: list[str] | None = None, description: str | None = None
) -> MultiTurnLearnConfig:
    """Parse `python -m experiments.learn` flags (those before `--`) into a validated MultiTurnLearnConfig
    (validate_multiturn_learn). Raises ConfigError naming a bad field or a renamed flag; SystemExit from
    tyro on unknown flags or `--help`."""
    refuse_renamed_flags(sys.argv[1:] if args is None else args)
    return validate_multiturn_learn(
        tyro.cli(
            MultiTurnLearnConfig,
            prog="python -m experiments.learn",
            args=args,
            description=description,
        )
    )


# ----------------------------------------------------------------------------- make learn-single


@dataclass
class LearnSingleConfig:
    """`make learn-single` (experiments/learn_single.py), the one-turn experiment: train a preset, then
    evaluate the base and the trained policy on the trained tasks and on easy tasks not trained on, with a
    sampling seed training never used. Flags after `--` go to train.py (they override the preset, e.g.
    `-- --steps 2`); evaluation uses the resulting policy, rollout, sandbox and reward sections, so it
    samples exactly as training did."""

    preset: str = "cpu-learn"  # training preset (PRESETS)
    # learning.json, learning.png, eval/; training writes to <out_dir>/train
    out_dir: str = "runs/learn-single"
    nproc: int = 2  # training ranks (torchrun --nproc_per_node)
    # False (--no-train): evaluate the policy already exported to <out_dir>/train/hf
    train: bool = True
    # evaluation sampling seed (training mixes (seed, step, rank); 777 is not one of its seeds)
    seed: int = 777
    k: int = 16  # episodes per trained task, per policy
    # easy tasks, not trained on
    heldout_task_ids: tuple[str, ...] = (
        "create-empty-file",
        "first-line",
        "make-script-executable",
        "nested-dirs",
    )
    heldout_k: int = 8  # episodes per held-out task, per policy
    bootstrap_resamples: int = 10_000  # percentile bootstrap of the mean reward's 95% interval


LEARN_SINGLE_RULES: list[Rule] = [
    ("preset", lambda v: v in PRESETS, f"unknown; choose one of {', '.join(PRESETS)}"),
    ("nproc", lambda v: v >= 1, "must be >= 1"),
    ("k", lambda v: v >= 1, "must be >= 1"),
    ("heldout_k", lambda v: v >= 1, "must be >= 1"),
    ("bootstrap_resamples", lambda v: v >= 1, "must be >= 1"),
    ("seed", lambda v: v >= 0, "must be >= 0"),
]


def validate_learn_single(cfg: LearnSingleConfig) -> LearnSingleConfig:
    """Check the knobs of `make learn-single` (experiments/learn_single.py; the training flags are
    checked by configs.parse_cli). Returns cfg. Raises ConfigError naming the field, e.g.
    "k = 0: must be >= 1"."""
    check_rules(cfg, LEARN_SINGLE_RULES)
    return cfg


def parse_learn_single_cli(
    args: list[str] | None = None, description: str | None = None
) -> LearnSingleConfig:
    """Parse `python -m experiments.learn_single` flags (those before `--`) into a validated
    LearnSingleConfig (validate_learn_single). Raises ConfigError naming a bad field or a renamed flag
    (configs.refuse_renamed_flags); SystemExit from tyro on unknown flags or `--help`."""
    refuse_renamed_flags(sys.argv[1:] if args is None else args)
    return validate_learn_single(
        tyro.cli(
            LearnSingleConfig,
            prog="python -m experiments.learn_single",
            args=args,
            description=description,
        )
    )


# ----------------------------------------------------------------------------- the warm start


@dataclass
class SFTBestConfig:
    """The best SFT-only policy from the warm start's demonstrations (experiments/warm_start.py,
    sft_best): the same SFT recipe (sft.*) from the same base, trained epoch after epoch, judged on a
    validation split after every `eval_every` epochs, the best evaluation kept (early stopping).
    The baseline a GRPO run from the warm start must beat to show what RL adds to imitation."""

    # the validation tasks it is chosen on ('' = no SFT-best run); never the evaluation set
    tasks: str = ""
    # only these ids of tasks (empty = all)
    task_ids: tuple[str, ...] = ()
    # episodes per validation instance and evaluation
    k: int = 4
    # evaluation sampling seed (the same at every evaluation: checkpoints are compared on the same draws)
    seed: int = 777
    # peak learning rate of AdamW (0 = sft.lr, the warm start's)
    lr: float = 0.0
    # epochs between evaluations on the validation split
    eval_every: int = 1
    # evaluations without improvement of the validation resolved rate before it stops
    patience: int = 3
    # optimizer steps it trains at least, whatever patience says (e.g. GRPO's steps)
    min_steps: int = 0
    # passes over the demonstrations at most (the lr schedule spans them all)
    max_epochs: int = 30
    # percentile bootstrap of the validation resolved rate's 95% interval (over instances)
    bootstrap_resamples: int = 10_000


SFT_BEST_RULES: list[Rule] = [
    ("sft_best.k", lambda v: v >= 1, "must be >= 1"),
    ("sft_best.seed", lambda v: v >= 0, "must be >= 0"),
    (
        "sft_best.lr",
        lambda v: math.isfinite(v) and v >= 0,
        "must be a finite number >= 0 (0 = sft.lr)",
    ),
    ("sft_best.eval_every", lambda v: v >= 1, "must be >= 1"),
    ("sft_best.patience", lambda v: v >= 1, "must be >= 1"),
    ("sft_best.min_steps", lambda v: v >= 0, "must be >= 0"),
    ("sft_best.max_epochs", lambda v: v >= 1, "must be >= 1"),
    ("sft_best.bootstrap_resamples", lambda v: v >= 1, "must be >= 1"),
    ("demo_max_hops", lambda v: v >= 1, "must be >= 1"),
]


@dataclass
class WarmStartConfig:
    """A warm start from demonstrations (`python -m experiments.warm_start`): each task's own solution
    acted out turn by turn by a reactive oracle through the real agent loop, the resolved episodes
    trained on with the masked cross-entropy of their action tokens, the result exported as an HF
    folder that train.py (--policy.path) and evaluate.py (--model) start from."""

    policy: PolicyConfig = field(
        default_factory=lambda: copy.deepcopy(PRESETS[DEFAULT_PRESET].policy)
    )
    rollout: RolloutConfig = field(
        default_factory=lambda: copy.deepcopy(PRESETS[DEFAULT_PRESET].rollout)
    )
    sandbox: SandboxConfig = field(
        default_factory=lambda: copy.deepcopy(PRESETS[DEFAULT_PRESET].sandbox)
    )
    sft: SFTConfig = field(default_factory=SFTConfig)
    # the demonstrations' tasks: a task folder, Terminal-Bench folder or CSV
    tasks: str = "data/tasks"
    # only these task ids (empty = all)
    task_ids: tuple[str, ...] = ()
    # only these difficulties (empty = all)
    difficulties: tuple[str, ...] = ()
    # the evaluation set the demonstrations must not touch ('' = none named): a task of it with the
    # same id or instruction as a demonstration task is refused
    eval_tasks: str = ""
    # only these ids of eval_tasks (empty = all)
    eval_task_ids: tuple[str, ...] = ()
    # oracle episodes per task (the oracle is deterministic: more only helps where outputs vary)
    k: int = 1
    # demonstrations.jsonl, warm_start.json and the exported policy (hf/) go here
    out_dir: str = "runs/warm_start"
    # where the SFT runs ('cuda' on a GPU)
    device: str = "cpu"
    # label of this run's containers ('' = sandbox.RUN_ID of this process)
    run_id: str = ""
    # progress lines on stderr
    progress: bool = True
    # demonstrations only from generated instances (tasks/family.py) of at most this many hops; the
    # others are left out, counted in warm_start.json (a task without hops is kept)
    demo_max_hops: int = 2
    # the best SFT-only policy from the same demonstrations, early-stopped on a validation split
    sft_best: SFTBestConfig = field(default_factory=SFTBestConfig)


WARM_START_RULES: list[Rule] = [
    *POLICY_RULES,
    *SANDBOX_RULES,
    *ROLLOUT_RULES,
    *SFT_RULES,
    ("k", lambda v: v >= 1, "must be >= 1"),
    # torch's device names the SFT can run on; whether CUDA is there is checked at start-up
    (
        "device",
        lambda v: v == "cpu" or re.fullmatch(r"cuda(:\d+)?", v) is not None,
        "must be 'cpu' or 'cuda[:N]'",
    ),
    *SFT_BEST_RULES,
]


def validate_warm_start(cfg: WarmStartConfig, check_paths: bool = True) -> WarmStartConfig:
    """Check every knob of a warm start (`python -m experiments.warm_start`). Returns cfg.
    Raises ConfigError naming the field, e.g. "sft.epochs = 0: must be >= 1"."""
    check_rules(cfg, WARM_START_RULES)
    check_sandbox_lists(cfg.sandbox)
    check_lengths(cfg.rollout)
    check_context(cfg)
    if check_paths:
        check_model_path(cfg.policy.path)
        ok = not cfg.eval_tasks or Path(cfg.eval_tasks).exists()
        need(ok, "eval_tasks", cfg.eval_tasks, "path does not exist")
        ok = not cfg.sft_best.tasks or Path(cfg.sft_best.tasks).exists()
        need(ok, "sft_best.tasks", cfg.sft_best.tasks, "path does not exist")
    check_task_selection(cfg.tasks, cfg.difficulties, check_paths)
    return cfg


def parse_warm_start_cli(
    args: list[str] | None = None, description: str | None = None, check_paths: bool = True
) -> WarmStartConfig:
    """Parse `python -m experiments.warm_start` flags into a validated WarmStartConfig
    (validate_warm_start). Raises ConfigError naming a bad field; SystemExit from tyro on unknown
    flags or `--help`."""
    return validate_warm_start(
        tyro.cli(
            WarmStartConfig,
            prog="python -m experiments.warm_start",
            args=args,
            description=description,
        ),
        check_paths=check_paths,
    )
