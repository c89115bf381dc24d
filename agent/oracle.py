"""A reactive oracle policy: a task's demonstration steps written as the agent's own replies, one step a
turn, each reading what earlier observations showed.

`OracleReplies` is the callable (prompt_ids, turn) -> str that engines.ScriptedEngine takes, so the
oracle runs through the real agent loop (rollout.run_episodes) in real sandboxes: its replies go
through the same tokenizer, stop rule and parser as a policy's, and its trajectories are token for
token what a policy that wrote the same replies would have seen and generated (loss_mask 1 on the
replies, 0 on prompt and observations). Those trajectories are the warm start's demonstrations
(learner/sft.py).

The oracle keeps no state between calls: each call decodes the prompt it is given, finds the episode's
task by its prompt (the system prompt and instruction, token for token), replays its earlier turns
(the steps are deterministic) and reads each earlier observation out of the prompt's tokens, so
concurrent episodes never share anything. Steps are tasks/oracle.py's dicts
{"command": template, "capture": {var: regex}}.
"""

import json
import re

from agent.chat import ChatFormat

# a probe observation's content, to find the template's text around an observation's content
_MARK = "@@termrl-oracle-observation@@"


class OracleError(ValueError):
    """The oracle cannot write the next reply (unknown prompt, a capture that found nothing); the
    episode fails with this message (rollout: reward None), it is never scored."""


def reply_text(command: str | None, action_format: str, opens_think: bool = False) -> str:
    """The agent's reply that runs `command` in bash (None: the reply that ends the episode), in the
    policy's action syntax (agent/actions.py, agent/prompts.py):

        markdown: ```bash\\n<command>\\n```\\n   (a longer fence when the command holds ``` runs;
                  the newline after the closing fence is where the markdown stop rule ends a turn)
                  DONE                           (the end)
        hermes:   <tool_call>\\n{"name": "bash", "arguments": {"command": ...}}\\n</tool_call>
                  <tool_call>\\n{"name": "finish", "arguments": {"message": "done"}}\\n</tool_call>

    opens_think: the template's generation prompt opens <think> (agent/chat.py), so the reply first
    closes it."""
    think = "</think>\n\n" if opens_think else ""
    if action_format == "markdown":
        if command is None:
            return think + "DONE"
        longest = max((len(run) for run in re.findall(r"`+", command)), default=0)
        fence = "`" * max(3, longest + 1)
        return f"{think}{fence}bash\n{command}\n{fence}\n"
    if command is None:
        call = {"name": "finish", "arguments": {"message": "done"}}
    else:
        call = {"name": "bash", "arguments": {"command": command}}
    return f"{think}<tool_call>\n{json.dumps(call)}\n</tool_call>"


def command_output(content: str, command: str, action_format: str) -> str:
    """The output of `command` in its observation message's content (agent/tools.py's rendering):
    markdown "$ <command>\\n<head>[\\n<output>]", hermes "<head>[\\n<output>]", where head is
    "exit code: N" or "[timed out ...]". Raises OracleError when the content is not that."""
    text = content
    if action_format == "markdown":
        echo = f"$ {command}\n"
        if not content.startswith(echo):
            raise OracleError(
                f"oracle: the observation does not start with the command it ran "
                f"({echo[:80]!r}): {content[:200]!r}"
            )
        text = content[len(echo) :]
    head, _, output = text.partition("\n")
    if not (head.startswith("exit code: ") or head.startswith("[timed out")):
        raise OracleError(f"oracle: the observation has no exit-code line: {content[:200]!r}")
    return output


class OracleReplies:
    """The reactive oracle for engines.ScriptedEngine: `replies(prompt_ids, turn)` is the reply of
    turn `turn` (0-based) of the episode whose prompt is `prompt_ids`.

    plans: instruction -> steps ({"command": str.format template, "capture": {var: regex}}). Turn i
    < len(steps) runs steps[i]'s command formatted with the vars captured so far; each capture regex
    is searched in that step's own command output as the policy saw it (the observation's tokens
    in the prompt, cut as the sandbox cut it), group 1 becoming the var. Turn len(steps) ends the
    episode (DONE / finish). Raises OracleError (the episode fails, never scored) when the prompt
    is no plan's, an observation is not where the replay expects it, or a capture finds nothing.
    """

    def __init__(self, chat: ChatFormat, plans: dict[str, list[dict]]):
        self.chat = chat
        self.tokenizer = chat.tokenizer
        self.plans = {
            tuple(chat.prompt_ids(instruction)[1]): steps for instruction, steps in plans.items()
        }
        head = chat.render(chat.BASE[:2])
        self.gen_prompt = chat.render(chat.BASE[:2], add_generation_prompt=True)[len(head) :]
        probe = self._decode(
            chat.observation_ids([{"role": chat.observation_role, "content": _MARK}], closed=True)
        )
        self.before, _, self.after = probe.partition(_MARK)

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(
            ids, skip_special_tokens=False, clean_up_tokenization_spaces=False
        )

    def _turn_starts(self, prompt_ids: list[int]) -> list[int]:
        """Where each assistant turn's reply starts: the ends of the generation prompts."""
        g = self.gen_prompt
        n = len(g)
        return [i + n for i in range(len(prompt_ids) - n + 1) if prompt_ids[i : i + n] == g]

    def _observation(self, prompt_ids: list[int], start: int, next_start: int) -> str:
        """The content of the observation between the reply starting at `start` and the next
        generation prompt (ending at `next_start`)."""
        eot = self.chat.eot_id
        end = next((k for k in range(start, next_start) if prompt_ids[k] == eot), None)
        if end is None:
            raise OracleError("oracle: an earlier reply has no end-of-turn token in the prompt")
        text = self._decode(prompt_ids[end + 1 : next_start])
        if not (text.startswith(self.before) and text.endswith(self.after)):
            raise OracleError(f"oracle: not an observation message of the template: {text[:200]!r}")
        return text[len(self.before) : len(text) - len(self.after)]

    def __call__(self, prompt_ids: list[int], turn: int) -> str:
        starts = self._turn_starts(prompt_ids)
        steps = self.plans.get(tuple(prompt_ids[: starts[0]])) if starts else None
        if steps is None:
            raise OracleError("oracle: the prompt's system prompt and instruction are no plan's")
        if turn != len(starts) - 1:
            raise OracleError(f"oracle: turn {turn} but the prompt holds {len(starts)} turns")
        if turn > len(steps):
            raise OracleError(f"oracle: turn {turn} after the plan's {len(steps)} steps and DONE")
        fmt = self.chat.action_format
        vars_: dict[str, str] = {}
        for i in range(turn):
            command = steps[i]["command"].format(**vars_)
            content = self._observation(prompt_ids, starts[i], starts[i + 1])
            output = command_output(content, command, fmt)
            for var, pattern in steps[i].get("capture", {}).items():
                m = re.search(pattern, output)
                if m is None:
                    raise OracleError(
                        f"oracle: step {i} capture {var!r} ({pattern!r}) found nothing in the "
                        f"output of {command[:80]!r}: {output[:200]!r}"
                    )
                vars_[var] = m.group(1)
        command = steps[turn]["command"].format(**vars_) if turn < len(steps) else None
        return reply_text(command, fmt, self.chat.opens_think)
