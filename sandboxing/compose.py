"""Compose tasks at run time: a Harbor task's sidecars (tasks/compose.py) beside the agent's container.

No bridge network: this engine runs `dockerd --bridge=none --iptables=false`. `docker network create
--internal` does succeed there, but its containers get an eth0 with a default route to the host's
bridge address, and with iptables off nothing drops what they send on (the host forwards, FORWARD
policy ACCEPT): "internal" is enforced by the iptables rules that engine never installs. An internal
network would be isolated on an engine with `--iptables=true` (Docker's DOCKER-ISOLATION rules), still
reaching the host's address on the bridge. So an episode here is a pod of containers sharing ONE
network namespace that has nothing but `lo`:

- a holder container (the main image's `sleep`, network "none", hostname `sandbox`, every service
  name -> 127.0.0.1 in its /etc/hosts) owns the namespace;
- each sidecar joins it (`network_mode=container:<holder>`), in depends_on order, and is waited for:
  until Docker reports its healthcheck healthy, else until its `expose`/`ports` listen, else until it
  runs; one that exits or turns unhealthy fails the start with its log's tail;
- the agent's container (sandbox.ComposeSandbox, started by sandbox.start_sandbox) joins it too, so
  `main` reaches `db:5432` on 127.0.0.1;
- at verification the agent's container is killed first (no process of the agent lives on in the
  shared namespace to answer for a sidecar or touch it), then the fresh verifier container joins the
  same namespace: the tests see the sidecars in the state the agent left them, as harbor's do.

Every container carries the sandbox's labels (termrl=1, run id, session, owner, started: reaping.py)
plus `termrl.pod`, so sandbox.reap and the test sweeps remove them; `close` removes them all. The holder
and the sidecars have no dead man of their own (the agent's container does): after a kill -9 of the
owner they run until the next reap (a dead owner's things) or limits.max_lifetime_s (the holder's sleep).
Not enforced on sidecars: the disk limit (sandboxing/disk.py watches the agent's container) and host
admission (sandboxing/admission.py counts the agent's container and its verifier); two services on
one port collide (one namespace).

This file holds the pod's primitives (blocking; run in worker threads); sandbox.py's ComposeSandbox
starts and closes a pod with them.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from pathlib import Path

import docker.errors
import docker.types

import configs
from sandboxing import images, reaping
from sandboxing.calls import SandboxError
from sandboxing.limits import host_config

log = logging.getLogger("termrl.compose")

# seconds, an outer bound; a healthcheck's own retries usually decide first
READY_TIMEOUT_S = 600.0
# seconds between two looks at a sidecar that is not ready yet
POLL_S = 0.5


class _Build:
    """What images.build_image needs of a sidecar's image (an id usable in an image name)."""

    def __init__(self, task_id: str, name: str, dockerfile: Path, context: Path):
        self.id = re.sub(r"[^a-z0-9._-]", "-", f"{task_id}-{name}".lower())[:100]
        self.dockerfile = dockerfile
        self.context_dir = context
        self.tests_dir = None
        self.build_setup = None


def sidecar_images(
    task, base_image=None, image_map=None, build_network=None, host=None, limits=None
) -> dict[str, str]:
    """Build (or reuse) every sidecar's image: name -> tag (images.build_image: content tags, FROM
    mapped by image_map, built once per engine, under `limits`: limits.BuildLimits, None: the
    defaults). An `image:` sidecar is built as `FROM <image>`, so it is mapped and sent to `host` the
    same way. Raises images.ImageBuildError naming the image."""
    out = {}
    for side in task.sidecars:
        dockerfile = side.dockerfile
        context = side.context_dir
        if dockerfile is None:
            context = configs.cache_dir() / "compose" / f"{task.id}-{side.name}"
            context.mkdir(parents=True, exist_ok=True)
            dockerfile = context / "Dockerfile"
            dockerfile.write_text(f"FROM {side.image}\n")
        out[side.name] = images.build_image(
            _Build(task.id, side.name, dockerfile, context),
            base_image,
            image_map,
            build_network,
            host,
            limits,
        )
    return out


def pod_name(run_id: str) -> str:
    """A fresh pod's name (its containers' name prefix): the run's id, cut, and 8 random hex digits."""
    pod = "termrl-pod-" + re.sub(r"[^a-zA-Z0-9_.-]", "-", run_id)[-30:].lstrip("-_.")
    return pod + "-" + secrets.token_hex(4)


def _labels(run_id: str, pod: str, role: str) -> dict[str, str]:
    """The sandbox's labels (reaping.labels) plus the pod and this container's role in it."""
    return {**reaping.labels(run_id), "termrl.pod": pod, "termrl.role": role}


def _host_config(api, limits, network_mode: str, extra_hosts: dict | None = None):
    """sandbox's isolation, with json-file logs (a sidecar that fails to start shows its tail)."""
    config = host_config(api, limits, logs=True, network_mode=network_mode)
    # the holder's /etc/hosts, which every container joining it shares
    if extra_hosts:
        config["ExtraHosts"] = [f"{name}:{ip}" for name, ip in sorted(extra_hosts.items())]
    return config


def _listening(api, holder: str, ports: tuple[int, ...]) -> bool:
    """Whether every port has a listening TCP socket in the pod's namespace (/proc/net/tcp{,6} read
    in the holder: the namespace's sockets, whoever owns them)."""
    eid = api.exec_create(holder, ["cat", "/proc/net/tcp", "/proc/net/tcp6"])["Id"]
    text = api.exec_start(eid).decode("ascii", "replace")
    listen = {
        int(cols[1].rsplit(":", 1)[1], 16)
        for cols in (line.split() for line in text.splitlines()[1:])
        if len(cols) > 3 and cols[3] == "0A" and ":" in cols[1]
    }
    return set(ports) <= listen


def _wait_ready(api, cid: str, side, holder: str, task_id: str) -> None:
    """Until the sidecar is healthy (healthcheck), listens on its ports, or runs; SandboxError
    naming the task and service when it exits, turns unhealthy or is not ready in READY_TIMEOUT_S."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        state = api.inspect_container(cid)["State"]
        health = (state.get("Health") or {}).get("Status")
        if not state.get("Running"):
            why = f"exited with code {state.get('ExitCode')}"
        elif health == "unhealthy":
            why = "is unhealthy: " + "; ".join(
                h.get("Output", "").strip()[-200:] for h in state["Health"].get("Log", [])[-2:]
            )
        elif side.healthcheck is not None:
            if health == "healthy":
                return
            why = None
        elif not side.ports or _listening(api, holder, side.ports):
            return
        else:
            why = None
        if why is None and time.monotonic() > deadline:
            why = f"was not ready after {READY_TIMEOUT_S:.0f} s"
        if why is not None:
            tail = api.logs(cid, tail=20).decode("utf-8", "replace")
            raise SandboxError(f"task {task_id}: sidecar {side.name!r} {why}; log tail:\n{tail}")
        time.sleep(POLL_S)


def start_pod(
    api,
    task,
    tags: dict[str, str],
    main_image: str,
    limits,
    holder_limits,
    run_id: str,
    pod: str,
) -> list[str]:
    """Holder (from main_image, with holder_limits), then the sidecars (images `tags`: name -> tag,
    with limits) in order, each waited for; returns the container ids, holder first. On failure the
    ones started are removed and the error raised (SandboxError from the wait, docker's errors)."""
    ids: list[str] = []
    try:
        ids.append(
            api.create_container(
                main_image,
                entrypoint=[],
                command=["sleep", f"{limits.max_lifetime_s:.0f}"],
                labels=_labels(run_id, pod, "holder"),
                name=f"{pod}-net",
                hostname="sandbox",
                host_config=_host_config(
                    api,
                    holder_limits,
                    "none",
                    extra_hosts={n: "127.0.0.1" for n in task.service_names},
                ),
            )["Id"]
        )
        api.start(ids[0])
        for side in task.sidecars:
            kwargs = {"entrypoint": side.entrypoint} if side.entrypoint is not None else {}
            healthcheck = None
            if side.healthcheck:
                healthcheck = docker.types.Healthcheck(**side.healthcheck)
            cid = api.create_container(
                tags[side.name],
                command=side.command,
                environment=side.environment,
                working_dir=side.working_dir,
                user=side.user or "",
                labels=_labels(run_id, pod, f"sidecar {side.name}"),
                name=f"{pod}-{re.sub(r'[^a-zA-Z0-9_.-]', '-', side.name)}",
                healthcheck=healthcheck,
                host_config=_host_config(api, limits, f"container:{ids[0]}"),
                **kwargs,
            )["Id"]
            ids.append(cid)
            api.start(cid)
            _wait_ready(api, cid, side, ids[0], task.id)
        return ids
    except BaseException:
        remove(api, ids)
        raise


def remove(api, ids: list[str]) -> None:
    """Remove a pod's containers (start_pod's ids), sidecars first, the namespace's holder last;
    failures logged, never raised (a reap is the backstop)."""
    for cid in reversed(ids):
        try:
            api.remove_container(cid, force=True, v=True)
        except docker.errors.NotFound:
            pass
        except Exception as e:  # noqa: BLE001 - cleanup; sandbox.reap is the backstop
            log.warning("removing pod container %s failed: %s (reap() will)", cid[:12], e)
