"""CLI: python -m tasks {validate, stats, import-csv, export-harbor, generate, family} (tyro).

  python -m tasks validate [IDS ...] [--tasks data/tasks] [--jobs 4] [--sample N --seed S] [--normalize-weights]
                           [--strict]
  python -m tasks stats [--tasks data/tasks]     counts by category and difficulty (a Markdown table)
  python -m tasks import-csv CSV OUT_DIR [--normalize-weights] [--strict]
  python -m tasks export-harbor OUT_DIR [--tasks data/tasks]   termrl's tasks as Harbor task folders
  python -m tasks generate --seed-tasks data/tasks --n 20 --model M [--backend anthropic|openai]
                           [--base-url URL] --staging DIR --out DIR [--jobs 4] [--dedup-threshold 0.8]
  python -m tasks family --out DIR --seeds 0:64 [--split train|validation|eval] [--shapes pointer run config]
                         [--hops 1-8]      multi-turn instances, procedurally generated (tasks/family.py)
A refused task (bad field, unbuildable image, failed validation) is reported in one line (id, field,
reason) and the rest go on. Exit status: 0 when some task could be used (imported; valid or "fails
before; no oracle"); 1 no task validated (validate) or nothing was accepted (generate); 2 bad input or
nothing could be loaded/imported. --strict: any refusal or failed validation gives 1 (validate) / 2 (import).
"""

import asyncio
import logging
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Literal

import tyro
from rich.console import Console
from rich.markup import escape

import configs
from bookkeeping.sanitise import install_log_sanitiser, printable
from tasks.family import MAX_HOPS, SHAPES, generate_family, parse_hops, parse_seeds
from tasks.generate import generate as run_generate
from tasks.generate import make_llm
from tasks.harbor import export_harbor as _export_harbor
from tasks.loaders import import_csv as _import_csv
from tasks.loaders import load_tasks
from tasks.task import DIFFICULTIES, TaskError
from tasks.validate import results_table, validate_tasks

# Piped output (make, CI logs) gets 120 columns instead of rich's 80 so task ids fit on one line.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)


def _bad_knobs(**knobs) -> bool:
    """configs.validate_tasks_cli at start-up: True (after one line naming the flag) when a value is out of range."""
    try:
        configs.validate_tasks_cli(**knobs)
    except configs.ConfigError as e:
        console.print(f"error: {printable(e)}", markup=False, soft_wrap=True)
        return True
    return False


def _report_refused(refused: list[TaskError]) -> None:
    for e in refused:
        console.print(
            printable(
                f"refused {e.task_id}: {e.field}: {' '.join(e.message.split())}"
                + (f" [{e.path}]" if e.path else "")
            ),
            markup=False,
            soft_wrap=True,
        )


def _load(path: str, normalize_weights: bool, strict: bool = False, refused: list | None = None):
    try:
        return load_tasks(path, normalize_weights=normalize_weights, strict=strict, refused=refused)
    except (TaskError, FileNotFoundError) as e:
        console.print(f"error: {printable(e)}", markup=False, soft_wrap=True)
        return None


def validate(
    ids: tyro.conf.Positional[tuple[str, ...]] = (),
    tasks: str = "data/tasks",
    jobs: int = 4,
    sample: int | None = None,
    seed: int = 0,
    normalize_weights: bool = False,
    base_image: str | None = None,
    strict: bool = False,
) -> int:
    """Prove tasks valid: weighted tests fail on the untouched container and after `rm -rf /app`, all pass
    after solution.sh (without a solution: "fails before; no oracle"; tests passing untouched or after
    `rm -rf /app`: "defective"). Prints one progress line per task as it finishes (with its seconds).

    Args:
        ids: task ids to validate (default: every task under --tasks).
        tasks: task folder, folder of task folders, Terminal-Bench folder or terminal-bench-rl CSV.
        jobs: tasks validated at once (each uses three containers).
        sample: validate only this many tasks, drawn at random (with --seed) from the selected ones.
        seed: seed of --sample's draw (random.Random(seed).sample over the tasks sorted by id).
        normalize_weights: rescale weights that do not sum to 1 instead of refusing the task.
        base_image: image `FROM ${BASE_IMAGE}` Dockerfiles build on (default: images.BASE_IMAGE).
        strict: exit 1 when any task is refused or fails validation (default: only when none validates).
    """

    if _bad_knobs(jobs=jobs, sample=sample):
        return 2
    refused: list[TaskError] = []
    loaded = _load(tasks, normalize_weights, refused=refused)
    _report_refused(refused)
    if loaded is None:
        return 2
    unknown = sorted(set(ids) - {t.id for t in loaded})
    if unknown:
        console.print(
            f"error: unknown task ids under {tasks}: {', '.join(unknown)}", soft_wrap=True
        )
        return 2
    selected = [t for t in loaded if not ids or t.id in ids]
    drawn = ""
    if sample is not None and sample < len(selected):
        selected = sample_tasks(selected, sample, seed)
        drawn = f" (sample of {sample} drawn with seed {seed})"
    console.print(f"validating {len(selected)} task(s) from {tasks}{drawn} with {jobs} job(s)")
    done = 0
    start = time.monotonic()

    def progress(result):
        nonlocal done
        done += 1
        verdict = (
            f"[green]{result.verdict}[/green]" if result.ok else f"[red]{result.verdict}[/red]"
        )
        detail = "" if result.ok else f": {escape(printable(result.reason))}"
        elapsed = time.monotonic() - start
        left = elapsed / done * (len(selected) - done)
        console.print(
            f"[{done:>{len(str(len(selected)))}}/{len(selected)}] {verdict} {result.task_id} "
            f"({result.duration_s:.1f}s; {elapsed / 60:.1f} min elapsed, ~{left / 60:.1f} min left){detail}",
            soft_wrap=True,
        )

    results = asyncio.run(
        validate_tasks(selected, jobs=jobs, base_image=base_image, on_result=progress)
    )
    console.print(results_table(selected, results))
    failed = [r for r in results if not r.ok]
    no_oracle = sum(r.ok and r.verdict != "valid" for r in results)
    console.print(
        f"{len(results)} task(s): {len(results) - len(failed) - no_oracle} valid, {no_oracle} fail before "
        f"without an oracle, {len(failed)} invalid or defective, {len(refused)} refused at loading "
        f"({time.monotonic() - start:.0f}s)"
    )
    for r in failed:
        console.print(
            f"  {r.task_id}: {r.verdict}: {printable(r.reason)}", soft_wrap=True, markup=False
        )
    if len(failed) == len(results) or (strict and (failed or refused)):
        return 1
    return 0


def sample_tasks(tasks: list, n: int, seed: int) -> list:
    """n tasks drawn without replacement by random.Random(seed) from `tasks` sorted by id, returned sorted by
    id: the same seed and task set give the same sample on every machine."""
    ordered = sorted(tasks, key=lambda t: t.id)
    return sorted(random.Random(seed).sample(ordered, n), key=lambda t: t.id)


def stats(tasks: str = "data/tasks") -> int:
    """Print a Markdown table of task counts by category (rows, most tasks first) and difficulty (columns),
    with totals (the dataset's table in docs/reference.md, "Tasks"). Refused tasks are reported and left out
    of the counts.

    Args:
        tasks: task folder, folder of task folders, Terminal-Bench folder or terminal-bench-rl CSV.
    """
    refused: list[TaskError] = []
    loaded = _load(tasks, False, refused=refused)
    _report_refused(refused)
    if loaded is None:
        return 2
    print(stats_table(loaded))
    return 0


def stats_table(tasks: list) -> str:
    """Markdown table: one row per category (most tasks first, then by name), one column per difficulty
    that occurs (in DIFFICULTIES order), a total column and a total row."""
    levels = [d for d in DIFFICULTIES if any(t.difficulty == d for t in tasks)]
    counts = Counter((t.category, t.difficulty) for t in tasks)
    by_category = Counter(t.category for t in tasks)
    rows = sorted(by_category, key=lambda c: (-by_category[c], c))
    lines = [
        "| category | " + " | ".join(d.replace("_", " ") for d in levels) + " | total |",
        "|---|" + "---:|" * (len(levels) + 1),
    ]
    for c in rows:
        lines.append(
            f"| {printable(c)} | "  # a category is a task file's text
            + " | ".join(str(counts[c, d]) for d in levels)
            + f" | {by_category[c]} |"
        )
    totals = [sum(t.difficulty == d for t in tasks) for d in levels]
    lines.append(
        "| **total** | " + " | ".join(f"**{n}**" for n in totals) + f" | **{len(tasks)}** |"
    )
    return "\n".join(lines)


def import_csv(
    csv: tyro.conf.Positional[str],
    out_dir: tyro.conf.Positional[str],
    normalize_weights: bool = False,
    strict: bool = False,
) -> int:
    """Materialise a terminal-bench-rl CSV as native task folders OUT_DIR/<task_id>/.

    Args:
        csv: the CSV (columns task_id, difficulty, title, use_case_category, prompt, category, tags,
            dockerfile, test_functions, test_weights, additional_files).
        out_dir: folder to write the tasks into (created if missing; existing task folders are never overwritten).
        normalize_weights: rescale weights that do not sum to 1 instead of refusing the task.
        strict: stop at the first refused row (exit 2); default: import the others.
    """
    refused: list[TaskError] = []
    try:
        written = _import_csv(
            csv, out_dir, normalize_weights=normalize_weights, strict=strict, refused=refused
        )
    except (TaskError, FileNotFoundError) as e:
        _report_refused(refused)
        console.print(f"error: {printable(e)}", soft_wrap=True, markup=False)
        return 2
    _report_refused(refused)
    ids = [t.id for t in written]
    shown = ", ".join(ids[:10]) + (f", ... ({len(ids) - 10} more)" if len(ids) > 10 else "")
    console.print(
        f"imported {len(written)} task(s) into {out_dir}, {len(refused)} refused: {shown}",
        soft_wrap=True,
        markup=False,
    )
    return 0


def export_harbor(out_dir: tyro.conf.Positional[str], tasks: str = "data/tasks") -> int:
    """Write tasks as Harbor task folders OUT_DIR/<id>/ (tasks/harbor.py export_harbor), for other harnesses.

    Args:
        out_dir: folder to write into (created if missing; an existing task folder there is an error).
        tasks: the tasks to export (any path load_tasks reads).
    """
    loaded = _load(tasks, False)
    if loaded is None:
        return 2
    try:
        written = _export_harbor(loaded, Path(out_dir))
    except FileExistsError as e:
        console.print(f"error: {printable(e)}", markup=False, soft_wrap=True)
        return 2
    console.print(
        f"exported {len(written)} task(s) as Harbor tasks into {out_dir}",
        markup=False,
        soft_wrap=True,
    )
    return 0


def generate(
    seed_tasks: str,
    n: int,
    model: str,
    staging: str,
    out: str,
    backend: Literal["anthropic", "openai"] = "anthropic",
    base_url: str | None = None,
    jobs: int = 4,
    dedup_threshold: float = 0.8,
    max_tokens: int = 8192,
) -> int:
    """Draft N tasks with an LLM from seed tasks; keep the novel ones that validate.

    Args:
        seed_tasks: tasks shown to the LLM as examples (any path load_tasks reads).
        n: drafts to request (accepted <= n).
        model: model name sent to the backend.
        staging: folder for drafts and rejections.jsonl.
        out: folder the accepted tasks are copied to.
        backend: 'anthropic' (Messages API, $ANTHROPIC_API_KEY) or 'openai' (/chat/completions, $OPENAI_API_KEY).
        base_url: API base URL (required for openai; a local server may go without a key).
        jobs: concurrent LLM requests and validations.
        dedup_threshold: drop drafts whose instruction similarity to a seed or earlier draft is >= this.
        max_tokens: reply budget per draft, tokens.
    """

    if _bad_knobs(n=n, jobs=jobs, dedup_threshold=dedup_threshold, max_tokens=max_tokens):
        return 2
    seeds = _load(seed_tasks, False)
    if seeds is None:
        return 2
    try:
        llm = make_llm(backend, model, base_url, max_tokens=max_tokens)
    except ValueError as e:
        console.print(f"error: {printable(e)}", markup=False)
        return 2
    report = asyncio.run(
        run_generate(
            seeds, n, llm, Path(staging), Path(out), jobs=jobs, dedup_threshold=dedup_threshold
        )
    )
    console.print(
        f"{len(report.accepted)} of {n} draft(s) accepted into {out}: {', '.join(report.accepted) or '-'}",
        markup=False,
        soft_wrap=True,
    )
    for r in report.rejected:
        console.print(
            f"  rejected draft {r.draft} ({r.task_id or '?'}) at {r.stage}: {printable(r.reason)}",
            markup=False,
            soft_wrap=True,
        )
    return 0 if report.accepted else 1


def family(
    out: str,
    seeds: str,
    split: str = "train",
    shapes: tuple[str, ...] = SHAPES,
    hops: str = f"1-{MAX_HOPS}",
) -> int:
    """Write procedurally generated multi-turn task folders OUT/<id>/ (tasks/family.py), one per seed.

    Args:
        out: folder to write into (created if missing; a folder already holding the same instance is left
            as it is, one holding anything else is an error).
        seeds: START:END (END excluded) or one seed N; below 1000000, at most 10000 seeds a call.
        split: train or eval: the eval split draws from other generator seeds, so the two never share an
            instance.
        shapes: shapes to cycle through (pointer: notes naming the next note; run: folders and the
            programs in them; config: a key set in one of several files, its value naming the next key).
        hops: LO-HI or N, within 1-8: commands whose output the next command needs.
    """
    try:
        seed_range = parse_seeds(seeds)
        hop_range = parse_hops(hops)
        instances = generate_family(Path(out), split, seed_range, shapes, hop_range)
    except (configs.ConfigError, FileExistsError) as e:
        console.print(f"error: {printable(e)}", markup=False, soft_wrap=True)
        return 2
    except OSError as e:
        console.print(
            f"error: --out {out}: cannot write {e.filename or out}: {e.strerror or e}",
            markup=False,
            soft_wrap=True,
        )
        return 2
    counts = Counter(f"{inst.shape} h{inst.hops}" for inst in instances)
    console.print(
        f"{len(instances)} {split} instance(s) (seeds {seed_range.start}:{seed_range.stop}) in {out}: "
        + ", ".join(f"{n} {combo}" for combo, n in sorted(counts.items())),
        markup=False,
        soft_wrap=True,
    )
    return 0


def main() -> int:
    install_log_sanitiser()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "httpx2", "anthropic"):  # one INFO line per request otherwise
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return tyro.extras.subcommand_cli_from_dict(
        {
            "validate": validate,
            "stats": stats,
            "import-csv": import_csv,
            "generate": generate,
            "export-harbor": export_harbor,
            "family": family,
        },
        prog="python -m tasks",
    )


if __name__ == "__main__":
    sys.exit(main())
