"""Which reply of a build's program conversations wrote its right programs, from its recorded requests.

No LLM: a build home's response cache (`llm_cache.sqlite`) holds every request and reply. The
Program agent's requests (system prompt starting "You write short Python programs") are chained
into conversations as `implementation_replies.py` chains the API agent's, and a reply counts as
right when its code is that of a right build program in the store (`verified_programs`). Prints,
for each reply number, the replies, their completion tokens and the right programs they wrote, and
the replies sent after the same feedback twice in a row: the figures behind
`library.build_program_attempts` and `agents.program_same_error_limit`. Programs the validation gate
and the shape route write are in the cache too; their right answers are not in the store, so pass
`--before` (the time the build's last batch ended) to keep to the batches where that matters.

    python benchmarks/program_replies.py runs/clevr100e-home --before 2026-11-29T11:44:00+00:00
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
from collections import Counter
from datetime import datetime
from pathlib import Path

from implementation_replies import Turn, code_of, conversations, turns

SYSTEM = "You write short Python programs"
_LINE = re.compile(r"\bline \d+")


def right_programs(home: Path) -> set[str]:
    with sqlite3.connect(home / "vadar.sqlite") as db:
        return {code.strip() for (code,) in db.execute(
            "SELECT code FROM verified_programs WHERE correct = 1 AND code IS NOT NULL")}


def feedback(turn: Turn) -> str:
    """The feedback the request ended with, line numbers and hints aside ('' for a first request)."""
    last = json.loads(turn.messages[-1])
    if len(turn.messages) < 3 or last.get("role") != "user":
        return ""
    return _LINE.sub("line", str(last.get("content", "")).split("\nHint")[0])


def tally(chains: list[list[Turn]], right: set[str]) -> tuple[Counter, Counter]:
    """Per reply number: replies, tokens and right programs; and the same for replies after a repeat."""
    by_reply: Counter = Counter()
    after_repeat: Counter = Counter()
    for chain in chains:
        said = [feedback(turn) for turn in chain]
        for index, turn in enumerate(chain):
            number = index + 1
            wrote = code_of(turn.reply) in right
            by_reply[(number, "replies")] += 1
            by_reply[(number, "tokens")] += turn.tokens
            by_reply[(number, "right")] += wrote
            if any(said[i] and said[i] == said[i - 1] for i in range(1, index + 1)):
                after_repeat["replies"] += 1
                after_repeat["tokens"] += turn.tokens
                after_repeat["right"] += wrote
    return by_reply, after_repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("home", type=Path, help="a build home (llm_cache.sqlite and vadar.sqlite)")
    parser.add_argument("--before", help="only requests recorded before this ISO time (with its zone)")
    args = parser.parse_args()
    before = datetime.fromisoformat(args.before).timestamp() if args.before else None
    chains = conversations(turns(args.home, SYSTEM, before))
    by_reply, after_repeat = tally(chains, right_programs(args.home))
    print(f"program conversations {len(chains)}")
    for number in sorted({n for n, _ in by_reply}):
        print(f"reply {number}: replies {by_reply[(number, 'replies')]}, tokens {by_reply[(number, 'tokens')]}, "
              f"right build programs {by_reply[(number, 'right')]}")
    print(f"after the same feedback twice: replies {after_repeat['replies']}, tokens {after_repeat['tokens']}, "
          f"right build programs {after_repeat['right']}")


if __name__ == "__main__":
    main()
