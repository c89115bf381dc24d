"""The shipped dataset data/tasks: every task loads, the set has the seed dataset's categories and
the difficulty counts asked for, no task rewards an empty or destructive attempt by construction, no two
tasks share a solution or an instruction template, the README's table matches, and a seeded random sample
validates with real Docker (`python -m tasks validate --sample N --seed S`; `make validate-tasks` runs all)."""

import asyncio
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tasks import load_tasks
from tasks.__main__ import sample_tasks, stats_table
from tasks.validate import validate_tasks

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "tasks"
# The seed dataset's (terminal-bench-rl) categories and shares: 97/331, 59, 42, 37, 28 of 331; the rest small.
SHARES = {
    "software-engineering": 0.29,
    "system-administration": 0.18,
    "security": 0.13,
    "data-processing": 0.11,
    "debugging": 0.08,
}
MINOR = {
    "machine-learning",
    "file-operations",
    "scientific-computing",
    "data-science",
    "games",
    "mathematics",
}
MIN_DIFFICULTY = {"easy": 60, "medium": 100, "hard": 80, "extremely_hard": 20}
# tasks validated per CI run, one per validation job: each is an image build, a toolchain copy and
# several containers; the sample rotates with the commit, and `make validate-tasks` validates all
SAMPLE = 3


@pytest.fixture(scope="module")
def tasks():
    refused = []
    loaded = load_tasks(DATA, refused=refused)
    assert [str(e) for e in refused] == []
    return loaded


def test_every_folder_is_a_task(tasks):
    folders = sorted(p.name for p in DATA.iterdir() if p.is_dir())
    assert sorted(t.id for t in tasks) == folders


def test_size_categories_and_difficulties(tasks):
    total = len(tasks)
    assert total >= 331
    categories = Counter(t.category for t in tasks)
    assert set(categories) <= set(SHARES) | MINOR, sorted(set(categories) - set(SHARES) - MINOR)
    for category, share in SHARES.items():  # within 3 percentage points of the seed dataset's share
        assert abs(categories[category] / total - share) <= 0.03, (
            category,
            categories[category],
            total,
        )
    assert set(categories) >= MINOR, sorted(MINOR - set(categories))
    difficulties = Counter(t.difficulty for t in tasks)
    short = {d: (difficulties[d], n) for d, n in MIN_DIFFICULTY.items() if difficulties[d] < n}
    assert short == {}


def test_an_empty_attempt_scores_zero_by_construction(tasks):
    # validation proves every weighted test fails untouched; no task may excuse one with [allowed_prepass]
    assert [t.id for t in tasks if t.allowed_prepass] == []
    assert [t.id for t in tasks if t.solution is None] == []


def _normal(text: str) -> str:
    lines = (
        line.split("#", 1)[0].strip() if not line.startswith("#!") else ""
        for line in text.splitlines()
    )
    return "\n".join(
        line for line in lines if line and line != "set -e" and line != "set -euo pipefail"
    )


def test_no_two_tasks_share_a_solution_or_tests(tasks):
    for what, read in (
        ("solution", lambda t: _normal(t.solution.read_text())),
        ("tests", lambda t: "\n".join(p.read_text() for p in sorted(t.tests_dir.rglob("*.py")))),
    ):
        seen: dict[str, str] = {}
        same = []
        for t in tasks:
            key = read(t)
            if key in seen:
                same.append((seen[key], t.id))
            seen.setdefault(key, t.id)
        assert same == [], what


def _template(text: str) -> str:
    """An instruction with its numbers and quoted or path-like names blanked: what a template keeps."""
    text = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"", "Q", text)
    text = re.sub(r"/[\w./-]+", "P", text)
    return re.sub(r"\d+(\.\d+)?", "N", text.lower())


def _template_words(instruction: str) -> set[str]:
    return set(re.findall(r"\w+", _template(instruction)))


def _same_template(a: set[str], b: set[str]) -> bool:
    """Word sets of two blanked instructions overlap enough (Jaccard >= 0.7) to be one template."""
    return len(a & b) >= 0.7 * len(a | b)


def test_at_most_three_tasks_per_instruction_template(tasks):
    """Instructions of one template (`_same_template`) form connected groups; a group may hold at most 3
    tasks. (The most similar pair of distinct tasks scored 0.43 when this was written.)"""
    words = [_template_words(t.instruction) for t in tasks]
    parent = list(range(len(tasks)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(tasks)):
        for j in range(i + 1, len(tasks)):
            if _same_template(words[i], words[j]):
                parent[root(i)] = root(j)
    groups = Counter(root(i) for i in range(len(tasks)))
    big = [
        sorted(tasks[i].id for i in range(len(tasks)) if root(i) == r)
        for r, n in groups.items()
        if n > 3
    ]
    assert big == []


def test_template_check_catches_a_renamed_copy(tasks):
    first = tasks[0].instruction
    copy = re.sub(r"\d+", "7", first.replace("/app/", "/app/other_"))
    assert _same_template(_template_words(first), _template_words(copy))


def test_readme_states_the_dataset_counts(tasks):
    by = Counter(t.difficulty for t in tasks)
    said = (
        f"{len(tasks)} tasks ({by['easy']} easy, {by['medium']} medium, {by['hard']} hard, "
        f"{by['extremely_hard']} extremely hard, in the {len({t.category for t in tasks})} categories"
    )
    assert (
        said == "348 tasks (82 easy, 132 medium, 104 hard, 30 extremely hard, in the 11 categories"
    )
    readme = " ".join((ROOT / "README.md").read_text().split())  # the line wraps anywhere
    assert said in readme, "update README's counts: python -m tasks stats"
    assert "| **total** | **82** | **132** | **104** | **30** | **348** |" in stats_table(tasks)


def _sample_seed() -> int:
    """TERMRL_TASK_SAMPLE_SEED, else the first 8 hex digits of the checked-out commit: each commit validates
    its own sample, and a rerun of that commit the same one."""
    if os.environ.get("TERMRL_TASK_SAMPLE_SEED"):
        return int(os.environ["TERMRL_TASK_SAMPLE_SEED"])
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return int(head.stdout[:8], 16) if head.returncode == 0 else 0


@pytest.mark.docker
def test_a_seeded_sample_validates(tasks):
    seed = _sample_seed()
    sample = sample_tasks(tasks, SAMPLE, seed)
    print(
        f"validating {[t.id for t in sample]}: python -m tasks validate --sample {SAMPLE} --seed {seed}"
    )
    results = asyncio.run(validate_tasks(sample, jobs=3))
    assert [(r.task_id, r.verdict, r.reason) for r in results] == [
        (t.id, "valid", "") for t in sample
    ]


def test_sample_is_a_function_of_the_seed(tasks):
    first = [t.id for t in sample_tasks(tasks, SAMPLE, 12345)]
    assert first == [
        t.id for t in sample_tasks(list(reversed(tasks)), SAMPLE, 12345)
    ]  # order of input is irrelevant
    assert first == sorted(first) and len(set(first)) == SAMPLE
    assert first != [t.id for t in sample_tasks(tasks, SAMPLE, 12346)]
