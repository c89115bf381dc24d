"""A scripted LLM-judge server on 127.0.0.1 for tests: Anthropic Messages API and OpenAI chat completions.

    with JudgeServer() as srv:
        srv.script("claude-a", ("429", {"retry-after": "0.05"}), "ok")   # a queue; the last entry repeats
        url = srv.url                                                     # http://127.0.0.1:PORT
        ... drive it with the real anthropic / httpx clients ...
        srv.count("/v1/messages", "claude-a")                            # requests that model received

Behaviours are chosen per model name (the "model" field of the request body); a model with no
script answers "ok". Each request pops the head of the model's queue; the last entry is sticky.

    "ok" | ("ok", score)       200, JSON {"reasoning": ..., "score": score} (default srv.default_score)
    ("ok_slow", seconds)       as "ok" after a delay (for the concurrency test)
    "fenced"                   200, the JSON inside a ```json code fence
    ("429", headers)           429 rate_limit_error with these headers (e.g. {"retry-after": "0.05"})
    "529"                      529 overloaded_error
    "500"                      500 api_error
    "401"                      401 authentication_error (not retryable)
    "slow"                     sleeps srv.slow_s (past the client's timeout), then answers ok
    "malformed"                200, text that is not JSON
    "out_of_range"             200, JSON with score 7
    "refusal"                  200, a refusal in prose (no JSON); Anthropic stop_reason "refusal"

Every reply that reaches the judge carries usage: input_tokens = srv.input_tokens, output_tokens =
srv.output_tokens (prompt_tokens / completion_tokens on the OpenAI route), so token counts are exact.
Each request is recorded in srv.requests as {"path", "model", "body", "headers"}; srv.max_in_flight
is the largest number of requests handled at once.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REFUSAL = "I'm sorry, but I can't help with grading this transcript."


class JudgeServer:
    def __init__(
        self,
        slow_s: float = 2.0,
        default_score: float = 0.8,
        input_tokens: int = 1000,
        output_tokens: int = 50,
    ):
        self.slow_s = slow_s
        self.default_score = default_score
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.requests: list[dict] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._scripts: dict[str, list] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()  # wakes sleeping "slow" handlers at shutdown
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="judge-server",
            daemon=True,
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, model: str, *behaviours) -> None:
        """Queue behaviours for requests naming `model`; the last one repeats once the queue is drained."""
        if not behaviours:
            raise ValueError("script: give at least one behaviour")
        with self._lock:
            self._scripts[model] = list(behaviours)

    def count(self, path: str | None = None, model: str | None = None) -> int:
        """Requests received, optionally only on `path` and/or for `model`."""
        with self._lock:
            return sum(
                1
                for r in self.requests
                if (path is None or r["path"] == path) and (model is None or r["model"] == model)
            )

    def bodies(self, path: str | None = None, model: str | None = None) -> list[dict]:
        with self._lock:
            return [
                r["body"]
                for r in self.requests
                if (path is None or r["path"] == path) and (model is None or r["model"] == model)
            ]

    def _next(self, model: str):
        with self._lock:
            queue = self._scripts.get(model)
            if not queue:
                return "ok"
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def __enter__(self) -> "JudgeServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)


ERRORS = {
    "429": "rate_limit_error",
    "529": "overloaded_error",
    "500": "api_error",
    "401": "authentication_error",
}


def _reply_text(server: JudgeServer, name: str, arg) -> str:
    """The judge's reply text for behaviour `name` (see the module docstring)."""
    if name == "ok":
        score = server.default_score if arg is None else arg
        return json.dumps(
            {"reasoning": "Inspected, verified, no destructive actions.", "score": score}
        )
    if name == "fenced":
        body = json.dumps({"reasoning": "Fine.", "score": server.default_score})
        return "```json\n" + body + "\n```"
    if name == "malformed":
        return '{"reasoning": "cut off mid-string, "score": 0.'
    if name == "out_of_range":
        return json.dumps({"reasoning": "Excellent.", "score": 7})
    if name == "refusal":
        return REFUSAL
    raise ValueError(f"unknown behaviour {name!r}")


def _anthropic_reply(server: JudgeServer, model: str, text: str, stop_reason: str) -> dict:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "model": model,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": server.input_tokens, "output_tokens": server.output_tokens},
    }


def _openai_reply(server: JudgeServer, model: str, text: str) -> dict:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": server.input_tokens,
            "completion_tokens": server.output_tokens,
            "total_tokens": server.input_tokens + server.output_tokens,
        },
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_state: JudgeServer  # set per server by _handler_for

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_POST(self):
        server = self.server_state
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = {}
        model = body.get("model", "")
        headers = {k.lower(): v for k, v in self.headers.items()}
        with server._lock:
            server.requests.append(
                {"path": self.path, "model": model, "body": body, "headers": headers}
            )
            server._in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server._in_flight)
        try:
            self._answer(model, server._next(model))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)
        finally:
            with server._lock:
                server._in_flight -= 1

    def _answer(self, model: str, behaviour) -> None:
        server = self.server_state
        name, arg = (behaviour, None) if isinstance(behaviour, str) else behaviour
        if self.path not in ("/v1/messages", "/v1/chat/completions"):
            return self._send(404, {"error": {"type": "not_found_error", "message": self.path}})
        anthropic = self.path == "/v1/messages"
        if name in ERRORS:
            error = {"type": "error", "error": {"type": ERRORS[name], "message": ERRORS[name]}}
            return self._send(int(name), error, headers=arg or {})
        if name == "slow":
            if server._stop.wait(server.slow_s):
                return
            name = "ok"
        if name == "ok_slow":
            server._stop.wait(arg)
            name, arg = "ok", None
        text = _reply_text(server, name, arg)
        if anthropic:
            stop_reason = "refusal" if name == "refusal" else "end_turn"
            return self._send(200, _anthropic_reply(server, model, text, stop_reason))
        self._send(200, _openai_reply(server, model, text))

    def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


def _handler_for(server: JudgeServer) -> type:
    """A handler class bound to `server` (http.server makes one handler instance per request)."""
    return type("Handler", (_Handler,), {"server_state": server})
