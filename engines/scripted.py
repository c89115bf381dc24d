"""ScriptedEngine: replays fixed replies through the real tokenizer (tests, demos)."""

import asyncio

from engines.base import Completion, Engine, SamplingParams, check_prompt
from hf.chat import BASE_CONVERSATION, end_of_turn, render_ids, stop_ids_of


class ScriptedEngine(Engine):
    """Replays fixed replies through the real tokenizer (tests, demos). The reply for a request is chosen by
    the turn it continues: the number of assistant generation prompts already in prompt_ids, minus one.
    Each reply is `tokenizer.encode(text, add_special_tokens=False)` plus the end-of-turn token (finish
    "stop"), or cut after its first stop id (`stop_ids_of`) when it holds one, as a sampling engine stops
    there; then cut to max_tokens (finish "length"). Log-probs are a fixed -1.0 per token.

    replies: list of str (every episode plays the same script), or a callable (prompt_ids, turn) -> str.
    delay_s: seconds to wait before answering (holds episodes open, e.g. for the Ctrl-C test).
    Raises ValueError when the script has no reply for a turn.
    """

    def __init__(self, tokenizer, replies, delay_s: float = 0.0, max_seq_len: int = 1 << 30):
        self.tokenizer, self.replies, self.delay_s, self.max_seq_len = (
            tokenizer,
            replies,
            delay_s,
            max_seq_len,
        )
        self.eot = end_of_turn(tokenizer)
        self.stop_ids = stop_ids_of(tokenizer)
        head = render_ids(tokenizer, BASE_CONVERSATION[:2])
        self._gen_prompt = render_ids(tokenizer, BASE_CONVERSATION[:2], add_generation_prompt=True)[
            len(head) :
        ]
        self.calls = 0

    def _turn(self, prompt_ids: list[int]) -> int:
        g, n = self._gen_prompt, len(self._gen_prompt)
        return sum(prompt_ids[i : i + n] == g for i in range(len(prompt_ids) - n + 1)) - 1

    async def generate(
        self, prompt_ids: list[int], sampling: SamplingParams, messages: list[dict] | None = None
    ) -> Completion:
        check_prompt(self, prompt_ids, sampling)
        self.calls += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        turn = self._turn(prompt_ids)
        if callable(self.replies):
            text = self.replies(prompt_ids, turn)
        else:
            if not 0 <= turn < len(self.replies):
                raise ValueError(
                    f"ScriptedEngine: no reply for turn {turn} (script has {len(self.replies)})"
                )
            text = self.replies[turn]
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        stop = next(
            (k for k, t in enumerate(ids) if t in self.stop_ids), None
        )  # as a sampling engine would stop
        ids = ids[: stop + 1] if stop is not None else ids + [self.eot]
        n = min(sampling.max_tokens, self.max_seq_len - len(prompt_ids))
        reason = "stop" if len(ids) <= n else "length"
        ids = ids[:n]
        return Completion(ids, [-1.0] * len(ids), reason)
