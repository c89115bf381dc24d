"""tasks/generate.py: the synthetic generation pipeline against a Messages API server on 127.0.0.1 and an
OpenAI-compatible chat completions server (drafts kept only when novel and valid)."""

import asyncio
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tasks import load_tasks

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

# ---------------------------------------------------------------- generation (Messages API on 127.0.0.1)


def draft(
    task_id,
    instruction,
    solution='printf "c\\nb\\na\\n" > /app/reversed.txt\n',
    weights=None,
    **changes,
):
    files = {
        "Dockerfile": "ARG BASE_IMAGE=termrl/base:bookworm\nFROM ${BASE_IMAGE}\nWORKDIR /app\nCOPY files/ /app/\n",
        "files/lines.txt": "a\nb\nc\n",
        "solution.sh": "#!/bin/bash\n" + solution,
        "tests/test_outputs.py": (
            "from pathlib import Path\n\n\ndef test_exists():\n"
            "    assert Path('/app/reversed.txt').is_file()\n\n\ndef test_content():\n"
            "    assert Path('/app/reversed.txt').read_text() == 'c\\nb\\na\\n'\n"
        ),
    }
    return json.dumps(
        {
            "id": task_id,
            "instruction": instruction,
            "difficulty": "easy",
            "category": "text-processing",
            "tags": ["text"],
            "weights": weights or {"test_exists": 0.3, "test_content": 0.7},
            "files": files,
            **changes,
        }
    )


REVERSE = (
    "Reverse the order of the lines of /app/lines.txt and save the result as /app/reversed.txt."
)
DRAFTS = {
    1: "```json\n" + draft("gen-reverse-lines", REVERSE) + "\n```",
    2: draft("gen-reverse-again", REVERSE.replace("save the result", "store the output")),
    3: "Sure! Here is a task: {",
    4: draft(
        "gen-broken-solution",
        "Write lines.txt backwards, last line first, into /app/reversed.txt.",
        solution="cp /app/lines.txt /app/reversed.txt\n",
    ),
    5: draft(
        "gen-bad-weights",
        "Put the three lines of lines.txt in reverse into reversed.txt please.",
        weights={"test_exists": 0.5, "test_missing": 0.5},
    ),
    6: draft("fx-greeting", "Compute the checksum of a file."),
}


class MessagesAPI(BaseHTTPRequestHandler):
    """POST /v1/messages (Anthropic Messages API): replies DRAFTS[k] to the prompt saying 'draft k of n'."""

    requests: list[dict] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        MessagesAPI.requests.append({"path": self.path, **body})
        prompt = body["messages"][0]["content"]
        k = int(prompt.split("This is draft ")[1].split(" of ")[0])
        reply = {
            "id": f"msg_{k}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": DRAFTS[k]}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def messages_server():
    MessagesAPI.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), MessagesAPI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.server
@pytest.mark.docker
def test_generate_keeps_only_novel_drafts_that_validate(tmp_path, messages_server, caplog):
    from tasks.generate import SYSTEM_PROMPT, generate, make_llm

    seeds = load_tasks(FIXTURES / "tasks" / "fx-greeting")
    llm = make_llm(
        "anthropic", "claude-test", base_url=messages_server, api_key="test-key", max_retries=0
    )
    with caplog.at_level(logging.WARNING, logger="termrl.tasks"):
        report = asyncio.run(
            generate(seeds, 6, llm, tmp_path / "staging", tmp_path / "out", jobs=3)
        )
    assert report.accepted == ["gen-reverse-lines"]
    assert [(r.draft, r.task_id, r.stage, r.reason) for r in report.rejected] == [
        (
            2,
            "gen-reverse-again",
            "duplicate",
            "near-duplicate of 'gen-reverse-lines' (similarity 0.93)",
        ),
        (3, None, "parse", "reply is not JSON: Expecting value: line 1 column 1 (char 0)"),
        (
            5,
            "gen-bad-weights",
            "load",
            "task 'gen-bad-weights', field 'weights': 'test_missing' names a test that "
            "does not exist; tests found: test_content, test_exists",
        ),
        (6, "fx-greeting", "duplicate", "id 'fx-greeting' is already taken"),
        (4, "gen-broken-solution", "validate", "tests fail after the solution: test_content"),
    ]
    assert len(caplog.messages) == 5
    assert caplog.messages[0] == (
        "draft 2 (gen-reverse-again) rejected at duplicate: near-duplicate of "
        "'gen-reverse-lines' (similarity 0.93)"
    )
    assert [t.id for t in load_tasks(tmp_path / "out")] == ["gen-reverse-lines"]
    logged = [
        json.loads(line)
        for line in (tmp_path / "staging" / "rejections.jsonl").read_text().splitlines()
    ]
    assert [(r["draft"], r["stage"]) for r in logged] == [
        (2, "duplicate"),
        (3, "parse"),
        (5, "load"),
        (6, "duplicate"),
        (4, "validate"),
    ]
    requests = sorted(
        MessagesAPI.requests, key=lambda r: r["messages"][0]["content"].split("This is draft ")[1]
    )
    assert len(requests) == 6
    assert {(r["path"], r["model"], r["system"]) for r in requests} == {
        ("/v1/messages", "claude-test", SYSTEM_PROMPT)
    }
    assert (
        seeds[0].instruction
        in json.loads(
            requests[0]["messages"][0]["content"]
            .split("Example tasks:\n\n")[1]
            .split("\n\nExisting task ids")[0]
        )["instruction"]
    )


@pytest.mark.server
def test_generate_openai_backend_speaks_chat_completions(tmp_path):
    from tasks.generate import SYSTEM_PROMPT, make_llm

    seen = []

    class ChatAPI(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, self.headers["Authorization"], body))
            data = json.dumps(
                {
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "draft text"},
                            "finish_reason": "stop",
                        }
                    ]
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatAPI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        llm = make_llm(
            "openai",
            "local-model",
            base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
            api_key="k",
            max_tokens=100,
        )
        assert asyncio.run(llm("hello")) == "draft text"
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [
        (
            "/v1/chat/completions",
            "Bearer k",
            {
                "model": "local-model",
                "max_tokens": 100,
                "messages": [
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": "hello"},
                ],
            },
        )
    ]
