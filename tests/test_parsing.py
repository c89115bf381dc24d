"""Action parsing as a specification: Hermes tool calls read as JSON, reasoning per chat template, markdown
fences per CommonMark (with heredoc bodies kept whole), property tests (formatting then parsing gives back
the command), and the stop ids every engine shares (generation_config.json eos ids included)."""

import asyncio
import json
import os
import re
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai_server import CompletionsServer

import engines as E
import rollout as R
from agent import actions as A
from agent.chat import ChatFormat
from configs import RolloutConfig
from engines.openai_engine import OpenAIEngine
from hf import weights
from hf.chat import stop_ids_of
from tasks import load_tasks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CFG = RolloutConfig(
    max_turns=6,
    max_context_tokens=4096,
    max_tokens_per_turn=256,
    episode_timeout_s=120.0,
    max_format_errors=3,
    max_concurrent_episodes=2,
)

# A Qwen3-style template: the generation prompt opens <think>, so a reply holds only the closing </think>.
THINK_TEMPLATE = (
    "{%- for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n<think>\\n' }}{%- endif %}"
)


@pytest.fixture(scope="module")
def think_tok():
    t = weights.load_tokenizer(weights.default_model_dir())
    t.chat_template = THINK_TEMPLATE
    return t


@pytest.fixture(scope="module")
def hello_task():
    return load_tasks(os.path.join(ROOT, "data", "tasks", "write-hello-file"))[0]


def call(name, **arguments):
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def commands(calls):
    return [c.arguments.get("command", c.name) for c in calls]


# ----------------------------------------------------------------------------- Hermes: JSON read as JSON


def test_hermes_tags_inside_a_json_string_are_text():
    cmd = "printf '</tool_call> <think> <tool_call> </think>\\n' > tags.txt"
    assert A.parse_hermes(
        call("bash", command=cmd) + "\n" + call("bash", command="cat tags.txt")
    ) == [A.ToolCall("bash", {"command": cmd}), A.ToolCall("bash", {"command": "cat tags.txt"})]


def test_hermes_closing_tag_may_follow_after_whitespace_only():
    ok = '<tool_call>  {"name": "bash", "arguments": {"command": "ls"}} \n\t</tool_call>'
    assert A.parse_hermes(ok) == [A.ToolCall("bash", {"command": "ls"})]
    with pytest.raises(
        A.FormatError,
        match=r"^Format error: tool call 1: expected </tool_call> right after its "
        r"JSON object, found '}\\n</tool_call>'\.",
    ):
        A.parse_hermes('<tool_call>{"name": "bash", "arguments": {"command": "ls"}}}\n</tool_call>')


@pytest.mark.parametrize(
    "reply,error",
    [
        (
            '<tool_call>\n{"name": "bash", "arguments": {"command": "echo </tool_call',
            "Format error: tool call 1 is not valid JSON (Unterminated string starting at char 42).",
        ),
        (
            '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}',
            "Format error: tool call 1 is not valid JSON (Expecting ',' delimiter at char 47).",
        ),
        (
            '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}',
            "Format error: <tool_call> without a closing </tool_call>.",
        ),
        (
            '<tool_call>{"name": "bash", "arguments": {"command": "ls", "timeout_s": NaN}}</tool_call>',
            "Format error: tool call 1: argument 'timeout_s' of bash must be a finite number, got NaN.",
        ),
    ],
)
def test_hermes_truncated_or_unbalanced_json_is_a_format_error(reply, error):
    with pytest.raises(A.FormatError) as e:
        A.parse_hermes(reply)
    assert str(e.value) == error + A.HERMES_HINT


def test_hermes_lone_surrogate_escape_is_a_format_error_with_ascii_text():
    reply = '<tool_call>{"name": "bash", "arguments": {"command": "echo \\ud83d"}}</tool_call>'
    with pytest.raises(A.FormatError) as e:
        A.parse_hermes(reply)
    assert str(e.value) == (
        "Format error: tool call 1: argument 'command' of bash is not valid Unicode (a lone "
        "UTF-16 surrogate '\\ud83d' at char 5); write the character itself or a surrogate pair."
        + A.HERMES_HINT
    )
    str(e.value).encode("utf-8")  # the observation itself can be tokenised
    # a surrogate pair is one valid character
    pair = (
        '<tool_call>{"name": "bash", "arguments": {"command": "echo \\ud83d\\ude00"}}</tool_call>'
    )
    assert A.parse_hermes(pair) == [A.ToolCall("bash", {"command": "echo \U0001f600"})]


# ----------------------------------------------------------------------------- reasoning per chat template


def test_chat_format_detects_a_generation_prompt_that_opens_think(tok, think_tok):
    assert ChatFormat(tok, "hermes").opens_think is False
    assert ChatFormat(think_tok, "hermes").opens_think is True


def test_tool_calls_inside_reasoning_are_not_run():
    inside = "I could " + call("bash", command="rm -rf /app") + " but no."
    after = "\n</think>\n\n" + call("bash", command="ls")
    assert commands(A.parse_hermes(inside + after, opens_think=True)) == ["ls"]
    assert commands(A.parse_hermes("<think>\n" + inside + after)) == ["ls"]
    # reasoning ends at the first </think>: a call after it runs even if another </think> follows
    assert commands(
        A.parse_hermes("a</think>" + call("bash", command="pwd") + "</think>", opens_think=True)
    ) == ["pwd"]
    with pytest.raises(A.FormatError) as e:  # reasoning never closed: nothing runs
        A.parse_hermes(inside, opens_think=True)
    assert str(e.value) == (
        "Format error: no tool call found (the reasoning opened by <think> has no </think>; "
        "calls inside reasoning are not run)." + A.HERMES_HINT
    )


def test_markdown_blocks_inside_reasoning_neither_run_nor_end_the_turn():
    reasoning = "Maybe:\n```bash\nrm -rf /app\n```\nDONE\n"
    assert A.markdown_action_done(reasoning, opens_think=True) is False
    reply = reasoning + "</think>\n```bash\nls\n```\n"
    assert A.markdown_action_done(reply, opens_think=True) is True
    assert commands(A.parse_markdown(reply, opens_think=True)) == ["ls"]
    assert commands(A.parse_markdown("<think>\n" + reply)) == ["ls"]


@pytest.mark.docker
def test_thinking_template_hermes_episode_runs_only_the_calls_after_reasoning(
    think_tok, hello_task
):
    reply1 = (
        "Let me plan. "
        + call("bash", command="touch /app/bad")
        + "\n</think>\n\n"
        + call("bash", command="echo hello > hello.txt; ls /app")
    )
    eng = E.ScriptedEngine(
        think_tok, [reply1, "Written.\n</think>\n\n" + call("finish", message="done")]
    )
    [group] = asyncio.run(
        R.run_episodes(
            [hello_task], eng, think_tok, 1, CFG, opts=R.EpisodeOptions("hermes"), progress=False
        )
    )
    [traj] = group.trajectories
    assert traj.error is None and (traj.stop_reason, traj.reward, traj.format_errors) == (
        "finish",
        1.0,
        0,
    )
    assert traj.messages[2]["tool_calls"] == [
        {"name": "bash", "arguments": {"command": "echo hello > hello.txt; ls /app"}}
    ]
    assert traj.messages[3]["content"] == "exit code: 0\nhello.txt\n"  # no /app/bad


# ----------------------------------------------------------------------------- markdown fences per CommonMark


def test_markdown_longer_and_tilde_fences_with_shorter_fence_lines_inside():
    doc = "cat > README.md <<'EOF'\n# T\n```python\nprint(1)\n```\nEOF"
    assert commands(A.parse_markdown("````bash\n" + doc + "\n````")) == [doc]
    assert commands(A.parse_markdown("~~~sh\n" + doc + "\n~~~~~")) == [doc]
    # a closing fence is of the same character, at least as long, without an info string
    assert commands(A.parse_markdown("~~~\necho a\n```\n~~~")) == ["echo a\n```"]
    assert commands(A.parse_markdown("````\necho a\n```\n````")) == ["echo a\n```"]
    assert commands(A.parse_markdown("```\necho a\n```bash\n```")) == ["echo a\n```bash"]


def test_markdown_fence_indentation_up_to_three_spaces_is_removed_from_the_content():
    assert commands(A.parse_markdown("   ```bash\n   ls\n     pwd\n  ```")) == ["ls\n  pwd"]
    with pytest.raises(
        A.FormatError, match="no bash block and no DONE"
    ):  # 4 spaces: an indented code block
        A.parse_markdown("    ```bash\n    ls\n    ```")


def test_markdown_info_strings_bash_sh_shell_console_and_empty_run_others_do_not():
    reply = "\n".join(
        f"```{info}\necho {i}\n```"
        for i, info in enumerate(
            ["bash", "sh", "shell", "console", "", "python", "json", "Bash title=x", "~~"]
        )
    )
    assert commands(A.parse_markdown(reply)) == [
        "echo 0",
        "echo 1",
        "echo 2",
        "echo 3",
        "echo 4",
        "echo 7",
    ]


def test_markdown_heredoc_body_with_a_fence_line_is_kept_whole():
    for op, delim in [
        ("<<EOF", "EOF"),
        ("<< 'EOF'", "EOF"),
        ('<<"END"', "END"),
        ("<<-EOF", "\tEOF"),
    ]:
        cmd = f"cat > notes.md {op}\n```\ncode\n```\n{delim}\ncat notes.md"
        reply = f"Writing it:\n```bash\n{cmd}\n```\nthen\n```bash\nwc -l notes.md\n```"
        assert commands(A.parse_markdown(reply)) == [cmd, "wc -l notes.md"]
        assert (
            A.markdown_action_done(f"```bash\n{cmd}\n```") is False
        )  # the fence line is not yet complete
        assert [
            A.markdown_action_done(p)
            for p in (f"```bash\n{cmd.split('```')[0]}```\n", f"```bash\n{cmd}\n```\n")
        ] == [False, True]


def test_markdown_quoted_or_commented_angle_brackets_open_no_heredoc():
    for line in [
        "echo 'a <<EOF'",
        'echo "x <<EOF"',
        "ls  # see <<EOF",
        "cat <<< EOF",
        "echo $((1<<2))",
    ]:
        assert commands(A.parse_markdown(f"```bash\n{line}\n```\nDONE")) == [line, "finish"]


def test_markdown_unterminated_heredoc_ends_at_its_first_closing_fence():
    # bash runs an unterminated heredoc to the end of the script; the block then ends at the first fence line
    assert commands(A.parse_markdown("```bash\ncat <<EOF\nhi\n```\nDONE")) == [
        "cat <<EOF\nhi",
        "finish",
    ]


def test_markdown_action_done_uses_the_same_fence_rules():
    cases = {
        "````bash\nls\n```\n": False,
        "````bash\nls\n```\n````\n": True,
        "~~~\nls\n~~~\n": True,
        "~~~\nls\n```\n": False,
        "```python\nx\n```\n": False,
        "    ```bash\nls\n    ```\n": False,
        "```bash\nls\n```\n": True,
    }
    assert {t: A.markdown_action_done(t) for t in cases} == cases


# ----------------------------------------------------------------------------- properties: format, then parse

TRICKY = st.sampled_from(
    [
        "</tool_call>",
        "<tool_call>",
        "<think>",
        "</think>",
        "```",
        "~~~",
        "````",
        "`",
        "\n",
        "\\",
        '"',
        "'",
        "<<EOF",
        "EOF",
        "<<-'X'",
        "\tX",
        "DONE",
        "é",
        "\U0001f600",
        "\u2028",
        "\r\n",
        "   ",
        "\x00",
        "{",
        "}",
    ]
)
COMMAND = st.lists(st.one_of(st.text(max_size=12), TRICKY), max_size=14).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cmd=COMMAND, ascii_only=st.booleans(), think=COMMAND.filter(lambda t: "</think>" not in t))
def test_property_hermes_any_command_survives_json_formatting(cmd, ascii_only, think):
    reasoning = "<think>" + think + "</think>\n"
    body = json.dumps({"name": "bash", "arguments": {"command": cmd}}, ensure_ascii=ascii_only)
    assert A.parse_hermes(
        reasoning + "<tool_call>\n" + body + "\n</tool_call>\n" + call("bash", command="ls")
    ) == [A.ToolCall("bash", {"command": cmd}), A.ToolCall("bash", {"command": "ls"})]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cmd=COMMAND.filter(lambda c: c.strip()),
    fence_char=st.sampled_from("`~"),
    info=st.sampled_from(["bash", "", "sh"]),
)
def test_property_markdown_any_command_survives_a_long_enough_fence(cmd, fence_char, info):
    longest = max((len(r) for r in re.findall(re.escape(fence_char) + "+", cmd)), default=0)
    fence = fence_char * max(3, longest + 1)
    reply = f"{fence}{info}\n{cmd}\n{fence}\n"
    assert A.parse_markdown(reply + "DONE") == [
        A.ToolCall("bash", {"command": cmd}),
        A.ToolCall("finish", {"message": "DONE"}),
    ]
    assert A.parse_markdown(reply, max_arg_bytes=1 << 20) == [A.ToolCall("bash", {"command": cmd})]


# ----------------------------------------------------------------------------- stop ids (generation_config.json)


def _with_eos(model_dir, eos):
    cfg_path = model_dir / "generation_config.json"
    cfg_path.write_text(json.dumps({**json.loads(cfg_path.read_text()), "eos_token_id": eos}))
    return weights.load_tokenizer(model_dir)


def test_stop_ids_include_generation_config_eos_ids_int_or_list(tmp_path, tok):
    d = weights.save_tiny_random(tmp_path / "m")
    assert stop_ids_of(weights.load_tokenizer(d)) == {2}
    assert stop_ids_of(_with_eos(d, 7)) == {2, 7}
    assert stop_ids_of(_with_eos(d, [2, 0, 9])) == {0, 2, 9}
    assert stop_ids_of(tok, d) == {0, 2, 9}  # or from a given model dir
    with pytest.raises(
        ValueError,
        match=r"generation_config.json: eos_token_id must be an int or a list of ints, "
        r"got 'x'",
    ):
        stop_ids_of(_with_eos(d, "x"))


@pytest.mark.server
@pytest.mark.slow
def test_every_engine_stops_at_an_extra_generation_config_eos_id(tmp_path):
    d = weights.save_tiny_random(tmp_path / "m")
    tok0 = weights.load_tokenizer(d)
    model = weights.load_hf(d)
    _, prompt = ChatFormat(tok0, "markdown").prompt_ids("say hi")
    greedy = E.SamplingParams(temperature=0.0, max_tokens=6)

    async def torch_first(tok, stop_ids=None):
        eng = E.TorchEngine(model, tok, max_batch=1, max_seq_len=256, stop_ids=stop_ids)
        c = await eng.generate(prompt, greedy)
        await eng.aclose()
        return c

    free = asyncio.run(torch_first(tok0, stop_ids=set()))
    first = free.token_ids[0]
    assert first not in stop_ids_of(tok0) and len(free.token_ids) == 6
    tok = _with_eos(
        d, [2, first, 0]
    )  # the model's own first greedy token becomes an eos id, and <|endoftext|>
    c = asyncio.run(torch_first(tok))
    assert (c.token_ids, c.finish_reason) == ([first], "stop")

    scripted = asyncio.run(E.ScriptedEngine(tok, ["ab<|endoftext|>cd"]).generate(prompt, greedy))
    assert (scripted.token_ids, scripted.finish_reason) == (
        tok.encode("ab", add_special_tokens=False) + [0],
        "stop",
    )

    srv = CompletionsServer([0], [-0.1])
    try:

        async def go():
            eng = OpenAIEngine(srv.url, "tiny", tok)
            await eng.generate(prompt, greedy)
            await eng.aclose()

        asyncio.run(go())
    finally:
        srv.close()
    assert srv.bodies[-1][1]["stop_token_ids"] == sorted(
        {0, 2, first}
    )  # the generate call, after the probe


def test_chat_decode_drops_a_trailing_generation_config_eos_token(tmp_path):
    d = weights.save_tiny_random(tmp_path / "m")
    tok = _with_eos(d, [2, 0])
    chat = ChatFormat(tok, "markdown")
    ids = tok.encode("DONE", add_special_tokens=False)
    assert chat.decode(ids + [0]) == "DONE" and chat.decode(ids + [2]) == "DONE"
    assert A.parse_actions(chat.decode(ids + [0]), "markdown", 100) == [
        A.ToolCall("finish", {"message": "DONE"})
    ]


# ----------------------------------------------------------------------------- downstream: the container sees it


@pytest.mark.docker
def test_surrogates_and_tags_in_hermes_commands_downstream_in_a_real_container(tok, hello_task):
    bad = '<tool_call>{"name": "bash", "arguments": {"command": "echo \\ud83d > hello.txt"}}</tool_call>'
    text = "</tool_call> <think> \U0001f600 ```"
    good = call(
        "bash", command=f"printf '%s\\n' '{text}' > t.txt; cat t.txt; echo hello > hello.txt"
    )
    eng = E.ScriptedEngine(tok, [bad, good, call("finish", message="ok")])
    [group] = asyncio.run(
        R.run_episodes(
            [hello_task],
            eng,
            tok,
            1,
            replace(CFG, max_format_errors=2),
            opts=R.EpisodeOptions("hermes"),
            progress=False,
        )
    )
    [traj] = group.trajectories
    assert traj.error is None and (traj.stop_reason, traj.reward, traj.format_errors) == (
        "finish",
        1.0,
        1,
    )
    obs = [m["content"] for m in traj.messages if m["role"] == "tool"]
    assert obs[0].startswith(
        "Format error: tool call 1: argument 'command' of bash is not valid Unicode"
    )
    assert obs[1] == f"exit code: 0\n{text}\n"
    json.dumps(traj.to_json(), ensure_ascii=False).encode(
        "utf-8"
    )  # the trajectory is writable as UTF-8 JSONL
