"""benchmarks/techniques.py (and the library_results.py pieces it reuses) on small synthetic runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from omni3d_bench.sample import sample_path
from vadar.runs.results import QuestionResult, result_record

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import library_results  # noqa: E402
import techniques  # noqa: E402


def make_run(path: Path, right: list[bool], *, tokens: int, seconds: float, summary: dict | None = None,
             manifest: dict | None = None) -> Path:
    path.mkdir(parents=True)
    lines = []
    for index, ok in enumerate(right):
        result = QuestionResult(question_id=str(index), question="q", answer_type="int", gold=1, answer=1 if ok else 0,
                                score=1.0 if ok else 0.0, correct=ok, program="final_result = 1", error=None,
                                attempts=1, prompt_tokens=10, completion_tokens=tokens, cached_prompt_tokens=0,
                                seconds=seconds, image_id="img", method="vadar")
        lines.append(json.dumps(result_record(result)) + "\n")
    (path / "results.jsonl").write_text("".join(lines))
    if summary is not None:
        (path / "summary.json").write_text(json.dumps(summary))
    if manifest is not None:
        (path / "run.json").write_text(json.dumps(manifest))
    return path


@pytest.fixture
def runs(tmp_path):
    base = make_run(tmp_path / "greedy", [True, False, False, False, False, False, True, True],
                    tokens=40, seconds=2.0, summary={"method": "vadar", "techniques": "none"})
    voted = make_run(tmp_path / "voted", [True, True, True, True, True, True, True, False],
                     tokens=120, seconds=6.5, manifest={"method": "vadar", "reasoning": {"samples": 3}})
    return base, voted


def test_accuracy_cost_swaps_and_families_against_the_baseline(runs, capsys):
    base, voted = runs
    techniques.main([str(voted), "--baseline", str(base), "--data", str(sample_path()), "--split", "sample"])
    out = capsys.readouterr().out
    assert "8 questions answered by every run; baseline greedy" in out
    assert "greedy (vadar, none): accuracy 0.375, 40.0 completion tokens and 2.0 s per question" in out
    assert "voted (vadar, samples=3): accuracy 0.875, 120.0 completion tokens and 6.5 s per question" in out
    assert "voted: right where the baseline is wrong 5, the reverse 1 (two-sided sign test p = 0.219)" in out
    assert "| sample_count | 2 | 1.00 | 1.00 |" in out  # questions 0 and 6 of the built-in sample
    assert "| sample_relate_count | 2 | 0.50 | 0.50 |" in out and "| sample_query | 1 | 0.00 | 1.00 |" in out


def test_rows_are_appended_and_a_rerun_replaces_its_own(runs, tmp_path):
    base, voted = runs
    table = tmp_path / "techniques.json"
    table.write_text(json.dumps([{"dataset": "other", "method": "vadar", "options": "none"},
                                 {"dataset": "clevr-dev", "questions": 103, "method": "vadar", "options": "none"}]))
    for _ in range(2):
        techniques.main([str(voted), "--baseline", str(base), "--dataset", "clevr-dev", "--json", str(table),
                         "--commit", "abc123"])
    rows = json.loads(table.read_text())
    assert rows[0]["dataset"] == "other" and rows[1]["questions"] == 103 and len(rows) == 4
    assert rows[3] == {"dataset": "clevr-dev", "questions": 8, "method": "vadar", "options": "samples=3",
                       "accuracy": 0.875, "completion_tokens": 120.0, "seconds_per_question": 6.5, "commit": "abc123"}


def test_the_sign_test_is_exact_and_the_shared_pieces_agree():
    assert library_results.sign_test(5, 0) == pytest.approx(0.0625)
    assert library_results.sign_test(0, 0) == 1.0
    assert library_results.sign_test(3, 3) == 1.0


def test_library_results_still_prints_its_comparison(runs, capsys, monkeypatch):
    base, voted = runs
    monkeypatch.setattr(sys, "argv", ["library_results.py", "--dataset", "d", "--static", str(base), "--vadar", str(voted)])
    library_results.main()
    out = capsys.readouterr().out
    assert "static_api: 0.375" in out and "vadar: 0.875" in out
    assert "right where static-api is wrong 5, the reverse 1 (two-sided sign test p = 0.22)" in out


def test_a_row_takes_the_commits_run_json_records(tmp_path):
    base = make_run(tmp_path / "base", [True, False], tokens=10, seconds=1.0, summary={"method": "static-api"})
    resumed = make_run(tmp_path / "resumed", [True, True], tokens=10, seconds=1.0, manifest={
        "method": "static-api", "reasoning": {"reflect": True},
        "written_by": [{"version": "0.1.0", "commit": "aaa1111", "dirty": False},
                       {"version": "0.1.0", "commit": "bbb2222", "dirty": False}]})
    table = tmp_path / "techniques.json"
    techniques.main([str(resumed), "--baseline", str(base), "--dataset", "d", "--json", str(table), "--commit", "ccc3333"])
    commits = {row["options"]: row["commit"] for row in json.loads(table.read_text())}
    assert commits == {"none": "ccc3333", "reflect": "aaa1111, bbb2222"}


def test_a_voting_run_shows_its_accuracy_by_agreement(tmp_path, capsys):
    base = make_run(tmp_path / "base", [True] * 4, tokens=10, seconds=1.0, summary={"method": "vadar"})
    voted = make_run(tmp_path / "voted", [True, True, False, False], tokens=30, seconds=3.0,
                     manifest={"method": "vadar", "reasoning": {"samples": 3}})
    rows = [json.loads(line) for line in (voted / "results.jsonl").read_text().splitlines()]
    votes = [  # (errors of the three programs, agreement of the chosen answer)
        ([False, False, False], 1.0), ([False, False, True], 1.0), ([False, False, False], 0.6667),
        ([True, True, True], 0.0)]
    for row, (errors, agreement) in zip(rows, votes, strict=True):
        row["extra"] = {"samples": [{"answer": 1, "error": e} for e in errors], "agreement": agreement}
    (voted / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    techniques.main([str(voted), "--baseline", str(base)])
    out = capsys.readouterr().out
    assert "  base, accuracy by agreement" not in out  # greedy runs did not vote
    assert ("  voted, accuracy by agreement:\n"
            "    3 of 3 working programs agreed: 1 questions, accuracy 1.000\n"
            "    2 of 2 working programs agreed: 1 questions, accuracy 1.000\n"
            "    2 of 3 working programs agreed: 1 questions, accuracy 0.000\n"
            "    no working program: 1 questions, accuracy 0.000\n") in out


def test_first_programs_stand_for_the_greedy_program_alone_and_are_compared_with_the_vote(tmp_path, capsys):
    base = make_run(tmp_path / "base", [False, False, True], tokens=10, seconds=1.0, summary={"method": "vadar"})
    voted = make_run(tmp_path / "voted", [True, True, True], tokens=30, seconds=3.0,
                     manifest={"method": "vadar", "reasoning": {"samples": 3, "reflect": True}})
    rows = [json.loads(line) for line in (voted / "results.jsonl").read_text().splitlines()]
    firsts = [{"answer": 0, "error": False},  # outvoted: the vote's 1 is right, the first program's 0 not
              {"answer": "<error>", "error": True},  # failed: wrong alone
              {"answer": 1, "error": False}]  # the vote's own answer: its stored score
    for row, first in zip(rows, firsts, strict=True):
        row["extra"] = {"samples": [first, {"answer": 1, "error": False}, {"answer": 1, "error": False}],
                        "agreement": 1.0, "chosen_sample": 1}
    (voted / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    techniques.main([str(voted), "--baseline", str(base), "--first-programs"])
    out = capsys.readouterr().out
    assert "voted (first program) (vadar, reflect): accuracy 0.333, cost not recorded apart" in out
    assert "voted (first program): right where the baseline is wrong 0, the reverse 0" in out
    assert "voted: right where its first program alone is wrong 2, the reverse 0" in out
    assert "voted (first program), accuracy by agreement" not in out
    techniques.main([str(voted), "--baseline", str(base)])
    assert "(first program)" not in capsys.readouterr().out
