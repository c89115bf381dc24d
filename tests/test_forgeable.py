"""Tests that import the agent's module into pytest's process are fenced: the agent's code runs where the
report is written and can rewrite it, so such a report says its reward is forgeable, and loading a task
set counts such tasks in one line. The attacking agent of our own below forges and is flagged."""

import asyncio
import logging
import os
import textwrap

import pytest

import sandbox
from sandbox import Sandbox
from sandboxing import images
from tasks import load_tasks

RUN_ID = f"test-forgeable-{os.getpid()}"


def native(root, task_id: str, extra: str = ""):
    d = root / task_id
    (d / "tests").mkdir(parents=True)
    (d / "task.toml").write_text(
        f'id = "{task_id}"\ninstruction = "Do it."\ndifficulty = "easy"\ncategory = "files"\n'
        f"{extra}\n[weights]\ntest_x = 1.0\n"
    )
    (d / "Dockerfile").write_text("FROM ${BASE_IMAGE}\n")
    (d / "tests" / "test_outputs.py").write_text("def test_x():\n    pass\n")
    (d / "solution.sh").write_text("#!/bin/bash\ntrue\n")


def test_loading_a_set_counts_its_tasks_whose_reward_is_forgeable(tmp_path, caplog):
    native(tmp_path, "imports-agent", 'agent_modules = ["solution"]')
    native(tmp_path, "plain")
    native(tmp_path, "plain-too")
    with caplog.at_level(logging.WARNING, logger="termrl.tasks"):
        loaded = load_tasks(tmp_path)
    assert [t.id for t in loaded] == ["imports-agent", "plain", "plain-too"]
    assert [r.getMessage() for r in caplog.records] == [
        f"1 of 3 tasks in {tmp_path} import the agent's module into pytest's process "
        "(agent_modules): their reward is forgeable by the agent (imports-agent)"
    ]


def test_a_set_without_such_tasks_says_nothing(tmp_path, caplog):
    native(tmp_path, "plain")
    with caplog.at_level(logging.WARNING, logger="termrl.tasks"):
        load_tasks(tmp_path)
    assert caplog.records == []


# The agent's module: imported by the tests, it turns every report pytest makes into a pass.
FORGER = """
import _pytest.reports as reports
_orig = reports.TestReport.from_item_and_call.__func__
def forced(cls, item, call):
    r = _orig(cls, item, call)
    r.outcome, r.longrepr = 'passed', None
    return r
reports.TestReport.from_item_and_call = classmethod(forced)
def answer():
    return 0
"""


@pytest.mark.docker
def test_a_forged_report_of_tests_importing_the_agents_module_says_it_is_forgeable(
    tmp_path, docker_client
):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_hidden.py").write_text(
        "import sys\nsys.path.insert(0, '/app')\nimport solution\ndef test_x():\n    assert solution.answer() == 42\n"
    )

    async def go():
        async with await Sandbox.start(images.BASE_IMAGE, run_id=RUN_ID) as sb:
            await sb.write_file("/app/solution.py", textwrap.dedent(FORGER))
            forged = await sb.run_tests(tests, timeout=60, agent_modules=["solution"])
            return forged

    try:
        report = asyncio.run(go())
    finally:
        sandbox.reap(run_id=RUN_ID)
    assert report.tests == {"test_x": True}  # forged: the fence says so, it does not prevent it
    assert report.forgeable == (
        "the hidden tests import the agent's module(s) ['solution'] into pytest's process, where "
        "that code can rewrite the report: the reward is forgeable by the agent"
    )
