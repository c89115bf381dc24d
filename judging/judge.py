"""The LLM judge: a rubric prompt, a chain of backends with retries, cooldowns, a disk cache and accounting.

The judge (`Judge`) grades the process shown in the transcript with our rubric and returns a score in
[0, 1], or None when every backend failed; reward.py combines it with the tests (`reward.combine`,
`reward.group_rewards`). A failed judge is never scored 0 (or 1).

Judge backends, tried in order (`RewardConfig.judge_backends`):
- `anthropic:MODEL[@BASE_URL]`  Anthropic Messages API through the `anthropic` SDK (AsyncAnthropic);
  the key comes from the SDK's usual sources (ANTHROPIC_API_KEY, ...); BASE_URL without /v1.
- `openai:MODEL@BASE_URL`       any OpenAI-compatible POST {BASE_URL}/v1/chat/completions through
  httpx (e.g. Qwen3-Coder served by vLLM); `Authorization: Bearer $OPENAI_API_KEY` when set.

The SDK's own retries are off (max_retries=0): the chain does its own bounded retries so they are
not doubled, and so a backend that keeps failing can be left for the next one instead.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from configs import RewardConfig
from judging.backends import BackendError, Reply, parse_backend_spec, price_of
from judging.prompt import PROMPT_VERSION, REPAIR, MalformedReply, build_prompt, parse_reply

log = logging.getLogger("termrl.judge")

# -----------------------------------------------------------------------------
# the chain


@dataclass
class JudgeResult:
    """score: in [0, 1], or None when every backend failed (the reward then uses the tests alone).
    backend: name ('kind:model') of the backend that answered; cached: served from the on-disk cache;
    errors: one line per failed attempt, 'name: reason'; tokens: this call's usage (0 when cached)."""

    score: float | None
    reasoning: str | None = None
    backend: str | None = None
    cached: bool = False
    errors: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0


class Judge:
    """A chain of judge backends with retries, cooldowns, a watched primary switch, a disk cache and accounting.

    For one `score` call, backends are tried in order (the primary named in cfg.judge_switch_file first):
    - a backend in cooldown is skipped;
    - retryable errors (429, 408, 409, 5xx incl. 529, timeouts, connection errors) are retried up to
      cfg.judge_max_retries times, waiting retry-after when the server gives one (longer than
      cfg.judge_max_retry_after_s: give up on this backend now), else judge_backoff_s * 2^k (jittered, capped);
    - other HTTP errors fail the backend at once;
    - a malformed reply (no JSON, refusal, bad fields, score outside [0, 1]) gets one repair prompt, then
      fails the backend;
    - cfg.judge_cooldown_after consecutive failed calls put a backend in cooldown for cfg.judge_cooldown_s.
    If every backend fails, the result's score is None and metrics["judge_failed"] is incremented.

    Before any request, the on-disk cache is consulted for every backend in the current order; a hit costs
    no request and no tokens. Key: sha256 of (kind, model, sha256 of the prompt, {max_tokens, temperature,
    PROMPT_VERSION}); one JSON file per entry, written atomically (temp file + rename).

    cfg.judge_switch_file, when set, holds one backend name ('kind:model', or the full spec with @BASE_URL);
    its mtime is checked before every call and a change moves that backend to the front (logged).

    metrics (cumulative; judge_calls = judge_ok + judge_failed, cache hits count as ok): judge_calls, judge_ok,
    judge_failed, judge_cache_hits, judge_retries, judge_wait_s
    (seconds slept before retries), judge_malformed, judge_repairs, judge_cooldown_skips, judge_switches,
    judge_input_tokens, judge_output_tokens, judge_cost_usd, and per backend name: judge_requests/NAME,
    judge_ok/NAME, judge_failures/NAME, judge_input_tokens/NAME, judge_output_tokens/NAME, judge_cost_usd/NAME.
    """

    def __init__(self, backends: list, cfg: RewardConfig, cache_dir: str | Path | None = None):
        if not backends:
            raise ValueError(
                "backends: a Judge needs at least one backend (build_judge returns None without any)"
            )
        self.cfg = cfg
        self.backends = list(backends)
        self.names = [f"{b.kind}:{b.model}" for b in self.backends]
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.metrics: dict[str, float] = {
            k: 0
            for k in (
                "judge_calls",
                "judge_ok",
                "judge_failed",
                "judge_cache_hits",
                "judge_retries",
                "judge_wait_s",
                "judge_malformed",
                "judge_repairs",
                "judge_cooldown_skips",
                "judge_switches",
                "judge_input_tokens",
                "judge_output_tokens",
                "judge_cost_usd",
            )
        }
        for n in self.names:
            for k in ("requests", "ok", "failures", "input_tokens", "output_tokens", "cost_usd"):
                self.metrics[f"judge_{k}/{n}"] = 0
        self._order = list(range(len(self.backends)))
        self._consecutive_failures = [0] * len(self.backends)
        self._cooldown_until = [0.0] * len(self.backends)
        self._switch_stamp = None
        self._sem, self._sem_loop = None, None

    # --- primary switch -------------------------------------------------------

    def _find(self, name: str) -> int | None:
        for i, b in enumerate(self.backends):  # full spec form first, then kind:model
            if b.base_url and name.rstrip("/") == f"{self.names[i]}@{b.base_url.rstrip('/')}":
                return i
        return self.names.index(name) if name in self.names else None

    def _check_switch(self) -> None:
        """Re-read cfg.judge_switch_file when its mtime changed; its content names the new primary backend."""
        path = self.cfg.judge_switch_file
        if not path:
            return
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._switch_stamp:
            return
        self._switch_stamp = stamp
        name = Path(path).read_text().strip()
        if not name:
            return
        i = self._find(name)
        if i is None:
            log.error(
                "judge switch file %s names %r, not one of the configured backends %s; primary unchanged",
                path,
                name,
                self.names,
            )
            return
        if self._order[0] == i:
            return
        old = self.names[self._order[0]]
        self._order = [i] + [j for j in range(len(self.backends)) if j != i]
        self.metrics["judge_switches"] += 1
        log.warning(
            "judge primary switched from %s to %s (switch file %s)", old, self.names[i], path
        )

    # --- cache ----------------------------------------------------------------

    def _cache_path(self, i: int, system: str, user: str) -> Path | None:
        if self.cache_dir is None:
            return None
        b = self.backends[i]
        prompt_hash = hashlib.sha256(json.dumps([system, user]).encode()).hexdigest()
        params = {
            "max_tokens": self.cfg.judge_max_tokens,
            "temperature": self.cfg.judge_temperature,
            "prompt_version": PROMPT_VERSION,
        }
        key = json.dumps([b.kind, b.model, prompt_hash, params], sort_keys=True)
        return self.cache_dir / (hashlib.sha256(key.encode()).hexdigest() + ".json")

    def _cache_get(self, path: Path | None) -> dict | None:
        if path is None or not path.exists():
            return None
        try:
            entry = json.loads(path.read_text())
            parse_reply(json.dumps({"score": entry["score"], "reasoning": entry["reasoning"]}))
            return entry
        except (OSError, ValueError, KeyError, TypeError) as e:
            log.warning("judge cache entry %s unreadable (%s); asking the backend again", path, e)
            return None

    def _cache_put(self, path: Path | None, entry: dict) -> None:
        if path is None:
            return
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # write to a temp file in the same dir, then rename: readers never see half an entry
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(entry, f)
            os.replace(tmp, path)
        except OSError as e:  # a full disk costs the cache, not the score
            log.warning("judge cache write to %s failed (%s); score kept, not cached", path, e)
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)

    # --- requests -------------------------------------------------------------

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:
            self._sem, self._sem_loop = asyncio.Semaphore(self.cfg.judge_max_concurrent), loop
        return self._sem

    async def _request(
        self, i: int, system: str, messages: list[dict], result: JudgeResult
    ) -> Reply:
        """One request with bounded retries on backend i. Raises BackendError when it gives up."""
        name, cfg = self.names[i], self.cfg
        for attempt in range(cfg.judge_max_retries + 1):
            try:
                self.metrics[f"judge_requests/{name}"] += 1
                async with self._semaphore():
                    reply = await self.backends[i].complete(
                        system, messages, cfg.judge_max_tokens, cfg.judge_temperature
                    )
                self._account(i, reply, result)
                return reply
            except BackendError as e:
                result.errors.append(f"{name}: {e}")
                if not e.retryable or attempt == cfg.judge_max_retries:
                    raise
                if e.retry_after is not None:
                    if e.retry_after > cfg.judge_max_retry_after_s:
                        raise BackendError(
                            f"retry-after {e.retry_after} s exceeds reward.judge_max_retry_after_s",
                            False,
                            e.status,
                        ) from None
                    wait = e.retry_after
                else:
                    wait = min(
                        cfg.judge_backoff_max_s, cfg.judge_backoff_s * 2**attempt
                    ) * random.uniform(0.5, 1.0)
                self.metrics["judge_retries"] += 1
                self.metrics["judge_wait_s"] += wait
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    def _account(self, i: int, reply: Reply, result: JudgeResult) -> None:
        name, b = self.names[i], self.backends[i]
        price_in, price_out = price_of(b.model, self.cfg.judge_default_price)
        cost = (reply.input_tokens * price_in + reply.output_tokens * price_out) / 1e6
        for suffix, value in (
            ("input_tokens", reply.input_tokens),
            ("output_tokens", reply.output_tokens),
            ("cost_usd", cost),
        ):
            self.metrics[f"judge_{suffix}/{name}"] += value
            self.metrics[f"judge_{suffix}"] += value
        result.input_tokens += reply.input_tokens
        result.output_tokens += reply.output_tokens

    async def _ask(self, i: int, system: str, user: str, result: JudgeResult) -> tuple[float, str]:
        """Grade on backend i: one request, and one repair request if the reply is malformed.
        Raises BackendError or MalformedReply when this backend gives no usable score."""
        messages = [{"role": "user", "content": user}]
        reply = await self._request(i, system, messages, result)
        try:
            return self._parse(reply)
        except MalformedReply as e:
            self.metrics["judge_malformed"] += 1
            self.metrics["judge_repairs"] += 1
            result.errors.append(f"{self.names[i]}: malformed reply: {e}")
            messages += [
                {"role": "assistant", "content": reply.text or "(empty)"},
                {"role": "user", "content": REPAIR.format(why=e)},
            ]
        reply = await self._request(i, system, messages, result)
        try:
            return self._parse(reply)
        except MalformedReply as e:
            self.metrics["judge_malformed"] += 1
            result.errors.append(f"{self.names[i]}: malformed reply after repair: {e}")
            raise

    @staticmethod
    def _parse(reply: Reply) -> tuple[float, str]:
        try:
            return parse_reply(reply.text)
        except MalformedReply as e:
            if reply.stop_reason == "refusal":
                raise MalformedReply(f"refusal: {reply.text[:80]!r}") from None
            raise e

    async def score(self, instruction: str, transcript, outcome: str | None = None) -> JudgeResult:
        """Grade one trajectory: instruction (the task text), transcript (str or chat messages), outcome
        (what the hidden tests found, `prompt.describe_outcome`; None when not known).

        Returns JudgeResult; .score is None when every backend failed or was cooling down (never a stand-in
        0 or 1). Raises TypeError for an instruction that is not a str or a transcript that is neither a str
        nor a list of messages.
        """
        system, user = build_prompt(
            instruction, transcript, self.cfg.judge_transcript_tokens, outcome
        )
        self.metrics["judge_calls"] += 1
        self._check_switch()
        result = JudgeResult(score=None)
        order = list(self._order)
        for i in order:
            entry = self._cache_get(self._cache_path(i, system, user))
            if entry is not None:
                self.metrics["judge_cache_hits"] += 1
                self.metrics["judge_ok"] += 1
                result.score, result.reasoning = float(entry["score"]), entry["reasoning"]
                result.backend, result.cached = self.names[i], True
                return result
        for i in order:
            name = self.names[i]
            if time.monotonic() < self._cooldown_until[i]:
                self.metrics["judge_cooldown_skips"] += 1
                result.errors.append(f"{name}: skipped, cooling down")
                continue
            try:
                score, reasoning = await self._ask(i, system, user, result)
            except (BackendError, MalformedReply) as e:
                self._fail(i, e)
                continue
            self._consecutive_failures[i] = 0
            self.metrics[f"judge_ok/{name}"] += 1
            self.metrics["judge_ok"] += 1
            result.score, result.reasoning, result.backend = score, reasoning, name
            self._cache_put(
                self._cache_path(i, system, user),
                {
                    "score": score,
                    "reasoning": reasoning,
                    "backend": name,
                    "model": self.backends[i].model,
                    "input_tokens": result.input_tokens,
                    "output_tokens": result.output_tokens,
                    "created": time.time(),
                },
            )
            return result
        self.metrics["judge_failed"] += 1
        log.error(
            "judge failed on every backend; this reward uses the tests alone. %s",
            "; ".join(result.errors)[-2000:],
        )
        return result

    def _fail(self, i: int, e: Exception) -> None:
        name = self.names[i]
        self.metrics[f"judge_failures/{name}"] += 1
        self._consecutive_failures[i] += 1
        log.warning("judge backend %s failed (%s); trying the next one", name, e)
        if self._consecutive_failures[i] >= self.cfg.judge_cooldown_after:
            self._cooldown_until[i] = time.monotonic() + self.cfg.judge_cooldown_s
            self._consecutive_failures[i] = 0
            log.warning(
                "judge backend %s failed %d calls in a row: skipped for %.0f s",
                name,
                self.cfg.judge_cooldown_after,
                self.cfg.judge_cooldown_s,
            )

    async def aclose(self) -> None:
        """Close the backends' HTTP clients (those opened on the running event loop)."""
        for b in self.backends:
            await b.aclose()


_logged_no_judge = False


def build_judge(cfg: RewardConfig, out_dir: str | Path) -> Judge | None:
    """The Judge for cfg.judge_backends, or None when none are configured (reward = tests alone; logged once).

    The cache lives in cfg.judge_cache_dir, or <out_dir>/judge_cache when that is ''.
    Raises ConfigError for a malformed backend entry (the other judge settings are trusted: configs.validate).
    """
    global _logged_no_judge
    if not cfg.judge_backends:
        if not _logged_no_judge:
            log.info(
                "no judge configured (reward.judge_backends is empty): reward = weighted test pass fraction alone"
            )
            _logged_no_judge = True
        return None
    backends = [parse_backend_spec(spec, cfg.judge_timeout_s) for spec in cfg.judge_backends]
    cache_dir = Path(cfg.judge_cache_dir) if cfg.judge_cache_dir else Path(out_dir) / "judge_cache"
    return Judge(backends, cfg, cache_dir)
