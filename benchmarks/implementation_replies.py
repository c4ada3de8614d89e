"""How the API agent's implementation conversations went, from a build's recorded requests.

No LLM: a build home's response cache (`llm_cache.sqlite`) holds every request and reply. The API
agent's requests (system prompt starting "You implement helper functions") are chained into
conversations (a retry's request is its predecessor's messages, the reply and the feedback), and
each reply is judged by the build's store: its code ran its test call when an attempt with that
code passed. Prints, for greedy and sampled conversations apart, how many replies ran, how many
retries rescued a failed reply, and how many replies copied an earlier reply of their conversation
word for word, with their completion tokens: the figures behind ending a conversation at a copy
and giving a sampled implementation one reply.

    python benchmarks/implementation_replies.py runs/clevr100-home [more homes]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from vadar.programs.code_extract import NoCodeError, extract_code

SYSTEM = "You implement helper functions"


@dataclass(frozen=True)
class Turn:
    """One implementation request and its reply."""

    messages: tuple[str, ...]  # the request's messages as JSON strings
    reply: str
    tokens: int
    temperature: float


@dataclass(frozen=True)
class ReplyOutcome:
    ran: bool
    copied: bool  # the same code as an earlier reply of its conversation
    tokens: int


def code_of(reply: str) -> str:
    try:
        return extract_code(reply).strip()
    except NoCodeError:
        return ""


def turns(home: Path, system: str = SYSTEM, before: float | None = None) -> list[Turn]:
    """The recorded requests whose system prompt starts with `system` (made before `before`, a Unix time)."""
    with sqlite3.connect(home / "llm_cache.sqlite") as db:
        rows = db.execute("SELECT request, response FROM responses WHERE created_at < ?",
                          (float("inf") if before is None else before,)).fetchall()
    found = []
    for request_text, response_text in rows:
        request, response = json.loads(request_text), json.loads(response_text)
        messages = request.get("messages") or []
        if not messages or not str(messages[0].get("content", "")).startswith(system):
            continue
        found.append(Turn(tuple(json.dumps(m, sort_keys=True) for m in messages), response["text"],
                          int(response.get("completion_tokens") or 0), float(request.get("temperature") or 0.0)))
    return found


def conversations(found: list[Turn]) -> list[list[Turn]]:
    """Chains of turns: a retry's request is the earlier request, its reply and the feedback."""
    def reply_turn(turn: Turn) -> tuple[str, ...]:
        return (*turn.messages, json.dumps({"role": "assistant", "content": turn.reply}, sort_keys=True))

    following = {turn.messages[:-1]: turn for turn in found if len(turn.messages) > 2}
    continued = {id(following[key]) for turn in found if (key := reply_turn(turn)) in following}
    chains = []
    for turn in found:
        if id(turn) in continued:
            continue
        chain = [turn]
        while (after := following.get(reply_turn(chain[-1]))) is not None and after not in chain:
            chain.append(after)
        chains.append(chain)
    return chains


def passed_code(home: Path) -> set[str]:
    with sqlite3.connect(home / "vadar.sqlite") as db:
        return {code.strip() for (code,) in db.execute(
            "SELECT code FROM implementation_attempts WHERE passed = 1 AND code IS NOT NULL")}


def outcomes(chain: list[Turn], ran: set[str]) -> list[ReplyOutcome]:
    seen: list[str] = []
    judged = []
    for turn in chain:
        code = code_of(turn.reply)
        judged.append(ReplyOutcome(code in ran, code in seen, turn.tokens))
        seen.append(code)
    return judged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("homes", nargs="+", type=Path, help="build homes (llm_cache.sqlite and vadar.sqlite)")
    args = parser.parse_args()
    counts: dict[str, Counter] = {"greedy": Counter(), "sampled": Counter()}
    for home in args.homes:
        ran = passed_code(home)
        for chain in conversations(turns(home)):
            kind = "greedy" if chain[0].temperature == 0 else "sampled"
            judged = outcomes(chain, ran)
            count = counts[kind]
            count["conversations"] += 1
            count["replies"] += len(judged)
            count["tokens"] += sum(r.tokens for r in judged)
            count["first reply ran"] += judged[0].ran
            count["retries"] += len(judged) - 1
            count["retry tokens"] += sum(r.tokens for r in judged[1:])
            count["retries that ran"] += sum(r.ran for r in judged[1:])
            count["copies"] += sum(r.copied for r in judged)
            count["copy tokens"] += sum(r.tokens for r in judged if r.copied)
            first_copy = next((i for i, r in enumerate(judged) if r.copied), None)
            if first_copy is not None:
                after = judged[first_copy + 1:]
                count["replies after a copy"] += len(after)
                count["tokens after a copy"] += sum(r.tokens for r in after)
                count["new code after a copy"] += sum(not r.copied for r in after)
    for kind, count in counts.items():
        print(f"{kind}: " + ", ".join(f"{key} {value}" for key, value in count.items()))


if __name__ == "__main__":
    main()
