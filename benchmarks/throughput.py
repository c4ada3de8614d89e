"""Throughput of evaluations: a batching server, the embedded model, and the embedded model under load.

    python benchmarks/throughput.py [--parts stub embedded load]
        stub:     [--questions 48] [--delay 0.5] [--jobs 8]
        embedded: [--baseline fcabb26] [--data DIR --split S] [--embedded-questions 24]

`stub` -- questions per minute with `--jobs 8` against `--jobs 1` on a stub endpoint. A remote GPU server (vLLM, a hosted API) answers many requests at once, each after about the same
time. The stub plays that server: an OpenAI-compatible endpoint on 127.0.0.1 that answers every
chat completion with the same valid program after `--delay` seconds, however many are in flight.
The same questions (the built-in sample, repeated with fresh ids to reach `--questions`) are
answered twice with the static-api method, oracle modules and the response cache off: once one
at a time, once `--jobs` at a time, each in a fresh home and run directory. Sandbox workers start
inside the timed part. Prints both rates and `stub speedup: X`.

`embedded` -- the same questions (default: the first 24 of CLEVR dev) answered by the embedded
model with static-api and oracle modules, once by this checkout with its defaults and once by the
`--baseline` commit (checked out in a temporary git worktree, run with this environment's
packages), each in a fresh home with an empty response cache. Prints questions/minute,
completion tokens and LLM replies per question for both, and `embedded speedup: Y`.

`load` -- decode tokens/s of the embedded server started with default settings on an idle
machine, then while another process keeps one core busy. Prints both and
`decode under load: Z% of idle`. Both LLM parts need the machine to themselves.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from embedded_runs import decode_under_load, embedded_speedup
from vadar.config import VadarConfig
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection, PreparedData
from vadar.runs.session import open_session

PROGRAM = "```python\nfinal_result = len(loc(image, 'objects'))\n```"


def stub_server(delay_s: float) -> ThreadingHTTPServer:
    """An endpoint on a free loopback port; every completion arrives after `delay_s`."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            time.sleep(delay_s)
            body = json.dumps({
                "id": "stub", "object": "chat.completion", "created": 0,
                "model": request.get("model", "stub"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": PROGRAM}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    return server


def questions(count: int) -> PreparedData:
    """The built-in sample's questions, repeated under fresh ids up to `count`."""
    data = DataSelection().prepare()
    base = data.questions
    picked = [dataclasses.replace(base[i % len(base)], question_id=f"{base[i % len(base)].question_id}.{i}")
              for i in range(count)]
    return dataclasses.replace(data, questions=picked)


def stub_settings(home: Path, base_url: str, jobs: int) -> VadarConfig:
    """A configuration that asks the stub: no cache, no retries, whole replies (no streaming)."""
    config = VadarConfig()
    config.paths.home = home
    config.llm.base_url = base_url
    config.llm.cache = False
    config.llm.max_retries = 0
    config.llm.timeout_s = 60
    config.llm.stream = False  # the stub answers with one JSON body
    config.eval.jobs = jobs
    return config


def questions_per_minute(data: PreparedData, base_url: str, jobs: int) -> float:
    with tempfile.TemporaryDirectory(prefix="vadar-throughput-") as tmp:
        config = stub_settings(Path(tmp) / "home", base_url, jobs)
        with open_session(config) as session:
            started = time.perf_counter()
            summary = evaluate(session, data, Path(tmp) / "run", method="static-api", show_progress=False)
            seconds = time.perf_counter() - started
    if summary.questions != len(data.questions) or summary.failed:
        raise SystemExit(f"jobs={jobs}: {len(summary.failed)} of {summary.questions} questions failed")
    rate = summary.questions / seconds * 60
    print(f"jobs {jobs}: {summary.questions} questions in {seconds:.1f}s = {rate:.1f} questions/minute")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=48)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the stub takes per request")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--parts", nargs="+", choices=["stub", "embedded", "load"], default=["stub", "embedded", "load"])
    parser.add_argument("--baseline", default="fcabb26", help="commit of the sequential path to compare with")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/clevr"))
    parser.add_argument("--split", default="dev")
    parser.add_argument("--embedded-questions", type=int, default=24)
    args = parser.parse_args()
    if "stub" in args.parts:
        stub_speedup(args)
    if "embedded" in args.parts:
        embedded_speedup(args.baseline, args.data, args.split, args.embedded_questions)
    if "load" in args.parts:
        decode_under_load()


def stub_speedup(args: argparse.Namespace) -> None:
    data = questions(args.questions)
    server = stub_server(args.delay)
    thread = threading.Thread(target=server.serve_forever, name="stub-endpoint", daemon=True)
    thread.start()
    try:
        base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        print(f"stub endpoint {base_url}: every request answered after {args.delay:g}s")
        sequential = questions_per_minute(data, base_url, 1)
        parallel = questions_per_minute(data, base_url, args.jobs)
    finally:
        server.shutdown()
        server.server_close()
    print(f"stub speedup: {parallel / sequential:.2f}")


if __name__ == "__main__":
    main()
