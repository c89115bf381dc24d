"""The engine interface: `SamplingParams`, `Completion`, `Engine` (every engine implements it)."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch

# ----------------------------------------------------------------------------- sampling and completions


@dataclass
class SamplingParams:
    """How to sample one completion. temperature 0 = greedy; top_k 0 = off; top_p 1.0 = off; max_tokens
    caps generated tokens; seed makes this request's samples reproducible whatever it is batched with.
    Completion.logprobs are log-probs under exactly this distribution (temperature, top-k, top-p applied,
    renormalised), so with truncation on they differ from the learner's untruncated log_softmax(logits / T).
    stop_check: called with the generated ids (list[int]) after each token; True ends the completion there
    (finish "stop", no end-of-turn token). TorchEngine checks it while decoding, so the tokens after the stop
    are never computed; for every engine the agent loop cuts the completion at the first such prefix too
    (`cut_at_stop`), so trajectories do not depend on the engine."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int = 512
    seed: int | None = None
    stop_check: Callable[[list[int]], bool] | None = None


@dataclass
class Completion:
    """token_ids: generated ids as sampled, ending with the stop token when finish_reason == "stop".
    logprobs: per generated token, its log-prob under the distribution it was sampled from: softmax(logits / T)
    with top-k and top-p applied and renormalised (`decode.sample_tokens`; vLLM's processed_logprobs); for greedy
    requests (temperature 0) log_softmax(logits)[token].
    finish_reason: "stop" (a stop token, or sampling.stop_check) or "length" (max_tokens or the engine's max_seq_len).
    exact: False when the engine could not return the sampled ids (OpenAIEngine in chat mode)."""

    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str
    exact: bool = True


# ----------------------------------------------------------------------------- engines


class Engine:
    """The interface every engine implements. `generate` is safe to call from many asyncio tasks at once;
    engines batch concurrent requests internally. `stop_ids` are the token ids that end a completion."""

    max_seq_len: int = 1 << 30
    stop_ids: set[int] = set()
    # load_weights takes any subset of the weights and keeps the rest (a LoRA sync sends only the
    # adapted ones, learner/sync.py)
    partial_load: bool = False

    async def generate(
        self, prompt_ids: list[int], sampling: SamplingParams, messages: list[dict] | None = None
    ) -> Completion:
        """Generate one completion of prompt_ids (list of token ids). `messages` is the same conversation as
        chat messages, for engines that can only take text (OpenAIEngine in chat mode); others ignore it.
        Completion.logprobs: each sampled token's log-prob under the distribution it was sampled from
        (softmax(logits / T), top-k and top-p applied, renormalised), as `decode.sample_tokens` defines it.
        Raises ValueError if the prompt does not leave room for one token within max_seq_len."""
        raise NotImplementedError

    def expect_episodes(self, episodes: int, rollout_start: bool = True) -> None:
        """`episodes` more episodes start acting: each calls generate turn after turn and
        `episode_done` once when it will call no more. rollout.run_episodes announces each episode
        as it takes its concurrency slot (rollout_start True for a rollout's first). TorchEngine in
        lockstep mode batches by it (a turn's requests of every episode acting together, in a
        fixed order); other engines ignore it."""

    def episode_done(self) -> None:
        """One episode of the rollout `expect_episodes` announced will call generate no more (it
        ended, failed or was cancelled). Ignored by engines that do not batch by it."""

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Replace the policy weights from (HF parameter name, tensor) pairs."""
        raise NotImplementedError(f"{type(self).__name__} cannot load weights")

    def held_parameters(self) -> list[tuple[str, torch.Tensor]]:
        """The weights the engine holds now, (name, tensor) pairs, to check a load against what was
        sent (learner/layout.parameters_checksum)."""
        raise NotImplementedError(f"{type(self).__name__} cannot show its weights")

    def sleep(self) -> None:
        """Release accelerator memory between rollouts (no-op where there is nothing to release)."""

    def wake_up(self) -> None:
        """Undo sleep() before the next rollout."""

    @property
    def weights_dropped(self) -> bool:
        """Whether sleep() discarded the weights, so the next wake_up needs load_weights first
        (train.py then syncs even when the policy did not change)."""
        return False

    async def probe(self) -> str | None:
        """Check once, before any episode, that the engine can serve its mode; returns a line to log (None:
        nothing to say). Raises ValueError naming what is missing (OpenAIEngine: the server's capabilities)."""
        return None

    async def aclose(self) -> None:
        """Stop background work and release clients."""


def check_prompt(engine: Engine, prompt_ids: list[int], sampling: SamplingParams) -> None:
    if not prompt_ids:
        raise ValueError("prompt_ids: empty prompt")
    if len(prompt_ids) >= engine.max_seq_len:
        raise ValueError(
            f"prompt_ids: {len(prompt_ids)} tokens leave no room within max_seq_len={engine.max_seq_len}"
        )
    if sampling.max_tokens < 1:
        raise ValueError(f"sampling.max_tokens = {sampling.max_tokens}: must be >= 1")
