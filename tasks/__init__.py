"""termrl tasks: the Task record, loaders for native / Terminal-Bench / terminal-bench-rl CSV tasks.

    from tasks import load_tasks
    tasks = load_tasks("tasks/data")            # a folder of task folders, one task folder, or a .csv

Validation (`tasks.validate`) and synthetic generation (`tasks.generate`) need Docker and are imported
on demand; the CLI is `python -m tasks {validate,import-csv,generate}`.
"""

from tasks.task import DIFFICULTIES, Task, TaskError
from tasks.loaders import import_csv, load_tasks, render_task_toml

__all__ = ["DIFFICULTIES", "Task", "TaskError", "import_csv", "load_tasks", "render_task_toml"]
