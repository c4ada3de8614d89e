"""The methods compared on a multi-view benchmark: the figures of docs/results/multiview.md.

Usage:
  python benchmarks/multiview.py RUN [RUN ...] --baseline RUN --data DIR
      [--json docs/results/multiview.json] [--commit HASH]

Each RUN is a `vadar eval` run directory on the same generated multi-view benchmark
(`vadar bench generate --views K`); runs of one method over different questions (a method's
questions split across cores) count as one; `LABEL=RUN` names a run, to compare two runs of one
method (e.g. before and after a prompt change). Prints each method on every question it answered,
then, on the questions every method answered: the score
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


HEADER = ["| method | questions | score | MRA (metric) | exact (others) | completion tokens | seconds | no working program |",
          "|---|---:|---:|---:|---:|---:|---:|---:|"]


def table_row(method: str, run: Results, ids: Sequence[str]) -> str:
    f = figures(run, ids)
    return (f"| {method} | {len(ids)} | {f['accuracy']:.3f} | {f['mra']:.3f} | {f['exact']:.3f} | "
            f"{f['completion_tokens']:.1f} | {f['seconds']:.1f} | {f['no_program']} |")


def own_questions(run: Results) -> list[str]:
    return shared_questions({"run": run})


def labelled(arg: str) -> tuple[str, Path]:
    """`LABEL=RUN` or `RUN` (labelled by its method)."""
    label, sep, path = arg.partition("=")
    return (label, Path(path)) if sep else (method_of(Path(arg)), Path(arg))


def report(runs: Mapping[str, Results], baseline: str, data: Path) -> tuple[list[str], list[str]]:
    """The printed lines and the shared question ids; `runs` maps a method to its results."""
    lines = ["Each method on every question it answered:", *HEADER]
    lines += [table_row(method, run, own_questions(run)) for method, run in runs.items()]
    ids = shared_questions(runs)
    if not ids:
        raise SystemExit("the runs share no answered question")
    lines += ["", f"{len(ids)} questions answered by every method; baseline {baseline}", *HEADER]
    lines += [table_row(method, run, ids) for method, run in runs.items()]
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
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--commit", help="the commit the runs were made at (default: HEAD)")
    args = parser.parse_args(argv)
    named = [labelled(arg) for arg in [args.baseline, *[a for a in args.runs if a != args.baseline]]]
    runs: dict[str, dict[str, QuestionResult]] = {}
    for label, path in named:
        runs.setdefault(label, {}).update(load(path))
    lines, ids = report(runs, named[0][0], args.data)
    print("\n".join(lines))
    if args.json:
        commit = current_commit(args.commit)
        rows = []
        for method, run in runs.items():
            own = own_questions(run)
            f = figures(run, own)
            rows.append({"method": method, "questions": len(own), "accuracy": round(f["accuracy"], 4),
                         "mra": round(f["mra"], 4), "seconds_per_question": round(f["seconds"], 2),
                         "commit": commit})
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
