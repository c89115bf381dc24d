"""The figures README.md, docs/reference.md and DESIGN.md state that the code can know: the dataset's counts,
the presets, the CPU defaults' shape, the test counts per tier. A figure the code changes fails here
until the documents say it."""

import re
import subprocess
import sys
from collections import Counter

import pytest
from train_helpers import ROOT

import configs
from tasks import select_tasks

README = (ROOT / "README.md").read_text()
DESIGN = (ROOT / "DESIGN.md").read_text()
REFERENCE = (ROOT / "docs" / "reference.md").read_text()
# make test-fast's marker expression (Makefile)
FAST_TIER = "not docker and not model_run and not server and not slow"


def test_the_dataset_counts_are_those_of_the_shipped_tasks():
    tasks = select_tasks("data/tasks", (), ())
    by_difficulty = Counter(t.difficulty for t in tasks)
    categories = {t.category for t in tasks}
    stated = re.search(
        r"The dataset has (\d+) tasks \((\d+) easy, (\d+) medium, (\d+) hard, (\d+) extremely hard,"
        r"\s+in the (\d+) categories",
        README,
    )
    assert stated, "README states the dataset's counts"
    assert [int(x) for x in stated.groups()] == [
        len(tasks),
        by_difficulty["easy"],
        by_difficulty["medium"],
        by_difficulty["hard"],
        by_difficulty["extremely_hard"],
        len(categories),
    ]
    # every other place that says how many
    assert re.findall(r"the shipped dataset \((\d+) tasks\)", README) == [str(len(tasks))]
    assert re.findall(r"the shipped dataset \((\d+) tasks\)", DESIGN) == [str(len(tasks))]
    assert re.findall(r"all (\d+) when nothing selects", REFERENCE) == [str(len(tasks))]
    assert re.findall(r"--difficulties easy --k 4 +# (\d+) tasks x 4", REFERENCE) == [
        str(by_difficulty["easy"])
    ]


def test_the_preset_table_lists_every_preset_and_the_cpu_defaults_shape():
    rows = re.findall(r"^\| `([\w.-]+)`(?: \(default\))? \|", README, flags=re.MULTILINE)
    assert sorted(rows) == sorted(configs.PRESETS)
    assert f"| `{configs.DEFAULT_PRESET}` (default) |" in README
    cpu = configs.PRESETS["cpu-smollm2"]
    stated = re.search(
        r"`make train`: (\d+) GRPO steps \((\d+) tasks x (\d+) episodes per step over (\d+) gloo",
        README,
    )
    assert stated, "README states make train's shape"
    # NPROC ?= 2 in the Makefile
    nproc = int(re.search(r"^NPROC \?= (\d+)$", (ROOT / "Makefile").read_text(), re.M).group(1))
    assert [int(x) for x in stated.groups()] == [
        cpu.steps,
        cpu.tasks_per_step,
        cpu.grpo.group_size,
        nproc,
    ]
    learn_steps = configs.PRESETS["cpu-learn"].steps
    assert re.findall(r"`cpu-learn` \((\d+) steps\)", README) == [str(learn_steps)]
    assert re.findall(r"as cpu-smollm2, (\d+) steps of", README) == [str(learn_steps)]


@pytest.mark.slow
def test_the_test_counts_per_tier_are_what_pytest_collects():
    # one collection gives both: "N/M tests collected (K deselected)"
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "tests", "--collect-only", "-q", "-m", FAST_TIER],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    counted = re.search(r"^(\d+)/(\d+) tests collected", r.stdout, flags=re.MULTILINE)
    assert counted, r.stdout[-2000:] + r.stderr[-2000:]
    fast, total = (int(x) for x in counted.groups())
    stated = re.search(r"`make test-fast` runs the\s+unmarked rest \((\d+) of (\d+) tests", README)
    assert stated, "README states the fast tier's count"
    assert (int(stated.group(1)), int(stated.group(2))) == (fast, total)
    assert re.findall(r"CI's command \((\d+) tests;", README) == [str(total)]


def test_the_ablation_example_quotes_the_loss_line_as_grpo_py_has_it():
    # the guide's worked example tells the reader which line to replace: it must be there to find
    fork = README[README.index("## How to fork an ablation") :]
    line = re.search(r"```python\n\s*(.+)\n\s*```", fork).group(1).strip()
    assert line.startswith("pg = _clipped_surrogate(")
    grpo_lines = [x.strip() for x in (ROOT / "grpo.py").read_text().splitlines()]
    assert line in grpo_lines
