"""The methods compared on a multi-view benchmark: the figures of docs/results/multiview.md.

Usage:
  python benchmarks/multiview.py RUN [RUN ...] --baseline RUN --data DIR
      [--json docs/results/multiview.json] [--commit HASH]

Each RUN is a `vadar eval` run directory on the same generated multi-view benchmark
(`vadar bench generate --views K`). Prints, on the questions every run answered: the score
(exact match for counts, names and directions, MRA for metric answers), MRA over the metric
questions alone, exact accuracy over the others, completion tokens and seconds per question,
questions without a working program, per family scores, and against the baseline the questions
won and lost (a metric answer counts as right at MRA >= 0.5) with an exact two-sided sign test.
With --json, writes one row per method ({"method", "questions", "accuracy", "mra",
"seconds_per_question", "commit"}), replacing earlier rows of the same method.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from library_results import current_commit, family_groups, load, shared_questions, sign_test
from vadar.runs.results import QuestionResult

Results = Mapping[str, QuestionResult]


def is_metric(result: QuestionResult) -> bool:
    return result.answer_type == "float"


def right(result: QuestionResult) -> bool:
    """Exact for names and counts; within MRA's middle threshold for metric answers."""
    return result.score >= 0.5 if is_metric(result) else bool(result.correct)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def figures(run: Results, ids: Sequence[str]) -> dict[str, float]:
    """The per-method figures on the questions `ids`."""
    rows = [run[q] for q in ids]
    return {"accuracy": mean([r.score for r in rows]),
            "mra": mean([r.score for r in rows if is_metric(r)]),
            "exact": mean([r.score for r in rows if not is_metric(r)]),
            "completion_tokens": mean([r.completion_tokens for r in rows]),
            "seconds": mean([r.seconds for r in rows]),
            "no_program": sum(1 for r in rows if r.error)}


def method_of(path: Path) -> str:
    for name in ("summary.json", "run.json"):
        try:
            return json.loads((path / name).read_text(encoding="utf-8"))["method"]
        except (OSError, ValueError, KeyError):
            continue
    return path.name


def report(runs: Mapping[str, Results], baseline: str, data: Path) -> tuple[list[str], list[str]]:
    """The printed lines and the shared question ids; `runs` maps a method to its results."""
    ids = shared_questions(runs)
    if not ids:
        raise SystemExit("the runs share no answered question")
    lines = [f"{len(ids)} questions answered by every run; baseline {baseline}",
             "| method | score | MRA (metric) | exact (others) | completion tokens | seconds | no working program |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for method, run in runs.items():
        f = figures(run, ids)
        lines.append(f"| {method} | {f['accuracy']:.3f} | {f['mra']:.3f} | {f['exact']:.3f} | "
                     f"{f['completion_tokens']:.1f} | {f['seconds']:.1f} | {f['no_program']} |")
    for method, run in runs.items():
        if method == baseline:
            continue
        wins = sum(right(run[q]) and not right(runs[baseline][q]) for q in ids)
        losses = sum(right(runs[baseline][q]) and not right(run[q]) for q in ids)
        lines.append(f"{method} vs {baseline}: right where it is wrong {wins}, the reverse {losses} "
                     f"(two-sided sign test p = {sign_test(wins, losses):.3f})")
    lines += ["", "| family | n | " + " | ".join(runs) + " |", "|---|---:|" + "---:|" * len(runs)]
    for family, members in family_groups(data, None, ids):
        cells = " | ".join(f"{mean([run[q].score for q in members]):.2f}" for run in runs.values())
        lines.append(f"| {family} | {len(members)} | {cells} |")
    return lines, ids


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--commit", help="the commit the runs were made at (default: HEAD)")
    args = parser.parse_args(argv)
    paths = [args.baseline, *[p for p in args.runs if p != args.baseline]]
    runs = {method_of(p): load(p) for p in paths}
    lines, ids = report(runs, method_of(args.baseline), args.data)
    print("\n".join(lines))
    if args.json:
        commit = current_commit(args.commit)
        rows = [{"method": m, "questions": len(ids), "accuracy": round(f["accuracy"], 4),
                 "mra": round(f["mra"], 4), "seconds_per_question": round(f["seconds"], 2), "commit": commit}
                for m, f in ((m, figures(run, ids)) for m, run in runs.items())]
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
