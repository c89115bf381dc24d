"""termrl's reading of Harbor task folders against harbor 0.25's own: its TaskConfig parses each
task.toml (the fixtures, a task with every env table, termrl's tasks exported) and its Docker
environment says whether the task needs its egress-control sidecar (an image from a registry, which
this machine cannot pull).

Harbor is a reference tool, never a dependency: the test runs harbor in its own interpreter, named by
TERMRL_HARBOR_PYTHON (a Python 3.12 venv with `pip install harbor==0.25.0`; see docs/reference.md),
and is skipped, saying so, where it is unset. That interpreter only parses: no container, no network,
telemetry off (HARBOR_TELEMETRY=0).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tasks import load_tasks
from tasks.harbor import export_harbor

HARBOR_PYTHON = os.environ.get("TERMRL_HARBOR_PYTHON")
FIXTURES = Path(__file__).resolve().parent / "fixtures"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not HARBOR_PYTHON, reason="TERMRL_HARBOR_PYTHON (a Python with harbor 0.25) is not set"
    ),
]

# run in harbor's interpreter: task folder -> what harbor 0.25 reads from its task.toml
_READ = r"""
import json, sys
from pathlib import Path
import harbor
from harbor.models.task.config import NetworkPolicy, TaskConfig
from harbor.environments.docker.docker import DockerEnvironment
out = {"version": harbor.__version__ if hasattr(harbor, "__version__") else None, "tasks": {}}
for folder in sys.argv[1:]:
    cfg = TaskConfig.model_validate_toml((Path(folder) / "task.toml").read_text())
    env = cfg.environment
    policy = NetworkPolicy(network_mode=env.network_mode)
    out["tasks"][Path(folder).name] = {
        "network_mode": env.network_mode.value,
        "egress_sidecar": DockerEnvironment._requires_egress_control(
            startup_network_policy=policy, phase_network_policies=()
        ),
        "env": env.env,
        "workdir": env.workdir,
        "solution_env": cfg.solution.env,
        "verifier_env": cfg.verifier.env,
        "verifier_timeout_sec": cfg.verifier.timeout_sec,
        "agent_timeout_sec": cfg.agent.timeout_sec,
        "cpus": env.cpus,
        "memory_mb": env.memory_mb,
        "steps": cfg.steps,
    }
print(json.dumps(out))
"""


def _harbor_reads(folders: list[Path]) -> dict:
    env = {"HARBOR_TELEMETRY": "0", "PATH": os.environ.get("PATH", ""), "HOME": os.environ["HOME"]}
    done = subprocess.run(
        [HARBOR_PYTHON, "-c", _READ, *map(str, folders)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])["tasks"]


def _env_task(tmp_path: Path) -> Path:
    d = Path(shutil.copytree(FIXTURES / "harbor" / "hb-parts", tmp_path / "hb-env"))
    (d / "task.toml").write_text(
        (d / "task.toml").read_text()
        + 'workdir = "/srv/work"\n'
        + '\n[environment.env]\nGREETING = "hello"\nLEVEL = "${TERMRL_UNSET_FOR_TEST:-3}"\n'
        + '\n[solution.env]\nANSWER = "42"\n'
        + '\n[verifier.env]\nSTRICT = "1"\n'
    )
    return d


def test_harbor_reads_each_task_toml_as_termrl_does(tmp_path):
    native = load_tasks(FIXTURES / "tasks")
    exported = export_harbor(native, tmp_path / "exported")
    folders = [FIXTURES / "harbor" / "hb-hello", FIXTURES / "harbor" / "hb-parts"]
    folders += [_env_task(tmp_path), *exported]
    read = _harbor_reads(folders)
    ours = {p.name: t for p in folders for t in load_tasks(p)}
    # every exported task starts in harbor's Docker environment without a registry's image
    assert {name: (r["network_mode"], r["egress_sidecar"]) for name, r in read.items()} == {
        p.name: ("public", False) for p in folders
    }
    for p in folders:
        r, t = read[p.name], ours[p.name]
        assert (r["verifier_timeout_sec"], r["agent_timeout_sec"]) == (
            t.test_timeout_s,
            t.agent_timeout_s,
        ), p.name
        assert (r["cpus"], r["memory_mb"]) == (t.cpus, t.memory_mb), p.name
        assert r["solution_env"] == t.solution_env and r["steps"] is None, p.name
    env = read["hb-env"]
    # harbor keeps ${VAR:-default} templates for run time; termrl resolves them at load
    assert env["env"] == {"GREETING": "hello", "LEVEL": "${TERMRL_UNSET_FOR_TEST:-3}"}
    assert env["workdir"] == "/srv/work" and env["verifier_env"] == {"STRICT": "1"}
    assert (
        ours["hb-env"]
        .dockerfile.read_text()
        .endswith('ENV GREETING="hello"\nENV LEVEL="3"\nWORKDIR /srv/work\n')
    )
    assert ours["hb-env"].verifier_script.splitlines()[1] == "export STRICT=1"


def test_an_allow_internet_false_line_needs_harbors_egress_image(tmp_path):
    # why the exporter writes no allow_internet line: harbor reads `false` as no-network, which its
    # Docker environment enforces with the egress-control sidecar image (from a registry)
    d = Path(shutil.copytree(FIXTURES / "harbor" / "hb-parts", tmp_path / "hb-closed"))
    (d / "task.toml").write_text((d / "task.toml").read_text() + "allow_internet = false\n")
    read = _harbor_reads([d])
    assert (read["hb-closed"]["network_mode"], read["hb-closed"]["egress_sidecar"]) == (
        "no-network",
        True,
    )
