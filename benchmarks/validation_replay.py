"""Replay the validation gate's first round of a recorded build under a withdrawal rule: what would it
have withdrawn at another level, from the questions won and lost that the build recorded?

Usage:
  python benchmarks/validation_replay.py BUILD_DIR_OR_validation.json [...] [--level 0.2]

Reads each build's `validation.json`, rebuilds its first round from the questions where vadar and
static-api differed (`differing`, with the helpers and worked examples each vadar program used), and
prints the round's figures, whether vadar is significantly behind, and what the rule withdraws.
Only the first round replays faithfully: later rounds were answered with what the recorded rule withdrew.
A build recorded before rounds kept `differing` is replayed from its totals and each helper's
score won and lost: the library's test is exact, a helper's own test is not run (said so).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vadar.library.validation import Answered, judge, withdraw


def first_round(path: Path) -> tuple[list[Answered], bool]:
    """The first round's differing questions as the gate judged them, and whether they were recorded
    (else stand-ins: the round's won and lost, each lost question charged to the helpers that lost score)."""
    report = json.loads((path / "validation.json" if path.is_dir() else path).read_text())
    first = report["rounds"][0]
    if "differing" in first:
        return [Answered(d["question"], d["vadar"], d["static"], frozenset(d["helpers"]), frozenset(d["examples"]))
                for d in first["differing"]], True
    losing = frozenset(name for name, tally in first["helpers"].items() if tally["losses"] > tally["wins"])
    return ([Answered(f"won {i}", 1.0, 0.0) for i in range(first["won"])]
            + [Answered(f"lost {i}", 0.0, 1.0, losing) for i in range(first["lost"])]), False


def replay(path: Path, level: float) -> str:
    answered, recorded = first_round(path)
    round_ = judge(answered, level)
    if not recorded:  # a helper's own questions are unknown: only the library's test and its losers
        for tally in round_.helpers.values():
            tally.won = tally.lost = 0
    library = sorted({h for a in answered for h in a.helpers})
    examples = sorted({e for a in answered for e in a.examples})
    withdraw(round_, library, examples)
    verdict = ("significantly behind" if not round_.passed else "not significantly behind")
    gone = "nothing" if not (round_.retired or round_.withdrawn) else (
        "everything" if round_.everything else ", ".join([*round_.retired, *(f"example #{i}" for i in round_.withdrawn)]))
    return (f"{path}: {round_.won} won, {round_.lost} lost (one-sided p {round_.behind_p:.3f}): {verdict} at "
            f"{level:g}; withdraws {gone}" + ("" if recorded else " (from totals: no question-level record)"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs="+", type=Path)
    parser.add_argument("--level", type=float, default=0.2)
    args = parser.parse_args()
    for path in args.builds:
        print(replay(path, args.level))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
