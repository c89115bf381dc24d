"""Chat rendering of an episode: the chat template applied to messages, observation tokens by difference."""

from agent.prompts import system_prompt
from hf.chat import BASE_CONVERSATION, end_of_turn, render_ids, stop_ids_of


def generation_opens_think(tokenizer) -> bool:
    """True when the chat template's generation prompt leaves a `<think>` open: its last `<think>` has no
    `</think>` after it (Qwen3-style thinking templates render "<|im_start|>assistant\\n<think>\\n"; with
    thinking switched off Qwen3 renders "<think>\\n\\n</think>\\n\\n", which is closed)."""
    msgs = [{"role": m["role"], "content": m["content"]} for m in BASE_CONVERSATION[:2]]
    head = tokenizer.apply_chat_template(msgs, tokenize=False)
    full = tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    prompt = full.removeprefix(head)
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
        # validates the name
        system_prompt(action_format)
        self.tokenizer = tokenizer
        self.action_format = action_format
        self.observation_role = "tool" if action_format == "hermes" else "user"
        self.eot_id = end_of_turn(tokenizer)
        self.stop_ids = stop_ids_of(tokenizer)
        self.opens_think = generation_opens_think(tokenizer)
        base = self.render(self.BASE)
        i = len(base) - 1 - base[::-1].index(self.eot_id)
        self._base = base
        self._after_eot = base[i + 1 :]
        probe = self.render(
            self.BASE + [{"role": self.observation_role, "content": "O"}],
            add_generation_prompt=True,
        )
        if probe[: len(base)] != base:
            raise ValueError(
                f"tokenizer chat_template: rendering of a conversation is not a prefix of its rendering "
                f"with one more {self.observation_role!r} message; observations cannot be tokenised by suffix"
            )
        self._cache: dict[str, list[int]] = {}

    def render(self, messages: list[dict], add_generation_prompt: bool = False) -> list[int]:
        """Token ids of the template applied to messages (only their role and content)."""
        return render_ids(self.tokenizer, messages, add_generation_prompt)

    def prompt_ids(self, instruction: str) -> tuple[list[dict], list[int]]:
        """(messages, token ids) of an episode's start: system prompt, the instruction, the generation prompt."""
        messages = [
            {"role": "system", "content": system_prompt(self.action_format)},
            {"role": "user", "content": instruction},
        ]
        return messages, self.render(messages, add_generation_prompt=True)

    def observation_ids(self, observations: list[dict], closed: bool = True) -> list[int]:
        """Tokens that follow an assistant turn: [eot if not closed] + after-eot + observation message(s) +
        the next generation prompt. closed: the generated tokens already end with the end-of-turn token."""
        full = self.render(self.BASE + observations, add_generation_prompt=True)
        seg = self._after_eot + full[len(self._base) :]
        return seg if closed else [self.eot_id] + seg

    def decode(self, token_ids: list[int]) -> str:
        """Assistant text of generated ids, without a trailing stop token (the end-of-turn token or an eos id of
        `stop_ids_of`; special tokens such as <think> kept)."""
        if token_ids and token_ids[-1] in self.stop_ids:
            token_ids = token_ids[:-1]
        return self.tokenizer.decode(token_ids, skip_special_tokens=False)
