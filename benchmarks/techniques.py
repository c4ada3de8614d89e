"""Reasoning techniques compared on the same questions: accuracy, cost and paired swaps per run.

Usage:
  python benchmarks/techniques.py RUN [RUN ...] --baseline RUN [--data DIR --split S]
      [--dataset NAME --json docs/results/techniques.json] [--commit HASH]

Each RUN is a run directory of `vadar eval` (e.g. `--method vadar --samples 3`, `--formalize`).
Prints, on the questions every run answered: accuracy, completion tokens and seconds per question
of each run, accuracy per question family (with --data), against the baseline run the questions
won and lost with an exact two-sided sign-test p-value, and for a run that voted (`--samples K`)
its accuracy by how many working programs agreed with the chosen answer: is agreement a
confidence one can act on? With --first-programs, a voting run also stands for its first (greedy)
programs alone: the same run with every option but the vote (accuracy and swaps only: the cost of
one program is not recorded apart). With --json, adds one row per
run ({"dataset", "questions", "method", "options", "accuracy", "completion_tokens",
"seconds_per_question", "commit"}) to that file, replacing an earlier row of the same data set,
method and options; the commit is the one run.json records (`written_by`), else --commit.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from library_results import current_commit, family_groups, load, mean_of, shared_questions, sign_test, swaps
from omni3d_bench.metrics import score_answer
from vadar.agents.techniques.vote import VoteRecord
from vadar.agents.voting import same_answer
from vadar.config import ReasoningConfig
from vadar.runs.results import QuestionResult


@dataclass(frozen=True)
class Run:
    """One run directory: its results and what it was made with."""

    path: Path
    method: str
    options: str
    results: Mapping[str, QuestionResult]
    commit: str | None = None  # the commits run.json says wrote the run, when it says

    @property
    def name(self) -> str:
        return self.path.name


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def open_run(path: Path) -> Run:
    """The run in `path`; its options from the summary, else from run.json, else none."""
    summary, manifest = _json(path / "summary.json"), _json(path / "run.json")
    options = summary.get("techniques")
    if options is None:
        recorded = manifest.get("reasoning") or {}
        known = {k: v for k, v in recorded.items() if k in ReasoningConfig.__dataclass_fields__}
        options = ReasoningConfig(**known).label()
    method = summary.get("method") or manifest.get("method") or "?"
    return Run(path, method, options, load(path), recorded_commits(manifest))


def first_programs(run: Run, rel_tol: float = 1e-3) -> Run | None:
    """What `run` would have answered with its first program alone (the greedy one, revised as the
    run's other options revise it), or None when the run did not vote. An answer the vote also
    chose keeps its stored score; another is scored by its answer type."""
    if not any(r.techniques.get(VoteRecord) is not None for r in run.results.values()):
        return None
    results = {}
    for qid, voted in run.results.items():
        vote = voted.techniques.get(VoteRecord)
        first = vote.samples[0] if vote is not None and vote.samples else None
        result = dataclasses.replace(voted, techniques=voted.techniques.without(VoteRecord))
        if first is None:
            results[qid] = result
        elif first.error:
            results[qid] = dataclasses.replace(result, answer=first.answer, score=0.0, correct=False)
        elif same_answer(first.answer, result.answer, rel_tol):
            results[qid] = result
        else:
            score = score_answer(first.answer, result.gold, result.answer_type)
            results[qid] = dataclasses.replace(result, answer=first.answer, score=score, correct=score >= 1.0)
    options = "+".join(part for part in run.options.split("+") if not part.startswith("samples=")) or "none"
    return Run(run.path.with_name(f"{run.name} (first program)"), run.method, options, results, run.commit)


def recorded_commits(manifest: Mapping) -> str | None:
    """The commits `run.json` lists under `written_by` ("a1b2c3d", or "a1b2c3d, e4f5a6b" for a run
    resumed at another commit), or None when it lists none."""
    commits = [w.get("commit") for w in manifest.get("written_by") or [] if w.get("commit")]
    return ", ".join(dict.fromkeys(commits)) or None


def rows(runs: Sequence[Run], ids: Sequence[str], dataset: str, commit: str) -> list[dict]:
    """One JSON row per run, on the shared questions `ids`; `commit` for a run whose run.json names none."""
    return [{"dataset": dataset, "questions": len(ids), "method": run.method, "options": run.options,
             "accuracy": round(mean_of(run.results, ids, "score"), 4),
             "completion_tokens": round(mean_of(run.results, ids, "completion_tokens"), 1),
             "seconds_per_question": round(mean_of(run.results, ids, "seconds"), 2),
             "commit": run.commit or commit}
            for run in runs]


def report(runs: Sequence[Run], baseline: Run, data: Path | None = None, split: str | None = None,
           first: bool = False) -> list[str]:
    """The printed comparison, line by line; the baseline is the first run. With `first`, each voting
    run's first programs follow it as a run of their own, compared with the baseline and the vote."""
    every = [baseline, *[r for r in runs if r.path != baseline.path]]
    pairs: list[tuple[Run, Run]] = []  # (a voting run, its first programs)
    if first:
        for run in list(every):
            derived = first_programs(run)
            if derived is not None:
                every.insert(every.index(run) + 1, derived)
                pairs.append((run, derived))
    derived_paths = {derived.path for _, derived in pairs}
    ids = shared_questions({str(r.path): r.results for r in every})
    if not ids:
        raise SystemExit("the runs share no answered question")
    lines = [f"{len(ids)} questions answered by every run; baseline {baseline.name}"]
    for run in every:
        cost = ("cost not recorded apart" if run.path in derived_paths else
                f"{mean_of(run.results, ids, 'completion_tokens'):.1f} completion tokens and "
                f"{mean_of(run.results, ids, 'seconds'):.1f} s per question")
        lines.append(f"  {run.name} ({run.method}, {run.options}): accuracy {mean_of(run.results, ids, 'score'):.3f}, {cost}")
    for run in every[1:]:
        wins, losses = swaps(run.results, baseline.results, ids)
        lines.append(f"  {run.name}: right where the baseline is wrong {wins}, the reverse {losses} "
                     f"(two-sided sign test p = {sign_test(wins, losses):.3f})")
    for voting, derived in pairs:
        wins, losses = swaps(voting.results, derived.results, ids)
        lines.append(f"  {voting.name}: right where its first program alone is wrong {wins}, the reverse {losses} "
                     f"(two-sided sign test p = {sign_test(wins, losses):.3f})")
    for run in every:
        lines += agreement_lines(run, ids)
    if data is not None:
        lines.append("  | family | n | " + " | ".join(r.name for r in every) + " |")
        for family, members in family_groups(data, split, ids):
            cells = " | ".join(f"{mean_of(r.results, members, 'score'):.2f}" for r in every)
            lines.append(f"  | {family} | {len(members)} | {cells} |")
    return lines


def agreement_lines(run: Run, ids: Sequence[str]) -> list[str]:
    """Accuracy of a voting run by agreement ("3 of 3 working programs agreed"), most agreed first;
    no lines for a run that did not vote."""
    groups: dict[tuple[int, int], list[float]] = {}
    for qid in ids:
        vote = run.results[qid].techniques.get(VoteRecord)
        if vote is None:
            continue
        groups.setdefault((vote.agreeing, vote.working), []).append(run.results[qid].score)
    if not groups:
        return []
    lines = [f"  {run.name}, accuracy by agreement:"]
    for (agreeing, working), scores in sorted(groups.items(), key=lambda kv: (-kv[0][0] / max(kv[0][1], 1), -kv[0][1])):
        label = f"{agreeing} of {working} working programs agreed" if working else "no working program"
        lines.append(f"    {label}: {len(scores)} questions, accuracy {sum(scores) / len(scores):.3f}")
    return lines


def append_rows(path: Path, new: Sequence[dict]) -> None:
    """Add `new` to the JSON list in `path`, replacing rows of the same data set, question count, method
    and options (a baseline measured on 103 questions stays beside the same baseline on 220)."""
    key = lambda row: (row.get("dataset"), row.get("questions"), row.get("method"), row.get("options"))  # noqa: E731
    replaced = {key(row) for row in new}
    kept = [row for row in (json.loads(path.read_text()) if path.exists() else []) if key(row) not in replaced]
    path.write_text(json.dumps([*kept, *new], indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--data", type=Path)
    parser.add_argument("--split")
    parser.add_argument("--dataset", help="the data set's name in the JSON rows (default: the --data folder's)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--commit", help="the commit of runs whose run.json names none (default: HEAD)")
    parser.add_argument("--first-programs", action="store_true",
                        help="also show each voting run's first programs alone (not added to --json)")
    args = parser.parse_args(argv)
    baseline = open_run(args.baseline)
    runs = [open_run(path) for path in args.runs]
    for line in report(runs, baseline, args.data, args.split, args.first_programs):
        print(line)
    if args.json:
        every = [baseline, *[r for r in runs if r.path != baseline.path]]
        ids = shared_questions({str(r.path): r.results for r in every})
        dataset = args.dataset or (args.data.resolve().name if args.data else "?")
        append_rows(args.json, rows(every, ids, dataset, current_commit(args.commit)))


if __name__ == "__main__":
    main()
