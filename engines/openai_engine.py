"""OpenAIEngine: any OpenAI-compatible server over HTTP (vLLM, SGLang, `transformers serve`, hosted APIs),
for evaluating served models. A one-time capability probe decides which extensions the requests carry.
"""

import asyncio
import logging
import os
from typing import Any, Literal

import httpx

from engines.base import Completion, Engine, SamplingParams, check_prompt
from hf.chat import end_of_turn, stop_ids_of

log = logging.getLogger("termrl.engines")


class OpenAIEngine(Engine):
    """Any OpenAI-compatible server over HTTP (httpx), for evaluating served models.

    mode "completions" (default): POST {base_url}/v1/completions with the prompt as token ids, `logprobs: 1`
    and `return_tokens_as_token_ids: true` (vLLM: logprobs.tokens come back as "token_id:N"), so the sampled
    ids and their log-probs come back exactly: token-exact, usable for training. A server that cannot do this
    is refused at start-up by `probe()` (one ValueError naming the missing capability and pointing to chat
    mode), never re-tokenised silently.
    mode "chat": POST {base_url}/v1/chat/completions with `messages` (the agent passes its conversation); the
    reply text is re-tokenised, log-probs are 0.0 and Completion.exact is False: fine for evaluation (the
    episode runs and is scored the same way), not for training (the ids are not the sampled ones).

    Requests carry only the OpenAI API's fields (model, prompt/messages, max_tokens, temperature, top_p, seed,
    logprobs) plus the extensions the server accepted in `probe()` (EXTENSIONS: top_k, stop_token_ids,
    skip_special_tokens; in completions mode also the token-exact fields above). A knob the server refused is
    not sent (top_k > 0 then samples without top-k), and probe()'s line says so once.
    Concurrency: up to max_concurrent requests in flight; the server batches them.
    """

    EXTENSIONS = (
        "top_k",
        "stop_token_ids",
        "skip_special_tokens",
    )  # vLLM/SGLang fields outside the OpenAI API

    def __init__(
        self,
        base_url: str,
        model: str,
        tokenizer,
        mode: Literal["completions", "chat"] = "completions",
        api_key: str | None = None,
        timeout_s: float = 600.0,
        max_concurrent: int = 64,
        max_seq_len: int = 1 << 30,
    ):
        self.base_url, self.model_name, self.tokenizer, self.mode = (
            base_url.rstrip("/"),
            model,
            tokenizer,
            mode,
        )
        self.max_seq_len = max_seq_len
        self.stop_ids = stop_ids_of(tokenizer)
        self.eot = end_of_turn(tokenizer)
        headers = {
            "Authorization": f"Bearer {api_key or os.environ.get('OPENAI_API_KEY', 'EMPTY')}"
        }
        self.client = httpx.AsyncClient(timeout=timeout_s, headers=headers)
        self._sem = asyncio.Semaphore(max_concurrent)
        self.extensions: set[str] | None = None  # accepted extension fields; None until probe()
        self.refused: list[str] = []  # extension fields the server refused
        self._probe_lock = asyncio.Lock()
        self._probe_line: str | None = None
        self._probe_error: Exception | None = None

    @property
    def _path(self) -> str:
        return "/v1/completions" if self.mode == "completions" else "/v1/chat/completions"

    async def probe(self) -> str:
        """Find once what the server accepts; returns the one line to log (mode, extensions in use, knobs the
        server cannot honour), also logged at INFO the first time. Sends a few 1-token requests: completions
        mode first checks token-exact support step by step (prompt as token ids, logprobs,
        return_tokens_as_token_ids), then each of EXTENSIONS alone. Raises ValueError when completions mode
        lacks a token-exact capability (the message names it and says chat mode works) or when the server
        fails otherwise (unreachable, 5xx, 401, chat refused); the error is kept, so every later call and
        generate() raise the same one."""
        async with self._probe_lock:
            if self._probe_error is not None:
                raise self._probe_error
            if self._probe_line is None:
                try:
                    self._probe_line = await self._probe()
                except Exception as e:
                    self._probe_error = e
                    raise
                log.info("%s", self._probe_line)
            return self._probe_line

    async def _probe(self) -> str:
        base: dict[str, Any] = {"model": self.model_name, "max_tokens": 1, "temperature": 0.0}
        if self.mode == "completions":
            base["prompt"] = self.tokenizer.encode("Hello", add_special_tokens=False)
            for field_, value in (
                ("prompt", base["prompt"]),
                ("logprobs", 1),
                ("return_tokens_as_token_ids", True),
            ):
                base[field_] = value
                status, data = await self._try(base)
                missing = _exact_problem(field_, status, data)
                if missing:
                    raise ValueError(
                        f"{self.base_url}/v1/completions cannot do token-exact completions: {missing}. "
                        "Use --openai-mode chat with this server (evaluation only: chat trajectories "
                        "are re-tokenised text, not usable for training)"
                    )
        else:
            base["messages"] = [{"role": "user", "content": "Hello"}]
            status, data = await self._try(base)
            if status != 200:
                raise ValueError(
                    f"{self.base_url}/v1/chat/completions: HTTP {status}: {str(data)[:300]}"
                )
        values = {"top_k": 1, "stop_token_ids": sorted(self.stop_ids), "skip_special_tokens": False}
        accepted, self.refused = set(), []
        for name in self.EXTENSIONS if self.mode == "completions" else ("top_k",):
            status, _ = await self._try({**base, name: values[name]})
            if status == 200:
                accepted.add(name)
            else:
                self.refused.append(name)
        self.extensions = accepted  # set last: generate() reads it without the lock
        if self.mode == "completions":
            used = ["prompt as token ids", "return_tokens_as_token_ids"] + sorted(accepted)
            kind = "token-exact (ids and log-probs as sampled: evaluation and training)"
        else:
            used = sorted(accepted)
            kind = "chat, not token-exact (reply text re-tokenised, no log-probs: evaluation only, not training)"
        cannot = self.refused + (["logprobs", "token ids"] if self.mode == "chat" else [])
        return (
            f"OpenAIEngine {self.base_url}{self._path}: {kind}; extensions in use: {', '.join(used) or 'none'}; "
            f"not honoured (not sent): {', '.join(cannot) or 'none'}"
        )

    async def _try(self, body: dict) -> tuple[int, Any]:
        """POST body to this mode's path: (HTTP status, parsed JSON or text). A refusal (4xx other than
        401/403/429) is returned; no connection, 5xx and auth errors raise ValueError naming the server (at
        start-up these mean a wrong --openai-base-url, key or server, not a bad episode)."""
        url = self.base_url + self._path
        try:
            r = await self.client.post(url, json=body)
        except httpx.HTTPError as e:
            raise ValueError(f"{url}: no answer ({type(e).__name__}: {e})") from e
        if r.status_code >= 500 or r.status_code in (401, 403, 429):
            raise ValueError(f"{url}: HTTP {r.status_code}: {r.text[:300]}")
        try:
            return r.status_code, r.json()
        except ValueError:
            return r.status_code, r.text

    async def generate(
        self, prompt_ids: list[int], sampling: SamplingParams, messages: list[dict] | None = None
    ) -> Completion:
        check_prompt(self, prompt_ids, sampling)
        if self.extensions is None:
            await self.probe()
        body: dict[str, Any] = {
            "model": self.model_name,
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
        }
        if sampling.top_k > 0 and "top_k" in self.extensions:
            body["top_k"] = sampling.top_k
        if sampling.seed is not None:
            body["seed"] = sampling.seed & 0x7FFFFFFF  # servers take 32-bit seeds
        async with self._sem:
            if self.mode == "chat":
                if messages is None:
                    raise ValueError("OpenAIEngine(mode='chat').generate needs messages")
                body["messages"] = [{"role": m["role"], "content": m["content"]} for m in messages]
                data = await self._post("/v1/chat/completions", body)
                choice = self._choice(data, "/v1/chat/completions")
                text = (choice.get("message") or {}).get("content") or ""
                stopped = choice.get("finish_reason") == "stop"
                ids = self.tokenizer.encode(text, add_special_tokens=False) + (
                    [self.eot] if stopped else []
                )
                return Completion(
                    ids, [0.0] * len(ids), "stop" if stopped else "length", exact=False
                )
            body.update(prompt=list(prompt_ids), logprobs=1, return_tokens_as_token_ids=True)
            if "stop_token_ids" in self.extensions:
                body["stop_token_ids"] = sorted(self.stop_ids)
            if "skip_special_tokens" in self.extensions:
                body["skip_special_tokens"] = False
            data = await self._post("/v1/completions", body)
        choice = self._choice(data, "/v1/completions")
        lp = choice.get("logprobs") or {}
        tokens, token_logprobs = lp.get("tokens"), lp.get("token_logprobs")
        if (
            not isinstance(tokens, list)
            or not isinstance(token_logprobs, list)
            or len(tokens) != len(token_logprobs)
        ):
            raise ValueError(
                f"{self.base_url}/v1/completions: choices[0].logprobs.tokens/token_logprobs missing or "
                f"of unequal length; the server must support logprobs"
            )
        ids = []
        for t in tokens:
            if not (isinstance(t, str) and t.startswith("token_id:")):
                raise ValueError(
                    f"{self.base_url}/v1/completions: choices[0].logprobs.tokens item {t!r} is not "
                    f"'token_id:N'; the server must support return_tokens_as_token_ids (vLLM)"
                )
            ids.append(int(t.split(":", 1)[1]))
        reason = "stop" if choice.get("finish_reason") == "stop" else "length"
        return Completion(ids, [float(x) for x in token_logprobs], reason)

    async def _post(self, path: str, body: dict) -> dict:
        r = await self.client.post(self.base_url + path, json=body)
        if r.status_code != 200:
            raise RuntimeError(f"{self.base_url}{path}: HTTP {r.status_code}: {r.text[:300]}")
        try:
            return r.json()
        except ValueError as e:
            raise ValueError(f"{self.base_url}{path}: reply is not JSON: {r.text[:200]!r}") from e

    def _choice(self, data: dict, path: str) -> dict:
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices[0], dict):
            raise ValueError(f"{self.base_url}{path}: reply has no choices[0]: {str(data)[:200]}")
        return choices[0]

    async def aclose(self) -> None:
        await self.client.aclose()


def _exact_problem(field_: str, status: int, data: Any) -> str | None:
    """Why a token-exact probe step failed (None when it passed). field_: the capability this step added."""
    if status != 200:
        what = {
            "prompt": "prompt as token ids",
            "logprobs": "logprobs",
            "return_tokens_as_token_ids": "return_tokens_as_token_ids",
        }[field_]
        return f"{what} refused (HTTP {status}: {str(data)[:200]})"
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = (
        choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    )
    lp = choice.get("logprobs") or {}
    if field_ == "logprobs" and not isinstance(lp.get("token_logprobs"), list):
        return "logprobs accepted but not returned (choices[0].logprobs.token_logprobs missing)"
    tokens = lp.get("tokens")
    if field_ == "return_tokens_as_token_ids" and not (
        isinstance(tokens, list)
        and tokens
        and all(isinstance(t, str) and t.startswith("token_id:") for t in tokens)
    ):
        return f"return_tokens_as_token_ids accepted but logprobs.tokens are not 'token_id:N' ({str(tokens)[:100]})"
    return None
