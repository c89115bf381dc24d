"""The agent loop: action formats, chat rendering, token-exact trajectories, `run_episodes`.

An episode: the policy sees a system prompt (tools + action format) and the task instruction; each turn
it generates tokens, the tool calls in them run in the task's container, and the results come back as an
observation message. The trajectory keeps the token sequence the policy actually saw:

    token_ids = prompt | generated_1 | observation_1 | generated_2 | observation_2 | ... | generated_n
    loss_mask = 0...0  | 1.........1 | 0...........0 | 1.........1 | 0...........0 | ... | 1.........1
    logprobs  = 0...0  | engine lp   | 0...........0 | engine lp   | 0...........0 | ... | engine lp

Generated tokens are kept exactly as sampled (never re-tokenised). Observation tokens are what the
model's chat template renders for the observation message(s) after an assistant turn: the template is
applied to a fixed base conversation with and without the new message(s) and the suffix is taken, so the
whole sequence equals the template's rendering of `messages` (test_rollout checks it), except that
earlier `<think>` blocks are kept where a template (Qwen3) would strip them.

Action formats (PolicyConfig.action_format):
- `hermes` (Qwen3): `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, any number per turn, run
  in order; results come back as `tool` messages (Qwen3's template wraps them in <tool_response>).
- `markdown` (the CPU default for SmolLM2-135M): each fenced ```bash block is one bash call; a line
  `DONE` (or `finish`) ends the episode. A turn stops after its first action (the closing fence line of
  its first bash block, or a DONE line; `markdown_action_done`): the generated tokens are kept as sampled
  (loss_mask 1) and the end-of-turn token the template needs goes in after them with loss_mask 0.
  Results come back as one `user` message: SmolLM2's template
  would render a `tool` role verbatim, but the model was never trained on that role.

Limits (RolloutConfig; a task's max_turns / agent_timeout_s override) end the episode with a recorded
stop_reason and it is still verified: max_turns; max_context (the next generation or observation would not
fit in max_context_tokens); max_tokens_per_turn (a turn cut at the cap: the complete calls in it still run,
then the episode stops); timeout (wall clock; a pending generation is abandoned, commands are cut to the
time left); format_errors (max_format_errors malformed turns in a row). Malformed output (invalid JSON,
unknown tool, missing/extra/mistyped or oversized arguments, no call, an unclosed block) runs nothing and gets
an error observation that shows the expected format (FormatError messages).

Template match caveat: the match with `chat.render(messages)` is exact when the template tokenises the
decoded reply the way the engine sampled it; sampled text whose canonical tokenisation differs (e.g. a reply
starting with "\\n\\n", which the template merges with the preceding "\\n") keeps the sampled ids, by design.

Engines share one interface, `await engine.generate(prompt_ids, sampling) -> Completion`, and batch the
requests of many concurrent agents internally: TorchEngine (model.py KV cache, continuous batching),
VLLMEngine (colocated vllm.LLM), OpenAIEngine (HTTP), ScriptedEngine (replays fixed replies; tests).


Engines live in engines.py; the evaluation command in evaluate.py.
"""


import asyncio
import dataclasses
import json
import math
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tqdm import tqdm

import images as images_lib
import reward as reward_lib
import sandbox as sandbox_lib
from configs import RewardConfig, RolloutConfig, SandboxConfig
from engines import (
    BASE_CONVERSATION,
    Completion,
    Engine,
    SamplingParams,
    end_of_turn,
    render_ids,
    stop_ids_of,
)

# ----------------------------------------------------------------------------- tools and action formats

# name -> {argument: (accepted JSON types, required, type shown in errors)}
TOOLS: dict[str, dict[str, tuple[tuple[type, ...], bool, str]]] = {
    "bash": {"command": ((str,), True, "string"), "timeout_s": ((int, float), False, "number")},
    "read_file": {"path": ((str,), True, "string"), "offset": ((int,), False, "integer"), "limit": ((int,), False, "integer")},
    "write_file": {"path": ((str,), True, "string"), "content": ((str,), True, "string")},
    "edit_file": {"path": ((str,), True, "string"), "old": ((str,), True, "string"), "new": ((str,), True, "string"),
                  "replace_all": ((bool,), False, "boolean")},
    "finish": {"message": ((str,), True, "string")},
}

TOOL_SCHEMAS = [
    {"type": "function", "function": {"name": "bash", "description": "Run a bash command in the container's persistent shell (cwd and exported variables persist). Returns the exit code and the output (stdout and stderr interleaved, long output cut in the middle).",
     "parameters": {"type": "object", "properties": {"command": {"type": "string"}, "timeout_s": {"type": "number", "description": "seconds before the command is killed"}}, "required": ["command"]}}},
    {"type": "function", "function": {"name": "read_file", "description": "Read a text file, optionally lines offset..offset+limit-1 (1-based).",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}}, "required": ["path"]}}},
    {"type": "function", "function": {"name": "write_file", "description": "Create or overwrite a file with the given content.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}}},
    {"type": "function", "function": {"name": "edit_file", "description": "Replace the exact text `old` with `new` in a file. `old` must occur exactly once unless replace_all is true. Multi-line text is fine.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}, "replace_all": {"type": "boolean"}}, "required": ["path", "old", "new"]}}},
    {"type": "function", "function": {"name": "finish", "description": "End the episode when the task is done.",
     "parameters": {"type": "object", "properties": {"message": {"type": "string", "description": "what you did"}}, "required": ["message"]}}},
]

HERMES_EXAMPLE = '<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la"}}\n</tool_call>'
MARKDOWN_EXAMPLE = "```bash\nls -la\n```"

HERMES_SYSTEM = """You are an agent solving a task in a Linux terminal inside a Docker container. The working directory is /app. There is no network.
You may think inside <think></think> before acting.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{tools}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{{"name": <function-name>, "arguments": <args-json-object>}}
</tool_call>
Several calls in one reply run in order. Their results come back in the next message. When the task is done, call finish."""

# Short and concrete for a 135M model: one command per reply, one worked example (a made-up task, none of
# the task set), then DONE. Every reply stops after its first bash block (markdown_action_done).
MARKDOWN_SYSTEM = """You are a Linux terminal agent. The working directory is /app.
Reply with one shell command in a bash block. You then see its output. When the task is done, reply DONE.

Example task: Create the file /app/notes.txt containing hi
Your reply:
```bash
echo hi > /app/notes.txt
```
Output:
$ echo hi > /app/notes.txt
exit code: 0
Your reply:
DONE"""

HERMES_HINT = "\n\nCall a tool like this:\n" + HERMES_EXAMPLE
MARKDOWN_HINT = "\n\nRun a command like this:\n" + MARKDOWN_EXAMPLE + "\nWhen the task is done, write DONE on a line by itself."
BASH_LANGS = ("bash", "sh", "shell", "console", "")


def system_prompt(action_format: str) -> str:
    """The system prompt for an action format ('hermes' or 'markdown'). Raises ValueError for another name."""
    if action_format == "hermes":
        return HERMES_SYSTEM.format(tools="\n".join(json.dumps(s) for s in TOOL_SCHEMAS))
    if action_format == "markdown":
        return MARKDOWN_SYSTEM
    raise ValueError(f"action_format = {action_format!r}: must be 'hermes' or 'markdown'")


@dataclass
class ToolCall:
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
        raise FormatError(f"tool call {index}: unknown tool {name!r}; the tools are {', '.join(TOOLS)}.")
    if not isinstance(args, dict):
        raise FormatError(f"tool call {index}: \"arguments\" must be a JSON object, got {json.dumps(args)[:80]}.")
    spec = TOOLS[name]
    for arg, (_, required, _) in spec.items():
        if required and arg not in args:
            raise FormatError(f"tool call {index}: {name} is missing the required argument {arg!r}.")
    for arg, value in args.items():
        if arg not in spec:
            raise FormatError(f"tool call {index}: {name} got an unexpected argument {arg!r}; "
                              f"its arguments are {', '.join(spec)}.")
        types, _, shown = spec[arg]
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            raise FormatError(f"tool call {index}: argument {arg!r} of {name} must be a {shown}, got {json.dumps(value)[:80]}.")
        if isinstance(value, float) and not math.isfinite(value):  # json reads NaN and Infinity
            raise FormatError(f"tool call {index}: argument {arg!r} of {name} must be a finite number, got {json.dumps(value)}.")
        if isinstance(value, str) and (bad := _lone_surrogate(value)) is not None:
            raise FormatError(f"tool call {index}: argument {arg!r} of {name} is not valid Unicode (a lone UTF-16 "
                              f"surrogate {value[bad]!r} at char {bad}); write the character itself or a surrogate pair.")
        if isinstance(value, str) and len(value.encode()) > max_arg_bytes:
            raise FormatError(f"tool call {index}: argument {arg!r} of {name} is {len(value.encode())} bytes; "
                              f"the limit is {max_arg_bytes} bytes.")
    return ToolCall(name, dict(args))


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
    return text[:end + len("</think>")], text[end + len("</think>"):]


_JSON = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
_CLOSE_TAG = re.compile(r"[ \t\n\r]*</tool_call>")


def parse_hermes(text: str, max_arg_bytes: int = 65536, opens_think: bool = False) -> list[ToolCall]:
    """Tool calls of a Hermes-format reply, in order. Reasoning is not parsed: the leading block of
    `split_reasoning(text, opens_think)` and any later `<think>...</think>` outside tool calls.

    The reply is scanned: after each `<tool_call>` (and optional whitespace) one JSON value is decoded with
    `json.JSONDecoder.raw_decode`, so a `</tool_call>` or `<think>` inside a JSON string is text; then
    `</tool_call>` must follow after optional whitespace. Raises FormatError whose message is the observation
    to show: no tool call, invalid or truncated JSON (the decoder's message and the char offset from the
    value's start), text between the JSON and `</tool_call>`, <tool_call> without </tool_call>, a call that is
    not {"name": ..., "arguments": {...}}, or any check_call error (e.g. a lone UTF-16 surrogate escape).
    """
    _, rest = split_reasoning(text, opens_think)
    calls, pos = [], 0
    while True:
        start, think = rest.find("<tool_call>", pos), rest.find("<think>", pos)
        if think >= 0 and (start < 0 or think < start):  # a later reasoning block: skipped, calls in it not run
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
            raise FormatError(f"Format error: tool call {i} is not valid JSON ({e.msg.removesuffix(' at')} at char {e.pos - j})." + HERMES_HINT)
        m = _CLOSE_TAG.match(rest, k)
        if m is None:
            if not rest[k:].strip():
                raise FormatError("Format error: <tool_call> without a closing </tool_call>." + HERMES_HINT)
            raise FormatError(f"Format error: tool call {i}: expected </tool_call> right after its JSON object, "
                              f"found {rest[k:k + 20]!r}." + HERMES_HINT)
        if not isinstance(obj, dict) or "name" not in obj or set(obj) - {"name", "arguments"}:
            raise FormatError(f'Format error: tool call {i} must be a JSON object with keys "name" and "arguments".'
                              + HERMES_HINT)
        try:
            calls.append(check_call(obj["name"], obj.get("arguments", {}), i, max_arg_bytes))
        except FormatError as e:
            raise FormatError(f"Format error: {e}" + HERMES_HINT)
        pos = m.end()
    if not calls:
        raise FormatError("Format error: no tool call found." + HERMES_HINT)
    return calls


# Markdown per CommonMark 0.31 (4.5 Fenced code blocks): an opening fence is >= 3 backticks or tildes after at
# most 3 spaces, then an info string (no backtick in it for a backtick fence) whose first word is the
# language; the closing fence is the same character, at least as long, after at most 3 spaces, with nothing
# but spaces after it; up to the opening fence's indentation is removed from each content line.
_OPEN_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_DONE = re.compile(r"^(DONE|finish(\(.*\))?)$")
# A heredoc operator <<WORD, <<'WORD', <<"WORD", <<\WORD, <<-WORD (not <<<), skipping quoted strings and
# comments so `echo "a <<b"` opens nothing.
_HEREDOC = re.compile(r"""(?<!<)<<(?!<)(-?)[ \t]*(?:'([^'\n]*)'|"([^"\n]*)"|\\?([A-Za-z_][\w.-]*))"""
                      r"""|'[^'\n]*'|"(?:\\.|[^"\\\n])*"|(?:^|(?<=[ \t;&|(]))\#.*""")


def _heredocs(line: str) -> list[tuple[str, bool]]:
    """(delimiter, strip leading tabs) of the heredocs a bash line opens, in order."""
    out = []
    for m in _HEREDOC.finditer(line):
        word = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
        if word is not None:
            out.append((word, m.group(1) == "-"))
    return out


def _deindent(line: str, n: int) -> str:
    return line[min(n, len(line) - len(line.lstrip(" "))):]


def _fence_end(lines: list[str], start: int, fence: str, indent: int, bash: bool, final: bool) -> int | None:
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
    items, i = [], 0
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
            items.append(("bash", "\n".join(_deindent(line, indent) for line in lines[i + 1:end])))
        else:
            items.append(("text", lang))
        i = end + 1
    return items, None


def parse_markdown(text: str, max_arg_bytes: int = 65536, opens_think: bool = False) -> list[ToolCall]:
    """Calls of a markdown-format reply, in order: each fenced block (CommonMark fences: ``` or ~~~, see
    `_fence_end` for the one deviation, heredoc bodies) tagged bash/sh/shell/console or untagged is a bash
    call with the block's text; a line `DONE` (or `finish`, `finish(...)`) outside blocks is a finish call.
    Blocks in other languages (```python) are text, not calls. The leading reasoning block
    (`split_reasoning`) is not parsed.

    Raises FormatError: no bash block and no DONE, an unclosed block, an empty block, or a block longer than
    max_arg_bytes (UTF-8 bytes).
    """
    _, rest = split_reasoning(text, opens_think)
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
                raise FormatError(f"Format error: bash block {i} is {len(value.encode())} bytes; the limit is "
                                  f"{max_arg_bytes} bytes." + MARKDOWN_HINT)
            calls.append(ToolCall("bash", {"command": value}))
    if open_lang is not None:
        raise FormatError("Format error: a ``` block is not closed." + MARKDOWN_HINT)
    if not calls:
        raise FormatError("Format error: no bash block and no DONE found." + MARKDOWN_HINT)
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
    items, _ = _markdown_items(rest.split("\n")[:-1], final=False)  # the last piece is an unfinished line
    return any(kind != "text" for kind, _ in items)


def markdown_stop_check(tokenizer, opens_think: bool = False) -> Callable[[list[int]], bool]:
    """SamplingParams.stop_check for the markdown format: markdown_action_done on the decoded generated ids."""
    return lambda ids: markdown_action_done(tokenizer.decode(ids, skip_special_tokens=False), opens_think)


def cut_at_stop(c: Completion, stop_check: Callable[[list[int]], bool] | None) -> Completion:
    """c cut after its shortest prefix that satisfies stop_check (finish "stop"; tokens and log-probs kept as
    sampled), or c unchanged when no prefix does or c already ends with a stop token. Engines that check
    stop_check while decoding return completions this leaves unchanged."""
    if stop_check is None:
        return c
    for n in range(1, len(c.token_ids) + 1):
        if stop_check(c.token_ids[:n]):
            if n == len(c.token_ids) and c.finish_reason == "stop":
                return c
            return Completion(c.token_ids[:n], c.logprobs[:n], "stop", c.exact)
    return c


def parse_actions(text: str, action_format: str, max_arg_bytes: int, opens_think: bool = False) -> list[ToolCall]:
    """Dispatch to parse_hermes / parse_markdown. opens_think: ChatFormat.opens_think of the policy's template."""
    parse = parse_hermes if action_format == "hermes" else parse_markdown
    return parse(text, max_arg_bytes, opens_think)


# ----------------------------------------------------------------------------- chat template rendering


def generation_opens_think(tokenizer) -> bool:
    """True when the chat template's generation prompt leaves a `<think>` open: its last `<think>` has no
    `</think>` after it (Qwen3-style thinking templates render "<|im_start|>assistant\\n<think>\\n"; with
    thinking switched off Qwen3 renders "<think>\\n\\n</think>\\n\\n", which is closed)."""
    msgs = [{"role": m["role"], "content": m["content"]} for m in BASE_CONVERSATION[:2]]
    head = tokenizer.apply_chat_template(msgs, tokenize=False)
    full = tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    prompt = full[len(head):] if full.startswith(head) else full
    return prompt.rfind("<think>") > prompt.rfind("</think>")


class ChatFormat:
    """Token-level chat rendering for one tokenizer and action format.

    opens_think: the template's generation prompt leaves a `<think>` open (Qwen3-style thinking templates), so
    a reply starts inside its reasoning; the parsers then take the reply up to its first `</think>` as
    reasoning (`split_reasoning`). stop_ids: `stop_ids_of(tokenizer)`, the ids every engine stops at.

    Observation tokens are the template's own: render BASE (system, user, assistant with a <think> block, so
    templates that strip reasoning from non-final turns render it the same either way) with and without the
    new observation message(s) appended, take the suffix, and prepend the tokens the template puts after the
    assistant's end-of-turn token (SmolLM2/Qwen: "\\n"). Raises ValueError at construction if the template
    does not render BASE as a prefix of BASE + observation.
    """

    BASE = BASE_CONVERSATION

    def __init__(self, tokenizer, action_format: str = "markdown"):
        system_prompt(action_format)  # validates the name
        self.tokenizer, self.action_format = tokenizer, action_format
        self.observation_role = "tool" if action_format == "hermes" else "user"
        self.eot_id = end_of_turn(tokenizer)
        self.stop_ids = stop_ids_of(tokenizer)
        self.opens_think = generation_opens_think(tokenizer)
        base = self.render(self.BASE)
        i = len(base) - 1 - base[::-1].index(self.eot_id)
        self._base, self._after_eot = base, base[i + 1:]
        probe = self.render(self.BASE + [{"role": self.observation_role, "content": "O"}], add_generation_prompt=True)
        if probe[:len(base)] != base:
            raise ValueError(f"tokenizer chat_template: rendering of a conversation is not a prefix of its rendering "
                             f"with one more {self.observation_role!r} message; observations cannot be tokenised by suffix")
        self._cache: dict[str, list[int]] = {}

    def render(self, messages: list[dict], add_generation_prompt: bool = False) -> list[int]:
        """Token ids of the template applied to messages (only their role and content)."""
        return render_ids(self.tokenizer, messages, add_generation_prompt)

    def prompt_ids(self, instruction: str) -> tuple[list[dict], list[int]]:
        """(messages, token ids) of an episode's start: system prompt, the instruction, the generation prompt."""
        messages = [{"role": "system", "content": system_prompt(self.action_format)}, {"role": "user", "content": instruction}]
        return messages, self.render(messages, add_generation_prompt=True)

    def observation_ids(self, observations: list[dict], closed: bool = True) -> list[int]:
        """Tokens that follow an assistant turn: [eot if not closed] + after-eot + observation message(s) +
        the next generation prompt. closed: the generated tokens already end with the end-of-turn token."""
        full = self.render(self.BASE + observations, add_generation_prompt=True)
        seg = self._after_eot + full[len(self._base):]
        return seg if closed else [self.eot_id] + seg

    def decode(self, token_ids: list[int]) -> str:
        """Assistant text of generated ids, without a trailing stop token (the end-of-turn token or an eos id of
        `stop_ids_of`; special tokens such as <think> kept)."""
        if token_ids and token_ids[-1] in self.stop_ids:
            token_ids = token_ids[:-1]
        return self.tokenizer.decode(token_ids, skip_special_tokens=False)


# ----------------------------------------------------------------------------- trajectories and the agent loop


@dataclass
class Trajectory:
    """One episode.

    token_ids / loss_mask / logprobs: same length; loss_mask 1 exactly on generated tokens, whose logprobs
    are the engine's; 0 and 0.0 elsewhere. prompt_len: tokens before the first generated one.
    messages: the conversation ({"role", "content"} plus, for assistant turns, "tool_calls", "format_error",
    "finish_reason"; for observations, "in_tokens": False when a limit kept it out of token_ids).
    stop_reason: finish | max_turns | max_context | max_tokens_per_turn | timeout | format_errors | oracle | error.
    truncated: a limit ended the episode (not finish/oracle). reward: None when the episode failed
    (error says why), never a silent 0. exact: token_ids are exactly what the engine sampled.
    """

    task_id: str
    group_index: int
    token_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    prompt_len: int = 0
    messages: list[dict] = field(default_factory=list)
    stop_reason: str = ""
    num_turns: int = 0
    test_report: Any = None
    reward: float | None = None
    verification: Any = None
    judge_score: float | None = None
    resolved: bool = False
    truncated: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    difficulty: str = ""
    category: str = ""
    format_errors: int = 0
    error: str | None = None
    exact: bool = True

    def append(self, ids: list[int], mask: int, logprobs: list[float] | None = None) -> None:
        self.token_ids += ids
        self.loss_mask += [mask] * len(ids)
        self.logprobs += logprobs if logprobs is not None else [0.0] * len(ids)

    def to_json(self) -> dict:
        """A JSON-serialisable dict (test report and verification as dicts)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for k in ("test_report", "verification"):
            v = d[k]
            d[k] = dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v
        return d


LIMIT_REASONS = ("max_turns", "max_context", "max_tokens_per_turn", "timeout", "format_errors")


@dataclass
class _Episode:
    """Per-episode context for the agent loop."""

    task: Any
    sandbox: Any
    cfg: RolloutConfig
    chat: ChatFormat
    deadline: float
    exec_timeout_s: float
    output_limit_bytes: int


def _resolve(path: str) -> str:
    return path if path.startswith("/") else "/app/" + path


async def run_tool(ep: _Episode, call: ToolCall) -> tuple[str, dict]:
    """Run one call in the episode's sandbox. Returns (observation text, metadata). Tool failures (a missing
    file, `old` not found, a timeout) are observations, not exceptions; sandbox infrastructure errors raise."""
    sb, a = ep.sandbox, call.arguments
    remaining = max(1.0, ep.deadline - time.monotonic())
    if call.name == "bash":
        timeout = min(float(a.get("timeout_s", ep.exec_timeout_s)), remaining)
        if timeout <= 0:
            return f"Error: timeout_s must be > 0, got {a['timeout_s']}.", {"exit_code": None}
        try:
            r = await sb.exec(a["command"], timeout=timeout)
        except ValueError as e:  # the sandbox refuses the command itself (too long, NUL byte)
            return f"Error: {e}", {"exit_code": None}
        head = f"[timed out after {timeout:g} s; the command was killed]" if r.timed_out else f"exit code: {r.exit_code}"
        return f"{head}\n{r.output}" if r.output else head, {"exit_code": r.exit_code, "timed_out": r.timed_out}
    if call.name == "finish":
        return "", {}
    path = _resolve(a["path"])
    if call.name == "write_file":
        await sb.write_file(path, a["content"])
        return f"Wrote {len(a['content'].encode())} bytes to {path}.", {}
    try:
        data = await sb.read_file(path, max_bytes=1 << 20)
    except Exception as e:  # missing file, a directory, permissions: the agent should see why
        return f"Error: cannot read {path}: {e}", {"error": str(e)}
    text = data.decode("utf-8", errors="replace")
    if call.name == "read_file":
        offset, limit = a.get("offset", 1), a.get("limit")
        if offset < 1 or (limit is not None and limit < 1):
            return "Error: offset and limit must be >= 1.", {}
        lines = text.splitlines(keepends=True)[offset - 1:]
        out = "".join(lines if limit is None else lines[:limit])
        if len(out.encode()) > ep.output_limit_bytes:
            cut = out.encode()[:ep.output_limit_bytes].decode("utf-8", errors="ignore")
            out = cut + f"\n[... cut at {ep.output_limit_bytes} bytes; use offset/limit to read more]"
        return out if out else f"({path} has no lines from {offset})", {}
    # edit_file
    n = text.count(a["old"]) if a["old"] else 0
    if n == 0:
        return f"Error: the old text was not found in {path}; nothing changed.", {}
    if n > 1 and not a.get("replace_all", False):
        return f"Error: the old text occurs {n} times in {path}; make it unique or set replace_all; nothing changed.", {}
    new = text.replace(a["old"], a["new"]) if a.get("replace_all", False) else text.replace(a["old"], a["new"], 1)
    await sb.write_file(path, new)
    return f"Replaced {n if a.get('replace_all', False) else 1} occurrence(s) in {path}.", {}


def _markdown_observation(results: list[tuple[ToolCall, str]]) -> str:
    blocks = [f"$ {call.arguments['command']}\n{out}" for call, out in results]
    return "\n\n".join(blocks)


async def agent_loop(traj: Trajectory, ep: _Episode, engine: Engine, sampling: SamplingParams) -> str:
    """Run turns until a stop condition; fill traj (tokens, masks, messages). Returns the stop reason."""
    cfg, chat = ep.cfg, ep.chat
    max_turns = ep.task.max_turns or cfg.max_turns
    # markdown: a turn ends after its first action; the end-of-turn token then goes in as an observation token
    stop_check = markdown_stop_check(chat.tokenizer, chat.opens_think) if chat.action_format == "markdown" else None
    consecutive_errors = 0
    for turn in range(max_turns):
        room = cfg.max_context_tokens - len(traj.token_ids)
        if room < 1:
            return "max_context"
        remaining = ep.deadline - time.monotonic()
        if remaining <= 0:
            return "timeout"
        max_tokens = min(cfg.max_tokens_per_turn, room)
        t0 = time.monotonic()
        try:
            # Each turn its own seed: the same seed every turn would reuse the same uniforms.
            seed = None if sampling.seed is None else hash((sampling.seed, turn)) & (2**63 - 1)
            turn_sampling = dataclasses.replace(sampling, max_tokens=max_tokens, seed=seed, stop_check=stop_check)
            c = await asyncio.wait_for(engine.generate(traj.token_ids, turn_sampling, traj.messages), remaining)
        except asyncio.TimeoutError:
            return "timeout"
        traj.timings["generate_s"] = traj.timings.get("generate_s", 0.0) + time.monotonic() - t0
        if len(c.token_ids) != len(c.logprobs):
            raise ValueError(f"{type(engine).__name__}: completion has {len(c.token_ids)} tokens but "
                             f"{len(c.logprobs)} logprobs")
        c = cut_at_stop(c, stop_check)  # engines that ignore stop_check: the same cut, after the fact
        traj.exact &= c.exact
        traj.append(c.token_ids, 1, c.logprobs)
        traj.num_turns = turn + 1
        text = chat.decode(c.token_ids)
        msg = {"role": "assistant", "content": text, "finish_reason": c.finish_reason, "tool_calls": [], "format_error": None}
        traj.messages.append(msg)
        try:
            calls = parse_actions(text, chat.action_format, cfg.max_tool_arg_bytes, chat.opens_think)
        except FormatError as e:
            calls, msg["format_error"] = [], str(e)
        if c.finish_reason == "length" and not calls:
            return "max_context" if max_tokens < cfg.max_tokens_per_turn else "max_tokens_per_turn"
        if msg["format_error"]:
            traj.format_errors += 1
            consecutive_errors += 1
            obs = [{"role": chat.observation_role, "content": msg["format_error"]}]
            if consecutive_errors >= cfg.max_format_errors:
                traj.messages.extend({**o, "in_tokens": False} for o in obs)
                return "format_errors"
        else:
            consecutive_errors = 0
            t0 = time.monotonic()
            results, finished = [], False
            for call in calls:
                msg["tool_calls"].append({"name": call.name, "arguments": call.arguments})
                if call.name == "finish":
                    finished = True
                    break
                out, meta = await run_tool(ep, call)
                results.append((call, out, meta))
            skipped = calls[len(msg["tool_calls"]):]
            if skipped:
                msg["not_run"] = [{"name": s.name, "arguments": s.arguments} for s in skipped]
            traj.timings["tools_s"] = traj.timings.get("tools_s", 0.0) + time.monotonic() - t0
            if chat.observation_role == "tool":
                obs = [{"role": "tool", "content": out, "tool_name": call.name, **meta} for call, out, meta in results]
            else:
                obs = [{"role": "user", "content": _markdown_observation([(call, out) for call, out, _ in results])}] if results else []
            if finished:
                traj.messages.extend({**o, "in_tokens": False} for o in obs)
                return "finish"
            if c.finish_reason == "length":  # the turn was cut: its complete calls ran, the episode stops
                traj.messages.extend({**o, "in_tokens": False} for o in obs)
                return "max_context" if max_tokens < cfg.max_tokens_per_turn else "max_tokens_per_turn"
        closed = bool(c.token_ids) and c.token_ids[-1] == chat.eot_id
        obs_ids = chat.observation_ids(obs, closed=closed)
        if len(traj.token_ids) + len(obs_ids) >= cfg.max_context_tokens:
            traj.messages.extend({**o, "in_tokens": False} for o in obs)
            return "max_context"
        traj.messages.extend(obs)
        traj.append(obs_ids, 0)
    return "max_turns"


async def run_episode(task, engine: Engine | None, chat: ChatFormat, cfg: RolloutConfig, group_index: int = 0,
                      image: str | None = None, sandbox_cfg: SandboxConfig | None = None, run_id: str | None = None,
                      judge=None, reward_cfg: RewardConfig | None = None, seed: int | None = None,
                      oracle: bool = False) -> Trajectory:
    """One episode of `task` in a fresh sandbox, verified by the task's hidden tests (also when a limit cut
    it short), optionally scored by the judge. engine None with oracle=True runs the task's solution.sh.

    Never raises for a failed episode: the trajectory's error is set and its reward is None (docker errors,
    image build errors, engine errors). Cancellation (Ctrl-C) propagates after the sandbox is closed.
    """

    sandbox_cfg = sandbox_cfg or SandboxConfig()
    reward_cfg = reward_cfg or RewardConfig()
    traj = Trajectory(task.id, group_index, difficulty=task.difficulty, category=task.category)
    t_start = time.monotonic()
    sb = None
    try:
        if image is None:
            image = await asyncio.to_thread(images_lib.build_image, task, sandbox_cfg.base_image)
        t0 = time.monotonic()
        sb = await sandbox_lib.Sandbox.start(image, limits=sandbox_lib.Limits.from_config(sandbox_cfg), run_id=run_id)
        traj.timings["start_s"] = time.monotonic() - t0
        timeout_s = min(cfg.episode_timeout_s, task.agent_timeout_s or cfg.episode_timeout_s)
        ep = _Episode(task, sb, cfg, chat, time.monotonic() + timeout_s, sandbox_cfg.exec_timeout_s,
                      sandbox_cfg.output_limit_bytes)
        if oracle:
            if task.solution is None:
                raise ValueError(f"task {task.id}: no solution.sh for --oracle")
            await sb.write_file("/tmp/solution.sh", Path(task.solution).read_bytes())
            r = await sb.exec("bash /tmp/solution.sh", timeout=timeout_s)
            traj.messages = [{"role": "oracle", "content": r.output, "exit_code": r.exit_code, "timed_out": r.timed_out}]
            traj.stop_reason = "oracle"
        else:
            traj.messages, ids = chat.prompt_ids(task.instruction)
            traj.append(ids, 0)
            traj.prompt_len = len(ids)
            sampling = SamplingParams(cfg.temperature, cfg.top_p, cfg.top_k, cfg.max_tokens_per_turn, seed)
            traj.stop_reason = await agent_loop(traj, ep, engine, sampling)
            traj.truncated = traj.stop_reason in LIMIT_REASONS
        traj.timings["agent_s"] = time.monotonic() - t_start
        t0 = time.monotonic()
        report = await sb.run_tests(task.tests_dir, timeout=task.test_timeout_s)
        traj.timings["verify_s"] = time.monotonic() - t0
        v = reward_lib.verify(report, task.weights)
        traj.test_report, traj.verification, traj.resolved = report, v, v.resolved
        if judge is not None and not oracle:
            t0 = time.monotonic()
            jr = await judge.score(task.instruction, [{"role": m["role"], "content": m["content"]} for m in traj.messages])
            traj.judge_score = jr.score
            traj.timings["judge_s"] = time.monotonic() - t0
        traj.reward = reward_lib.combine(v.score, traj.judge_score, reward_cfg.w_tests, reward_cfg.w_judge)
    except Exception as e:
        traj.error = f"{type(e).__name__}: {e}"
        traj.stop_reason = traj.stop_reason or "error"
        traj.reward = None
    finally:
        if sb is not None:
            await asyncio.shield(sb.close())
        traj.timings["total_s"] = time.monotonic() - t_start
    return traj


async def run_episodes(tasks: list, engine: Engine | None, tokenizer, n_per_task: int, cfg: RolloutConfig, judge=None,
                       *, action_format: str = "markdown", sandbox_cfg: SandboxConfig | None = None,
                       reward_cfg: RewardConfig | None = None, run_id: str | None = None, seed: int | None = None,
                       oracle: bool = False, progress: bool = True, on_trajectory=None) -> list[Trajectory]:
    """Run n_per_task episodes of every task concurrently (asyncio), at most cfg.max_concurrent_episodes at
    once; sandbox.py bounds the docker calls in flight. Images are built first, once per task.

    Returns trajectories ordered by task then group_index (group_index = 0..n_per_task-1). seed: when given,
    episode j of task i samples with seed (seed, i, j) mixed into one int, so runs are reproducible.
    on_trajectory: optional callback per finished trajectory (e.g. to stream JSONL). Progress line on stderr:
    episodes done, mean reward so far, generated tokens/s.
    """

    if n_per_task < 1:
        raise ValueError(f"n_per_task = {n_per_task}: must be >= 1")
    if engine is None and not oracle:
        raise ValueError("engine: None is only allowed with oracle=True")
    sandbox_cfg = sandbox_cfg or SandboxConfig()
    chat = ChatFormat(tokenizer, action_format)
    images: dict[str, str | Exception] = {}

    async def build(task):
        try:
            images[task.id] = await asyncio.to_thread(images_lib.build_image, task, sandbox_cfg.base_image)
        except Exception as e:  # reported per trajectory below
            images[task.id] = e

    await asyncio.gather(*(build(t) for t in {t.id: t for t in tasks}.values()))
    sem = asyncio.Semaphore(cfg.max_concurrent_episodes)
    bar = tqdm(total=len(tasks) * n_per_task, desc="rollout", file=sys.stderr, disable=not progress, dynamic_ncols=True)
    done: list[Trajectory] = []
    t_start = time.monotonic()

    async def one(i: int, task, j: int) -> Trajectory:
        image = images[task.id]
        if isinstance(image, Exception):
            traj = Trajectory(task.id, j, difficulty=task.difficulty, category=task.category, stop_reason="error",
                              error=f"image build failed: {type(image).__name__}: {image}")
        else:
            async with sem:
                s = None if seed is None else (seed * 1_000_003 + i) * 10_007 + j
                traj = await run_episode(task, engine, chat, cfg, j, image, sandbox_cfg, run_id, judge, reward_cfg, s, oracle)
        done.append(traj)
        rewards = [t.reward for t in done if t.reward is not None]
        tokens = sum(sum(t.loss_mask) for t in done)
        bar.set_postfix_str(f"reward {sum(rewards) / max(1, len(rewards)):.3f} | "
                            f"{tokens / max(1e-9, time.monotonic() - t_start):.1f} tok/s | errors {len(done) - len(rewards)}")
        bar.update(1)
        if on_trajectory is not None:
            on_trajectory(traj)
        return traj

    try:
        return list(await asyncio.gather(*(one(i, t, j) for i, t in enumerate(tasks) for j in range(n_per_task))))
    finally:
        bar.close()


# ----------------------------------------------------------------------------- metrics
