"""termrl tasks: the Task record, loaders for native / Terminal-Bench / terminal-bench-rl CSV tasks.

    from tasks import load_tasks
    tasks = load_tasks("data/tasks")            # a folder of task folders, one task folder, or a .csv

Validation (`tasks.validate`) needs Docker and synthetic generation (`tasks.generate`) an LLM; neither is
imported by `import tasks`. The CLI is `python -m tasks {validate,stats,import-csv,export-harbor,generate,family}`.
"""

from configs import ConfigError
from tasks.loaders import import_csv, load_tasks, render_task_toml
from tasks.task import DIFFICULTIES, Task, TaskError

__all__ = [
    "DIFFICULTIES",
    "Task",
    "TaskError",
    "import_csv",
    "load_tasks",
    "render_task_toml",
    "select_tasks",
]


def select_tasks(
    path: str, task_ids: tuple[str, ...] = (), difficulties: tuple[str, ...] = ()
) -> list[Task]:
    """load_tasks(path) kept to `task_ids` and `difficulties` (empty = all), sorted by id: the task set of a
    training run (configs.TrainConfig) and of an evaluation (configs.EvalConfig) alike.
    Raises ConfigError naming the field when an id is unknown or no task is left; TaskError as load_tasks."""
    tasks = load_tasks(path)
    missing = sorted(set(task_ids) - {t.id for t in tasks})
    if missing:
        raise ConfigError(f"task_ids = {missing!r}: not found in {path}")
    tasks = [
        t
        for t in tasks
        if (not task_ids or t.id in task_ids) and (not difficulties or t.difficulty in difficulties)
    ]
    if not tasks:
        raise ConfigError(
            f"tasks = {path!r}: no task left after task_ids={task_ids!r} and difficulties={difficulties!r}"
        )
    return sorted(tasks, key=lambda t: t.id)
