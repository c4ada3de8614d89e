"""Does n-gram speculative decoding make the embedded model write programs faster?

    python benchmarks/speculative.py [--data DIR --split S] [--questions 12]
                                     [--types none ngram-simple ngram-map-k ngram-mod]

Programs copy names and call patterns from the API text in their prompt, so drafts looked up in
the prompt itself (llama.cpp's n-gram speculation, no draft model) might be accepted often. For
each `embedded.speculative` setting the embedded server is started afresh and asked for the
static-api Program agent's first reply to the same questions at temperature 0 (greedy, so every
setting must write the same programs: speculation is lossless). Prints per setting the mean
seconds per reply, completion tokens, decode tokens/s from the server's own timings, draft
tokens accepted, and whether the replies equal those of the first setting.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import openai

from vadar.agents.program import opening_messages
from vadar.programs.sampling import PROGRAM
from vadar.programs.api_text import render_api
from vadar.config import load_config
from vadar.llm.embedded import SPECULATIVE_TYPES, open_endpoint
from vadar.runs.prepare import DataSelection


def measure(setting: str, questions: list[str], api_text: str) -> tuple[dict[str, float], list[str]]:
    config = load_config()
    config.embedded.speculative = setting
    replies, seconds, tokens, decode_ms, drafted, accepted = [], [], [], [], 0, 0
    with open_endpoint(config) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="none")
        client.chat.completions.create(  # fills the prompt cache with the shared system prompt
            model=config.llm.model, messages=opening_messages(questions[0], api_text), max_tokens=1)
        for question in questions:
            started = time.perf_counter()
            response = client.chat.completions.create(
                model=config.llm.model, messages=opening_messages(question, api_text),
                max_tokens=PROGRAM.max_tokens, temperature=0.0)
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
    args = parser.parse_args()
    questions = [q.question for q in DataSelection(args.data, args.split, args.questions).prepare().questions]
    api_text = render_api()
    print(f"{len(questions)} questions, static-api program prompts, temperature 0, max_tokens {PROGRAM.max_tokens}")
    print(f"{'setting':<14}{'s/reply':>9}{'tokens':>8}{'decode tok/s':>14}{'drafted':>9}{'accepted':>10}{'same':>6}")
    reference: list[str] | None = None
    for setting in args.types:
        figures, replies = measure(setting, questions, api_text)
        reference = replies if reference is None else reference
        same = sum(a == b for a, b in zip(replies, reference, strict=True))
        print(f"{setting:<14}{figures['seconds']:>9.2f}{figures['tokens']:>8.1f}{figures['decode_tps']:>14.1f}"
              f"{figures['drafted']:>9.0f}{figures['accepted']:>10.0f}{same:>4}/{len(replies)}", flush=True)


if __name__ == "__main__":
    main()
