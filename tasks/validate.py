"""Oracle validation: prove each task's tests are meaningful (fail before) and its solution works (pass after).

Per task: build the image; in one container run the tests untouched (every weighted test must fail,
unless [allowed_prepass] lists it with a reason); in a second one run `rm -rf /app` (the destructive
attempt) and then the tests (every weighted test must fail: deleting the work must never earn reward);
in a third run solution.sh from /app, then the tests (every test must pass, every weighted test must be
reported). The three containers run at once.
terminal-bench-rl's pipeline only checked the first half; a task no solution can pass teaches nothing.
A task without an oracle gets the first two runs only and a verdict of its own: "fails before; no oracle"
(usable, unproven), or "defective" when its tests already pass on the untouched container (or after the
destructive attempt).
"""

import asyncio
import time
from dataclasses import dataclass, field, replace

from rich.table import Table

import sandbox
from reward import verify  # the same weighted-test rule the training reward uses
from sandboxing import images
from tasks.harbor import prepare_step
from tasks.task import Task

SOLUTION_PATH = "/oracle/solution.sh"  # outside /app, removed before the tests run
DEFAULT_SOLUTION_TIMEOUT_S = 600.0  # a Harbor task without [agent].timeout_sec (harbor: unbounded)
DESTROY = "rm -rf /app"  # the destructive attempt: no weighted test may pass after it


@dataclass
class ValidationResult:
    """Outcome of validating one task. reasons is empty iff ok; durations in seconds."""

    task_id: str
    ok: bool
    verdict: str = (
        ""  # "valid", "fails before; no oracle", "defective" (tests pass untouched or after
    )
    #                    `rm -rf /app`) or "invalid"
    reasons: list[str] = field(default_factory=list)
    before: "sandbox.TestReport | None" = None  # tests on the untouched container
    destroyed: "sandbox.TestReport | None" = None  # tests after `rm -rf /app`
    after: "sandbox.TestReport | None" = None  # tests after solution.sh
    solution_exit_code: int | None = None
    duration_s: float = 0.0

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


def _tail(text: str, n: int = 300) -> str:
    text = " ".join(text.strip().split())
    return text if len(text) <= n else "..." + text[-n:]


def check_before(task: Task, report) -> list[str]:
    """Reasons the untouched-container run disqualifies the task (empty list = fine)."""
    if report.timed_out:
        return [f"tests timed out on the untouched container after {task.test_timeout_s:g}s"]
    passing = [n for n in verify(report, task.weights).passed if n not in task.allowed_prepass]
    if passing:
        return [
            f"tests pass before the solution: {', '.join(passing)} (fix the tests, or list them under "
            "[allowed_prepass] with a reason)"
        ]
    return []


def check_destroyed(task: Task, report) -> list[str]:
    """Reasons the destructive attempt (`rm -rf /app`, then the tests) disqualifies the task: any weighted
    test that passes (allowed_prepass does not excuse it). Empty list = fine."""
    if report.timed_out:
        return [f"tests timed out after `{DESTROY}` ({task.test_timeout_s:g}s)"]
    passing = verify(report, task.weights).passed
    if passing:
        return [
            f"tests pass after `{DESTROY}`: {', '.join(passing)} (a test must also check what should be kept)"
        ]
    return []


def check_after(task: Task, exec_result, report) -> list[str]:
    """Reasons the solution run disqualifies the task (empty list = fine)."""
    if exec_result.timed_out:
        return [
            f"solution.sh timed out after {task.agent_timeout_s or DEFAULT_SOLUTION_TIMEOUT_S:g}s"
        ]
    if exec_result.exit_code != 0:
        return [
            f"solution.sh exited with code {exec_result.exit_code}: {_tail(exec_result.output)}"
        ]
    if report.timed_out:
        return [f"tests timed out after the solution ({task.test_timeout_s:g}s)"]
    if report.error:
        return [f"tests errored after the solution: {_tail(report.error)}"]
    reasons = []
    failing = sorted(n for n, ok in report.tests.items() if not ok)
    if failing:
        reasons.append(f"tests fail after the solution: {', '.join(failing)}")
    missing = verify(report, task.weights).missing
    if missing:
        reasons.append(f"weighted tests not reported by pytest: {', '.join(missing)}")
    return reasons


async def _run_tests(image: str, task: Task, limits, first: str | None = None):
    """The tests in a fresh container of image, after the shell command `first` when given."""
    async with await sandbox.start_sandbox(task, image, limits) as sb:
        if first is not None:
            await sb.exec(first, timeout=60)
        return await _tests(sb, task)


async def _tests(sb, task: Task):
    """The hidden tests exactly as evaluation runs them (test_setup, a Harbor verifier script)."""
    return await sb.run_tests(
        task.tests_dir,
        timeout=task.test_timeout_s,
        test_setup=task.test_setup,
        script=task.verifier_script,
    )


async def _run_solution(image: str, task: Task, limits):
    if task.steps:
        return await _run_step_solutions(image, task, limits)
    async with await sandbox.start_sandbox(task, image, limits) as sb:
        command = await sandbox.put_solution(sb, task, SOLUTION_PATH)
        result = await sb.exec(command, timeout=task.agent_timeout_s or DEFAULT_SOLUTION_TIMEOUT_S)
        if result.timed_out or result.exit_code != 0:
            return result, None
        await sb.exec(
            f"rm -rf {SOLUTION_PATH.rsplit('/', 1)[0]} {sandbox.SOLUTION_DIR}", timeout=30
        )
        return result, await _tests(sb, task)


async def _run_step_solutions(image: str, task: Task, limits):
    """A multi-step task's oracle: in one sandbox, each step's workdir/ and solution, then its tests
    (from a snapshot, the sandbox going on); stops at the first step whose solution fails or whose
    tests do not all pass. Returns (the last solution's exec result, that step's report or None)."""
    async with await sandbox.start_sandbox(task, image, limits) as sb:
        for step in task.steps:
            timeout = step.agent_timeout_s or DEFAULT_SOLUTION_TIMEOUT_S
            await prepare_step(sb, task.id, step, timeout)
            own = replace(task, solution=step.solution, solution_dir=step.solution_dir)
            result = await sb.exec(
                await sandbox.put_solution(sb, own, SOLUTION_PATH), timeout=timeout
            )
            if result.timed_out or result.exit_code != 0:
                return result, None
            await sb.exec(
                f"rm -rf {SOLUTION_PATH.rsplit('/', 1)[0]} {sandbox.SOLUTION_DIR}", timeout=30
            )
            report = await sb.run_tests(
                step.tests_dir, timeout=step.test_timeout_s, script=step.verifier_script
            )
            if not verify(report, task.weights).resolved:
                break
        return result, report


async def validate_task(task: Task, base_image: str | None = None, limits=None) -> ValidationResult:
    """Build task's image and check it: weighted tests fail untouched and after `rm -rf /app`, all tests
    pass after solution.sh.

    Without a solution only the untouched and destructive runs happen: verdict "fails before; no oracle"
    (ok) when the weighted tests fail there, "defective" when any passes.
    base_image: image `FROM ${BASE_IMAGE}` builds on (None = images.BASE_IMAGE); limits: sandbox.Limits.
    Never raises for a bad task: image build errors, sandbox errors and crashes become a failed result
    whose reasons say what happened. Containers are always removed.
    """
    start = time.monotonic()
    result = ValidationResult(task.id, ok=False)
    try:
        image = await asyncio.to_thread(images.build_image, task, base_image)
    except (
        Exception
    ) as e:  # ImageBuildError (its message ends with the build log's tail), ValueError, Docker
        result.reasons.append(f"image build failed: {type(e).__name__}: {_tail(str(e), 600)}")
    else:
        limits = (limits or sandbox.Limits()).for_task(task)
        runs = [_run_tests(image, task, limits), _run_tests(image, task, limits, first=DESTROY)]
        if task.solution is not None:
            runs.append(_run_solution(image, task, limits))
        outcomes = await asyncio.gather(*runs, return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, Exception):
                result.reasons.append(f"{type(outcome).__name__}: {outcome}")
        before, destroyed = outcomes[:2]
        if not isinstance(before, Exception):
            result.before = before
            result.reasons += check_before(task, before)
        if not isinstance(destroyed, Exception):
            result.destroyed = destroyed
            result.reasons += check_destroyed(task, destroyed)
        if len(outcomes) > 2 and not isinstance(outcomes[2], Exception):
            exec_result, result.after = outcomes[2]
            result.solution_exit_code = exec_result.exit_code
            result.reasons += check_after(task, exec_result, result.after)
    result.ok = not result.reasons
    if any(
        r.startswith(("tests pass before the solution", "tests pass after `"))
        for r in result.reasons
    ):
        result.verdict = "defective"
    elif not result.ok:
        result.verdict = "invalid"
    else:
        result.verdict = "valid" if task.solution is not None else "fails before; no oracle"
    result.duration_s = time.monotonic() - start
    return result


async def validate_tasks(
    tasks: list[Task], jobs: int = 4, base_image: str | None = None, limits=None, on_result=None
) -> list[ValidationResult]:
    """Validate tasks concurrently, at most `jobs` at a time (each uses three containers).

    on_result(result) is called as each task finishes (progress output). Returns results in task order.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    semaphore = asyncio.Semaphore(jobs)

    async def one(task: Task) -> ValidationResult:
        async with semaphore:
            result = await validate_task(task, base_image, limits)
        if on_result is not None:
            on_result(result)
        return result

    return list(await asyncio.gather(*(one(t) for t in tasks)))


def _count(report, weights) -> str:
    return "-" if report is None else f"{len(verify(report, weights).passed)}/{len(weights)}"


def results_table(tasks: list[Task], results: list[ValidationResult]):
    """A rich Table, one row per task: weighted tests passing untouched / after `rm -rf /app` / after the
    solution, solution exit code, seconds, verdict. Failure reasons are long; the CLI prints them in full
    below the table."""

    by_id = {t.id: t for t in tasks}
    valid = sum(r.verdict == "valid" for r in results)
    no_oracle = sum(r.verdict == "fails before; no oracle" for r in results)
    title = f"task validation: {valid}/{len(results)} valid" + (
        f", {no_oracle} fail before (no oracle)" if no_oracle else ""
    )
    table = Table(title=title, title_justify="left")
    table.add_column("task", overflow="fold")
    # Short columns never shrink below their header: a narrow terminal folds task ids instead.
    table.add_column("difficulty", min_width=10, no_wrap=True)
    table.add_column(
        "before", justify="right", min_width=6, no_wrap=True
    )  # weighted tests passing untouched
    table.add_column(
        "rm -rf", justify="right", min_width=6, no_wrap=True
    )  # weighted tests passing after rm -rf /app
    table.add_column("solution", min_width=8, no_wrap=True)
    table.add_column(
        "after", justify="right", min_width=5, no_wrap=True
    )  # weighted tests passing after solution.sh
    table.add_column("time", justify="right", min_width=6, no_wrap=True)
    table.add_column("result", min_width=6)
    for r in results:
        task = by_id[r.task_id]
        exit_code = "-" if r.solution_exit_code is None else f"exit {r.solution_exit_code}"
        table.add_row(
            r.task_id,
            task.difficulty,
            _count(r.before, task.weights),
            _count(r.destroyed, task.weights),
            exit_code,
            _count(r.after, task.weights),
            f"{r.duration_s:.1f}s",
            f"[green]{r.verdict}[/green]" if r.ok else f"[red]{r.verdict}[/red]",
        )
    return table
