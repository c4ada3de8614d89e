"""Outcome-verified admission, retirement, retrieval and the held-out rule, with a scripted LLM."""

from __future__ import annotations

import pytest

from api_store import ApiStore, FunctionStatus
from vadar.config import VadarConfig
from vadar.library.retrieval import LibraryRetriever
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
from vadar.runs.pipeline import build_api, evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

from left_of_helpers import RIGHT, STUB, WRONG

CHECK = ("ref = loc(image, 'red sphere')[0]\n"
         "found = _objects_left_of(image, ref)\n"
         "for b in found:\n"
         "    assert (b[0] + b[2]) / 2 < (ref[0] + ref[2]) / 2, 'a returned object is not left of the reference'\n"
         "left = [b for b in loc(image, 'objects') if (b[0] + b[2]) / 2 < (ref[0] + ref[2]) / 2]\n"
         "assert len(found) == len(left), 'an object left of the reference is missing'")
WITH_HELPER = "final_result = len(_objects_left_of(image, loc(image, 'red sphere')[0]))"
BY_HAND = ("ref = loc(image, 'red sphere')[0]\ncx = (ref[0] + ref[2]) / 2\n"
           "final_result = len([b for b in loc(image, 'objects') if (b[0] + b[2]) / 2 < cx])")


def scripted(implementations: list[str], *, baseline: str = BY_HAND, sample: str | None = None) -> ScriptedLLM:
    """Signature, then API replies in order; programs use the helper when the prompt offers it."""
    queue = list(implementations)

    def signatures(messages):
        return STUB if "_objects_left_of(" not in messages[0]["content"] else "# no new functions"

    def implementation(messages):
        return "```python\n" + (queue.pop(0) if len(queue) > 1 else queue[0]) + "```"

    def program(messages):
        if "left of the red sphere" not in messages[1]["content"]:
            return "```python\nfinal_result = 0\n```"
        offered = "def _objects_left_of(" in messages[0]["content"]
        return "```python\n" + (WITH_HELPER if offered else baseline) + "\n```"

    replies = {Role.SIGNATURE: signatures, Role.API_IMPLEMENT: implementation,
               Role.HELPER_CHECK: "```python\n" + CHECK + "\n```"}
    return ScriptedLLM([ByRole(replies, default=program)] * 300)


@pytest.fixture
def config(tmp_path):
    return admission_config(tmp_path)


def admission_config(tmp_path):
    """The configuration of these tests and of tests/library/test_admission_rules.py."""
    config = VadarConfig()
    config.library.distill = False  # these tests follow the top-down proposals alone
    config.library.admit_min_uses = 1  # their batches have one question that uses the helper
    config.library.search_samples = 1  # one implementation, as tests/agents/test_helper_search.py's search is not
    config.library.validation = False  # these tests count the build's replies; the gate has its own tests
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s = 10
    return config


def build(config, llm, tmp_path, *, mode="labelled"):
    config.library.admission = mode
    data = DataSelection(limit=2).prepare()  # question 1: "How many things are left of the red sphere?" (5)
    with open_session(config, llm=llm) as session:
        reports = build_api(session, data, tmp_path / "run", batch_size=2)
        return reports[0], session.store.library(), session.store


def test_a_helper_that_runs_but_answers_wrong_is_rejected_at_once_by_default(config, tmp_path):
    assert VadarConfig().library.repair is False
    report, library, store = build(config, scripted([WRONG]), tmp_path)
    assert "ground-truth check failed" in report.not_admitted["_objects_left_of"]
    assert [d.decision for d in ApiStore(config.paths.database).decisions("_objects_left_of")] == ["rejected"]


def test_a_helper_that_runs_but_answers_wrong_is_rejected_after_one_repair(config, tmp_path):
    config.library.repair = True
    report, library, store = build(config, scripted([WRONG]), tmp_path)
    assert report.implemented == ["_objects_left_of"] and report.admitted == []
    assert "ground-truth check failed" in report.not_admitted["_objects_left_of"]  # caught before outcomes
    store = ApiStore(config.paths.database)
    assert [f.name for f in store.library()] == []
    kinds = [d.decision for d in store.decisions("_objects_left_of")]
    assert kinds == ["repair", "rejected"]
    repair = store.decisions("_objects_left_of")[0].evidence
    assert repair["cases"][0]["expected"] == "the true objects" and "missing" in repair["cases"][0]["got"]
    history = store.history("_objects_left_of")
    assert history[-1].status == FunctionStatus.FAILED and history[-1].code == WRONG  # kept, never shown


def test_a_repair_that_fixes_the_helper_gets_it_admitted(config, tmp_path):
    config.library.repair = True
    report, library, store = build(config, scripted([WRONG, RIGHT]), tmp_path)
    assert report.admitted == ["_objects_left_of"]
    assert [f.name for f in library] == ["_objects_left_of"] and "same_object" in library[0].code


def test_a_correct_helper_is_admitted_and_its_programs_become_examples(config, tmp_path):
    report, library, store = build(config, scripted([RIGHT]), tmp_path)
    assert report.admitted == ["_objects_left_of"] and report.not_admitted == {}
    store = ApiStore(config.paths.database)
    decision = store.decisions("_objects_left_of")[-1]
    assert decision.decision == "admitted" and decision.evidence["right_with"] == 1
    examples = [p for p in store.verified_programs(correct_only=True) if p.uses]
    assert examples and "_objects_left_of" in examples[0].code
    assert store.function_stats()["_objects_left_of"].correct >= 1


def written(config) -> dict[str, list[str]]:
    """The gate's program variants per build question."""
    variants: dict[str, list[str]] = {}
    for program in ApiStore(config.paths.database).verified_programs():
        if program.variant in ("with", "without"):
            variants.setdefault(program.question, []).append(program.variant)
    return variants


def test_a_question_whose_program_calls_no_candidate_is_written_no_program_without_them(config, tmp_path,
                                                                                        monkeypatch):
    from vadar.library import truth_checks

    monkeypatch.setattr(truth_checks.TruthChecks, "check", lambda self, *a: truth_checks.TruthResult(None))
    # no ground truth: judged by outcomes, better than the program without it
    report, _, store = build(config, scripted([RIGHT], baseline="final_result = 0"), tmp_path)
    variants = written(config)
    helped = next(q for q in variants if "left of the red sphere" in q)
    assert sorted(variants.pop(helped)) == ["with", "without"]  # it judges the helper: both programs
    assert list(variants.values()) == [["with"]]  # the other question judges nothing
    assert report.admitted == ["_objects_left_of"]


def test_a_helper_ground_truth_confirms_is_judged_by_no_program_without_it(config, tmp_path):
    report, _, _ = build(config, scripted([RIGHT]), tmp_path)
    assert report.admitted == ["_objects_left_of"]
    assert all(variants == ["with"] for variants in written(config).values())
    evidence = ApiStore(config.paths.database).decisions("_objects_left_of")[-1].evidence
    assert evidence["truth_check"]["passed"] is True and evidence["right_with"] == 1
    assert "right_without" not in evidence  # nothing to compare with: not a zero


def test_unlabelled_mode_writes_every_question_its_programs_without_the_candidates(config, tmp_path):
    build(config, scripted([RIGHT]), tmp_path, mode="unlabelled")  # they make its reference
    written = [p.variant for p in ApiStore(config.paths.database).verified_programs()]
    assert written.count("without") == 2 and written.count("sample") == 2


def test_unlabelled_mode_rejects_a_helper_whose_behaviour_check_fails(config, tmp_path):
    report, _, store = build(config, scripted([WRONG]), tmp_path, mode="unlabelled")
    assert report.admitted == []
    assert "behaviour check failed" in report.not_admitted["_objects_left_of"]
    assert "left of the reference" in report.not_admitted["_objects_left_of"]


def test_unlabelled_mode_rejects_a_helper_that_disagrees_with_helper_free_programs(config, tmp_path, monkeypatch):
    from vadar.library import checks

    from vadar.library import truth_checks

    monkeypatch.setattr(checks.BehaviourChecks, "run", lambda self, *a: checks.CheckResult(None))  # no check
    monkeypatch.setattr(truth_checks.TruthChecks, "check", lambda self, *a: truth_checks.TruthResult(None))
    report, _, _ = build(config, scripted([WRONG]), tmp_path, mode="unlabelled")
    assert report.admitted == [] and "right 0 of 1 times, 1 without it" in report.not_admitted["_objects_left_of"]


def test_unlabelled_mode_admits_a_helper_that_agrees(config, tmp_path):
    report, _, _ = build(config, scripted([RIGHT]), tmp_path, mode="unlabelled")
    assert report.admitted == ["_objects_left_of"]


def test_evaluation_never_scores_a_build_question(config, tmp_path):
    llm = scripted([RIGHT])
    config.library.admission = "off"
    data = DataSelection(limit=4).prepare()
    with open_session(config, llm=llm) as session:
        build_api(session, data, tmp_path / "build", batch_size=2, batches=1)
        held_out = evaluate(session, data, tmp_path / "eval", show_progress=False)
        built = evaluate(session, data, tmp_path / "eval-build", show_progress=False, scope="build")
    ids = {r.question_id for r in _results(tmp_path / "eval")}
    assert ids == {"2", "3"} and held_out.header["build_questions"] == 2
    assert {r.question_id for r in _results(tmp_path / "eval-build")} == {"0", "1"}
    assert built.questions == 2


def _results(run_dir):
    from vadar.runs.results import ResultsFile
    return ResultsFile(run_dir / "results.jsonl").read()


def test_retrieval_picks_the_relevant_function_among_200():
    store = ApiStore.memory()
    topics = ["color", "shape", "size", "material", "height", "width", "count", "area", "volume", "angle"]
    for i in range(199):
        store.propose(f"_helper_{topics[i % 10]}_{i}", "(image: Image, bbox: BBox) -> float",
                      f"Return the {topics[i % 10]} measure number {i} of the object.")
    store.propose("_objects_left_of", "(image: Image, reference: BBox) -> list[BBox]",
                  "Objects to the left of the reference object, compared by image x.")
    library = store.functions()
    retriever = LibraryRetriever(library, k=5)
    chosen = [f.name for f in retriever.select("How many things are left of the red sphere?")]
    assert "_objects_left_of" in chosen and len(chosen) <= 5
    assert LibraryRetriever(library[:3], k=5).select("anything") == library[:3]  # small: all shown


def test_library_list_shows_admission_and_use(config, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from vadar.cli import app

    build(config, scripted([RIGHT]), tmp_path)
    result = CliRunner().invoke(app, ["library", "list", "--db", str(config.paths.database)],
                                env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "_objects_left_of" in line)
    assert "admitted (labelled)" in row and "1/1" in row


def test_hand_written_helpers_join_the_library_through_the_cli(tmp_path):
    from pathlib import Path

    from typer.testing import CliRunner

    from vadar.cli import app

    hand = Path(__file__).resolve().parents[2] / "benchmarks" / "hand_library" / "clevr.py"
    db = tmp_path / "lib.sqlite"
    result = CliRunner().invoke(app, ["library", "add", str(hand), "--db", str(db)])
    assert result.exit_code == 0, result.output
    store = ApiStore(db)
    names = [f.name for f in store.library()]
    assert "_objects_left_of" in names and store.current("_objects_left_of").dependencies == ("_camera_x",)
    assert store.candidates() == []  # admitted by hand, never re-checked as a candidate
    bad = tmp_path / "bad.py"
    bad.write_text("def helper(x):\n    return x\n")
    result = CliRunner().invoke(app, ["library", "add", str(bad), "--db", str(db)])
    assert result.exit_code == 2 and "start with exactly one underscore" in result.output


def test_a_build_program_with_an_unencodable_answer_is_stored_escaped():
    store = ApiStore.memory()
    store.record_verified_program(batch_id=None, question_id="1", question="q", variant="with",
                                  code="final_result = chr(0xD800)", answer="a" + chr(0xD800), gold="a",
                                  error=None, correct=False, uses=[])
    assert store.verified_programs()[0].answer == "a\\ud800"


def test_retirement_removes_a_function_from_the_prompt_but_keeps_its_history(config):
    from vadar.library.retirement import retire_harmful
    from vadar.runs.methods import make_answerer

    with open_session(config, llm=ScriptedLLM(["```python\nfinal_result = 1\n```"] * 2)) as session:
        store = session.store
        for name in ("_good", "_bad"):
            store.propose(name, "(image: Image) -> int", "Count things.")
            store.implement(name, f"def {name}(image):\n    return 1\n")
            store.record_decision(name, "admitted", mode="labelled")
            store.mark_admitted(name)
        for i in range(4):
            for name, right in (("_good", True), ("_bad", i == 0)):
                store.record_verified_program(batch_id=None, question_id=str(i), question="q", variant="with",
                                              code=f"final_result = {name}(image)", answer=1, gold=1,
                                              error=None, correct=right, uses=[name])
        assert retire_harmful(store, min_uses=4, below=0.3) == {"_bad": "programs using it were right 1 of 4 times"}
        assert [f.name for f in store.library()] == ["_good"]
        assert store.history("_bad")[-1].code and store.decisions("_bad")[-1].decision == "retired"
        data = DataSelection(limit=1).prepare()
        answer, _ = make_answerer("vadar", session, data)
        answer(data.questions[0])
        prompt = session.llm.calls[0][0]["content"]
    assert "def _good(" in prompt and "_bad" not in prompt


def test_a_rejection_with_partial_credit_reads_as_scores_not_counts():
    from vadar.library.outcome_rule import _compared

    assert _compared(1, 2, 2) == "programs using it were right 1 of 2 times, 2 without it"
    assert _compared(0, 0.2, 2).startswith("programs using it scored 0.00 on 2 questions, 0.20 without it")


def test_an_equal_score_on_too_few_uses_is_not_evidence(config, tmp_path, monkeypatch):
    from vadar.library import truth_checks

    monkeypatch.setattr(truth_checks.TruthChecks, "check", lambda self, *a: truth_checks.TruthResult(None))
    config.library.admit_min_uses = 3
    report, library, _ = build(config, scripted([RIGHT]), tmp_path)
    assert report.admitted == [] and library == []
    assert "used by 1 programs, fewer than the 3 needed" in report.not_admitted["_objects_left_of"]


def test_without_a_ground_truth_check_an_equal_score_is_not_enough(config, tmp_path, monkeypatch):
    from vadar.library import truth_checks

    monkeypatch.setattr(truth_checks.TruthChecks, "check", lambda self, *a: truth_checks.TruthResult(None))
    report, _, _ = build(config, scripted([RIGHT]), tmp_path)  # right with and without: 1 and 1
    assert report.admitted == [] and "right 1 of 1 times, 1 without it" in report.not_admitted["_objects_left_of"]


def test_the_gate_checks_ground_truth_on_the_scenes_the_search_drew_from(config, tmp_path, monkeypatch):
    """Batch 1 asks about the first sample image only; its gate's ground-truth cases come from the
    scenes of every batch the build makes, as the search's do, not from the batch's own alone."""
    from vadar.library import truth_checks

    seen: list[list[str]] = []
    checked = truth_checks.TruthChecks.check

    def recording(self, record, library, dataset, modules, questions):
        seen.append(sorted({q.image_id for q in questions}))
        return checked(self, record, library, dataset, modules, questions)

    monkeypatch.setattr(truth_checks.TruthChecks, "check", recording)
    config.library.admission = "labelled"
    data = DataSelection(limit=6).prepare()  # questions 0-2 on image 000000, 3-5 on image 000001
    with open_session(config, llm=scripted([RIGHT])) as session:
        reports = build_api(session, data, tmp_path / "run", batch_size=3)
    assert reports[0].admitted == ["_objects_left_of"]
    assert seen and all(images == ["VADAR_sample_000000", "VADAR_sample_000001"] for images in seen)
