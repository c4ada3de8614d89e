"""Which round of a helper search kept its sample, over the `searched` decisions of library stores,
and, for question-shape helpers, which sample.

No LLM: each store's `searched` decisions (`vadar.agents.helper_search.SearchRecord`) say how many
samples a search drew and which one it kept. With `search_samples` per round, a kept sample past
that number came from a later round, shown the closest failure. Stores copied from one another
hold the same searches: a search is counted once (its helper, version and the time it was recorded).

    python benchmarks/search_rounds.py runs/*/vadar.sqlite runs/*/home/vadar.sqlite --per-round 8
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from api_store import ApiStore
from vadar.library.shape_helpers import CATALOGUE


def searches(paths: list[Path]) -> list[tuple[str, int, int | None]]:
    """(kind, samples drawn, sample kept or None) for each distinct recorded search; kind is
    "claim", "outcome" or "shape" (a question-shape helper of the catalogue, searched by outcome)."""
    shapes = {helper.name for helper in CATALOGUE}
    seen: set[tuple] = set()
    found = []
    for path in paths:
        with ApiStore(path) as store:
            for decision in store.decisions():
                evidence = decision.evidence
                if decision.decision != "searched" or "samples" not in evidence:
                    continue
                key = (decision.name, decision.version, decision.created_at)
                if key in seen:
                    continue
                seen.add(key)
                kind = ("shape" if decision.name in shapes else "outcome") if evidence.get("claim") == "outcome" \
                    else "claim"
                found.append((kind, int(evidence["samples"]), evidence.get("kept")))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", type=Path)
    parser.add_argument("--per-round", type=int, default=8, help="search_samples of the builds (default 8)")
    args = parser.parse_args()
    rows = searches([p for p in args.stores if p.exists()])
    table: Counter[tuple[str, str]] = Counter()
    for kind, samples, kept in rows:
        drew = "drew a later round" if samples > args.per_round else "first round only"
        table[kind, f"{drew}, " + ("nothing kept" if kept is None else
                                   "kept a later round's sample" if kept > args.per_round else "kept a first-round sample")] += 1
    print(f"{len(rows)} searches in {len(args.stores)} stores")
    for (kind, what), count in sorted(table.items()):
        print(f"{count:5d}  {kind:8s} {what}")
    shape = [kept for kind, _, kept in rows if kind == "shape"]
    if shape:
        found = [k for k in shape if k is not None]
        print(f"question-shape searches: {len(shape)}; kept among the first 4 samples {sum(k <= 4 for k in found)}, "
              f"later {sum(k > 4 for k in found)}, none {len(shape) - len(found)}")


if __name__ == "__main__":
    main()
