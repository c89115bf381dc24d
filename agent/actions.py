"""Action formats: the tools a policy may call, and model replies parsed into tool calls.

- `hermes` (Qwen3): `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, any number per reply, in
  order. The JSON after each opening tag is decoded as JSON (`json.JSONDecoder.raw_decode`), so
  `</tool_call>` or `<think>` inside a string is text; then `</tool_call>` must follow.
- `markdown`: each fenced bash/sh/shell/console or untagged block is one bash call; a `DONE` line ends the
  episode. Fences per CommonMark 0.31 (section 4.5): ``` or ~~~, a closing fence of the same character at
  least as long, up to 3 spaces of indentation. One deviation: in a bash block a fence line inside an open
  heredoc body (`<<EOF` ... `EOF`) does not close the block, so a heredoc writing markdown is kept whole
  (a longer fence, ````bash, needs no deviation).
- Reasoning (`split_reasoning`): the leading `<think>...</think>` block, or the reply up to its first
  `</think>` when the chat template's generation prompt opens `<think>` (agent/chat.py: ChatFormat.opens_think), is
  not parsed: calls inside it are not run.

Malformed replies raise FormatError, whose message is the observation shown to the model (it ends with the
expected format). Lone UTF-16 surrogate escapes in JSON strings (`"\\ud83d"`, not valid Unicode) are format
errors, so no command or observation ever holds one. The system prompts live in agent/prompts.py; the
calls run in agent/tools.py.
"""

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# ----------------------------------------------------------------------------- tools and calls

# name -> {argument: (accepted JSON types, required, type shown in errors)}
TOOLS: dict[str, dict[str, tuple[tuple[type, ...], bool, str]]] = {
    "bash": {"command": ((str,), True, "string"), "timeout_s": ((int, float), False, "number")},
    "read_file": {
        "path": ((str,), True, "string"),
        "offset": ((int,), False, "integer"),
        "limit": ((int,), False, "integer"),
    },
    "write_file": {"path": ((str,), True, "string"), "content": ((str,), True, "string")},
    "edit_file": {
        "path": ((str,), True, "string"),
        "old": ((str,), True, "string"),
        "new": ((str,), True, "string"),
        "replace_all": ((bool,), False, "boolean"),
    },
    "finish": {"message": ((str,), True, "string")},
}

HERMES_EXAMPLE = '<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la"}}\n</tool_call>'
MARKDOWN_EXAMPLE = "```bash\nls -la\n```"

HERMES_HINT = "\n\nCall a tool like this:\n" + HERMES_EXAMPLE
MARKDOWN_HINT = (
    "\n\nRun a command like this:\n"
    + MARKDOWN_EXAMPLE
    + "\nWhen the task is done, write DONE on a line by itself."
)
BASH_LANGS = ("bash", "sh", "shell", "console", "")  # info strings whose blocks are bash calls


@dataclass
class ToolCall:
    """One parsed call: a TOOLS name and its checked arguments."""

    name: str
    arguments: dict[str, Any]


class FormatError(ValueError):
    """Malformed model output. str(e) is the observation shown to the model (it includes the expected format)."""


def _lone_surrogate(s: str) -> int | None:
    """Index of the first lone UTF-16 surrogate in s (JSON allows the escape "\\ud83d"; UTF-8 cannot encode
    it, so it would fail later, when the command is sent or the observation tokenised), or None."""
    try:
        s.encode("utf-8")
        return None
    except UnicodeEncodeError as e:
        return e.start


def check_call(name: Any, args: Any, index: int, max_arg_bytes: int) -> ToolCall:
    """Validate one call against TOOLS. Raises FormatError: unknown tool, arguments not an object, missing or
    unexpected argument, wrong type, a non-finite number, a string argument holding a lone UTF-16 surrogate
    (not valid Unicode), or a string argument longer than max_arg_bytes (UTF-8 bytes). Error messages quote
    values with repr/json.dumps, so they are valid UTF-8 themselves."""
    if not isinstance(name, str) or name not in TOOLS:
        raise FormatError(
            f"tool call {index}: unknown tool {name!r}; the tools are {', '.join(TOOLS)}."
        )
    if not isinstance(args, dict):
        raise FormatError(
            f'tool call {index}: "arguments" must be a JSON object, got {json.dumps(args)[:80]}.'
        )
    spec = TOOLS[name]
    for arg, (_, required, _) in spec.items():
        if required and arg not in args:
            raise FormatError(
                f"tool call {index}: {name} is missing the required argument {arg!r}."
            )
    for arg, value in args.items():
        if arg not in spec:
            raise FormatError(
                f"tool call {index}: {name} got an unexpected argument {arg!r}; "
                f"its arguments are {', '.join(spec)}."
            )
        types, _, shown = spec[arg]
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            raise FormatError(
                f"tool call {index}: argument {arg!r} of {name} must be a {shown}, got {json.dumps(value)[:80]}."
            )
        if isinstance(value, float) and not math.isfinite(value):  # json reads NaN and Infinity
            raise FormatError(
                f"tool call {index}: argument {arg!r} of {name} must be a finite number, "
                f"got {json.dumps(value)}."
            )
        if isinstance(value, str) and (bad := _lone_surrogate(value)) is not None:
            raise FormatError(
                f"tool call {index}: argument {arg!r} of {name} is not valid Unicode (a lone UTF-16 "
                f"surrogate {value[bad]!r} at char {bad}); write the character itself or a "
                f"surrogate pair."
            )
        if isinstance(value, str) and len(value.encode()) > max_arg_bytes:
            raise FormatError(
                f"tool call {index}: argument {arg!r} of {name} is {len(value.encode())} bytes; "
                f"the limit is {max_arg_bytes} bytes."
            )
    return ToolCall(name, dict(args))


# ----------------------------------------------------------------------------- hermes


def split_reasoning(text: str, opens_think: bool = False) -> tuple[str, str]:
    """(reasoning, rest) of a reply. The reasoning is the leading block that the generation prompt opened
    (opens_think: the chat template puts `<think>` there, Qwen3-style, so the reply holds only `</think>`) or
    that the reply opens itself with `<think>` (after whitespace); it ends at the first `</think>` (vLLM's
    Qwen3 reasoning parser does the same). A reasoning block never closed takes the whole reply."""
    start = 0
    if not opens_think:
        body = text.lstrip()
        if not body.startswith("<think>"):
            return "", text
        start = len(text) - len(body) + len("<think>")
    end = text.find("</think>", start)
    if end < 0:
        return text, ""
    return text[: end + len("</think>")], text[end + len("</think>") :]


def _unclosed(reasoning: str, opens_think: bool) -> str:
    """The note added to a "no action" error when the reply's reasoning never closed ("" otherwise)."""
    if (reasoning or opens_think) and not reasoning.endswith("</think>"):
        return (
            " (the reasoning opened by <think> has no </think>; calls inside reasoning are not run)"
        )
    return ""


_JSON = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
_CLOSE_TAG = re.compile(r"[ \t\n\r]*</tool_call>")


def parse_hermes(
    text: str, max_arg_bytes: int = 65536, opens_think: bool = False
) -> list[ToolCall]:
    """Tool calls of a Hermes-format reply, in order. Reasoning is not parsed: the leading block of
    `split_reasoning(text, opens_think)` and any later `<think>...</think>` outside tool calls.

    The reply is scanned: after each `<tool_call>` (and optional whitespace) one JSON value is decoded with
    `json.JSONDecoder.raw_decode`, so a `</tool_call>` or `<think>` inside a JSON string is text; then
    `</tool_call>` must follow after optional whitespace. Raises FormatError whose message is the observation
    to show: no tool call, invalid or truncated JSON (the decoder's message and the char offset from the
    value's start), text between the JSON and `</tool_call>`, <tool_call> without </tool_call>, a call that is
    not {"name": ..., "arguments": {...}}, or any check_call error (e.g. a lone UTF-16 surrogate escape).
    """
    reasoning, rest = split_reasoning(text, opens_think)
    calls = []
    pos = 0
    while True:
        start = rest.find("<tool_call>", pos)
        think = rest.find("<think>", pos)
        # a later reasoning block: skipped, calls in it not run
        if think >= 0 and (start < 0 or think < start):
            close = rest.find("</think>", think)
            if close < 0:
                break
            pos = close + len("</think>")
            continue
        if start < 0:
            break
        i = len(calls) + 1
        j = _WS.match(rest, start + len("<tool_call>")).end()
        try:
            obj, k = _JSON.raw_decode(rest, j)
        except json.JSONDecodeError as e:
            msg = e.msg.removesuffix(" at")  # "Unterminated string starting at"
            raise FormatError(
                f"Format error: tool call {i} is not valid JSON ({msg} at char {e.pos - j})."
                + HERMES_HINT
            ) from e
        m = _CLOSE_TAG.match(rest, k)
        if m is None:
            if not rest[k:].strip():
                raise FormatError(
                    "Format error: <tool_call> without a closing </tool_call>." + HERMES_HINT
                )
            raise FormatError(
                f"Format error: tool call {i}: expected </tool_call> right after its JSON object, "
                f"found {rest[k : k + 20]!r}." + HERMES_HINT
            )
        if not isinstance(obj, dict) or "name" not in obj or set(obj) - {"name", "arguments"}:
            raise FormatError(
                f'Format error: tool call {i} must be a JSON object with keys "name" and "arguments".'
                + HERMES_HINT
            )
        try:
            calls.append(check_call(obj["name"], obj.get("arguments", {}), i, max_arg_bytes))
        except FormatError as e:
            raise FormatError(f"Format error: {e}" + HERMES_HINT) from e
        pos = m.end()
    if not calls:
        raise FormatError(
            f"Format error: no tool call found{_unclosed(reasoning, opens_think)}." + HERMES_HINT
        )
    return calls


# ----------------------------------------------------------------------------- markdown

# Markdown per CommonMark 0.31 (4.5 Fenced code blocks): an opening fence is >= 3 backticks or tildes after at
# most 3 spaces, then an info string (no backtick in it for a backtick fence) whose first word is the
# language; the closing fence is the same character, at least as long, after at most 3 spaces, with nothing
# but spaces after it; up to the opening fence's indentation is removed from each content line.
_OPEN_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_DONE = re.compile(r"^(DONE|finish(\(.*\))?)$")
# A heredoc operator <<WORD, <<'WORD', <<"WORD", <<\WORD, <<-WORD (not <<<), skipping quoted strings and
# comments so `echo "a <<b"` opens nothing.
_HEREDOC = re.compile(
    r"""(?<!<)<<(?!<)(-?)[ \t]*(?:'([^'\n]*)'|"([^"\n]*)"|\\?([A-Za-z_][\w.-]*))"""
    r"""|'[^'\n]*'|"(?:\\.|[^"\\\n])*"|(?:^|(?<=[ \t;&|(]))\#.*"""
)


def _heredocs(line: str) -> list[tuple[str, bool]]:
    """(delimiter, strip leading tabs) of the heredocs a bash line opens, in order."""
    out = []
    for m in _HEREDOC.finditer(line):
        word = (
            m.group(2)
            if m.group(2) is not None
            else m.group(3)
            if m.group(3) is not None
            else m.group(4)
        )
        if word is not None:
            out.append((word, m.group(1) == "-"))
    return out


def _deindent(line: str, n: int) -> str:
    return line[min(n, len(line) - len(line.lstrip(" "))) :]


def _fence_end(
    lines: list[str], start: int, fence: str, indent: int, bash: bool, final: bool
) -> int | None:
    """Index of the line closing the block opened by `fence`, whose content starts at lines[start].

    Deviation from CommonMark, for bash blocks: a line inside an open heredoc body (after `<<EOF` until the
    `EOF` line) does not close the block, so a heredoc writing a file with ``` lines is kept whole. When such
    a heredoc is never terminated (bash reads it to the end of the script), and final (the whole reply is
    there), the block ends at the first closing-fence line, as plain CommonMark would end it. None: not closed.
    """
    pending: list[tuple[str, bool]] = []
    fallback = None
    closing = re.compile(" {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*")
    for j in range(start, len(lines)):
        line = _deindent(lines[j], indent)
        if pending:
            word, tabs = pending[0]
            if (line.lstrip("\t") if tabs else line) == word:
                pending.pop(0)
            elif fallback is None and closing.fullmatch(lines[j]):
                fallback = j
            continue
        if closing.fullmatch(lines[j]):
            return j
        if bash:
            pending = _heredocs(line)
    return fallback if final else None


def _markdown_items(lines: list[str], final: bool) -> tuple[list[tuple[str, str]], str | None]:
    """(items, language of a block left open or None). Items in order: ("bash", command) for blocks tagged
    bash/sh/shell/console or untagged, ("finish", line) for a DONE/finish line outside blocks, ("text", lang)
    for blocks in other languages."""
    items = []
    i = 0
    while i < len(lines):
        m = _OPEN_FENCE.fullmatch(lines[i])
        if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
            if _DONE.match(lines[i].strip()):
                items.append(("finish", lines[i].strip()))
            i += 1
            continue
        info = m.group(3).split()
        lang = info[0].lower() if info else ""
        indent = len(m.group(1))
        end = _fence_end(lines, i + 1, m.group(2), indent, lang in BASH_LANGS, final)
        if end is None:
            return items, lang
        if lang in BASH_LANGS:
            items.append(
                ("bash", "\n".join(_deindent(line, indent) for line in lines[i + 1 : end]))
            )
        else:
            items.append(("text", lang))
        i = end + 1
    return items, None


def parse_markdown(
    text: str, max_arg_bytes: int = 65536, opens_think: bool = False
) -> list[ToolCall]:
    """Calls of a markdown-format reply, in order: each fenced block (CommonMark fences: ``` or ~~~, see
    `_fence_end` for the one deviation, heredoc bodies) tagged bash/sh/shell/console or untagged is a bash
    call with the block's text; a line `DONE` (or `finish`, `finish(...)`) outside blocks is a finish call.
    Blocks in other languages (```python) are text, not calls. The leading reasoning block
    (`split_reasoning`) is not parsed.

    Raises FormatError: no bash block and no DONE, an unclosed block, an empty block, or a block longer than
    max_arg_bytes (UTF-8 bytes).
    """
    reasoning, rest = split_reasoning(text, opens_think)
    items, open_lang = _markdown_items(rest.split("\n"), final=True)
    calls = []
    for kind, value in items:
        if kind == "finish":
            calls.append(ToolCall("finish", {"message": value}))
        elif kind == "bash":
            i = sum(c.name == "bash" for c in calls) + 1
            if not value.strip():
                raise FormatError(f"Format error: bash block {i} is empty." + MARKDOWN_HINT)
            if len(value.encode()) > max_arg_bytes:
                raise FormatError(
                    f"Format error: bash block {i} is {len(value.encode())} bytes; the limit is "
                    f"{max_arg_bytes} bytes." + MARKDOWN_HINT
                )
            calls.append(ToolCall("bash", {"command": value}))
    if open_lang is not None:
        raise FormatError("Format error: a ``` block is not closed." + MARKDOWN_HINT)
    if not calls:
        raise FormatError(
            f"Format error: no bash block and no DONE found{_unclosed(reasoning, opens_think)}."
            + MARKDOWN_HINT
        )
    return calls


def markdown_action_done(text: str, opens_think: bool = False) -> bool:
    """True once a markdown reply holds a complete action after its reasoning: a bash block (the fence rules
    of parse_markdown) whose closing fence line has ended (its newline was generated), or a complete
    `DONE`/`finish` line outside blocks.

    Used as the markdown stop rule: a reply ends after its first action, so a small model's rambling after its
    command is neither sampled nor trained on. Only complete lines count, so "```" followed by "bash" (a new
    opening fence) is not taken for a closing one; a fence line inside an open heredoc does not end the block
    (parse_markdown's fallback for a never-terminated heredoc applies only to a finished reply).
    """
    _, rest = split_reasoning(text, opens_think)
    # the last piece is an unfinished line
    items, _ = _markdown_items(rest.split("\n")[:-1], final=False)
    return any(kind != "text" for kind, _ in items)


def markdown_stop_check(tokenizer, opens_think: bool = False) -> Callable[[list[int]], bool]:
    """SamplingParams.stop_check for the markdown format: markdown_action_done on the decoded generated ids."""
    return lambda ids: markdown_action_done(
        tokenizer.decode(ids, skip_special_tokens=False), opens_think
    )


def parse_actions(
    text: str, action_format: str, max_arg_bytes: int, opens_think: bool = False
) -> list[ToolCall]:
    """Dispatch to parse_hermes / parse_markdown. opens_think: ChatFormat.opens_think of the policy's template."""
    parse = parse_hermes if action_format == "hermes" else parse_markdown
    return parse(text, max_arg_bytes, opens_think)
