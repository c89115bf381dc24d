"""Harbor verification: a task's tests/test.sh run as-is in termrl's fresh verifier container,
scored from the reward files it writes (Task.verifier_script, tasks/harbor.py).

Harbor runs test.sh in the agent's own container and reads /logs/verifier/reward.json (a flat object
of numbers; it wins when both exist) or reward.txt (one float). There the agent can plant
reward.json beforehand. Here, as for pytest (verifier.py): the agent's container is snapshotted and
the script runs in a FRESH container of the snapshot (no agent process alive) with /tests read-only
(the volume of verifier_box.tests_volume) and /logs/verifier a new empty volume (no copy of what the
agent left there: `no_copy`), so only what the script wrote during verification is read. The harness
runs only pristine programs by absolute path (the shell, and the interpreter that makes /logs/verifier
writable), each within what is left of `timeout`; `python3` and `pytest` on the script's PATH are the
pristine ones, guarded (toolchain.GUARD: non-dumpable, /app/pytest.py never shadows pytest), and every
pytest it starts is pinned to /tests (PYTEST_ADDOPTS: rootdir, config file, conftest search). After the
script the container is stopped and checked stopped before a reward file is read.
The script's exit status is ignored, as in harbor; a script that writes neither file, or a malformed
one, is a VerifyError (never a 0.0 reward).

The image's ENTRYPOINT runs first (`verifier_box.start_entrypoint`), so the services it starts are up
for test.sh, as in harbor's shared container; test.sh's timeout counts from after it.

Not covered, by construction (as for pytest): the programs test.sh runs (the agent's code, and any
command it names that the image's PATH resolves, its own `mkdir` say) and the snapshot's ENTRYPOINT
run with its rights and could write the reward files themselves.
"""

from __future__ import annotations

import io
import json
import logging
import math
import tarfile
import time
from pathlib import Path

import docker.errors
import docker.types

from sandboxing import archive
from sandboxing.toolchain import VerifyError, pristine
from sandboxing.verifier import TestReport
from sandboxing.verifier_box import (
    ENTRYPOINT_WAIT_S,
    INI_TEXT,
    PRIVATE,
    _env,
    _exec,
    hidden_ini,
    pytest_pins,
    start_box,
    start_entrypoint,
    stop,
    verifier_container,
)

log = logging.getLogger("termrl.verifier")

REWARD_DIR = "/logs/verifier"  # harbor's EnvironmentPaths.verifier_dir
SCRIPT = f"{PRIVATE}/test.sh"
# a reward file larger than this is refused unread (a flat object of numbers is a few hundred bytes)
REWARD_BYTES = 1 << 16


def parse_rewards(json_text: bytes | None, txt_text: bytes | None) -> dict[str, float]:
    """reward.json (flat object name -> number; wins when both exist) or reward.txt (one float, key
    "reward") -> named parts, each in [0, 1].

    Raises VerifyError naming the file: neither given, empty, not a number / not a flat object of
    numbers, not finite or outside [0, 1].
    """
    if json_text is not None:
        try:
            data = json.loads(json_text.decode("utf-8", "replace"))
        except json.JSONDecodeError as e:
            raise VerifyError(f"{REWARD_DIR}/reward.json does not parse: {e}") from e
        if not isinstance(data, dict) or not data:
            raise VerifyError(
                f"{REWARD_DIR}/reward.json must be a non-empty flat object of numbers, got "
                f"{json_text[:200]!r}"
            )
        parts = data
        name = "reward.json"
    elif txt_text is not None:
        text = txt_text.decode("utf-8", "replace").strip()
        try:
            parts = {"reward": float(text)}
        except ValueError:
            raise VerifyError(
                f"{REWARD_DIR}/reward.txt must hold one number, got {text[:200]!r}"
            ) from None
        name = "reward.txt"
    else:
        raise VerifyError(f"tests/test.sh wrote neither {REWARD_DIR}/reward.json nor reward.txt")
    for key, value in parts.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not 0.0 <= value <= 1.0
        ):
            raise VerifyError(
                f"{REWARD_DIR}/{name}: {key!r} = {value!r} must be a number in [0, 1]"
            )
    return {k: float(v) for k, v in parts.items()}


def _file(name: str, data: bytes, mode: int) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def _tar(files: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in files:
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _chmod_cmd(tc) -> list[str]:
    return pristine(tc, tc.python, "-I", "-S", "-c", f"import os; os.chmod({REWARD_DIR!r}, 0o777)")


def _read(api, cid: str, path: str) -> bytes | None:
    """The reward file at `path`, or None when test.sh wrote none; a bounded read (archive.py).
    Raises VerifyError: a folder, link or device there, or a file over REWARD_BYTES."""
    try:
        return archive.read_file(api, cid, path, REWARD_BYTES, "the reward file")
    except FileNotFoundError:
        return None
    except archive.EntryError as e:
        raise VerifyError(str(e)) from None


def run_script_blocking(
    api,
    container_id: str,
    name: str,
    labels: dict[str, str],
    limits,
    tests_dir: Path,
    timeout: float,
    script: str,
    disk_budget: int | None = None,
    cleanup: list | None = None,
    network_mode: str = "none",
) -> TestReport:
    """Verify `container_id` by running the Harbor `script` (bash source) in a fresh verifier
    container (verifier_box.verifier_container: snapshot, mounts, disk watchdog, removal; disk_budget
    cleanup and network_mode as in verifier.run_tests_blocking).

    Returns a TestReport whose `parts` are the reward file's named values (tests: part -> value ==
    1); tampered set (nothing run) when the agent changed the test toolchain; an error starting
    "disk_limit" when the verifier container outgrew disk_budget.
    Raises VerifyError: no usable toolchain in the image, Docker failed, the script ran past
    `timeout` seconds (harbor's verifier timeout is an error too, never a reward), or it wrote no
    (or a bad) reward file.
    """
    t0 = time.monotonic()
    reward_dir = docker.types.Mount(REWARD_DIR, None, type="volume", no_copy=True, labels=labels)
    with verifier_container(
        api,
        container_id,
        name,
        labels,
        limits,
        private="volume",
        extra_mounts=[reward_dir],
        disk_budget=disk_budget,
        cleanup=cleanup,
        network_mode=network_mode,
        # read-only, from the volume written once per content (verifier_box.tests_volume)
        tests_dir=tests_dir,
    ) as box:
        tc = box.tc
        if tc.shell is None:
            raise VerifyError(
                f"verification of {name}: a Harbor test.sh needs bash or sh in the image"
            )
        ini = hidden_ini(tests_dir)
        files = [_file("test.sh", script.encode(), 0o755)]
        if ini.startswith(PRIVATE):
            files.append(_file("pytest.ini", INI_TEXT.encode(), 0o644))
        why = start_box(api, box, [(PRIVATE, _tar(files))])
        if why is not None:
            return TestReport({}, False, None, time.monotonic() - t0, "", tampered=why, parts={})
        # the services the image's ENTRYPOINT starts are up for test.sh, as in harbor
        start_entrypoint(api, box, time.monotonic() + ENTRYPOINT_WAIT_S)
        # harbor's verifier timeout covers test.sh alone (from here: the chmod and the script)
        deadline = time.monotonic() + timeout
        # every pytest the script starts is pinned to /tests (rootdir, config file, conftest search)
        env = _env(tc, pytest_pins(tc, ini))
        try:
            # the reward folder writable by the image's USER: the pristine interpreter does it as root,
            # never a `chmod` found on the image's PATH
            rc, output = _exec(
                api, box.id, _chmod_cmd(tc), env, "/", max(deadline - time.monotonic(), 1.0), "root"
            )
            if rc != 0:
                raise VerifyError(
                    f"verification of {name}: making {REWARD_DIR} writable "
                    f"{'timed out' if rc is None else f'exited {rc}'}: {output[-500:]}"
                )
            # the script runs with the pristine shell; `python3` and `pytest` on its PATH are the
            # pristine ones, every pristine interpreter guarded (toolchain.GUARD)
            cmd = pristine(tc, tc.shell, SCRIPT)
            rc, output = _exec(
                api, box.id, cmd, env, tc.workdir, max(deadline - time.monotonic(), 0.001)
            )
        except (docker.errors.APIError, VerifyError):
            if box.watch.exceeded is None:
                raise
            # the disk watchdog's kill broke the exec: the disk limit is the reason
            rc = None
            output = ""
        box.watch.stop()
        if box.watch.exceeded is not None:
            error = f"disk_limit: the verifier container {box.watch.reason}; killed"
            return TestReport({}, False, error, time.monotonic() - t0, output, parts={})
        if rc is None:
            raise VerifyError(
                f"verification of {name}: tests/test.sh ran past its {timeout:g} s; output tail:"
                f"\n{output[-2000:]}"
            )
        # no process but the harness's is left: nothing may touch the reward files while they are read
        stop(api, box.id)
        try:
            parts = parse_rewards(
                _read(api, box.id, f"{REWARD_DIR}/reward.json"),
                _read(api, box.id, f"{REWARD_DIR}/reward.txt"),
            )
        except VerifyError as e:
            raise VerifyError(
                f"{e} (test.sh exit code {rc}); output tail:\n{output[-2000:]}"
            ) from None
        tests = {k: v >= 1.0 for k, v in parts.items()}
        return TestReport(tests, False, None, time.monotonic() - t0, output, parts=parts)
