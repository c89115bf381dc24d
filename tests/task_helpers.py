"""Shared by the task loader and importer tests (test_tasks.py, test_task_csv.py)."""

import pytest

from tasks import TaskError, load_tasks


def load_error(path, strict=True, **kwargs) -> str:
    """The message of the TaskError that load_tasks(path, strict, **kwargs) raises; fails the test
    when it raises none."""
    with pytest.raises(TaskError) as info:
        load_tasks(path, strict=strict, **kwargs)
    return str(info.value)
