"""Judge backends: Anthropic (SDK) and OpenAI-compatible (httpx), with one retry rule for both."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import re
import time
from dataclasses import dataclass

import anthropic
import httpx

from configs import ConfigError

log = logging.getLogger("termrl.judge")

# -----------------------------------------------------------------------------
# backends: one request in, (text, usage) out, errors classified for the chain


class BackendError(Exception):
    """A request to a judge backend failed. retryable: worth another try on the same backend
    (429, 408, 409, 5xx incl. 529, timeouts, connection errors); retry_after: seconds the server asked for."""

    def __init__(
        self,
        message: str,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.retryable, self.status, self.retry_after = retryable, status, retry_after


@dataclass
class Reply:
    text: str
    input_tokens: int
    output_tokens: int
    stop_reason: str | None


def _retryable_status(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def _retry_after(headers) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date); None when absent or unreadable."""
    try:
        if headers.get("retry-after-ms") is not None:
            return max(0.0, float(headers["retry-after-ms"]) / 1000.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class _Backend:
    """What both judge backends share: one async HTTP client per event loop (a client's connection pool
    belongs to the loop that made it; evaluation and training may run more than one loop), closed by aclose.
    Retries, backoff and retry-after are Judge._request's, once for both."""

    kind = ""

    def __init__(self, model: str, base_url: str | None, timeout_s: float, api_key: str | None):
        self.model, self.base_url, self.timeout_s, self.api_key = (
            model,
            base_url,
            timeout_s,
            api_key,
        )
        self._client, self._loop = None, None

    def _new_client(self):
        raise NotImplementedError

    def _get_client(self):
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client, self._loop = self._new_client(), loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            close = getattr(self._client, "aclose", None) or self._client.close
            await close()
        self._client = None


class AnthropicJudge(_Backend):
    """Anthropic Messages API via anthropic.AsyncAnthropic(base_url, timeout, max_retries=0)."""

    kind = "anthropic"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        api_key: str | None = None,
    ):
        super().__init__(model, base_url, timeout_s, api_key)

    def _new_client(self) -> anthropic.AsyncAnthropic:
        kw = {"api_key": self.api_key} if self.api_key else {}
        try:
            client = anthropic.AsyncAnthropic(
                base_url=self.base_url, timeout=self.timeout_s, max_retries=0, **kw
            )
        except (
            anthropic.AnthropicError
        ) as e:  # e.g. CredentialsError: a named profile that does not exist
            raise BackendError(f"{type(e).__name__}: {e}"[:300], False) from None
        if client.api_key is None and client.auth_token is None and client.credentials is None:
            raise BackendError("no Anthropic credentials found (set ANTHROPIC_API_KEY)", False)
        return client

    async def complete(
        self, system: str, messages: list[dict], max_tokens: int, temperature: float
    ) -> Reply:
        """One POST /v1/messages. temperature is not sent: the SDK (2.x) has no sampling parameters.
        Raises BackendError (classified) on any failure."""
        client = self._get_client()
        try:
            msg = await client.messages.create(
                model=self.model, system=system, messages=messages, max_tokens=max_tokens
            )
        except anthropic.APIStatusError as e:
            raise BackendError(
                f"HTTP {e.status_code}: {e.type or e.api_message or e.message}"[:300],
                _retryable_status(e.status_code),
                e.status_code,
                _retry_after(e.response.headers),
            ) from None
        except anthropic.APITimeoutError:
            raise BackendError(f"timed out after {self.timeout_s} s", True) from None
        except anthropic.APIConnectionError as e:
            raise BackendError(f"connection error: {e}", True) from None
        except anthropic.AnthropicError as e:
            raise BackendError(f"{type(e).__name__}: {e}"[:300], False) from None
        text = "".join(
            block.text for block in msg.content if getattr(block, "type", None) == "text"
        )
        return Reply(text, msg.usage.input_tokens, msg.usage.output_tokens, msg.stop_reason)


class OpenAIJudge(_Backend):
    """OpenAI-compatible POST {base_url}/v1/chat/completions via httpx (vLLM, SGLang, OpenAI, ...)."""

    kind = "openai"

    def __init__(
        self, model: str, base_url: str, timeout_s: float = 60.0, api_key: str | None = None
    ):
        super().__init__(
            model,
            base_url.rstrip("/"),
            timeout_s,
            api_key if api_key is not None else os.environ.get("OPENAI_API_KEY"),
        )

    def _new_client(self) -> httpx.AsyncClient:
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return httpx.AsyncClient(timeout=self.timeout_s, headers=headers)

    async def complete(
        self, system: str, messages: list[dict], max_tokens: int, temperature: float
    ) -> Reply:
        """One chat completion. Raises BackendError (classified) on any failure, including a reply of the wrong shape."""  # noqa: E501
        url = self.base_url + (
            "/chat/completions" if self.base_url.endswith("/v1") else "/v1/chat/completions"
        )
        payload = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, *messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        try:
            r = await self._get_client().post(url, json=payload)
        except httpx.TimeoutException:
            raise BackendError(f"timed out after {self.timeout_s} s", True) from None
        except httpx.TransportError as e:
            raise BackendError(f"connection error: {type(e).__name__}: {e}", True) from None
        if r.status_code != 200:
            try:  # OpenAI-style {"error": {"type", "message"}}; vLLM and others vary
                err = r.json()["error"]
                why = err.get("type") or err.get("message") if isinstance(err, dict) else str(err)
            except (ValueError, KeyError, TypeError):
                why = r.text[:200]
            raise BackendError(
                f"HTTP {r.status_code}: {why}",
                _retryable_status(r.status_code),
                r.status_code,
                _retry_after(r.headers),
            )
        try:
            data = r.json()
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
            usage = data.get("usage") or {}
            return Reply(
                text,
                int(usage.get("prompt_tokens", 0)),
                int(usage.get("completion_tokens", 0)),
                choice.get("finish_reason"),
            )
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise BackendError(
                f"reply is not a chat completion ({type(e).__name__}: {e}): {r.text[:200]}", False
            ) from None


def parse_backend_spec(spec: str, timeout_s: float = 60.0) -> AnthropicJudge | OpenAIJudge:
    """'anthropic:MODEL[@BASE_URL]' or 'openai:MODEL@BASE_URL' -> a backend. BASE_URL starts with http(s)://,
    so a model name may itself contain '@'.

    Raises:
        ConfigError: naming reward.judge_backends and the entry.
    """
    m = re.fullmatch(r"(anthropic|openai):(.+?)(?:@(https?://\S+))?", spec.strip())
    if not m:
        raise ConfigError(
            f"reward.judge_backends = {spec!r}: expected 'anthropic:MODEL[@BASE_URL]' or 'openai:MODEL@BASE_URL'"
        )
    kind, model, url = m.groups()
    if kind == "anthropic":
        return AnthropicJudge(model, url, timeout_s)
    if url is None:
        raise ConfigError(
            f"reward.judge_backends = {spec!r}: an openai backend needs '@BASE_URL' (http://host:port)"
        )
    return OpenAIJudge(model, url, timeout_s)


# USD per million (input, output) tokens; the longest matching prefix of the model name wins.
# List prices at the time of writing: check them against your provider's current price page.
PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
}


def price_of(model: str, default: tuple[float, float]) -> tuple[float, float]:
    """(input, output) USD per million tokens for model: longest prefix in PRICES, else default."""
    best = max((p for p in PRICES if model.startswith(p)), key=len, default=None)
    return PRICES[best] if best is not None else tuple(default)
