"""A scripted fake OpenAI-compatible server on 127.0.0.1 (no external network), and clients for it."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


from vadar.config import LLMConfig
from vadar.llm.client import LLMClient


class FakeServer:
    """Answers POST .../chat/completions from a script of actions, then with a default success.

    Actions: {"status": 503} (error), {"hang": True} (never answers until teardown),
    {"content": "...", "usage": {...}} (success; content may be None), {"raw": "..."} (that body
    with HTTP 200), {"no_choices": True}, {"pause_after": N, "pause_s": S} (stream N pieces, then
    go silent for S seconds), {"piece_delay_s": S} (a pause before every piece), {"close_after": N}
    (N stream events, then the connection closes without a finish reason), {"trickle": S} (200,
    then a keep-alive comment, `"empty_chunks": True` an empty chunk, or for a plain request a
    space, every S seconds, never finishing; it stops by itself after "trickle_for" seconds).
    Requests with `stream: true` are answered with server-sent events, one piece per word.
    """

    def __init__(self) -> None:
        self.script: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with fake._lock:
                    fake.requests.append({"path": self.path, "body": body})
                    action = fake.script.pop(0) if fake.script else {}
                if action.get("hang"):
                    fake.release.wait(10)
                    return
                if "trickle" in action:  # headers, then a comment or filler every `trickle` seconds
                    self._trickle(action, body)
                    return
                if "raw" in action:
                    self._send(200, action["raw"].encode(), "text/html")
                    return
                status = action.get("status", 200)
                if status == 200 and body.get("stream"):
                    self._stream(action, body)
                    return
                if status != 200:
                    payload: dict[str, Any] = {"error": {"message": f"scripted {status}", "type": "fake", "code": status}}
                else:
                    content = action.get("content", f"echo: {body['messages'][-1]['content']}")
                    payload = {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "fake"),
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": action.get("finish_reason", "stop")}
                        ],
                        "usage": action.get("usage", {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}),
                    }
                self._send(status, json.dumps(payload).encode(), "application/json")

            def _send(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, action: dict[str, Any], body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                content = action.get("content", f"echo: {body['messages'][-1]['content']}")
                words = [] if content is None else [w + " " for w in content.split(" ")]
                if words:
                    words[-1] = words[-1][:-1]
                base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                        "model": body.get("model", "fake")}
                events = [] if action.get("no_choices") else [
                    {**base, "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}]}
                    for w in words
                ] + [{**base, "choices": [{"index": 0, "delta": {}, "finish_reason": action.get("finish_reason", "stop")}]}]
                usage = action.get("usage", {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16})
                events.append({**base, "choices": [], "usage": usage})
                if "close_after" in action:  # N events, then the connection closes: no finish reason
                    events = events[: action["close_after"]]
                try:
                    for index, event in enumerate(events):
                        if index == action.get("pause_after"):
                            fake.release.wait(action.get("pause_s", 10))
                        time.sleep(action.get("piece_delay_s", 0))
                        self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                        self.wfile.flush()
                    if "close_after" not in action:
                        self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                if "close_after" in action:
                    self.close_connection = True

            def _trickle(self, action: dict[str, Any], body: dict[str, Any]) -> None:
                """Keep the connection busy without ever finishing: SSE comments or empty chunks
                for a stream, whitespace for a plain body; stops by itself after `trickle_for` s."""
                streaming = bool(body.get("stream"))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream" if streaming else "application/json")
                if not streaming:
                    self.send_header("Content-Length", str(10**7))
                self.end_headers()
                empty = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": []}
                filler = (f"data: {json.dumps(empty)}\n\n".encode() if action.get("empty_chunks")
                          else b": keepalive\n\n") if streaming else b" "
                stop = time.monotonic() + action.get("trickle_for", 10.0)
                try:
                    while time.monotonic() < stop and not fake.release.is_set():
                        self.wfile.write(filler)
                        self.wfile.flush()
                        time.sleep(action["trickle"])
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def hits(self) -> int:
        return len(self.requests)


def make_config(**overrides: Any) -> LLMConfig:
    values: dict[str, Any] = {"model": "test-model", "timeout_s": 5.0, "max_retries": 3, "cache": True, "seed": 7}
    values.update(overrides)
    return LLMConfig(**values)


def make_client(base_url: str, **kwargs: Any) -> LLMClient:
    config = kwargs.pop("config", None) or make_config()
    return LLMClient(config, base_url=base_url, retry_wait_s=0.01, retry_wait_max_s=0.05, **kwargs)


MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "how far?"}]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
