"""Paired comparison of evaluation runs on the same questions: the figures of docs/results/library.md.

Usage:
  python benchmarks/library_results.py --dataset clevr-dev --static RUN --vadar RUN [--hand RUN]
      [--data DIR --split S] [--db VADAR_HOME/vadar.sqlite] [--json docs/results/library.json]

Prints accuracy of each run on the questions all of them answered, how often vadar's programs
call a library function, completion tokens and seconds per question, the paired wins and losses
against static-api (and of vadar against the hand library), and accuracy and library use per
question family (from the data set) and per question shape (answer kind and relation family). With
--db (the library the vadar run used) and --data, every admitted helper is run through the
ground-truth property checks and the failing ones are named, with the library's coverage of the
build questions (the share whose steps all have an admitted helper, `vadar.library.coverage`;
held-back questions included), and the build's figures are printed:
seconds per build question and, of the helpers implemented by generate-and-test, the share whose
first sample passed (pass@1) and whose first --k samples held a passing one (pass@k). With --json,
adds or replaces this data set's entry in that file.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

from vadar.programs.calls import undefined_helpers_called
from vadar.programs.stubs import StubFormatError
from vadar.report.data_lookup import DataLookup
from vadar.runs.results import QuestionResult, ResultsFile


def load(run: Path) -> dict[str, QuestionResult]:
    return {r.question_id: r for r in ResultsFile(run / "results.jsonl").read()}


def uses_library(result: QuestionResult) -> bool:
    """The program calls a helper (a `_` name it does not define itself), read from its syntax tree."""
    if not result.program:
        return False
    try:
        return bool(undefined_helpers_called(result.program))
    except StubFormatError:
        return False


def helper_programs_right(run: Mapping[str, QuestionResult], ids: Sequence[str]) -> float | None:
    """Of the programs that call a helper, the share that are right (None when none calls one)."""
    calling = [q for q in ids if uses_library(run[q])]
    return round(sum(run[q].correct for q in calling) / len(calling), 4) if calling else None


def no_program(run: Mapping[str, QuestionResult], ids: Sequence[str]) -> float:
    """The share of questions that ended without a working program (counted wrong)."""
    return round(sum(run[q].error is not None for q in ids) / len(ids), 4)


def scene_disjoint(run_dir: Path) -> bool | None:
    """What the evaluation recorded: did its questions share no scene with the build of its library.

    The summary is written when the evaluation ends; its run.json holds the same from the start, so a
    stopped evaluation says it too (None for runs that recorded neither)."""
    for name in ("summary.json", "run.json"):
        recorded = run_dir / name
        if recorded.exists() and "scene_disjoint" in (fields := json.loads(recorded.read_text())):
            return fields["scene_disjoint"]
    return None


def shared_questions(runs: Mapping[str, Mapping[str, QuestionResult]]) -> list[str]:
    """The questions every run answered, in question order."""
    return sorted(set.intersection(*(set(r) for r in runs.values())), key=lambda q: (len(q), q))


def mean_of(run: Mapping[str, QuestionResult], ids: Sequence[str], field: str) -> float:
    """The mean of one per-question field (score, completion_tokens, seconds) over `ids`."""
    return sum(getattr(run[q], field) for q in ids) / len(ids)


def swaps(run: Mapping[str, QuestionResult], base: Mapping[str, QuestionResult], ids: Sequence[str]) -> tuple[int, int]:
    """Questions `run` gets right where `base` is wrong, and the reverse."""
    wins = sum(run[q].correct and not base[q].correct for q in ids)
    losses = sum(base[q].correct and not run[q].correct for q in ids)
    return wins, losses


def family_groups(data: Path, split: str | None, ids: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The questions `ids` by family of the data set, largest family first."""
    lookup = DataLookup.open(data, split)
    families: dict[str, list[str]] = defaultdict(list)
    for q in ids:
        families[lookup.family(q) or "?"].append(q)
    return sorted(families.items(), key=lambda item: -len(item[1]))


def current_commit(given: str | None = None) -> str:
    """`given`, else the short hash of HEAD."""
    return given or subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--static", type=Path, required=True)
    parser.add_argument("--vadar", type=Path, required=True)
    parser.add_argument("--hand", type=Path)
    parser.add_argument("--data", type=Path)
    parser.add_argument("--split")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--db", type=Path, help="the vadar run's library (for helpers admitted and their checks)")
    parser.add_argument("--commit", help="the commit the runs were made at (default: HEAD)")
    parser.add_argument("--k", type=int, default=8, help="samples per round of the build's search (pass@k)")
    args = parser.parse_args()
    runs = {"static_api": load(args.static), "vadar": load(args.vadar)}
    if args.hand:
        runs["hand_library"] = load(args.hand)
    shared = shared_questions(runs)
    accuracy = {name: mean_of(run, shared, "score") for name, run in runs.items()}
    using = sum(uses_library(runs["vadar"][q]) for q in shared) / len(shared)
    print(f"{args.dataset}: {len(shared)} questions answered by every run")
    for name, value in accuracy.items():
        print(f"  {name}: {value:.3f}")
    tokens = {name: mean_of(run, shared, "completion_tokens") for name, run in runs.items()}
    seconds = {name: mean_of(run, shared, "seconds") for name, run in runs.items()}
    for name in runs:
        print(f"  {name}: {tokens[name]:.1f} completion tokens and {seconds[name]:.1f} s per question "
              f"({tokens[name] / tokens['static_api']:.2f}x and {seconds[name] / seconds['static_api']:.2f}x static-api)")
    static = runs["static_api"]
    for name, run in runs.items():
        if name == "static_api":
            continue
        share = sum(uses_library(run[q]) for q in shared) / len(shared)
        wins, losses = swaps(run, static, shared)
        print(f"  {name}: programs calling a library function {share:.3f}, right {helper_programs_right(run, shared)}; "
              f"without a working program {no_program(run, shared):.3f} (static-api {no_program(static, shared):.3f}); "
              f"right where static-api is wrong {wins}, the reverse {losses} "
              f"(two-sided sign test p = {sign_test(wins, losses):.2f})")
    if args.data:
        print("  | family | n | " + " | ".join(runs) + " | vadar programs calling the library |")
        for family, ids in family_groups(args.data, args.split, shared):
            cells = " | ".join(f"{sum(run[q].score for q in ids) / len(ids):.2f}" for run in runs.values())
            used = sum(uses_library(runs["vadar"][q]) for q in ids) / len(ids)
            print(f"  | {family} | {len(ids)} | {cells} | {used:.2f} |")
    if "hand_library" in runs:
        wins, losses = swaps(runs["vadar"], runs["hand_library"], shared)
        print(f"  vadar against hand_library: right where the hand library is wrong {wins}, the reverse {losses} "
              f"(two-sided sign test p = {sign_test(wins, losses):.2f})")
    print("  | question shape | n | " + " | ".join(runs) + " | no working program (vadar) |")
    for shape, ids in shape_groups(runs["vadar"], shared):
        cells = " | ".join(f"{sum(run[q].score for q in ids) / len(ids):.2f}" for run in runs.values())
        print(f"  | {shape} | {len(ids)} | {cells} | {no_program(runs['vadar'], ids):.2f} |")
    helpers = check_helpers(args.db, args.data, args.split) if args.db and args.data else None
    if helpers is not None:
        print(f"  helpers admitted: {len(helpers['admitted'])} ({', '.join(helpers['admitted']) or '-'}); "
              f"failing the ground-truth checks: {len(helpers['failing'])} ({', '.join(helpers['failing']) or '-'}); "
              f"built from {helpers['build_questions']} questions; coverage {helpers['coverage']} of them "
              "(every step with an admitted helper)")
    build = build_figures(args.db, args.k) if args.db else None
    if build is not None:
        print(f"  build: {build['build_seconds_per_question']} s per build question; generate-and-test on "
              f"{build['searches']} helpers: pass@1 {build['helper_pass_at_1']}, pass@{args.k} "
              f"{build['helper_pass_at_k']}, any pass {build['helper_pass_any']}")
    if args.json:
        commit = current_commit(args.commit)
        entries = json.loads(args.json.read_text()) if args.json.exists() else []
        entries = [e for e in entries if e.get("dataset") != args.dataset]
        entries.append({"dataset": args.dataset, "questions": len(shared),
                        "static_api": round(accuracy["static_api"], 4), "vadar": round(accuracy["vadar"], 4),
                        "hand_library": round(accuracy["hand_library"], 4) if "hand_library" in accuracy else None,
                        "programs_using_library": round(using, 4),
                        "helper_programs_right": helper_programs_right(runs["vadar"], shared),
                        "no_program": no_program(runs["vadar"], shared),
                        "no_program_static": no_program(static, shared),
                        "scene_disjoint": scene_disjoint(args.vadar),
                        "completion_tokens_vadar": round(tokens["vadar"], 1),
                        "completion_tokens_static": round(tokens["static_api"], 1),
                        "helpers_admitted": len(helpers["admitted"]) if helpers else None,
                        "helpers_failing_checks": len(helpers["failing"]) if helpers else None,
                        "build_questions": helpers["build_questions"] if helpers else None,
                        "coverage": helpers["coverage"] if helpers else None,
                        **({k: build[k] for k in ("build_seconds_per_question", "helper_pass_at_1",
                                                  "helper_pass_at_k")} if build else {}),
                        "commit": commit})
        args.json.write_text(json.dumps(entries, indent=1) + "\n")


def shape_groups(run: Mapping[str, QuestionResult], ids: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The questions by their shape (`question_shape`: the answer kind and relation family), largest first."""
    from vadar.programs.question_shape import shape_of

    groups: dict[str, list[str]] = defaultdict(list)
    for q in ids:
        shape = shape_of(run[q].question)
        groups[f"{shape.answer}, {shape.relation or 'objects alone'}"].append(q)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def check_helpers(db: Path, data: Path, split: str | None) -> dict:
    """The library's admitted helpers and those failing their ground-truth property checks."""
    from api_store import ApiStore
    from vadar.library.coverage import coverage_of
    from vadar.library.truth_checks import TruthChecks
    from vadar.runs.build_history import build_questions
    from vadar.runs.prepare import DataSelection
    from vadar.sandbox import execute

    prepared = DataSelection(data, split).prepare()
    with ApiStore(db, create=False) as store:
        library = store.library()
        build = build_questions(store, prepared.dataset.root, prepared.split)
    checks = TruthChecks(lambda code, namespace: execute(code, namespace, timeout_s=10))
    failing = [f.name for f in library
               if checks.check(f, library, prepared.dataset, prepared.modules, prepared.questions[:60]).passed is False]
    built = [q.question for q in prepared.questions if q.question_id in build]
    return {"admitted": [f.name for f in library], "failing": failing, "build_questions": len(build),
            "coverage": coverage_of(built, library).share}


def build_figures(db: Path, k: int) -> dict | None:
    """Seconds per build question (the build runs' wall time over the questions they were shown) and
    the generate-and-test figures of the library's searches: the share of searched helpers whose first
    sample passed (pass@1), whose first `k` samples held a passing one (pass@k), and any sample."""
    from api_store import ApiStore

    with ApiStore(db, create=False) as store:
        builds = [r for r in store.runs("build-api") if r.finished_at]
        questions = sum(len(b.question_ids) for r in builds for b in store.batches(r.id))
        searches = [d.evidence for d in store.decisions() if d.decision == "searched"]
    seconds = sum(_elapsed(r.started_at, r.finished_at) for r in builds)
    passed = [s.get("passed") or [] for s in searches]
    share = lambda hits: round(hits / len(passed), 4) if passed else None  # noqa: E731
    return {"build_seconds_per_question": round(seconds / questions, 1) if questions else None,
            "searches": len(passed), "helper_pass_at_1": share(sum(1 in p for p in passed)),
            "helper_pass_at_k": share(sum(bool(p) and p[0] <= k for p in passed)),
            "helper_pass_any": share(sum(bool(p) for p in passed))}


def _elapsed(started: str, finished: str) -> float:
    from datetime import datetime

    return (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test on the questions where exactly one of two methods is right."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(max(wins, losses), n + 1)) / 2**n
    return min(1.0, 2 * tail)


if __name__ == "__main__":
    main()
