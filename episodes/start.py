"""An episode's sandbox: the rollout's task images built on every listed Docker engine at once, and one
episode's sandbox started on the engine it was placed on (with its compose sidecars)."""

import asyncio
import time

import sandbox as sandbox_lib
from configs import SandboxConfig
from sandboxing import hosts
from sandboxing import images as images_lib


async def build_image(task, sandbox_cfg: SandboxConfig, host: str) -> str:
    """`task`'s image on Docker engine `host` (images.build_image in a worker thread: a build
    blocks for minutes). Returns its tag; raises images.ImageBuildError."""
    return await asyncio.to_thread(
        images_lib.build_image,
        task,
        sandbox_cfg.base_image,
        sandbox_cfg.image_map,
        sandbox_cfg.build_network,
        host,
    )


async def build_images(tasks: list, sandbox_cfg: SandboxConfig) -> dict[str, dict]:
    """Each task's image on every listed Docker engine, built at once: task id -> engine url ->
    tag, or the Exception its build raised (reported per trajectory, never raised here)."""
    images: dict[str, dict[str, str | Exception]] = {}

    async def build(task, host: str):
        try:
            tag = await build_image(task, sandbox_cfg, host)
        except Exception as e:
            # reported per trajectory
            tag = e
        images.setdefault(task.id, {})[host] = tag

    unique = {t.id: t for t in tasks}.values()
    await asyncio.gather(*(build(t, h) for t in unique for h in hosts.urls()))
    return images


def build_error(image: dict) -> Exception | None:
    """The error of a task's image ({engine url: tag or Exception}, from build_images) when it
    failed to build on every engine (the first engine's), else None."""
    if not all(isinstance(x, Exception) for x in image.values()):
        return None
    return next(iter(image.values()))


async def start_sandbox(
    task, host: str, image, sandbox_cfg: SandboxConfig, run_id
) -> tuple[sandbox_lib.Sandbox, float]:
    """The episode's sandbox on Docker engine `host` from `image` (a tag; built here when it is None
    or an Exception: its build failed on this engine alone), with the task's limits and compose
    sidecars (sandbox.start_sandbox). Returns (sandbox, seconds its start took, the image build not
    counted). Raises images.ImageBuildError or sandbox.SandboxError."""
    if image is None or isinstance(image, Exception):
        image = await build_image(task, sandbox_cfg, host)
    t0 = time.monotonic()
    limits = sandbox_lib.Limits.from_config(sandbox_cfg).for_task(task)
    build = (sandbox_cfg.base_image, sandbox_cfg.image_map, sandbox_cfg.build_network)
    sb = await sandbox_lib.start_sandbox(task, image, limits, run_id, host, build)
    return sb, time.monotonic() - t0
