"""How many prompt tokens the server really processes per question, for two prompt layouts.

    python benchmarks/prompt_layout.py [--data DIR --split S] [--questions N]

`stable-first` is the Program agent's layout: rules, API text and worked example first (the
system message), the question last. `question-first` puts the question at the top of the system
message, so no two questions share a prefix. Each request asks for one token only, so the figures
isolate prompt processing; the server's `cached_tokens` (llama.cpp, vLLM and OpenAI report it)
says how much of each prompt came from its prefix cache. Uses the configured endpoint, or starts
the embedded one.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from vadar import prompts
from vadar.agents.program import opening_messages, system_prompt
from vadar.programs.api_text import render_api
from vadar.config import load_config
from vadar.llm.chat import ChatRequest
from vadar.llm.client import LLMClient
from vadar.llm.embedded import open_endpoint
from vadar.runs.prepare import DataSelection


def layouts(question: str, api_text: str) -> dict[str, list[dict[str, str]]]:
    stable = system_prompt(api_text)
    asked = prompts.render("program_question", question=question)
    return {
        "question-first": [
            {"role": "system", "content": asked + "\n" + stable},
            {"role": "user", "content": "Write the program."},
        ],
        "stable-first": opening_messages(question, api_text),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--split", default=None)
    parser.add_argument("--questions", type=int, default=6)
    args = parser.parse_args()

    config = load_config()
    questions = DataSelection(args.data, args.split, args.questions).prepare().questions
    api_text = render_api()
    with open_endpoint(config) as base_url:
        client = LLMClient(config.llm, base_url=base_url, cache=None)
        print(f"endpoint {base_url}, model {config.llm.model}, {len(questions)} questions")
        print(f"{'layout':<16}{'prompt tok':>12}{'processed tok':>15}{'from cache':>12}{'seconds':>10}")
        for name in ("question-first", "stable-first"):
            processed, totals, seconds = [], [], []
            for question in questions:
                messages = layouts(question.question, api_text)[name]
                started = time.perf_counter()
                reply = client.complete(ChatRequest(messages, max_tokens=1))
                seconds.append(time.perf_counter() - started)
                totals.append(reply.prompt_tokens)
                processed.append(reply.prompt_tokens - (reply.cached_prompt_tokens or 0))
            cached = 1 - sum(processed) / max(sum(totals), 1)
            print(f"{name:<16}{statistics.fmean(totals):>12.0f}{statistics.fmean(processed):>15.0f}"
                  f"{cached:>11.0%}{statistics.fmean(seconds):>10.2f}")
        print("(means per question; the first stable-first question fills the cache)")


if __name__ == "__main__":
    main()
