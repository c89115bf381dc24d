"""experiments/counterfactual.py: the counterfactual-observation control. Fresh values, the swap, the
classification of replies and the instance-level rates (no Docker); and (real Docker) one instance's
oracle episode recorded through the agent loop, its probes, and the control failing where it must: the
oracle reader follows every swap, the template none, the embedded SmolLM2 a rate that is well defined."""

import asyncio
import base64
import copy
import re
import subprocess

import pytest

from agent.chat import ChatFormat
from agent.oracle import reply_text
from configs import PRESETS, ConfigError
from experiments import counterfactual as cf
from sandboxing import images
from tasks import load_tasks
from tasks.family import CODE, make_instance, write_instance

PRESET = PRESETS["cpu-learn-multiturn"]


def output_of(inst, step: int, values: dict) -> tuple[str, str]:
    """(command, its output) of a pointer or run instance's oracle step, read from the instance's
    files as `cat` or the program would print them (a run program keeps its records in base64)."""
    command = inst.steps[step]["command"].format(**values)
    if inst.shape == "pointer":
        return command, inst.files[command.removeprefix("cat ")][0]
    path, _ = command.removeprefix("bash ").split(" ")
    encoded = re.search(r"echo (\S+) \| base64 -d", inst.files[path][0]).group(1)
    return command, base64.b64decode(encoded).decode()


# ---------------------------------------------------------------- fresh values and the swap (no Docker)


@pytest.mark.parametrize(
    "value, form",
    [
        ("/app/oak/elm/fig/lime-reef.txt", r"/app/oak/elm/fig/[a-z]+-[a-z]+\.txt"),
        ("/app/oak/elm/sage_moss.sh 4410", r"/app/oak/elm/[a-z]+_[a-z]+\.sh [1-9][0-9]{3}"),
        ("sage_moss", r"[a-z]+_[a-z]+"),
        ("amber-1234", CODE),
    ],
    ids=["note", "program", "key", "code"],
)
def test_a_fresh_value_keeps_its_form_and_folder_and_occurs_nowhere_it_must_not(value, form):
    rng = cf.random.Random(0)
    for _ in range(20):
        fresh = cf.fresh_value(value, avoid=value, rng=rng)
        assert re.fullmatch(form, fresh), fresh
        assert fresh not in value and value not in fresh
    # a program name already in the tree is refused even with another number
    taken = cf.fresh_value("/app/oak/elm/sage_moss.sh 4410", avoid="", rng=cf.random.Random(1))
    name = taken.split("/")[-1].split(" ")[0]
    again = cf.fresh_value("/app/oak/elm/sage_moss.sh 4410", avoid=name, rng=cf.random.Random(1))
    assert name not in again


def test_a_value_with_nothing_to_draw_again_is_refused():
    with pytest.raises(ValueError, match="no family word or number"):
        cf.fresh_value("/app/oak/README", avoid="", rng=cf.random.Random(0))


@pytest.mark.parametrize("shape", ["pointer", "run"])
def test_the_swap_replaces_the_record_in_force_and_nothing_else(shape):
    inst = make_instance("validation", 11, shape, 2)
    command, output = output_of(inst, 0, {})
    content = f"$ {command}\nexit code: 0\n{output}"
    (regex,) = inst.steps[0]["capture"].values()
    value = re.search(regex, output).group(1)
    swap = cf.fresh_value(value, "\n".join(inst.files), cf.random.Random(0))
    swapped, found = cf.swap_observation(content, command, regex, swap, "markdown")
    assert found == value
    assert content.count(value) == 1
    assert swapped == content.replace(value, swap)
    # the stale decoys stay as they were, and the capture now reads the swap
    assert re.search(regex, swapped).group(1) == swap
    changed = [a for a, b in zip(content.splitlines(), swapped.splitlines()) if a != b]
    assert len(changed) == 1


def test_a_swap_the_capture_cannot_read_as_the_value_is_refused():
    inst = make_instance("validation", 11, "pointer", 2)
    command, output = output_of(inst, 0, {})
    (regex,) = inst.steps[0]["capture"].values()
    with pytest.raises(ValueError, match="does not read as the value"):
        cf.swap_observation(
            f"$ {command}\nexit code: 0\n{output}", command, regex, "not a note", "markdown"
        )


# ---------------------------------------------------------------- replies and rates (no Docker)


def probe(value="/app/a/b/c/fig-lime.txt", swap="/app/a/b/c/reef-onyx.txt") -> cf.Probe:
    return cf.Probe("t", "pointer-h2", "read", 0, value, swap, [1], [1])


@pytest.mark.parametrize(
    "reply, label",
    [
        (reply_text("cat /app/a/b/c/reef-onyx.txt", "markdown"), "swap"),
        (reply_text("cat /app/a/b/c/fig-lime.txt", "markdown"), "truth"),
        (reply_text("ls /app/a/b/c", "markdown"), "neither"),
        ("I will read the note next.", "no_command"),
        ("```bash\ncat /app/a/b/c/reef-onyx.txt", "no_command"),
        (
            reply_text("ls", "markdown") + reply_text("cat /app/a/b/c/reef-onyx.txt", "markdown"),
            "neither",
        ),
    ],
    ids=["swap", "truth", "neither", "prose", "unclosed", "first-command-only"],
)
def test_a_reply_is_classified_by_the_value_its_first_command_holds(tok, reply, label):
    chat = ChatFormat(tok, "markdown")
    assert cf.classify(reply, probe(), chat, 65536)[0] == label


def sample(task: str, variant: str, label: str, cell="pointer-h2", kind="read") -> dict:
    return {"task": task, "variant": variant, "label": label, "cell": cell, "kind": kind}


def test_follow_rates_are_means_of_instance_shares_with_a_bootstrap_over_instances():
    samples = [
        # instance a: 3 of 4 swapped samples follow the swap; both true samples follow the truth
        *[sample("a", "swapped", x) for x in ("swap", "swap", "neither", "swap")],
        *[sample("a", "true", "truth") for _ in range(2)],
        # instance b (another cell, an answer step): none follows the swap; 1 of 2 the truth
        *[sample("b", "swapped", "truth", "run-h1", "answer") for _ in range(2)],
        sample("b", "true", "truth", "run-h1", "answer"),
        sample("b", "true", "no_command", "run-h1", "answer"),
    ]
    out = cf.report(samples, resamples=2000)
    swap = out["swap_follows_swap"]
    # the mean of instance shares (0.75 and 0), not of samples (3 / 6)
    assert (swap["instances"], swap["samples"], swap["rate"]) == (2, 6, 0.375)
    # two instances: the resampled means are 0, 0.375 and 0.75
    assert swap["ci95"] == [0.0, 0.75]
    assert out["true_follows_truth"]["rate"] == 0.75
    assert out["cells"]["run-h1"]["swap_follows_swap"]["rate"] == 0.0
    assert out["by_kind"]["read"]["swap_follows_swap"]["rate"] == 0.75
    assert out["labels"] == {
        "swapped": {"swap": 3, "truth": 2, "neither": 1, "no_command": 0},
        "true": {"swap": 0, "truth": 3, "neither": 0, "no_command": 1},
    }
    assert cf.follow_rate([], "swapped", 100) == {
        "instances": 0,
        "samples": 0,
        "rate": None,
        "ci95": None,
    }


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--n", "0"], "n = 0: must be >= 1"),
        (["--preset", "nope"], "preset = 'nope': must be one of"),
        (["--policy", "template=x"], "the name template is the scripted policy's"),
        (["--policy", "=x"], "must be PATH or NAME=PATH"),
        (["--policy", "a=x", "--policy", "a=y"], "two policies share a name"),
    ],
)
def test_bad_flags_get_one_line_naming_the_flag(argv, message):
    base = ["--policy", "default", "--tasks", "t", "--out", "o.json"]
    if argv[0] == "--policy":
        base = base[2:]
    with pytest.raises(ConfigError, match=re.escape(message)):
        cf.parse_args(base + argv)


# ---------------------------------------------------------------- one instance in real sandboxes


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, smol_dir, tok):
    """A config instance of 2 hops recorded once: (task, trajectory, oracle steps, probes, skipped,
    chat); its image removed after the module."""
    root = tmp_path_factory.mktemp("cf")
    inst = make_instance("validation", 7, "config", 2)
    write_instance(inst, root)
    (task,) = load_tasks(root / inst.id)
    chat = ChatFormat(tok, PRESET.policy.action_format)
    policy, rollout, box = (
        copy.deepcopy(s) for s in (PRESET.policy, PRESET.rollout, PRESET.sandbox)
    )
    # built here so that its tag is known; the rollout reuses it
    tag = images.build_image(task, box.base_image, box.image_map)
    steps, trajectories = asyncio.run(cf.record([task], tok, policy, rollout, box, None, False))
    probes, skipped = cf.build_probes([task], steps, trajectories, chat, seed=0)
    yield task, trajectories[0], steps, probes, skipped, chat
    subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)


@pytest.mark.docker
def test_a_probe_is_the_recorded_prompt_with_only_the_revealed_value_swapped(recorded, tok):
    task, traj, steps, probes, skipped, _ = recorded
    assert (traj.error, traj.resolved, skipped) == (None, True, [])
    # a read (the second key) and the answer (the code), in step order
    assert [(p.step, p.kind) for p in probes] == [(0, "read"), (1, "answer")]
    starts = cf.turn_starts(traj.loss_mask)
    for p in probes:
        assert p.prompt_ids == traj.token_ids[: starts[p.step + 1]]
        true_text = tok.decode(p.prompt_ids)
        assert true_text.count(p.value) == 1
        assert tok.decode(p.swapped_ids) == true_text.replace(p.value, p.swap)
    assert re.fullmatch(CODE, probes[1].swap)


@pytest.fixture(scope="module")
def asked(recorded, smol_dir):
    """The embedded SmolLM2 (greedy) and the two scripted policies asked on the probes."""
    task, _, steps, probes, _, chat = recorded
    plans = {task.instruction: steps[task.id]}
    return cf.probe_policies(
        {"base": str(smol_dir)},
        probes,
        plans,
        chat,
        copy.deepcopy(PRESET.policy),
        copy.deepcopy(PRESET.rollout),
        greedy=True,
        resamples=200,
    )


@pytest.mark.docker
def test_the_oracle_reader_follows_every_swap_and_the_template_none(asked):
    reports, samples = asked
    reader, template = reports[cf.ORACLE_READER], reports[cf.TEMPLATE]
    assert reader["swap_follows_swap"]["rate"] == reader["true_follows_truth"]["rate"] == 1.0
    assert template["swap_follows_swap"]["rate"] == template["true_follows_truth"]["rate"] == 0.0
    assert reader["labels"]["swapped"] == {"swap": 2, "truth": 0, "neither": 0, "no_command": 0}
    assert {s["command"] for s in samples[cf.TEMPLATE]} == {cf.TEMPLATE_COMMAND}


@pytest.mark.docker
def test_a_real_policy_gets_a_well_defined_rate_from_its_own_replies(asked):
    reports, samples = asked
    base = reports["base"]
    swapped = [s for s in samples["base"] if s["variant"] == "swapped"]
    # greedy: one sample per probe and variant; the rate is the share of its replies that follow
    assert len(swapped) == 2 and len(samples["base"]) == 4
    assert base["swap_follows_swap"]["rate"] == sum(s["label"] == "swap" for s in swapped) / 2
    assert sum(base["labels"]["swapped"].values()) == 2
    for s in samples["base"]:
        assert s["label"] in cf.LABELS and s["reply"]
