"""A helper keeps being checked after admission: evaluated figures, and retirement against a baseline."""

from __future__ import annotations

from dataclasses import dataclass

from typer.testing import CliRunner

from api_store import ApiStore
from vadar.cli import app
from vadar.library.hand import add_functions
from vadar.library.tracking import helper_uses, track_evaluation
from vadar.runs.results import QuestionResult, ResultsFile

HELPERS = '''
def _good(image):
    """A helper whose programs are right."""
    return 1


def _bad(image):
    """A helper whose programs are wrong where the baseline was right."""
    return 2
'''


@dataclass
class Result:
    question_id: str
    program: str | None
    score: float


def results(calls: dict[str, tuple[str, float]]) -> list[Result]:
    return [Result(q, f"final_result = {name}(image)" if name else "final_result = 0", score)
            for q, (name, score) in calls.items()]


RUN = results({"1": ("_good", 1.0), "2": ("_good", 1.0), "3": ("_bad", 0.0), "4": ("_bad", 0.0),
               "5": ("_bad", 1.0), "6": ("_bad", 0.0), "7": ("", 1.0)})
BASELINE = {r.question_id: r for r in results({q: ("", 1.0 if q != "1" else 0.0) for q in "1234567"})}


def test_uses_are_counted_per_helper_and_paired_with_the_baseline():
    uses = helper_uses(RUN, ["_good", "_bad", "_unused"], BASELINE)
    assert set(uses) == {"_good", "_bad"}
    assert (uses["_good"].uses, uses["_good"].score, uses["_good"].baseline_score) == (2, 2.0, 1.0)
    assert (uses["_bad"].uses, uses["_bad"].score, uses["_bad"].baseline_score) == (4, 1.0, 4.0)
    assert uses["_bad"].worse and not uses["_good"].worse


def test_a_helper_worse_than_the_baseline_is_retired_with_its_history_kept(tmp_path):
    with ApiStore(tmp_path / "lib.sqlite") as store:
        add_functions(store, HELPERS)
        retired = track_evaluation(store, RUN, run="run-a", baseline=BASELINE, min_uses=4)
        assert list(retired) == ["_bad"] and "scored 1, the same questions without the library 4" in retired["_bad"]
        assert [f.name for f in store.library()] == ["_good"]
        assert [d.decision for d in store.decisions("_bad")] == ["admitted", "evaluated", "retired"]
        assert store.history("_bad")[-1].code  # kept
        assert [d.evidence["uses"] for d in store.decisions("_good") if d.decision == "evaluated"] == [2]


def test_without_a_baseline_or_below_the_minimum_uses_nothing_is_retired(tmp_path):
    with ApiStore(tmp_path / "lib.sqlite") as store:
        add_functions(store, HELPERS)
        assert track_evaluation(store, RUN, run="run-a") == {}
        assert track_evaluation(store, RUN, run="run-b", baseline=BASELINE, min_uses=5) == {}
        assert len(store.library()) == 2
        assert store.candidates() == []  # an evaluated decision does not undo the admission


def _write(run_dir, rows):
    run_dir.mkdir()
    out = ResultsFile(run_dir / "results.jsonl")
    for r in rows:
        out.append(QuestionResult(question_id=r.question_id, question="q", answer_type="int", gold="1", answer="1",
                                  score=r.score, correct=r.score == 1.0, program=r.program, error=None, attempts=1,
                                  prompt_tokens=1, completion_tokens=1, cached_prompt_tokens=0, seconds=0.1,
                                  image_id="img"))


def test_library_track_command(tmp_path, monkeypatch):
    monkeypatch.setenv("VADAR_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    with ApiStore(tmp_path / "home" / "vadar.sqlite") as store:
        add_functions(store, HELPERS)
    _write(tmp_path / "vadar-run", RUN)
    _write(tmp_path / "static-run", list(BASELINE.values()))
    result = CliRunner().invoke(app, ["library", "track", str(tmp_path / "vadar-run"),
                                      "--baseline", str(tmp_path / "static-run")])
    assert result.exit_code == 0, result.output
    assert "_good: 2: 2 vs 1" in result.output and "_bad: 4: 1 vs 4  retired" in result.output


def test_a_helper_calling_a_retired_helper_is_retired_with_it(tmp_path):
    with ApiStore(tmp_path / "lib.sqlite") as store:
        add_functions(store, HELPERS + '''

def _twice_bad(image):
    """Two of what the bad helper gives."""
    return 2 * _bad(image)
''')
        assert store.current("_twice_bad").dependencies == ("_bad",)
        retired = track_evaluation(store, RUN, run="run-a", baseline=BASELINE, min_uses=4)
        assert retired == {"_bad": retired["_bad"], "_twice_bad": "it calls the retired helper _bad"}
        assert [f.name for f in store.library()] == ["_good"]
        assert store.decisions("_twice_bad")[-1].evidence["reason"] == "it calls the retired helper _bad"
