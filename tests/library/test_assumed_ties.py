"""With gold answers, a right program with the candidates can at most tie without them: the gate and the
search by outcome write programs without them only as far as a decision turns on them."""

from __future__ import annotations

import dataclasses

from api_store import ApiStore
from left_of_helpers import RIGHT
from vadar.agents.program import ProgramAgent
from vadar.library.admission import Admission, AdmissionSetup
from vadar.library.outcome_rule import OutcomeRule, QuestionEvidence
from vadar.library.candidates import Candidate, Route
from vadar.library.story import helper_story
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.outcome import ProgramOutcome
from vadar.runs.prepare import DataSelection
from vadar.sandbox import execute

WITH_HELPER = "final_result = len(_objects_left_of(image, loc(image, 'red sphere')[0]))"  # 5: right


def executor(code, namespace):
    return execute(code, dict(namespace), timeout_s=20, memory_mb=1024)


def gate(baselines: list[str]):
    """Three copies of "How many things are left of the red sphere?" (5), the helper's programs right
    on each; programs without it answer `baselines` in turn. Returns the report and the variants written."""
    data = DataSelection(limit=2).prepare()
    asked = data.questions[1]
    questions = [dataclasses.replace(asked, question_id=f"1{c}") for c in "abc"]
    answers = iter(baselines)

    def program(messages):
        offered = "def _objects_left_of(" in messages[0]["content"]
        return "```python\n" + (WITH_HELPER if offered else f"final_result = {next(answers)}") + "\n```"

    store = ApiStore.memory()
    store.propose("_objects_left_of", "(image: Image, reference: BBox) -> list[BBox]", "Objects left of the reference.")
    store.implement("_objects_left_of", RIGHT)
    agent = ProgramAgent(ScriptedLLM([program] * 50), executor)
    report = Admission(store, agent, executor, AdmissionSetup(min_uses=1)).decide(
        [store.current("_objects_left_of")], questions, data.dataset, data.modules, [])
    return report, [p.variant for p in store.verified_programs()], store


def test_a_helper_right_everywhere_is_written_programs_without_it_only_until_one_is_wrong():
    report, variants, store = gate(["0", "0", "0"])
    assert report.admitted == ["_objects_left_of"]
    assert variants.count("with") == 3 and variants.count("without") == 1  # before: 3 without it
    evidence = store.decisions("_objects_left_of")[-1].evidence
    assert evidence["right_with"] == 3 and evidence["right_without"] == 2 and evidence["assumed_ties"] == 2
    story = helper_story("_objects_left_of", [dataclasses.asdict(d) for d in store.decisions("_objects_left_of")])
    assert "programs using it right 3 times, at most 2 without it, 2 of them assumed (3 used it)" in story.text()


def test_a_helper_no_better_is_refused_on_every_program_without_it():
    report, variants, _ = gate(["5", "5", "5"])
    assert report.admitted == [] and "right 3 of 3 times, 3 without it" in report.rejected["_objects_left_of"]
    assert variants.count("without") == 3  # the decision is the one all of them give


def test_an_assumed_tie_counts_as_right_without_the_helper():
    outcome = ProgramOutcome(answer="5", program="final_result = 5")
    question = DataSelection(limit=2).prepare(load=False).questions[1]
    item = QuestionEvidence(question, None, outcome, "5", {"_h"}, assumed=True)
    assert item.score_without() == 1.0
    candidate = Candidate(Route.PROPOSAL, "_h", "(image)", "Doc.", "def _h(image):\n    return 5\n")
    assert "right 1 of 1 times, 1 without it" in str(OutcomeRule([item], min_uses=1)(candidate))
