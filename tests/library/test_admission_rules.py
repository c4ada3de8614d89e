"""What the proposal route's gate admits: ground truth first, outcomes second, repairs only where they can help."""

from __future__ import annotations

import pytest

from api_store import ApiStore
from left_of_helpers import RIGHT, STUB, WRONG
from test_library_admission import admission_config, build, scripted
from vadar.library import truth_checks
from vadar.library.outcome_rule import OutcomeRule
from vadar.library.gate import MIN_TRUTH_CASES
from vadar.library.candidates import Candidate, Route
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM


def never_used(implementation: str) -> ScriptedLLM:
    """Signature, then API replies; the programs never call the helper and answer 0."""
    def signatures(messages):
        return STUB if "_objects_left_of(" not in messages[0]["content"] else "# no new functions"

    replies = {Role.SIGNATURE: signatures, Role.API_IMPLEMENT: "```python\n" + implementation + "```"}
    return ScriptedLLM([ByRole(replies, default="```python\nfinal_result = 0\n```")] * 300)


@pytest.fixture
def config(tmp_path):
    return admission_config(tmp_path)


def test_a_helper_ground_truth_confirms_is_admitted_though_no_program_of_its_batch_used_it(config, tmp_path):
    report, library, _ = build(config, never_used(RIGHT), tmp_path)
    assert report.admitted == ["_objects_left_of"] and [f.name for f in library] == ["_objects_left_of"]
    store = ApiStore(config.paths.database)
    evidence = store.decisions("_objects_left_of")[-1].evidence
    assert evidence["truth_check"]["passed"] is True and evidence["truth_check"]["cases"] >= MIN_TRUTH_CASES
    assert evidence["used_by"] == []


def test_a_helper_that_fails_ground_truth_is_never_admitted_however_its_programs_score(config, tmp_path):
    # the program with the helper answers the red-sphere question right (WRONG counts 5 things in front)
    report, library, _ = build(config, scripted([WRONG], baseline="final_result = 0"), tmp_path)
    assert report.admitted == [] and library == []
    assert "ground-truth check failed" in report.not_admitted["_objects_left_of"]


def test_too_few_uses_is_not_sent_to_a_repair(config, tmp_path, monkeypatch):
    monkeypatch.setattr(truth_checks.TruthChecks, "check", lambda self, *a: truth_checks.TruthResult(None))
    config.library.admit_min_uses = 3
    llm = scripted([WRONG, RIGHT], baseline="final_result = 0")
    report, _, _ = build(config, llm, tmp_path)
    assert "fewer than the 3 needed" in report.not_admitted["_objects_left_of"] and report.not_admitted
    store = ApiStore(config.paths.database)
    assert [d.decision for d in store.decisions("_objects_left_of")] == ["rejected"]  # no "repair"
    implementing = llm.calls_of(Role.API_IMPLEMENT)
    assert len(implementing) == 1


def evidence_item(with_right: bool, without_right: bool):
    from dataclasses import dataclass

    @dataclass
    class Outcome:
        answer: str
        error: None = None

    @dataclass
    class Item:
        uses: set
        reference: str = "yes"
        with_: Outcome = None
        without: Outcome = None
        question: object = None
        assumed: bool = False

        def score_without(self):
            return self.score(self.without)

        def score(self, outcome):
            return 1.0 if outcome.answer == self.reference else 0.0

    return Item({"_h"}, with_=Outcome("yes" if with_right else "no"), without=Outcome("yes" if without_right else "no"),
                question=type("Q", (), {"question": "Is it?"})())


def test_a_confirmed_helper_is_admitted_however_its_batch_s_programs_score():
    candidate = Candidate(Route.PROPOSAL, "_h", "(image)", "Doc.", "def _h(image):\n    return 1\n")
    candidate.evidence.truth_check = {"passed": True, "cases": MIN_TRUTH_CASES}
    losing = [evidence_item(False, True)] * 6  # right 0 of 6 times, 6 without it
    # of 97 confirmed helpers at the gates of 20 builds, outcomes refused 4, each right: programs misused them
    assert OutcomeRule(losing, min_uses=3)(candidate) is None
    assert OutcomeRule([], min_uses=3)(candidate) is None  # unused: admitted all the same
    candidate.evidence.truth_check = {"passed": True, "cases": MIN_TRUTH_CASES - 1}  # too few cases: outcomes rule
    assert "right 0 of 6 times, 6 without it" in str(OutcomeRule(losing, min_uses=3)(candidate))
    assert "fewer than the 3 needed" in str(OutcomeRule([evidence_item(True, True)], min_uses=3)(candidate))


def build_two_batches(config, llm, tmp_path):
    from vadar.runs.pipeline import build_api
    from vadar.runs.prepare import DataSelection
    from vadar.runs.session import open_session

    data = DataSelection(limit=4).prepare()
    with open_session(config, llm=llm) as session:
        return build_api(session, data, tmp_path / "run", batch_size=2)


def test_a_helper_rejected_as_wrong_is_not_proposed_or_implemented_again(config, tmp_path):
    llm = scripted([WRONG])
    first, second = build_two_batches(config, llm, tmp_path)
    assert "ground-truth check failed" in first.not_admitted["_objects_left_of"]
    proposing = llm.calls_of(Role.SIGNATURE)
    assert "tried before and not admitted" not in proposing[0][1]["content"]
    assert "- `_objects_left_of`: not admitted: its ground-truth check failed" in proposing[1][1]["content"]
    assert second.proposed == [] and any("tried before and not admitted" in r for r in second.rejected)
    implementing = llm.calls_of(Role.API_IMPLEMENT)
    assert len(implementing) == 1  # batch 1: the implementation (no repair by default); batch 2: none


def test_a_helper_rejected_for_lack_of_use_comes_back_with_its_implementation(config, tmp_path, monkeypatch):
    monkeypatch.setattr(truth_checks.TruthChecks, "check", lambda self, *a: truth_checks.TruthResult(None))
    config.library.admit_min_uses = 3
    llm = scripted([RIGHT])
    first, second = build_two_batches(config, llm, tmp_path)
    assert "fewer than the 3 needed" in first.not_admitted["_objects_left_of"]
    assert second.proposed == ["_objects_left_of"] and second.reused == ["_objects_left_of"]
    implementing = llm.calls_of(Role.API_IMPLEMENT)
    assert len(implementing) == 1  # batch 2 judged the stored implementation on its own questions
    store = ApiStore(config.paths.database)
    implemented = [v for v in store.history("_objects_left_of") if v.code]
    assert len(implemented) == 2 and implemented[0].code == implemented[1].code  # the same code, judged again


def test_right_yes_no_answers_count_half_as_evidence():
    from vadar.library.sources import support, success_weight

    assert success_weight("yes") == success_weight(" No ") == success_weight("True") == 0.5
    assert success_weight("3") == success_weight("red") == success_weight(2.5) == 1.0
    assert support(["yes", "no", "3"]) == 2.0
    candidate = Candidate(Route.PROPOSAL, "_h", "(image)", "Doc.", "def _h(image):\n    return 1\n")
    yes_no = [evidence_item(True, False) for _ in range(3)]  # right with it, wrong without, three times
    assert "counts half" in str(OutcomeRule(yes_no, min_uses=3)(candidate))
    counted = [evidence_item(True, False) for _ in range(3)]
    for item in counted:
        item.reference = item.with_.answer = "3"
        item.without.answer = "2"
    assert OutcomeRule(counted, min_uses=3)(candidate) is None


def test_a_pattern_shared_only_by_yes_no_programs_is_not_enough_to_distil(tmp_path):
    from api_store import ApiStore
    from omni3d_bench import sample_path
    from omni3d_bench.datasets import load_dataset
    from vadar.library.distill import Distiller
    from vadar.runs.prepare import oracle_modules

    dataset = load_dataset(sample_path())
    questions = dataset.questions("sample")[:3]
    store = ApiStore(tmp_path / "lib.sqlite")
    code = 'ball = loc(image, "ball")[0]\nd = depth(image, ball)\nfinal_result = "yes" if d > 1 else "no"\n'
    for question in questions:
        store.record_verified_program(batch_id=None, question_id=question.question_id, question=question.question,
                                      variant="build", code=code, answer="yes", gold="yes", error=None, correct=True,
                                      uses=[])
    llm = ScriptedLLM([])  # no request may be made: three yes/no successes weigh 1.5 < 3
    report = Distiller(store, llm, None, min_uses=3).distill(dataset, oracle_modules(dataset), questions)
    assert report.admitted == [] and report.rejected == {} and llm.calls == []


def test_a_second_proposal_making_the_same_claim_is_not_implemented(config, tmp_path):
    twin = '\ndef _things_left_of_box(image: Image, bbox: BBox) -> list[BBox]:\n    """The things left of bbox."""\n'
    base = scripted([RIGHT])._script[0]  # the scripted replies by role

    def signatures(messages):
        text = base.answer(Role.SIGNATURE, messages)
        return text.replace("\n```", twin + "```") if "def _objects_left_of" in text else text

    llm = ScriptedLLM([ByRole({**base.replies, Role.SIGNATURE: signatures}, default=base.default)] * 300)
    report, library, _ = build(config, llm, tmp_path)
    assert report.proposed == ["_objects_left_of"]
    assert any(r.startswith("_things_left_of_box: claims relation:left, as `_objects_left_of` does") for r in report.rejected)
