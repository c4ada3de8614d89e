"""Does the embedded server write more tokens per second when it decodes several replies at once?

    python benchmarks/parallel_slots.py [--data DIR --split S] [--questions 8] [--slots 1 2 4]

A small model on a CPU decodes one token per pass over its weights, and reading the weights, not
the arithmetic, may bound a pass: several sequences decoded in one pass (llama.cpp's parallel slots,
`embedded.n_parallel`) would then share that cost. For each slot count the embedded server is
started afresh and sent the static-api Program agent's first request for the same questions at
temperature 0, that many at a time (threads). Prints per slot count the wall seconds, completion
tokens, tokens per wall second, and how many replies equal those of the first slot count (batched
arithmetic may round differently, so greedy replies can differ).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai

from vadar.agents.program import opening_messages
from vadar.config import load_config
from vadar.llm.embedded import open_endpoint
from vadar.programs.api_text import render_api
from vadar.programs.sampling import PROGRAM
from vadar.runs.prepare import DataSelection


def measure(slots: int, requests: list[list[dict[str, Any]]]) -> tuple[float, int, list[str]]:
    """Wall seconds, completion tokens and replies for `requests` sent `slots` at a time."""
    config = load_config()
    config.embedded.n_parallel = slots
    with open_endpoint(config) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="none")
        client.chat.completions.create(  # fills the prompt cache with the shared system prompt
            model=config.llm.model, messages=requests[0], max_tokens=1)

        def ask(messages: list[dict[str, Any]]) -> tuple[int, str]:
            response = client.chat.completions.create(
                model=config.llm.model, messages=messages, max_tokens=PROGRAM.max_tokens, temperature=0.0)
            return response.usage.completion_tokens, response.choices[0].message.content or ""

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=slots) as pool:
            answers = list(pool.map(ask, requests))
        seconds = time.perf_counter() - started
    return seconds, sum(tokens for tokens, _ in answers), [reply for _, reply in answers]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--split", default=None)
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--slots", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    questions = [q.question for q in DataSelection(args.data, args.split, args.questions).prepare().questions]
    api_text = render_api()
    requests = [opening_messages(question, api_text) for question in questions]
    print(f"{len(requests)} questions, static-api program prompts, temperature 0, max_tokens {PROGRAM.max_tokens}")
    print(f"{'slots':>5}{'seconds':>9}{'tokens':>8}{'tokens/s':>10}{'same':>7}")
    reference: list[str] | None = None
    for slots in args.slots:
        seconds, tokens, replies = measure(slots, requests)
        reference = replies if reference is None else reference
        same = sum(a == b for a, b in zip(replies, reference, strict=True))
        print(f"{slots:>5}{seconds:>9.1f}{tokens:>8}{tokens / seconds:>10.1f}{same:>4}/{len(replies)}", flush=True)


if __name__ == "__main__":
    main()
