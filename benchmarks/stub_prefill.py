"""Does starting the API agent's reply with the stub make implementations cheaper, and the same?

    python benchmarks/stub_prefill.py HOME/llm_cache.sqlite [--requests 10]

An implementation reply repeats the stub's `def` line and docstring before the body. With
`agents.implementation_prefill` the request ends with that stub as the start of the assistant's
reply and the model writes only the body. This replays the first `--requests` implementation
requests recorded in a response cache (a build's `llm_cache.sqlite`; first replies only, which
were sampled at temperature 0) on the embedded server, each with the stub as prefill, and prints per
request the recorded and new seconds and completion tokens, and whether the whole reply is the
recorded one. Run it alone: the seconds are only comparable on idle cores.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import openai

from vadar.config import load_config
from vadar.llm.embedded import open_endpoint
from vadar.programs.step_loop import continued

SYSTEM = "You implement helper functions"
STUB = re.compile(r"```python\n(.*?)\n```", re.S)


def first_requests(cache: Path, count: int) -> list[tuple[list[dict[str, Any]], int, dict[str, Any]]]:
    """The first `count` recorded implementation requests that open a conversation, with their reply."""
    found = []
    with sqlite3.connect(f"file:{cache}?mode=ro", uri=True) as db:
        for request_text, response_text in db.execute("SELECT request, response FROM responses ORDER BY created_at"):
            request = json.loads(request_text)
            messages = request.get("messages") or []
            if (len(messages) == 2 and str(messages[0].get("content", "")).startswith(SYSTEM)
                    and not request.get("temperature")):
                found.append((messages, int(request.get("max_tokens") or 400), json.loads(response_text)))
            if len(found) == count:
                break
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache", type=Path)
    parser.add_argument("--requests", type=int, default=10)
    args = parser.parse_args()
    requests = first_requests(args.cache, args.requests)
    config = load_config()
    totals = {"recorded_s": 0.0, "new_s": 0.0, "recorded_tokens": 0, "new_tokens": 0, "same": 0}
    with open_endpoint(config) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="none")
        for messages, max_tokens, recorded in requests:
            prefill = f"```python\n{STUB.search(messages[-1]['content']).group(1)}\n"
            started = time.perf_counter()
            response = client.chat.completions.create(
                model=config.llm.model, messages=[*messages, {"role": "assistant", "content": prefill}],
                max_tokens=max_tokens, temperature=0.0)
            seconds = time.perf_counter() - started
            reply = continued(prefill, response.choices[0].message.content or "")
            same = reply.strip() == str(recorded.get("text", "")).strip()
            name = re.search(r"def (\w+)", prefill).group(1)
            print(f"{name:28} recorded {recorded.get('latency_s') or 0:5.1f} s {recorded.get('completion_tokens', 0):4} "
                  f"tokens | prefilled {seconds:5.1f} s {response.usage.completion_tokens:4} tokens | same reply: {same}")
            totals["recorded_s"] += recorded.get("latency_s") or 0.0
            totals["new_s"] += seconds
            totals["recorded_tokens"] += int(recorded.get("completion_tokens") or 0)
            totals["new_tokens"] += response.usage.completion_tokens
            totals["same"] += same
    print(f"{len(requests)} requests: recorded {totals['recorded_s']:.0f} s, {totals['recorded_tokens']} tokens; "
          f"prefilled {totals['new_s']:.0f} s, {totals['new_tokens']} tokens; {totals['same']} replies the same")


if __name__ == "__main__":
    main()
