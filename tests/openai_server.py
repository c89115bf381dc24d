"""A fixed-reply OpenAI-compatible server on 127.0.0.1 for tests; records every request.

    srv = CompletionsServer(reply_ids=[5, 6], logprobs=[-1.0, -1.0])
    ... drive it with engines' OpenAIEngine(srv.url, ...) ...
    srv.bodies[-1]            # (path, JSON body) of the last request
    srv.close()

/v1/completions answers the reply ids as vLLM does with `return_tokens_as_token_ids` ("token_id:N"; plain
text tokens when as_token_ids=False) with their log-probs; /v1/chat/completions answers one bash block.
"""

import http.server
import json
import threading


class CompletionsServer:
    def __init__(self, reply_ids: list[int], logprobs: list[float], as_token_ids: bool = True):
        self.bodies: list[tuple[str, dict]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append((self.path, body))
                if self.path == "/v1/completions":
                    toks = [f"token_id:{t}" if as_token_ids else "x" for t in reply_ids]
                    data = {
                        "choices": [
                            {
                                "text": "",
                                "finish_reason": "stop",
                                "logprobs": {"tokens": toks, "token_logprobs": logprobs},
                            }
                        ]
                    }
                else:
                    data = {
                        "choices": [
                            {
                                "message": {"role": "assistant", "content": "```bash\nls\n```"},
                                "finish_reason": "stop",
                            }
                        ]
                    }
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
