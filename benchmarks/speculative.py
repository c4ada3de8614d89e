"""Does n-gram speculative decoding make the embedded model write programs (or helpers) faster?

    python benchmarks/speculative.py [--data DIR --split S] [--questions 12]
                                     [--types none ngram-simple ngram-map-k ngram-mod]
    python benchmarks/speculative.py --replay HOME/llm_cache.sqlite --system "You implement helper" [--questions 10]

Programs copy names and call patterns from the API text in their prompt, so drafts looked up in
the prompt itself (llama.cpp's n-gram speculation, no draft model) might be accepted often. For
each `embedded.speculative` setting the embedded server is started afresh and asked for the
static-api Program agent's first reply to the same questions at temperature 0 (greedy, so every
setting must write the same programs: speculation is lossless). Prints per setting the mean
seconds per reply, completion tokens, decode tokens/s from the server's own timings, draft
tokens accepted, and whether the replies equal those of the first setting.

`--replay` sends instead the first `--questions` requests recorded in a response cache (a build's
`llm_cache.sqlite`) whose system prompt starts with `--system`: the API agent's implementations,
say, which copy the stub's signature and docstring from the prompt, a long span a draft can match.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

import openai

from vadar.agents.program import opening_messages
from vadar.programs.sampling import PROGRAM
from vadar.programs.api_text import render_api
from vadar.config import load_config
from vadar.llm.embedded import SPECULATIVE_TYPES, open_endpoint
from vadar.runs.prepare import DataSelection


Request = tuple[list[dict[str, Any]], int]  # messages and max_tokens


def recorded_requests(cache: Path, system: str, count: int) -> list[Request]:
    """The first `count` requests of a response cache whose system prompt starts with `system`."""
    found: list[Request] = []
    with sqlite3.connect(f"file:{cache}?mode=ro", uri=True) as db:
        for (text,) in db.execute("SELECT request FROM responses ORDER BY created_at"):
            request = json.loads(text)
            messages = request.get("messages") or []
            if messages and str(messages[0].get("content", "")).startswith(system):
                found.append((messages, int(request.get("max_tokens") or PROGRAM.max_tokens)))
            if len(found) == count:
                break
    return found


def measure(setting: str, requests: list[Request]) -> tuple[dict[str, float], list[str]]:
    config = load_config()
    config.embedded.speculative = setting
    replies, seconds, tokens, decode_ms, drafted, accepted = [], [], [], [], 0, 0
    with open_endpoint(config) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="none")
        client.chat.completions.create(  # fills the prompt cache with the shared system prompt
            model=config.llm.model, messages=requests[0][0], max_tokens=1)
        for messages, max_tokens in requests:
            started = time.perf_counter()
            response = client.chat.completions.create(
                model=config.llm.model, messages=messages, max_tokens=max_tokens, temperature=0.0)
            seconds.append(time.perf_counter() - started)
            timings = (response.model_extra or {}).get("timings") or {}
            tokens.append(int(timings.get("predicted_n") or response.usage.completion_tokens))
            decode_ms.append(float(timings.get("predicted_ms") or 0.0))
            drafted += int(timings.get("draft_n") or 0)
            accepted += int(timings.get("draft_n_accepted") or 0)
            replies.append(response.choices[0].message.content or "")
    figures = {
        "seconds": statistics.fmean(seconds),
        "tokens": statistics.fmean(tokens),
        "decode_tps": sum(tokens) / (sum(decode_ms) / 1000) if sum(decode_ms) else float("nan"),
        "drafted": drafted,
        "accepted": accepted,
    }
    return figures, replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--split", default=None)
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--types", nargs="+", choices=SPECULATIVE_TYPES,
                        default=["none", "ngram-simple", "ngram-map-k", "ngram-mod"])
    parser.add_argument("--replay", type=Path, help="a response cache (llm_cache.sqlite) to take requests from")
    parser.add_argument("--system", default="You implement helper functions",
                        help="with --replay: the start of the system prompt of the requests to send")
    args = parser.parse_args()
    if args.replay is not None:
        requests = recorded_requests(args.replay, args.system, args.questions)
        if not requests:
            parser.error(f"no request in {args.replay} has a system prompt starting {args.system!r}")
        print(f"{len(requests)} recorded requests ({args.system!r}...), temperature 0")
    else:
        questions = [q.question for q in DataSelection(args.data, args.split, args.questions).prepare().questions]
        api_text = render_api()
        requests = [(opening_messages(question, api_text), PROGRAM.max_tokens) for question in questions]
        print(f"{len(questions)} questions, static-api program prompts, temperature 0, max_tokens {PROGRAM.max_tokens}")
    print(f"{'setting':<14}{'s/reply':>9}{'tokens':>8}{'decode tok/s':>14}{'drafted':>9}{'accepted':>10}{'same':>6}")
    reference: list[str] | None = None
    for setting in args.types:
        figures, replies = measure(setting, requests)
        reference = replies if reference is None else reference
        same = sum(a == b for a, b in zip(replies, reference, strict=True))
        print(f"{setting:<14}{figures['seconds']:>9.2f}{figures['tokens']:>8.1f}{figures['decode_tps']:>14.1f}"
              f"{figures['drafted']:>9.0f}{figures['accepted']:>10.0f}{same:>4}/{len(replies)}", flush=True)


if __name__ == "__main__":
    main()
