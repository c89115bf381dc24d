"""Draft tokens for speculative decoding by n-gram lookup: no draft model, just text the engine has seen.

An agent's reply copies a lot from its context: paths and names from the task, lines of a file it just
printed, the fence and command syntax of its own earlier turns. Prompt lookup (Saxena 2023, "Prompt Lookup
Decoding"; vLLM's `ngram` speculator and transformers' `prompt_lookup_num_tokens` do the same) proposes the
tokens that followed the latest earlier occurrence of the context's last n tokens, longest n first. Where the
sequence's own context has no such occurrence, TorchEngine looks the suffix up in the replies it has already
finished (as SuffixDecoding does over earlier outputs, Oliaro et al. 2024): a GRPO group's episodes, and an
agent's episodes of other tasks, write much the same commands.

An option of TorchEngine only (`policy.engine_speculate_max_batch = 0` turns it off; the decode functions
just take T tokens per row). TorchEngine feeds each sequence's draft with its newest token while few
sequences decode: on CPU a
step over up to 6 rows costs 1.0-1.15x a step over one (cpu_fast._linear), so each kept draft token is a nearly
free token. A draft token is kept only if the token sampled at its place equals it (and so were all before it),
so the output distribution is the model's (Leviathan et al. 2023, "Fast Inference from Transformers via
Speculative Decoding", with a deterministic draft: each draft token is kept with probability p(draft token)).
"""

from __future__ import annotations


class NgramIndex:
    """Incremental n-gram index over a growing token list.

    at[gram] is the index in `context` of the token that followed the latest occurrence of `gram` (a tuple of
    1..max_n ids) whose follower is known. `extend` costs O(new tokens x max_n) dict operations.
    """

    def __init__(self, max_n: int = 3):
        if max_n < 1:
            raise ValueError(f"NgramIndex max_n={max_n}: must be >= 1")
        self.max_n = max_n
        self.context: list[int] = []
        self.at: dict[tuple[int, ...], int] = {}

    def extend(self, tokens: list[int]) -> None:
        """Append tokens to the context and index every gram that now has a known follower."""
        ctx, known = self.context, len(self.context)
        ctx.extend(tokens)
        for j in range(
            max(known, 1), len(ctx)
        ):  # every gram ending just before a newly known token
            for n in range(1, min(self.max_n, j) + 1):
                self.at[tuple(ctx[j - n : j])] = j

    def propose(self, suffix: list[int], k: int) -> list[int]:
        """Up to k tokens that followed the latest occurrence of the longest of suffix's last 1..max_n tokens
        found in the index ([] when none is; fewer than k when the context ends sooner). Raises ValueError
        for k < 1."""
        if k < 1:
            raise ValueError(f"NgramIndex.propose: k={k}: must be >= 1")
        for n in range(min(self.max_n, len(suffix)), 0, -1):
            j = self.at.get(tuple(suffix[len(suffix) - n :]))
            if j is not None:
                return self.context[j : j + k]
        return []


class PromptLookup(NgramIndex):
    """The n-gram index of one sequence's context (prompt + generated tokens), fed incrementally by `draft`."""

    def draft(self, prompt: list[int], generated: list[int], k: int = 1) -> list[int]:
        """Up to k proposed next tokens after prompt + generated: `propose` on this context, which is first
        brought up to date. The context must only grow between calls (the same prompt, more generated tokens);
        raises ValueError when it shrank, or for k < 1."""
        known, total = len(self.context), len(prompt) + len(generated)
        if total < known:
            raise ValueError(f"PromptLookup.draft: context shrank from {known} to {total} tokens")
        self.extend(prompt[known:] + generated[max(0, known - len(prompt)) :])
        return self.propose(self.context, k)
