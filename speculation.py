"""Draft tokens for speculative decoding by prompt lookup: no draft model, just the context itself.

An agent's reply copies a lot from its context: paths and names from the task, lines of a file it just
printed, the fence and command syntax of its own earlier turns. Prompt lookup (Saxena 2023, "Prompt Lookup
Decoding"; vLLM's `ngram` speculator and transformers' `prompt_lookup_num_tokens` do the same) proposes the
token that followed the latest earlier occurrence of the context's last n tokens, longest n first.

TorchEngine feeds each sequence's draft together with its newest token while few sequences decode: on CPU a
step over two tokens per row costs 1.0-1.2x a step over one at 1-4 rows (decode._linear), so a right guess
(30-40% of them) is a nearly free token. The draft is kept only if the token sampled at its place equals it,
so the output distribution is the model's (Leviathan et al. 2023, "Fast Inference from Transformers via Speculative
Decoding", with a one-token deterministic draft: accepted with probability p(draft)).
"""

from __future__ import annotations


class PromptLookup:
    """Incremental n-gram index over one sequence's context (prompt + generated tokens).

    follower[gram] is the token that followed the latest occurrence of `gram` (a tuple of 1..max_n ids) whose
    follower is known; indexing is incremental, so each call costs O(new tokens x max_n) dict operations.
    """

    def __init__(self, max_n: int = 3):
        if max_n < 1:
            raise ValueError(f"PromptLookup max_n={max_n}: must be >= 1")
        self.max_n = max_n
        self.context: list[int] = []
        self.follower: dict[tuple[int, ...], int] = {}

    def draft(self, prompt: list[int], generated: list[int]) -> int | None:
        """The proposed next token after prompt + generated, or None when no suffix of 1..max_n tokens occurred
        before. The context must only grow between calls (the same prompt, more generated tokens); raises
        ValueError when it shrank."""
        ctx, known = self.context, len(self.context)
        total = len(prompt) + len(generated)
        if total < known:
            raise ValueError(f"PromptLookup.draft: context shrank from {known} to {total} tokens")
        ctx.extend(prompt[known:])
        ctx.extend(generated[max(0, len(ctx) - len(prompt)):])
        for j in range(max(known, 1), total):  # index every gram ending just before a newly known token
            for n in range(1, min(self.max_n, j) + 1):
                self.follower[tuple(ctx[j - n:j])] = ctx[j]
        for n in range(min(self.max_n, total), 0, -1):
            token = self.follower.get(tuple(ctx[total - n:]))
            if token is not None:
                return token
        return None
