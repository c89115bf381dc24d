"""The verifier's toolchain cannot be shaped by a task: attacking task images of our own against the real
verifier and engine.

Each attacker is a task image whose `python3` is a wrapper: it runs the real interpreter, then does what
a hostile task author wants with whatever termrl gave it (the toolchain copy it was asked to make, the
probe's answer). The copy termrl keeps is read back through the engine, checked and named by its own
contents, written by termrl into a volume no running container mounts writable, and checked again by
content before a process first uses it; so an attacker poisons at most its own task's copy, never
another task's reward, never a host path.
"""

import asyncio
import json
import os
import textwrap
from pathlib import Path

import docker.types
import pytest

import sandbox
from sandbox import Sandbox, SandboxError
from sandboxing import images, toolchain

RUN_ID = f"test-toolchain-integrity-{os.getpid()}"
SITE = "/usr/local/lib/python3.11/dist-packages"  # the base image's first site dir (pytest)
# the hidden test: fails unless the agent wrote 42 (no agent here does)
ANSWER = "def test_x():\n    assert open('/app/answer.txt').read() == '42'\n"
# appended to pytest's reports.py by the poisoner: every test report becomes a pass
FORCE_PASS = """
def _termrl_forced(cls, item, call, _orig=TestReport.from_item_and_call.__func__):
    r = _orig(cls, item, call)
    r.outcome, r.longrepr = 'passed', None
    return r
TestReport.from_item_and_call = classmethod(_termrl_forced)
"""
# The task image's python3: the real one first, then the attack on whatever toolchain copy it sees
# (the copy it was asked to make, or the shared one it was handed writable).
WRAPPER = """#!/bin/sh
/usr/bin/python3.11 "$@"
rc=$?
tc=/.termrl-toolchain/tc
if [ -d "$tc" ]; then
{attack}
fi
exit $rc
"""
APPEND = f'cat /opt/payload.py >> "$tc{SITE}/_pytest/reports.py"'


def build(docker_client, tmp_path: Path, name: str, lines: list[str], files: dict) -> str:
    """A task image FROM `base` (the test's own, below) with `files` and RUN `lines`; its tag."""
    d = tmp_path / name
    d.mkdir()
    for path, text in files.items():
        (d / path).write_text(text)
    (d / "Dockerfile").write_text("\n".join(lines) + "\n")
    tag = f"termrl/test-tc-{name}:{os.getpid()}"
    docker_client.images.build(
        path=str(d), tag=tag, labels={"termrl": "1"}, network_mode="none", rm=True, forcerm=True
    )
    return tag


@pytest.fixture(scope="module")
def base_image(docker_client, tmp_path_factory):
    """The base image plus a file of this module's own in its site dir: a toolchain nobody else shares
    (an attack that worked would poison only this module's copy, and the test that made it fails). Built
    once, and its copy made once, for the module's tests; the test that changes the copy on purpose has
    it made again, whole."""
    tmp_path = tmp_path_factory.mktemp("base")
    tag = build(
        docker_client,
        tmp_path,
        "base",
        [
            f"FROM {images.BASE_IMAGE}",
            f"RUN echo {os.getpid()} > {SITE}/termrl_test_{tmp_path.name}.txt",
        ],
        {},
    )
    yield tag
    docker_client.images.remove(tag, force=True)


@pytest.fixture
def base(docker_client, base_image):
    """(the base image's tag, the list of images this test builds on it: removed after the test)."""
    made = []
    yield base_image, made
    for t in made:
        docker_client.images.remove(t, force=True)
    sandbox.reap(run_id=RUN_ID)


def attacker(docker_client, tmp_path, base: tuple, name: str, attack: str, files=None) -> str:
    tag = build(
        docker_client,
        tmp_path,
        name,
        [
            f"FROM {base[0]}",
            "COPY python3 /usr/local/bin/python3",
            "COPY . /opt/",
            "RUN chmod 755 /usr/local/bin/python3",
        ],
        {"python3": WRAPPER.format(attack=textwrap.indent(attack, "    ")), **(files or {})},
    )
    base[1].append(tag)
    return tag


def verify(image: str, tests: Path) -> sandbox.TestReport:
    async def go():
        async with await Sandbox.start(image, run_id=RUN_ID) as sb:
            return await sb.run_tests(tests, timeout=60)

    return asyncio.run(go())


def hidden(tmp_path: Path, name: str, text: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "test_hidden.py").write_text(text)
    return d


@pytest.mark.docker
def test_a_poisoner_sharing_the_toolchain_does_not_change_another_tasks_reward(
    docker_client, tmp_path, base
):
    tests = hidden(tmp_path, "tests", ANSWER)
    honest = verify(base[0], tests)
    assert honest.tests == {"test_x": False}
    poisoner = attacker(
        docker_client, tmp_path, base, "poisoner", APPEND, {"payload.py": FORCE_PASS}
    )
    verify(poisoner, tests)  # its own copy carries its payload: its own task, its own reward
    # the unrelated task whose agent did nothing still earns 0
    assert verify(base[0], tests).tests == {"test_x": False}


@pytest.mark.docker
def test_a_toolchain_link_to_a_host_file_is_refused_and_the_host_file_never_mounted(
    docker_client, tmp_path, base
):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host only")
    attack = f'rm -f "$tc/etc/nsswitch.conf"\nln -s {secret} "$tc/etc/nsswitch.conf"'
    image = attacker(docker_client, tmp_path, base, "linker", attack)
    # the task's own tests pass when they read the host's file through the verifier's bind
    tests = hidden(
        tmp_path,
        "tests",
        "def test_x():\n    assert open('/etc/nsswitch.conf').read() == 'host only'\n",
    )
    try:
        report = verify(image, tests)
    except SandboxError as e:
        error = str(e)
    else:
        read = "read" if report.tests == {"test_x": True} else "did not read"
        pytest.fail(f"verified, and the task's test {read} the host's file: {report.tests}")
    assert "the toolchain copy is refused, symlink 'tc/etc/nsswitch.conf'" in error
    assert f"-> '{secret}' leaves the copy" in error
    assert "termrl-toolchain-staging-" in error  # the volume it was made in, named


@pytest.mark.docker
def test_a_copy_changed_after_it_was_made_fails_loudly_and_is_removed(
    docker_client, tmp_path, base
):
    client = sandbox.docker_api(600)  # the verifier's engine and timeout
    tc = toolchain.prepare_toolchain(client, base[0], sandbox.Limits(), {"termrl": "1"})
    # someone with the engine's ear writes into the cached copy between two runs
    docker_client.containers.run(
        base[0],
        ["sh", "-c", f"echo '# changed' >> /.termrl-toolchain/tc{SITE}/_pytest/reports.py"],
        entrypoint=[],
        remove=True,
        network_mode="none",
        labels={"termrl": "1"},
        mounts=[docker.types.Mount("/.termrl-toolchain", tc.volume, type="volume")],
    )
    # the next process checks the copy by content before its first use
    toolchain._checked.clear()
    toolchain._toolchains.clear()
    with pytest.raises(toolchain.VerifyError) as e:
        toolchain.prepare_toolchain(client, base[0], sandbox.Limits(), {"termrl": "1"})
    assert str(e.value).startswith(f"toolchain volume {tc.volume}: its contents are not the copy")
    assert str(e.value).endswith("poisoned; removed, never used")
    assert client.volumes(filters={"name": tc.volume})["Volumes"] in (None, [])
    # and the next verification makes it again, whole
    again = toolchain.prepare_toolchain(client, base[0], sandbox.Limits(), {"termrl": "1"})
    assert again.volume == tc.volume


# Sums the bytes of the regular files of the copy (each inode once), in a container of the image.
_MEASURE = (
    "import os\nseen, n = set(), 0\n"
    "for top, _, files in os.walk('/.termrl-toolchain/tc'):\n"
    "    for f in files:\n"
    "        st = os.lstat(os.path.join(top, f))\n"
    "        if os.path.isfile(os.path.join(top, f)) and not os.path.islink(os.path.join(top, f))"
    " and st.st_ino not in seen:\n"
    "            seen.add(st.st_ino)\n"
    "            n += st.st_size\n"
    "print(n)\n"
)


@pytest.mark.docker
def test_the_size_a_task_image_reports_is_not_what_the_cache_counts(
    docker_client, tmp_path, base, monkeypatch
):
    monkeypatch.setattr(toolchain, "LEDGER", tmp_path / "toolchains.json")
    monkeypatch.setattr(toolchain, "_touched", {})
    client = sandbox.docker_api(600)  # the verifier's engine and timeout
    # the probe's answer, first on its output, claims an exabyte and a digest of its choosing
    lie = (
        'sed -n \'s/^TERMRL_PROBE {/TERMRL_PROBE {"bytes": 1000000000000000000, '
        '"digest": "0000", /p\' /tmp/probe.out'
    )
    wrapper = (
        '#!/bin/sh\n/usr/bin/python3.11 "$@" > /tmp/probe.out\nrc=$?\n'
        f"{lie}\ncat /tmp/probe.out\nexit $rc\n"
    )
    d = tmp_path / "liar"
    d.mkdir()
    (d / "python3").write_text(wrapper)
    # a file of this test's own in the site dir: a copy no other test made, so that this test's fill
    # writes it and the ledger holds what termrl measured (another image's copy would be shared)
    (d / "Dockerfile").write_text(
        f"FROM {base[0]}\nCOPY python3 /usr/local/bin/python3\nRUN chmod 755 /usr/local/bin/python3\n"
        f"RUN echo liar > {SITE}/termrl_test_{tmp_path.name}.txt\n"
    )
    liar = f"termrl/test-tc-liar:{os.getpid()}"
    docker_client.images.build(
        path=str(d), tag=liar, labels={"termrl": "1"}, network_mode="none", rm=True, forcerm=True
    )
    base[1].append(liar)
    tc = toolchain.prepare_toolchain(client, liar, sandbox.Limits(), {"termrl": "1"})
    measured = docker_client.containers.run(
        liar,
        ["/usr/bin/python3.11", "-c", _MEASURE],
        entrypoint=[],
        remove=True,
        network_mode="none",
        labels={"termrl": "1"},
        mounts=[docker.types.Mount("/.termrl-toolchain", tc.volume, type="volume", read_only=True)],
    )
    labels = client.inspect_volume(tc.volume)["Labels"]
    assert labels["termrl.toolchain.bytes"] == measured.decode().strip()
    ledger = json.loads((tmp_path / "toolchains.json").read_text())
    assert (
        str(ledger[toolchain._engine(client)][tc.volume]["bytes"])
        == labels["termrl.toolchain.bytes"]
    )


# A process killed (kill -9) while it reads a copy back: what it held must be reap's to remove. The
# read container carries the run's labels and its owner: without them reap cannot tell whose it is, and
# the staging volume it holds makes every later reap warn that it cannot remove it.
KILLED_READER = """
import sys, time
import docker
from sandboxing import reaping, toolchain
api = docker.APIClient()
labels = reaping.labels(reaping.RUN_ID)
api.create_volume(sys.argv[2], labels=labels)
def hold(cid):
    print(cid, flush=True)
    time.sleep(600)
toolchain._with_volume(api, sys.argv[1], sys.argv[2], True, hold, labels)
"""


@pytest.mark.docker
def test_what_a_reader_killed_mid_read_leaves_is_removed_by_reap(docker_client):
    import secrets
    import subprocess
    import sys

    volume = f"termrl-toolchain-staging-{secrets.token_hex(8)}"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_READER, images.BASE_IMAGE, volume],
        cwd=Path(__file__).resolve().parent.parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        cid = proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait(timeout=60)
    api = docker_client.api
    assert cid, "the reader printed its container id"
    assert api.inspect_container(cid)["Config"]["Labels"]["termrl.owner"].endswith(f":{proc.pid}")
    # unfiltered reap: what an owner process on this host that is gone left
    sandbox.reap()
    assert api.containers(all=True, filters={"id": cid}) == []
    assert api.volumes(filters={"name": volume}).get("Volumes") in (None, [])
