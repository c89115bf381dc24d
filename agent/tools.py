"""The agent's tool calls run on its sandbox: `run_tool` for one call, the observation messages a
turn's results come back as, and their cut to fit the context (`fit_observations`).

Tool failures (a missing file, `old` not found, a command's timeout) are observations the agent reads,
never exceptions; the sandbox's own failures (sandbox.SandboxError, DiskLimitError) raise. The tools and
their arguments are agent/actions.py's TOOLS, already checked when a call reaches here.
"""

import time

from agent.actions import ToolCall
from agent.chat import ChatFormat


def resolve(path: str) -> str:
    """A tool's path argument as an absolute path in the sandbox: relative paths are under /app."""
    if path.startswith("/"):
        return path
    return "/app/" + path


async def run_tool(
    sb, call: ToolCall, deadline: float, exec_timeout_s: float, output_limit_bytes: int
) -> tuple[str, dict]:
    """Run one call on sandbox `sb` (sandbox.Sandbox). Returns (observation text, metadata: for bash
    its exit_code and timed_out). deadline: the episode's end (time.monotonic() seconds); a command
    is cut to the time left. exec_timeout_s: a bash call's timeout when it names none, seconds.
    output_limit_bytes: what read_file shows at most (exec caps its own output). Raises what the
    sandbox raises for its own failures."""
    a = call.arguments
    remaining = max(1.0, deadline - time.monotonic())
    if call.name == "bash":
        timeout = min(float(a.get("timeout_s", exec_timeout_s)), remaining)
        if timeout <= 0:
            return f"Error: timeout_s must be > 0, got {a['timeout_s']}.", {"exit_code": None}
        try:
            r = await sb.exec(a["command"], timeout=timeout)
        except ValueError as e:
            # the sandbox refuses the command itself (too long, NUL byte)
            return f"Error: {e}", {"exit_code": None}
        if r.timed_out:
            head = f"[timed out after {timeout:g} s; the command was killed]"
        else:
            head = f"exit code: {r.exit_code}"
        text = f"{head}\n{r.output}" if r.output else head
        return text, {"exit_code": r.exit_code, "timed_out": r.timed_out}
    if call.name == "finish":
        return "", {}
    path = resolve(a["path"])
    if call.name == "write_file":
        await sb.write_file(path, a["content"])
        return f"Wrote {len(a['content'].encode())} bytes to {path}.", {}
    try:
        data = await sb.read_file(path, max_bytes=1 << 20)
    except Exception as e:
        # missing file, a directory, permissions: the agent should see why
        return f"Error: cannot read {path}: {e}", {"error": str(e)}
    text = data.decode("utf-8", errors="replace")
    if call.name == "read_file":
        return _read_lines(text, path, a.get("offset", 1), a.get("limit"), output_limit_bytes), {}
    return await _edit(sb, text, path, a)


def _read_lines(
    text: str, path: str, offset: int, limit: int | None, output_limit_bytes: int
) -> str:
    """read_file's observation: lines offset.. (1-based; at most `limit`) of the file's text, cut at
    output_limit_bytes."""
    if offset < 1 or (limit is not None and limit < 1):
        return "Error: offset and limit must be >= 1."
    lines = text.splitlines(keepends=True)[offset - 1 :]
    if limit is not None:
        lines = lines[:limit]
    out = "".join(lines)
    if len(out.encode()) > output_limit_bytes:
        cut = out.encode()[:output_limit_bytes].decode("utf-8", errors="ignore")
        out = cut + f"\n[... cut at {output_limit_bytes} bytes; use offset/limit to read more]"
    if not out:
        return f"({path} has no lines from {offset})"
    return out


async def _edit(sb, text: str, path: str, a: dict) -> tuple[str, dict]:
    """edit_file: `old` replaced by `new` in the file's text, once (it must occur once) or everywhere
    (replace_all); the file is left unchanged when it cannot be."""
    n = text.count(a["old"]) if a["old"] else 0
    replace_all = a.get("replace_all", False)
    if n == 0:
        return f"Error: the old text was not found in {path}; nothing changed.", {}
    if n > 1 and not replace_all:
        return (
            f"Error: the old text occurs {n} times in {path}; make it unique or set replace_all; "
            "nothing changed.",
            {},
        )
    if replace_all:
        new = text.replace(a["old"], a["new"])
    else:
        new = text.replace(a["old"], a["new"], 1)
    await sb.write_file(path, new)
    return f"Replaced {n if replace_all else 1} occurrence(s) in {path}.", {}


def observations(chat: ChatFormat, results: list) -> list[dict]:
    """The observation messages of a turn's results [(call, observation text, metadata)].

    hermes: one `tool` message per call (Qwen3's template wraps each in <tool_response>), with the
    call's name and metadata. markdown: one `user` message of all of them, each as `$ command` then its
    output (none when nothing ran): SmolLM2's template would render a `tool` role verbatim, but the
    model was never trained on that role."""
    if chat.observation_role == "tool":
        return [
            {"role": "tool", "content": out, "tool_name": call.name, **meta}
            for call, out, meta in results
        ]
    if not results:
        return []
    blocks = [f"$ {call.arguments['command']}\n{out}" for call, out, _ in results]
    return [{"role": "user", "content": "\n\n".join(blocks)}]


def share_tokens(lengths: list[int], total: int) -> list[int]:
    """Tokens each of several messages keeps so that they keep at most `total` together: the short
    ones whole, the long ones an equal share of what is left (water-filling). lengths: tokens per
    message; total >= 0. Returns one count per message, each <= its length."""
    keeps = [0] * len(lengths)
    left = total
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for n, i in enumerate(order):
        keeps[i] = min(lengths[i], left // (len(order) - n))
        left -= keeps[i]
    return keeps


def cut_middle(tokenizer, text: str, keep: int) -> tuple[str, int, int]:
    """`text` cut to about `keep` tokens: its first and last tokens (half each) around a marker saying
    how many tokens and bytes were cut; the marker's own tokens count in `keep`, so keep below the
    marker's length keeps the marker alone. Returns (text, tokens cut, bytes cut): text unchanged
    and (0, 0) when it has <= keep tokens or no more than the marker has."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    # the marker's length depends on the numbers in it: measured with the most that can be cut
    probe = _cut_marker(len(ids), len(text.encode()))
    marker = len(tokenizer.encode(probe, add_special_tokens=False))
    # a text no longer than the marker would only grow by a cut
    if len(ids) <= max(keep, marker):
        return text, 0, 0
    kept = max(0, keep - marker)
    head_ids = ids[: (kept + 1) // 2]
    tail_ids = ids[len(ids) - kept // 2 :]
    head = tokenizer.decode(head_ids, skip_special_tokens=False)
    tail = tokenizer.decode(tail_ids, skip_special_tokens=False) if tail_ids else ""
    cut_tokens = len(ids) - len(head_ids) - len(tail_ids)
    cut_bytes = max(0, len(text.encode()) - len(head.encode()) - len(tail.encode()))
    return head + _cut_marker(cut_tokens, cut_bytes) + tail, cut_tokens, cut_bytes


def _cut_marker(tokens: int, nbytes: int) -> str:
    return f"\n[... {tokens} tokens ({nbytes} bytes) of this output cut to fit the context ...]\n"


def fit_observations(
    chat: ChatFormat, obs: list[dict], budget: int, closed: bool = True, cut_to: int | None = None
) -> tuple[list[dict], list[int]] | None:
    """A turn's observation messages and their tokens (chat.observation_ids), whole when they fit
    in `budget` tokens, else cut to fit in `cut_to` tokens (when given and the markers fit there;
    else in budget): each message's content longer than its share (share_tokens) keeps its head
    and tail around a marker saying how many tokens and bytes were cut (cut_middle), and the cut
    message records them ("cut_tokens", "cut_bytes"). Messages that fit their share are returned
    unchanged. Returns (messages, token ids), or None when even the markers alone, every
    message's output cut, do not fit in budget."""
    ids = chat.observation_ids(obs, closed)
    if len(ids) <= budget:
        return obs, ids
    if cut_to is not None and cut_to < budget:
        fitted = _cut_to_fit(chat, obs, ids, cut_to, closed)
        if fitted is not None:
            return fitted
    return _cut_to_fit(chat, obs, ids, budget, closed)


def _cut_to_fit(
    chat: ChatFormat, obs: list[dict], ids: list[int], budget: int, closed: bool
) -> tuple[list[dict], list[int]] | None:
    """fit_observations' cut of obs (whose whole tokens are ids) into budget. Rendering
    re-tokenises at a cut's seams, so the cut is tried again, smaller by what it still
    overflows, until it fits; None when the markers alone do not."""
    tokenizer = chat.tokenizer
    lengths = [len(tokenizer.encode(m["content"], add_special_tokens=False)) for m in obs]
    total = sum(lengths) - (len(ids) - budget)
    while True:
        keeps = share_tokens(lengths, max(0, total))
        cut = []
        for m, keep in zip(obs, keeps):
            text, cut_tokens, cut_bytes = cut_middle(tokenizer, m["content"], keep)
            if cut_tokens:
                m = {**m, "content": text, "cut_tokens": cut_tokens, "cut_bytes": cut_bytes}
            cut.append(m)
        ids = chat.observation_ids(cut, closed)
        if len(ids) <= budget:
            return cut, ids
        if total <= 0:
            return None
        total -= len(ids) - budget
