"""How often a program check would have spoken on recorded programs, right ones and wrong ones.

    python benchmarks/check_replay.py [--checks phrases_from_question result_on_every_path] [FILE.jsonl ...]
    python benchmarks/check_replay.py --answers [FILE.jsonl ...]

A check that costs a repair reply must speak far more often on wrong programs than on right ones.
Every `results.jsonl`-style file under docs/results (or the files given) is read; each recorded
program is checked against the base modules' API (a library helper the program calls is unknown
here, so only checks that read the question and the program's own statements are meaningful) and
counted by data set (CLEVR or other) and by whether it was scored right. Prints per check the
programs it flags, right and wrong, and a few flagged right ones to read.

`--answers` replays instead the answer check the writer runs after a program ran
(`vadar.programs.answer_kinds`): every recorded answer of a program that ran without an error,
flagged when it is of another kind than its question asks for, by data set and question kind.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from vadar.programs import call_checks
from vadar.programs.api_text import render_api
from vadar.programs.call_signatures import callable_api
from vadar.programs.call_checks import check_program
from vadar.programs.answer_kinds import answer_problem
from vadar.programs.question_shape import shape_of

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def records(files: list[Path]):
    """(data set, record) of every recorded program with its question and verdict."""
    for path in files:
        kind = "clevr" if "clevr" in str(path) else "other"
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if record.get("question") and "correct" in record:
                yield kind, record


def replay_answers(files: list[Path], show: int) -> None:
    answers: Counter[tuple[str, bool]] = Counter()
    flagged: Counter[tuple[str, str, bool]] = Counter()
    shown: list[str] = []
    for kind, record in records(files):
        if record.get("error") or "answer" not in record:
            continue
        right = bool(record["correct"])
        answers[kind, right] += 1
        problem = answer_problem(record["question"], record["answer"])
        if problem is not None:
            flagged[kind, shape_of(record["question"]).answer, right] += 1
            if right and len(shown) < show:
                shown.append(f"{record['question']}\n{record['answer']!r}")
    print("answers of programs that ran: " + ", ".join(
        f"{kind} {answers[kind, True]} right, {answers[kind, False]} wrong" for kind in ("clevr", "other")))
    print(f"{'question kind':<16}{'data':>7}{'right':>8}{'wrong':>8}")
    for data, asked in sorted({(d, a) for d, a, _ in flagged}):
        print(f"{asked:<16}{data:>7}{flagged[data, asked, True]:>8}{flagged[data, asked, False]:>8}")
    for example in shown:
        print(f"\n--- flagged and right:\n{example}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--checks", nargs="+", default=["phrases_from_question", "result_on_every_path"])
    parser.add_argument("--show", type=int, default=5, help="flagged right programs printed per check")
    parser.add_argument("--answers", action="store_true", help="replay the answer check instead")
    args = parser.parse_args()
    files = args.files or sorted(RESULTS.rglob("*.jsonl"))
    if args.answers:
        replay_answers(files, args.show)
        return
    checks = [getattr(call_checks, name) for name in args.checks]
    api = callable_api(render_api())
    programs: Counter[tuple[str, bool]] = Counter()
    flagged: Counter[tuple[str, str, bool]] = Counter()
    shown: dict[str, list[str]] = {name: [] for name in args.checks}
    for kind, record in records(files):
        code, question = record.get("program"), record["question"]
        if not code:
            continue
        right = bool(record["correct"])
        programs[kind, right] += 1
        for check in checks:
            if check_program(code, api, (check,), question):
                flagged[check.__name__, kind, right] += 1
                if right and len(shown[check.__name__]) < args.show:
                    shown[check.__name__].append(f"{question}\n{code}")
    print(f"{len(files)} files; programs: " + ", ".join(
        f"{kind} {programs[kind, True]} right, {programs[kind, False]} wrong" for kind in ("clevr", "other")))
    print(f"{'check':<24}{'data':>7}{'right':>8}{'wrong':>8}")
    for name in args.checks:
        for kind in ("clevr", "other"):
            print(f"{name:<24}{kind:>7}{flagged[name, kind, True]:>8}{flagged[name, kind, False]:>8}")
    for name, examples in shown.items():
        for example in examples:
            print(f"\n--- {name}, flagged and right:\n{example}")


if __name__ == "__main__":
    main()
