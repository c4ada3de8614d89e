"""How often replies loop, what the repetition guard saves, and what a retry should be shown.

    python benchmarks/repetition.py CACHE.sqlite [CACHE.sqlite ...] [--repeats 3] [--retry]

Reads the replies recorded in response caches (`<VADAR_HOME>/llm_cache.sqlite`) and prints, per
agent role: replies, how many ran to their token limit, how many the guard (`llm.stop_repeats`)
would have stopped and at what share of their length, and how many replies that ended on their
own it would have stopped (false alarms).

`--retry` then asks the model (the configured endpoint, else the embedded server; response cache
off) for the retry of each question whose Program-agent reply first looped, three ways:
  full   the whole recorded reply in the conversation, and the old "cut off at N tokens" message
  three  the reply as the guard stops it (three copies of the repeated lines) and the new message
  one    the reply up to the first copy only (what the client now keeps) and the new message
at the retry temperature of attempt 2, with the guard on. It prints, per way, how many retries
looped again, their completion tokens, how many held code that parses, and the seconds until the
server answered a one-token request (the same prompt) sent right after a stopped reply (a server that went on
generating after the client left would make that wait long).
"""

from __future__ import annotations

import argparse
import ast
import json
import sqlite3
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from vadar import prompts
from vadar.programs.sampling import PROGRAM
from vadar.programs.step_loop import StepLoop
from vadar.programs.code_extract import NoCodeError, extract_code
from vadar.config import load_config
from vadar.llm.chat import ChatRequest, ChatResponse
from vadar.llm.client import LLMClient
from vadar.llm.doubles import ScriptedLLM
from vadar.llm.embedded import open_endpoint
from vadar.llm.repetition import REPETITION, find_loop

_ROLES = {
    "You write short Python programs": "program",
    "You implement helper functions": "api",
    "You design helper functions": "signature",
}


def role_of(request: dict[str, Any]) -> str:
    system = str(request["messages"][0].get("content", "")) if request.get("messages") else ""
    return next((role for start, role in _ROLES.items() if system.startswith(start)), "other")


def load_replies(paths: list[Path]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Every recorded exchange, by cache key (the same request in several caches counts once)."""
    replies: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for path in paths:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            for key, request, response in db.execute("SELECT key, request, response FROM responses"):
                replies[key] = (json.loads(request), json.loads(response))
    return replies


def survey(replies: dict[str, tuple[dict[str, Any], dict[str, Any]]], repeats: int) -> None:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    kept: dict[str, list[float]] = defaultdict(list)
    for request, response in replies.values():
        role, text = role_of(request), response["text"]
        limited = response.get("finish_reason") == "length"
        loop = find_loop(text, repeats)
        row = counts[role]
        row["replies"] += 1
        row["at limit"] += limited
        if loop is not None and limited:
            row["stopped"] += 1
            kept[role].append(loop.end / len(text))
        elif loop is not None:
            row["false alarms"] += 1
    print(f"{'role':<11}{'replies':>8}{'at limit':>10}{'stopped':>9}{'read (mean)':>13}{'false alarms':>14}")
    for role in sorted(counts):
        row, shares = counts[role], kept[role]
        read = f"{statistics.fmean(shares):.0%}" if shares else "-"
        print(f"{role:<11}{row['replies']:>8}{row['at limit']:>10}{row['stopped']:>9}{read:>13}{row['false alarms']:>14}")


def first_loops(replies: dict[str, tuple[dict[str, Any], dict[str, Any]]], repeats: int) -> list[tuple[list, str]]:
    """Per question, the Program-agent request whose reply looped first, with that reply."""
    earliest: dict[str, tuple[list, str]] = {}
    for request, response in replies.values():
        messages = request["messages"]
        if role_of(request) != "program" or find_loop(response["text"], repeats) is None:
            continue
        question = json.dumps(messages[:2], sort_keys=True)
        if question not in earliest or len(messages) < len(earliest[question][0]):
            earliest[question] = (messages, response["text"])
    return list(earliest.values())


def retry_messages(messages: list, text: str, way: str, repeats: int) -> list:
    loop = find_loop(text, repeats)
    assert loop is not None
    loop_text = ChatResponse(text=text[: loop.first_end], finish_reason=REPETITION)
    step = StepLoop(ScriptedLLM([]), PROGRAM, max_steps=5)
    if way == "full":
        shown, error = text, step.cut_off_error()
    else:
        shown = text[: loop.end] if way == "three" else text[: loop.first_end]
        error = step.cut_off_error(loop_text)
    feedback = prompts.render("program_retry", error=error, stdout="")
    return [*messages, {"role": "assistant", "content": shown}, {"role": "user", "content": feedback}]


def parses(text: str) -> bool:
    try:
        ast.parse(extract_code(text))
    except (NoCodeError, SyntaxError):
        return False
    return True


def measure_retries(cases: list[tuple[list, str]], repeats: int) -> None:
    config = load_config()
    config.llm.cache = False
    config.llm.stop_repeats = repeats
    temperature = PROGRAM.temperature(2)
    print(f"\n{len(cases)} questions whose program reply looped; retry at temperature {temperature}, guard on")
    print(f"{'way':<7}{'looped again':>14}{'tokens':>8}{'parses':>8}{'s/retry':>9}{'next request s':>16}")
    with open_endpoint(config) as base_url:
        llm = LLMClient(config.llm, base_url=base_url)
        for way in ("full", "three", "one"):
            looped, tokens, parsed, seconds, waits = 0, [], 0, [], []
            for messages, text in cases:
                started = time.perf_counter()
                retry = retry_messages(messages, text, way, repeats)
                reply = llm.complete(ChatRequest(retry, max_tokens=PROGRAM.max_tokens, temperature=temperature))
                seconds.append(time.perf_counter() - started)
                tokens.append(reply.completion_tokens)
                looped += reply.finish_reason in ("length", REPETITION)
                parsed += reply.finish_reason not in ("length", REPETITION) and parses(reply.text)
                if reply.finish_reason == REPETITION:
                    started = time.perf_counter()
                    llm.complete(ChatRequest(retry, max_tokens=1, temperature=0.0))  # same prefix: only the wait
                    waits.append(time.perf_counter() - started)
            wait = f"{statistics.fmean(waits):.2f}" if waits else "-"
            print(f"{way:<7}{looped:>10}/{len(cases):<3}{statistics.fmean(tokens):>8.1f}{parsed:>6}/{len(cases):<2}"
                  f"{statistics.fmean(seconds):>8.1f}{wait:>16}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("caches", nargs="+", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--retry", action="store_true", help="ask the model for the retries (minutes)")
    args = parser.parse_args()
    replies = load_replies(args.caches)
    print(f"{len(replies)} recorded replies in {len(args.caches)} cache(s); guard: {args.repeats} repeats")
    survey(replies, args.repeats)
    if args.retry:
        measure_retries(first_loops(replies, args.repeats), args.repeats)


if __name__ == "__main__":
    main()
