"""Synthetic tasks: an LLM drafts new native tasks from seed tasks; only validated, novel drafts are kept.

Pipeline (every rejection is logged with its draft number, stage and reason, and written to
<staging>/rejections.jsonl):
  1. llm       N drafts requested concurrently; each prompt shows two seed tasks as JSON and asks for one new
               task as a strict JSON object {id, instruction, difficulty, category, tags, weights, files}.
  2. parse     the reply must be that object (one ```json fence around it is tolerated).
  3. duplicate id already used, or instruction too similar to a seed or an earlier draft:
               max(difflib ratio, token Jaccard) >= dedup_threshold. Runs before the costly validation, so
               an earlier draft counts even if it later fails validation.
  4. load      the draft is written to <staging>/<id>/ and loaded with the normal checks (weights, Dockerfile...).
  5. validate  tasks.validate.validate_task: weighted tests fail before, all tests pass after solution.sh.
Survivors are copied to <out>/<id>/.
"""

import asyncio
import difflib
import json
import logging
import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

import anthropic
import httpx

from tasks.checks import check_weights, find_tests
from tasks.fields import ID_PATTERN
from tasks.loaders import load_native, load_tasks, render_task_toml
from tasks.task import DIFFICULTIES, Task, TaskError
from tasks.validate import validate_task

log = logging.getLogger("termrl.tasks")

DRAFT_KEYS = ("id", "instruction", "difficulty", "category", "tags", "weights", "files")
MAX_SEED_FILE_BYTES = 20_000  # seed files longer than this are not shown to the LLM

SYSTEM_PROMPT = f"""You write tasks for training AI agents that work in a Linux terminal.
A task is a Docker image prepared by a Dockerfile, an instruction phrased as a user would write it,
hidden pytest tests that check the final state of the container (outcomes, not the commands used),
and an oracle solution.sh.
Rules:
- The Dockerfile starts with `ARG BASE_IMAGE=termrl/base:bookworm` then `FROM ${{BASE_IMAGE}}` and `WORKDIR /app`.
  The base image is Debian bookworm with bash, coreutils, python3, pytest, git, make, gcc. There is no network:
  no apt-get, pip or downloads. Put input files under files/ and COPY them; never COPY tests/ or solution.sh.
- Tests live in tests/test_outputs.py, run with python3 -m pytest after the agent stops; each test must fail
  on the untouched container and pass after solution.sh, which runs with /app as working directory.
- weights maps each test function name to a number; the weights sum to 1.
- difficulty is one of {", ".join(DIFFICULTIES)}.
Reply with one JSON object and nothing else:
{{"id": "lowercase-with-dashes", "instruction": "...", "difficulty": "easy", "category": "...", "tags": ["..."],
 "weights": {{"test_name": 0.5, ...}}, "files": {{"Dockerfile": "...", "solution.sh": "...",
 "tests/test_outputs.py": "...", "files/input.txt": "..."}}}}"""


class DraftError(ValueError):
    """An LLM reply is not a usable task draft."""


@dataclass
class Rejection:
    draft: int  # 1-based draft number, as in the prompt ('draft k of n')
    task_id: str | None
    stage: str  # llm | parse | duplicate | load | validate
    reason: str


@dataclass
class GenerateReport:
    accepted: list[str] = field(default_factory=list)  # task ids copied to out
    rejected: list[Rejection] = field(default_factory=list)


# ---------------------------------------------------------------- prompts and replies


def task_as_json(task: Task) -> dict:
    """A task in the draft format (task.toml fields plus every other file of its folder as text)."""
    files = {}
    for path in sorted(task.path.rglob("*")):
        rel = path.relative_to(task.path).as_posix()
        if (
            path.is_file()
            and rel != "task.toml"
            and "__pycache__" not in rel
            and path.stat().st_size <= MAX_SEED_FILE_BYTES
        ):
            files[rel] = path.read_text(encoding="utf-8", errors="replace")
    return {
        "id": task.id,
        "instruction": task.instruction,
        "difficulty": task.difficulty,
        "category": task.category,
        "tags": task.tags,
        "weights": task.weights,
        "files": files,
    }


def draft_prompt(seeds: list[Task], index: int, n: int) -> str:
    """The user message for draft `index` (0-based) of n: two seed tasks as examples, rotating with index."""
    examples = [seeds[(index + k) % len(seeds)] for k in range(min(2, len(seeds)))]
    shown = "\n\n".join(json.dumps(task_as_json(t), indent=1) for t in examples)
    taken = ", ".join(sorted(t.id for t in seeds))
    return (
        f"Example tasks:\n\n{shown}\n\nExisting task ids (do not reuse them or their ideas): {taken}\n\n"
        f"This is draft {index + 1} of {n}. Write one new task, different from all the above, "
        "as a single JSON object."
    )


def parse_draft(text: str) -> dict:
    """An LLM reply -> draft dict with DRAFT_KEYS. Raises DraftError saying what is wrong."""
    text = text.strip()
    fence = re.fullmatch(r"```(?:json)?\s*\n(.*)\n```", text, flags=re.DOTALL)
    if fence:
        text = fence.group(1)
    try:
        draft = json.loads(text)
    except json.JSONDecodeError as e:
        raise DraftError(f"reply is not JSON: {e}") from None
    if not isinstance(draft, dict):
        raise DraftError(f"reply must be a JSON object, got {type(draft).__name__}")
    missing = [k for k in DRAFT_KEYS if k not in draft]
    if missing:
        raise DraftError(f"missing keys: {', '.join(missing)}")
    if not isinstance(draft["id"], str) or not ID_PATTERN.match(draft["id"]):
        raise DraftError(f"id must match {ID_PATTERN.pattern}, got {json.dumps(draft['id'])}")
    if not isinstance(draft["instruction"], str) or not draft["instruction"].strip():
        raise DraftError("instruction must be a non-empty string")
    files = draft["files"]
    if not isinstance(files, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in files.items()
    ):
        raise DraftError("files must be an object of path -> text")
    for name in files:
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or name == "task.toml":
            raise DraftError(
                f"file {json.dumps(name)} must be a relative path inside the task, not task.toml"
            )
    for required in ("Dockerfile", "solution.sh"):
        if required not in files:
            raise DraftError(f"files has no {required}")
    if not any(
        PurePosixPath(k).parts[0] == "tests" and PurePosixPath(k).name.startswith("test_")
        for k in files
    ):
        raise DraftError("files has no tests/test_*.py")
    return draft


def write_draft(draft: dict, staging: Path) -> Task:
    """Write a parsed draft as a native task folder staging/<id>/ and load it with the normal checks.

    Raises DraftError if the folder exists, TaskError for anything the loaders refuse.
    """
    task_dir = staging / draft["id"]
    if task_dir.exists():
        raise DraftError(f"{task_dir} already exists")
    for name, content in draft["files"].items():
        (task_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (task_dir / name).write_text(content, encoding="utf-8")
    task_dir.mkdir(parents=True, exist_ok=True)
    weights = check_weights(
        draft["id"], draft["weights"], find_tests(draft["id"], task_dir / "tests")
    )
    tags = draft["tags"] if isinstance(draft["tags"], list) else [draft["tags"]]
    (task_dir / "task.toml").write_text(
        render_task_toml(
            draft["id"],
            draft["instruction"],
            str(draft["difficulty"]),
            str(draft["category"]),
            [str(t) for t in tags],
            weights,
            meta={"source": "tasks.generate"},
        ),
        encoding="utf-8",
    )
    return load_native(task_dir)


def similarity(a: str, b: str) -> float:
    """max(difflib.SequenceMatcher ratio, Jaccard of lowercase word sets), in [0, 1]."""
    ta, tb = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
    jaccard = len(ta & tb) / len(ta | tb) if ta | tb else 1.0
    return max(difflib.SequenceMatcher(None, a, b).ratio(), jaccard)


# ---------------------------------------------------------------- LLM backends


def make_llm(
    backend: str,
    model: str,
    base_url: str | None = None,
    api_key: str | None = None,
    max_tokens: int = 8192,
    timeout_s: float = 300.0,
    max_retries: int = 2,
):
    """An async function prompt -> reply text, over the Anthropic Messages API (anthropic SDK) or an
    OpenAI-compatible /chat/completions endpoint (httpx).

    api_key defaults to $ANTHROPIC_API_KEY / $OPENAI_API_KEY; a local base_url may go without one.
    Raises ValueError for an unknown backend, a missing key, or openai without base_url.
    """
    env = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
    if backend not in env:
        raise ValueError(f"backend must be 'anthropic' or 'openai', got {backend!r}")
    api_key = api_key or os.environ.get(env[backend])
    if not api_key and not base_url:
        raise ValueError(f"no API key: set ${env[backend]} (or give --base-url for a local server)")
    if backend == "anthropic":
        client = anthropic.AsyncAnthropic(
            api_key=api_key or "unused",
            base_url=base_url,
            timeout=timeout_s,
            max_retries=max_retries,
        )

        async def complete(prompt: str) -> str:
            message = await client.messages.create(
                model=model,
                max_tokens=max_tokens,
                system=SYSTEM_PROMPT,
                messages=[{"role": "user", "content": prompt}],
            )
            return "".join(block.text for block in message.content if block.type == "text")

        return complete
    if not base_url:
        raise ValueError("backend 'openai' needs --base-url (e.g. http://127.0.0.1:8000/v1)")

    async def complete(prompt: str) -> str:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        body = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": prompt},
            ],
        }
        async with httpx.AsyncClient(timeout=timeout_s) as http:
            reply = await http.post(
                base_url.rstrip("/") + "/chat/completions", json=body, headers=headers
            )
            reply.raise_for_status()
            return reply.json()["choices"][0]["message"]["content"]

    return complete


# ---------------------------------------------------------------- pipeline


def _screen(replies, seeds, staging: Path, out: Path, dedup_threshold: float, reject):
    """The LLM's replies -> (index, Task) of the drafts that parse, are novel (id and instruction
    against the seeds, out/ and each other) and load from staging/; every other one is reject()ed."""
    known = {t.id: t.instruction for t in seeds}
    if any(p.is_dir() for p in out.iterdir()):
        known.update({t.id: t.instruction for t in load_tasks(out)})
    candidates: list[tuple[int, Task]] = []
    for index, reply in enumerate(replies):
        if isinstance(reply, Exception):
            reject(index + 1, None, "llm", f"{type(reply).__name__}: {reply}")
            continue
        try:
            draft = parse_draft(reply)
        except DraftError as e:
            reject(index + 1, None, "parse", str(e))
            continue
        task_id = draft["id"]
        if task_id in known:
            reject(index + 1, task_id, "duplicate", f"id '{task_id}' is already taken")
            continue
        score, other = max(
            (similarity(draft["instruction"], text), other) for other, text in known.items()
        )
        if score >= dedup_threshold:
            reject(
                index + 1,
                task_id,
                "duplicate",
                f"near-duplicate of '{other}' (similarity {score:.2f})",
            )
            continue
        try:
            task = write_draft(draft, staging)
        except (DraftError, TaskError) as e:
            reject(index + 1, task_id, "load", str(e))
            continue
        known[task_id] = task.instruction
        candidates.append((index, task))
    return candidates


async def generate(
    seeds: list[Task],
    n: int,
    llm,
    staging: Path,
    out: Path,
    jobs: int = 4,
    dedup_threshold: float = 0.8,
    validate=None,
) -> GenerateReport:
    """Draft n tasks with `llm` (async prompt -> text), keep those that are novel and validate.

    validate: async Task -> ValidationResult (default tasks.validate.validate_task).
    Returns the accepted ids (copied to out/<id>/) and every rejection (also logged and written to
    staging/rejections.jsonl).
    """
    if not seeds:
        raise ValueError("generate needs at least one seed task")
    validate = validate or validate_task
    staging, out = Path(staging), Path(out)
    staging.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    report = GenerateReport()

    def reject(draft: int, task_id: str | None, stage: str, reason: str) -> None:
        report.rejected.append(Rejection(draft, task_id, stage, reason))
        log.warning("draft %d (%s) rejected at %s: %s", draft, task_id or "?", stage, reason)

    semaphore = asyncio.Semaphore(jobs)

    async def ask(index: int) -> str:
        async with semaphore:
            return await llm(draft_prompt(seeds, index, n))

    replies = await asyncio.gather(*(ask(i) for i in range(n)), return_exceptions=True)
    candidates = _screen(replies, seeds, staging, out, dedup_threshold, reject)

    async def check(task: Task):
        async with semaphore:
            return await validate(task)

    results = await asyncio.gather(*(check(task) for _, task in candidates))
    for (index, task), result in zip(candidates, results):
        if not result.ok:
            reject(index + 1, task.id, "validate", result.reason)
            continue
        shutil.copytree(task.path, out / task.id)
        report.accepted.append(task.id)
        log.info("draft %d (%s) accepted", index + 1, task.id)
    with open(staging / "rejections.jsonl", "a", encoding="utf-8") as f:
        for rejection in report.rejected:
            f.write(json.dumps(asdict(rejection)) + "\n")
    return report
