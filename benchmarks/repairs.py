"""What the gate's repairs came to, over the `repair` decisions of library stores.

No LLM: a `repair` decision is recorded each time a rejected proposal is sent back to the API
agent with the cases it got wrong (`[library] repair`); the helper's next `admitted` or `rejected`
decision says what the repair came to. Stores copied from one another hold the same decisions: a
repair is counted once (its helper, version and the time it was recorded). The committed library
exports make stores:

    for f in docs/results/**/library.json; do vadar library import --with-build --db /tmp/stores/$RANDOM.sqlite $f; done
    python benchmarks/repairs.py /tmp/stores/*.sqlite
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from api_store import ApiStore


def repairs(paths: list[Path]) -> list[tuple[str, str, str | None]]:
    """(helper, reason, what followed: admitted, rejected or None) for each distinct recorded repair."""
    seen: set[tuple] = set()
    found = []
    for path in paths:
        with ApiStore(path) as store:
            decisions = sorted(store.decisions(), key=lambda d: d.created_at)
            for index, decision in enumerate(decisions):
                key = (decision.name, decision.version, decision.created_at)
                if decision.decision != "repair" or key in seen:
                    continue
                seen.add(key)
                after = next((d.decision for d in decisions[index + 1:]
                              if d.name == decision.name and d.decision in ("admitted", "rejected")), None)
                found.append((decision.name, str(decision.evidence.get("reason", "")), after))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", type=Path)
    args = parser.parse_args()
    rows = repairs([p for p in args.stores if p.exists()])
    print(f"{len(rows)} repairs in {len(args.stores)} stores")
    for outcome, count in Counter(after or "undecided" for _, _, after in rows).most_common():
        print(f"{count:5d}  then {outcome}")
    for name, reason, after in rows:
        print(f"  {name}: {reason[:90]} -> {after or 'undecided'}")


if __name__ == "__main__":
    main()
