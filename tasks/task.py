"""The Task record every part of termrl passes around, and the error raised for bad task files.

A task is a folder on disk (see DESIGN.md, "Task format"): a Dockerfile and build context that prepare
/app, hidden pytest tests copied in only after the agent stops, an oracle solution.sh, and per-test
weights that turn the test results into a verification score in [0, 1].
"""

from dataclasses import dataclass, field
from pathlib import Path

from bookkeeping.sanitise import printable

DIFFICULTIES = (
    "easy",
    "medium",
    "hard",
    "extremely_hard",
    "unknown",
)  # "unknown": allowed by Terminal-Bench


class TaskError(ValueError):
    """A task file is malformed. The message names the task, the field and the file.

    Attributes: task_id (str), field (str), path (Path | None).
    """

    def __init__(self, task_id: str, field: str, message: str, path: Path | str | None = None):
        self.task_id, self.field, self.message = task_id, field, message
        self.path = Path(path) if path is not None else None
        where = f" [{self.path}]" if self.path is not None else ""
        # task files are third-party text: shown escaped wherever the error is printed or logged
        super().__init__(printable(f"task '{task_id}', field '{field}': {message}{where}"))


@dataclass
class Task:
    """One terminal task, loaded and checked.

    weights: test name -> weight, each >= 0, summing to 1. A name is a pytest test function
        (`test_x`, matching every case of a parametrized function) or one case (`test_x[a-1]`),
        as in JUnit `testcase@name`.
    allowed_prepass: test name -> reason it may already pass on the untouched container.
    agent_timeout_s: the agent's wall-clock limit, seconds. test_timeout_s: seconds per hidden test (a test
        past it fails) and for test_setup; the whole run gets the verifier's wall clock (sandbox.verify_wall_s).
    tests_dir: the hidden tests (a folder of the task, left out of the build context); the verifier copies
        them to /tests (TEST_DIR=/tests) after the agent stops.
    solution: the oracle, a bash script (solution.sh, or one generated from Terminal-Bench solution.yaml).
    test_setup: shell script the verifier runs (from the image WORKDIR, TEST_DIR set) before pytest, e.g.
        what a Terminal-Bench run-tests.sh does besides installing packages and running pytest.
    build_setup: shell script run as root in a last layer of the task image (images.py): test-only
        dependency installs (pytest, ...) that run-tests.sh would do at test time, when sandboxes have no network.
    meta: free-form provenance (source format, title, ...); never used for scoring.
    agent_modules: top-level module names the hidden tests import from the agent's files even where the task
        image has them (the task is about that module, e.g. patching an installed package); by default the
        verifier takes every module the task image has from the untouched image (sandboxing/verifier.py).
    verifier_script: a Harbor tests/test.sh kept as a script (tasks/harbor.py): run in the verifier
        container instead of pytest, scored from the reward.txt / reward.json it writes; weights then
        hold the single key "reward".
    solution_dir: the oracle's folder (Harbor solution/: solve.sh and its side files), copied to /solution;
        None when the oracle is the single file `solution`.
    cpus, memory_mb, storage_mb: the task's own resource request (Harbor [environment]); None = the
        sandbox defaults (configs.SandboxConfig).
    sidecars: a Harbor compose file's non-main services (tasks/compose.Sidecar), in start order; they
        run beside the agent's container in its network namespace (sandboxing/compose.py).
    service_names: the host names (compose service names) that resolve to 127.0.0.1 there.
    oracle_turns: the task folder's oracle_turns.json when it has one (native folders; checked at loading by
        tasks/checks.read_oracle_turns): the oracle acted out turn by turn, each command formatted from the
        values that earlier observations revealed (DESIGN.md, "Task format").
    solution_env: variables the oracle's run gets on top of the container's (Harbor [solution.env]).
    steps: a Harbor multi-step task's steps (`Step`, in order; tasks/harbor.py), else (). The episode
        acts them in one sandbox, each step's instruction a new user turn, each verified at its end
        (rollout.py); instruction, tests_dir, verifier_script and solution are then the first step's.
    step_reward: how the steps' rewards roll up into the episode's (Harbor multi_step_reward_strategy):
        "mean" (per-key mean over the verified steps) or "final" (the last verified step's).
    """

    id: str
    instruction: str
    difficulty: str
    category: str
    tags: list[str]
    path: Path  # the task folder
    dockerfile: Path
    context_dir: Path  # docker build context (the task folder)
    tests_dir: Path
    weights: dict[str, float]
    solution: Path | None
    agent_timeout_s: float
    test_timeout_s: float
    max_turns: int | None = None
    test_setup: str | None = None
    build_setup: str | None = None
    allowed_prepass: dict[str, str] = field(default_factory=dict)
    meta: dict[str, str] = field(default_factory=dict)
    agent_modules: list[str] = field(default_factory=list)
    verifier_script: str | None = None
    solution_dir: Path | None = None
    cpus: float | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None
    sidecars: tuple = ()
    service_names: tuple[str, ...] = ()
    oracle_turns: Path | None = None
    solution_env: dict[str, str] = field(default_factory=dict)
    steps: tuple["Step", ...] = ()
    step_reward: str = "mean"


@dataclass(frozen=True)
class Step:
    """One step of a Harbor multi-step task (task.toml `[[steps]]`, steps/<name>/).

    instruction: steps/<name>/instruction.md, the user turn that opens the step.
    tests_dir: the step's /tests (the task's shared tests/ with the step's own tests/ over it, as
        Harbor uploads them); verifier_script: its test.sh as Task.verifier_script, scored from the
        reward files it writes. test_timeout_s / agent_timeout_s: seconds (the step's own, else the
        task's; agent None = the episode's limit).
    solution / solution_dir: the step's oracle (steps/<name>/solution/solve.sh), else the task's.
    workdir_dir: steps/<name>/workdir/, copied into the container's working directory before the
        step's turns (its setup.sh then run there and removed by itself, as Harbor does), or None.
    min_reward: reward key -> threshold (Harbor's `min_reward`, a float meaning {"reward": x}): a
        verified step below any threshold (a missing key counts as -inf) ends the episode.
    """

    name: str
    instruction: str
    tests_dir: Path
    verifier_script: str
    test_timeout_s: float
    agent_timeout_s: float | None = None
    solution: Path | None = None
    solution_dir: Path | None = None
    workdir_dir: Path | None = None
    min_reward: dict[str, float] | None = None
