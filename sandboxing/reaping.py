"""Reaping: the labels every container, volume and image of termrl carries, and the removal by them
of what termrl runs left on the Docker engines (label termrl=1): sandboxes, verifier containers with
their volumes, snapshot images. `sandbox.reap` and `sandbox.reap_run` are this module's.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time

import docker.errors

from sandboxing import hosts
from sandboxing.calls import drain_calls

log = logging.getLogger("termrl.sandbox")

# One id per process unless the caller names its run; labels every container this process starts.
RUN_ID = (
    os.environ.get("TERMRL_RUN_ID")
    or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
)
# A group of runs started together (the test suite and its child processes set TERMRL_SESSION): its sweep
# removes what the group started and nothing of another run on the same engine.
SESSION = os.environ.get("TERMRL_SESSION") or RUN_ID


def owner() -> str:
    """This process, as the label termrl.owner names it: "<hostname>:<pid>"."""
    return f"{socket.gethostname()}:{os.getpid()}"


def labels(run_id: str) -> dict[str, str]:
    """What reap() filters by: termrl=1, the run, the session, the start time, the owner process."""
    return {
        "termrl": "1",
        "termrl.run_id": run_id,
        "termrl.session": SESSION,
        "termrl.started": f"{time.time():.3f}",
        "termrl.owner": owner(),
    }


def _owner_dead(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def reap(
    run_id: str | None = None,
    older_than_s: float | None = None,
    session: str | None = None,
    host: str | None = None,
    owner_gone: bool = False,
) -> int:
    """Remove what termrl runs left (label termrl=1): containers, then the verifiers' volumes and
    snapshot images (label termrl.verifies); return how many things were removed.

    With run_id, session and/or older_than_s: everything matching (label termrl.run_id /
    termrl.session equal; label termrl.started at least older_than_s seconds ago), running or not;
    with owner_gone too, only those of them whose owner process on this host is gone (a session
    shared with live runs: bookkeeping/launch.py after its ranks died).
    With none: only what an owner process on this host that is gone left (running, stopped or never
    started; also after a kill -9 mid-verification), so a run starting up never touches the things
    of another live run. On every listed engine (sandbox.docker_hosts), or on `host` alone; an engine
    that does not answer is skipped with a warning naming it (its leftovers go at the next reap).
    """
    removed = 0
    for url in [host] if host else hosts.urls():
        try:
            removed += _reap_engine(hosts.client(url), run_id, older_than_s, session, owner_gone)
        except Exception as e:  # noqa: BLE001 - one dead engine must not stop cleanup of the others
            if not hosts.unreachable(e):
                raise
            log.warning(
                "reap: engine %s does not answer (%s); its things stay until it does", url, e
            )
    return removed


def reap_run(run_id: str) -> None:
    """Remove every container, volume and snapshot of run `run_id`, also those that Docker calls
    still in flight create (training/setup.py's and evaluate.py's teardown): reap, drain_calls, reap."""
    reap(run_id=run_id)
    drain_calls()
    reap(run_id=run_id)


def _reap_engine(
    api, run_id: str | None, older_than_s: float | None, session: str | None, owner_gone: bool
) -> int:
    """reap() on one engine."""
    labels = (
        ["termrl=1"]
        + ([f"termrl.run_id={run_id}"] if run_id is not None else [])
        + ([f"termrl.session={session}"] if session is not None else [])
    )
    unfiltered = run_id is None and older_than_s is None and session is None
    dead_owners_only = unfiltered or owner_gone
    now = time.time()

    def chosen(lab: dict) -> bool:
        lab = lab or {}
        if older_than_s is not None:
            try:
                started = float(lab.get("termrl.started", "0"))
            except ValueError:
                started = 0.0
            if now - started < older_than_s:
                return False
        # Unfiltered: only a dead owner's things. A live owner's may be created-not-yet-started or
        # stopped-to-be-restarted (after `kill -9 -1`), and belong to a run still going.
        return not dead_owners_only or _owner_dead(lab.get("termrl.owner", ""))

    removed = 0
    for c in api.containers(all=True, filters={"label": labels}):
        if chosen(c.get("Labels")):
            removed += _remove(
                lambda c=c: api.remove_container(c["Id"], force=True, v=True), c["Id"]
            )
    for v in api.volumes(filters={"label": labels}).get("Volumes") or []:
        if chosen(v.get("Labels")):
            removed += _remove(lambda v=v: api.remove_volume(v["Name"], force=True), v["Name"])
    for im in api.images(all=True, filters={"label": labels + ["termrl.verifies"]}):
        if chosen(im.get("Labels")):
            removed += _remove(lambda im=im: api.remove_image(im["Id"], force=True), im["Id"])
    return removed


def _remove(call, what: str) -> int:
    """1 when call removed `what`, 0 when it was already gone or going; other refusals logged."""
    try:
        call()
        return 1
    except docker.errors.NotFound:
        return 0
    except docker.errors.APIError as e:
        if not (e.status_code == 409 and "already in progress" in str(e)):
            log.warning("reap: removing %s failed: %s", what[:19], e)
        return 0
