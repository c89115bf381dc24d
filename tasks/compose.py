"""Harbor's environment/docker-compose.yaml: the `main` service (the agent's container) and its
sidecars, parsed into plain records (sandboxing/compose.py runs them).

Harbor merges the task's file over its own base config, in which `main` is built from environment/;
a task's file usually only adds `depends_on` to `main` and defines sidecar services (Terminal-Bench
2.x and 3 use a database, an API server or a simulated user this way). Taken from the compose
specification, per service:

- `build` (a context path, or `context` + `dockerfile`, inside environment/) or `image` (a local
  image or one sandbox.image_map maps; nothing is pulled);
- `environment` (list `K=V` or mapping), `command`, `entrypoint`, `working_dir`, `user`;
- `depends_on` (list, or mapping with `condition: service_started | service_healthy`): start order;
- `healthcheck` (`test` CMD / CMD-SHELL / string, `interval`, `timeout`, `retries`, `start_period`,
  `disable`): a service that has one is waited for until Docker reports it healthy;
- `expose`, `ports`, `container_name`, `hostname`, `restart`, `init`, `networks`, `links`, `labels`,
  `stdin_open`, `tty`, `platform`: moot here (every service shares one network namespace with only
  `lo`, service names resolve to 127.0.0.1), accepted and ignored.

Anything else (volumes, privileged, devices, secrets, build args, `${VAR}` read from the host's
environment, ...) is refused with one line naming the service and field, and so are a service or
container name outside compose's charset (it becomes part of image tags and host cache folder names),
an `image:` that is not an image reference (termrl writes it into a `FROM` line), and a build context
or Dockerfile that leaves environment/ (a `..` part, an absolute path, a symlink; tasks/paths.py).
`main` takes only `build`, `image`, `depends_on`, the moot keys and resource keys (`cpus`,
`mem_limit`, `deploy`: task.toml's [environment] decides): its other settings belong in
environment/Dockerfile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tasks.paths import IMAGE_REF, SERVICE_NAME, inside
from tasks.task import TaskError

MOOT = {
    "expose",
    "ports",
    "container_name",
    "hostname",
    "restart",
    "init",
    "networks",
    "links",
    "labels",
    "stdin_open",
    "tty",
    "platform",
}
SIDECAR_KEYS = {
    "build",
    "image",
    "environment",
    "command",
    "entrypoint",
    "working_dir",
    "user",
    "depends_on",
    "healthcheck",
} | MOOT
# main's resources come from task.toml's [environment] (harbor's base config sets them the same way)
MAIN_KEYS = {"build", "image", "depends_on", "cpus", "mem_limit", "deploy"} | MOOT
CONDITIONS = ("service_started", "service_healthy")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(us|ms|h|m|s)")
_UNIT_NS = {"us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}
_VAR = re.compile(r"\$\$|\$\{([A-Za-z_]\w*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_]\w*)")


@dataclass(frozen=True)
class Sidecar:
    """One non-main service of a compose file.

    dockerfile/context_dir: what to build (None with `image`). image: a prebuilt image name.
    environment: name -> value. command/entrypoint: a list (exec form), a string (docker splits it
    with shlex, as compose does) or None (the image's). depends_on: sidecars started (and, when they
    have a healthcheck, healthy) before this one. healthcheck: docker-py Healthcheck keyword
    arguments (durations in ns) or None. ports: the container ports of `expose` and `ports`, waited
    for (listening on 127.0.0.1 or any address) when there is no healthcheck.
    """

    name: str
    dockerfile: Path | None = None
    context_dir: Path | None = None
    image: str | None = None
    environment: dict[str, str] = field(default_factory=dict)
    command: list[str] | str | None = None
    entrypoint: list[str] | str | None = None
    working_dir: str | None = None
    user: str | None = None
    depends_on: tuple[str, ...] = ()
    healthcheck: dict | None = None
    ports: tuple[int, ...] = ()


@dataclass(frozen=True)
class Compose:
    """A parsed compose file: main's Dockerfile and context, its sidecars in start order
    (depends_on respected), and the host names every service answers to (all 127.0.0.1)."""

    dockerfile: Path
    context_dir: Path
    sidecars: tuple[Sidecar, ...]
    names: tuple[str, ...]


def _fail(task_id: str, path: Path, where: str, message: str):
    raise TaskError(task_id, f"docker-compose.yaml: {where}", message, path)


def _interpolate(task_id: str, path: Path, where: str, text: str) -> str:
    """Compose's `${X:-default}` / `${X-default}` -> default; `$$` -> `$`. A variable read from the
    host's environment (`${X}`, `$X`) is refused: nothing of this machine's environment is passed in."""

    def one(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        if m.group(2) is not None:
            return m.group(3)
        _fail(
            task_id,
            path,
            where,
            f"${{{m.group(1) or m.group(4)}}} would be read from the host's environment, which "
            "termrl never passes into containers; give a value or a ${VAR:-default}",
        )

    return _VAR.sub(one, text)


def _duration_ns(task_id: str, path: Path, where: str, value) -> int:
    """Compose durations ("2s", "1m30s", "500ms", a number of seconds) -> nanoseconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return int(value * 1e9)
    text = str(value).strip()
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        _fail(task_id, path, where, f"must be a duration like '2s' or '1m30s', got {value!r}")
    return int(sum(float(n) * _UNIT_NS[u] for n, u in parts))


def _healthcheck(task_id: str, path: Path, name: str, hc) -> dict | None:
    where = f"services.{name}.healthcheck"
    if not isinstance(hc, dict):
        _fail(task_id, path, where, f"must be a mapping, got {hc!r}")
    if hc.get("disable") is True:
        return None
    unknown = sorted(
        set(hc) - {"test", "interval", "timeout", "retries", "start_period", "disable"}
    )
    if unknown:
        _fail(task_id, path, f"{where}.{unknown[0]}", "is not supported")
    test = hc.get("test")
    if isinstance(test, str):
        test = ["CMD-SHELL", test]
    if not (isinstance(test, list) and test and test[0] in ("CMD", "CMD-SHELL", "NONE")):
        _fail(
            task_id, path, f"{where}.test", "must be ['CMD', ...], ['CMD-SHELL', cmd] or a string"
        )
    if test[0] == "NONE":
        return None
    out = {"test": [str(t) for t in test]}
    for key in ("interval", "timeout", "start_period"):
        if key in hc:
            out[key] = _duration_ns(task_id, path, f"{where}.{key}", hc[key])
    if "retries" in hc:
        if isinstance(hc["retries"], bool) or not isinstance(hc["retries"], int):
            _fail(task_id, path, f"{where}.retries", f"must be an integer, got {hc['retries']!r}")
        out["retries"] = hc["retries"]
    return out


def _environment(task_id: str, path: Path, name: str, env) -> dict[str, str]:
    where = f"services.{name}.environment"
    items = env.items() if isinstance(env, dict) else None
    if isinstance(env, list):
        items = [
            (str(e).partition("=")[0], str(e).partition("=")[2] if "=" in str(e) else None)
            for e in env
        ]
    if items is None:
        _fail(task_id, path, where, f"must be a list of K=V or a mapping, got {env!r}")
    out = {}
    for key, value in items:
        if value is None:
            _fail(
                task_id,
                path,
                f"{where}.{key}",
                "has no value, so compose would read it from the host's environment, which termrl "
                "never passes into containers",
            )
        out[str(key)] = _interpolate(task_id, path, f"{where}.{key}", str(value))
    return out


def _ports(task_id: str, path: Path, name: str, svc: dict) -> tuple[int, ...]:
    """Container ports of `expose` ("8000", 8000, "8000/tcp") and `ports` ("8080:80" -> 80)."""
    out = []
    for key in ("expose", "ports"):
        for entry in svc.get(key) or []:
            text = str(entry.get("target", "") if isinstance(entry, dict) else entry)
            port = text.split("/")[0].rsplit(":", 1)[-1].split("-")[0]
            if not port.isdigit():
                _fail(task_id, path, f"services.{name}.{key}", f"{entry!r} names no port")
            out.append(int(port))
    return tuple(sorted(set(out)))


def _build(task_id: str, path: Path, env_dir: Path, name: str, build) -> tuple[Path, Path]:
    """(Dockerfile, context) of a service's `build`, which must stay inside environment/."""
    if isinstance(build, str):
        build = {"context": build}
    if not isinstance(build, dict):
        _fail(
            task_id, path, f"services.{name}.build", f"must be a path or a mapping, got {build!r}"
        )
    unknown = sorted(set(build) - {"context", "dockerfile"})
    if unknown:
        _fail(task_id, path, f"services.{name}.build.{unknown[0]}", "is not supported")
    where, env = f"services.{name}.build", "environment/"
    named = str(build.get("context", "."))
    field = f"docker-compose.yaml: {where}"
    context = inside(task_id, f"{field}.context", env_dir, named, path, env).resolve()
    # an absolute dockerfile stays absolute in the join, so it is checked as given
    name_in_context = str(build.get("dockerfile", "Dockerfile"))
    inside(task_id, f"{field}.dockerfile", env_dir, Path(named) / name_in_context, path, env)
    dockerfile = context / name_in_context
    if not dockerfile.is_file():
        _fail(task_id, path, where, f"{dockerfile} does not exist")
    return dockerfile, context


def _depends_on(task_id: str, path: Path, name: str, deps, services: dict) -> tuple[str, ...]:
    where = f"services.{name}.depends_on"
    if isinstance(deps, dict):
        for dep, spec in deps.items():
            cond = (
                (spec or {}).get("condition", "service_started") if isinstance(spec, dict) else None
            )
            if cond not in CONDITIONS:
                _fail(task_id, path, f"{where}.{dep}", f"condition must be one of {CONDITIONS}")
        deps = list(deps)
    if not isinstance(deps, list):
        _fail(task_id, path, where, f"must be a list or a mapping, got {deps!r}")
    for dep in deps:
        if dep not in services or dep == "main":
            _fail(task_id, path, where, f"{dep!r} is not a sidecar service of this file")
    return tuple(str(d) for d in deps)


def _sidecar(task_id: str, path: Path, env_dir: Path, name: str, svc: dict, services) -> Sidecar:
    if not SERVICE_NAME.fullmatch(name):
        # the name becomes part of image tags and of cache folder names on the host
        _fail(
            task_id,
            path,
            f"services.{name!r}",
            "a service name is letters, digits, '_', '.' and '-', starting with a letter or digit",
        )
    unknown = sorted(set(svc) - SIDECAR_KEYS)
    if unknown:
        _fail(task_id, path, f"services.{name}.{unknown[0]}", "is not supported by termrl")
    dockerfile = context = None
    if "build" in svc:
        dockerfile, context = _build(task_id, path, env_dir, name, svc["build"])
    elif not isinstance(svc.get("image"), str) or not svc["image"].strip():
        _fail(task_id, path, f"services.{name}", "needs `build` or `image`")
    elif not IMAGE_REF.fullmatch(svc["image"].strip()):
        # termrl writes `FROM <image>` into a Dockerfile: one line, an image reference only
        _fail(
            task_id, path, f"services.{name}.image", f"{svc['image']!r} is not an image reference"
        )
    for key in ("command", "entrypoint"):
        if key in svc and not isinstance(svc[key], (str, list)):
            _fail(task_id, path, f"services.{name}.{key}", "must be a string or a list")
    hc = svc.get("healthcheck")
    return Sidecar(
        name=name,
        dockerfile=dockerfile,
        context_dir=context,
        image=None if dockerfile else svc["image"].strip(),
        environment=_environment(task_id, path, name, svc.get("environment") or {}),
        command=svc.get("command"),
        entrypoint=svc.get("entrypoint"),
        working_dir=svc.get("working_dir"),
        user=None if svc.get("user") is None else str(svc["user"]),
        depends_on=_depends_on(task_id, path, name, svc.get("depends_on") or [], services),
        healthcheck=None if hc is None else _healthcheck(task_id, path, name, hc),
        ports=_ports(task_id, path, name, svc),
    )


def _ordered(task_id: str, path: Path, sidecars: dict[str, Sidecar]) -> tuple[Sidecar, ...]:
    """Sidecars in an order where each comes after what it depends on (names sorted within a level)."""
    out, done = [], set()
    while len(out) < len(sidecars):
        ready = sorted(
            n for n, s in sidecars.items() if n not in done and set(s.depends_on) <= done
        )
        if not ready:
            left = sorted(set(sidecars) - done)
            _fail(task_id, path, "depends_on", f"a dependency cycle among {', '.join(left)}")
        out += [sidecars[n] for n in ready]
        done.update(ready)
    return tuple(out)


def parse_compose(task_id: str, env_dir: Path) -> Compose:
    """environment/docker-compose.yaml -> Compose (main's Dockerfile and context: harbor's
    `environment/` and `Dockerfile` when main names no build; its sidecars in start order).

    Raises TaskError naming the task, the service and the field: malformed YAML, no `main`, a field
    termrl does not support (module docstring), a bad service name or image reference, a build
    context or Dockerfile outside environment/, a missing Dockerfile, an unknown depends_on target
    or a cycle, a value read from the host's environment.
    """
    path = Path(env_dir) / "docker-compose.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise TaskError(task_id, "docker-compose.yaml", f"malformed YAML: {e}", path) from e
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or not isinstance(
        services.get("main", {}), (dict, type(None))
    ):
        _fail(task_id, path, "services", "must be a mapping of service names to mappings")
    if "main" not in services:
        _fail(task_id, path, "services", "has no service `main` (harbor's agent container)")
    for key in sorted(set(data) - {"services", "networks", "version", "name"}):
        if data[key]:
            _fail(task_id, path, key, "is not supported by termrl (top-level)")
    main = services["main"] or {}
    unknown = sorted(set(main) - MAIN_KEYS)
    if unknown:
        _fail(
            task_id,
            path,
            f"services.main.{unknown[0]}",
            "is not supported for main: set it in environment/Dockerfile",
        )
    main_df, main_ctx = Path(env_dir) / "Dockerfile", Path(env_dir).resolve()
    if "build" in main:
        main_df, main_ctx = _build(task_id, path, Path(env_dir), "main", main["build"])
    _depends_on(task_id, path, "main", main.get("depends_on") or [], services)
    sidecars = {}
    for name, svc in services.items():
        if name != "main":
            if not isinstance(svc, dict):
                _fail(task_id, path, f"services.{name}", f"must be a mapping, got {svc!r}")
            sidecars[str(name)] = _sidecar(task_id, path, Path(env_dir), str(name), svc, services)
    names = {"main", *sidecars}
    for service, svc in services.items():
        extra = (svc or {}).get("container_name")
        if extra and not SERVICE_NAME.fullmatch(str(extra)):
            # a host name of every container's /etc/hosts
            _fail(task_id, path, f"services.{service}.container_name", f"{extra!r} is not a name")
        names |= {str(extra)} if extra else set()
    return Compose(main_df, main_ctx, _ordered(task_id, path, sidecars), tuple(sorted(names)))
