"""Chat-template facts of a tokenizer, the same for every engine: rendering messages to ids, the
end-of-turn token, the stop ids."""

import os

from hf import weights

# A conversation every chat template renders: system, user, and an assistant turn with a <think> block (so
# templates that strip reasoning from non-final turns render it the same either way).
BASE_CONVERSATION = [
    {"role": "system", "content": "S"},
    {"role": "user", "content": "U"},
    {"role": "assistant", "content": "<think>\nT\n</think>\n\nA"},
]


def render_ids(tokenizer, messages: list[dict], add_generation_prompt: bool = False) -> list[int]:
    """Token ids of the tokenizer's chat template applied to messages (only their role and content)."""
    msgs = [{"role": m["role"], "content": m["content"]} for m in messages]
    text = tokenizer.apply_chat_template(
        msgs, tokenize=False, add_generation_prompt=add_generation_prompt
    )
    return tokenizer.encode(text, add_special_tokens=False)


def end_of_turn(tokenizer) -> int:
    """The special token that closes an assistant message in the tokenizer's chat template (the last special
    token of a rendered assistant turn, e.g. <|im_end|>). Raises ValueError if the template has none."""
    special = set(tokenizer.all_special_ids)
    for t in reversed(render_ids(tokenizer, BASE_CONVERSATION)):
        if t in special:
            return int(t)
    raise ValueError(
        "tokenizer chat_template: a rendered assistant turn contains no special end-of-turn token"
    )


def stop_ids_of(tokenizer, model_dir: str | os.PathLike | None = None) -> set[int]:
    """Token ids that end an assistant turn, the same for every engine: the chat template's end-of-turn token,
    the tokenizer's eos, and the eos ids of the model's generation_config.json (`eos_token_id`, an int or a
    list: Qwen3 lists <|im_end|> and <|endoftext|>), as HF `generate` and vLLM stop at them.

    model_dir: the HF dir holding generation_config.json; None reads it from the tokenizer's own dir
    (tokenizer.name_or_path, where weights.load_tokenizer and vLLM loaded it), none when that is not a dir.
    Raises ValueError (weights.generation_eos_ids) when eos_token_id is neither an int nor a list of ints."""
    ids = {end_of_turn(tokenizer)}
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    src = model_dir if model_dir is not None else getattr(tokenizer, "name_or_path", "")
    return ids | set(weights.generation_eos_ids(src)) if src else ids
