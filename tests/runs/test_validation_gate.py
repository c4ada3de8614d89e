"""The validation gate: held-back build questions retire what makes vadar worse than static-api there."""

from __future__ import annotations

import json

import pytest

from api_store import ApiStore, FunctionStatus
from vadar.config import VadarConfig
from vadar.library.hand import add_functions
from vadar.library.validation import Answered, judge, withdraw
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.pipeline import build_api, select_questions
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

HELPERS = '''
def _good(image: Image, answer: str) -> str:
    """The answer it is given, after looking at the image."""
    loc(image, "objects")
    return answer


def _bad(image: Image) -> str:
    """A wrong answer, after looking at the image."""
    loc(image, "objects")
    return "wrong"
'''
GOOD = {"How many large things are there?", "How many things are in front of the cyan sphere?"}
BAD = {"What material is the yellow cylinder?", "Are there any rubber cylinders?",
       "What color is the cylinder that is right of the blue cube?", "Are there fewer cylinders than cubes?"}


def scripted(golds: dict[str, str]) -> ScriptedLLM:
    """static-api: wrong on GOOD, right elsewhere; vadar: `_good` (right) on GOOD, `_bad` on BAD while offered."""
    def reply(messages):
        system, asked = messages[0]["content"], messages[-1]["content"]
        question = next(q for q in golds if q in asked)
        if question in GOOD:
            if "def _good(" in system:
                return f"```python\nfinal_result = _good(image, {golds[question]!r})\n```"
            return "```python\nloc(image, 'objects')\nfinal_result = 'nope'\n```"
        if question in BAD and "def _bad(" in system:
            return "```python\nfinal_result = _bad(image)\n```"
        return f"```python\nloc(image, 'objects')\nfinal_result = {golds[question]!r}\n```"

    return ScriptedLLM([reply] * 400)


@pytest.fixture
def config(tmp_path):
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s = 10
    config.library.propose = config.library.distill = False  # the library is the hand-written one
    config.library.validation_share, config.library.validation_min = 0.5, 2  # the last 6 sample questions
    return config


def test_the_gate_retires_a_helper_whose_programs_lose_and_keeps_one_whose_programs_win(config, tmp_path):
    data = DataSelection().prepare()
    golds = {q.question: str(q.answer) for q in data.questions}
    with open_session(config, llm=scripted(golds)) as session:
        add_functions(session.store, HELPERS)
        reports = build_api(session, data, tmp_path / "build", batch_size=3)
        assert [r.question_ids for r in reports] == [["0", "1", "2"], ["3", "4", "5"]]  # 6-11 held back
        held_out = select_questions(data.questions, session.store.build_question_ids(
            data=str(data.dataset.root), split=data.split), "held-out")
    assert held_out == []  # the held-back questions are build questions: never scored
    store = ApiStore(config.paths.database)
    assert store.current("_bad").status == FunctionStatus.RETIRED
    retired = [d for d in store.decisions("_bad") if d.decision == "retired"][-1]
    assert retired.mode == "validation" and retired.evidence["validation"]["losses"] == 4
    assert store.current("_good").status == FunctionStatus.ADMITTED
    validated = store.decisions("_good")[-1]
    assert validated.decision == "validated" and validated.evidence["tally"]["wins"] == 2
    report = json.loads((tmp_path / "build" / "validation.json").read_text())
    assert report["labelled"] and report["judged"] == 6
    assert [(r["vadar"], r["static"], r["passed"]) for r in report["rounds"]] == [(2, 4, False), (6, 4, True)]
    assert report["rounds"][0]["retired"] == ["_bad"]


def test_a_rerun_of_a_validated_build_does_not_validate_again(config, tmp_path):
    data = DataSelection().prepare()
    golds = {q.question: str(q.answer) for q in data.questions}
    with open_session(config, llm=scripted(golds)) as session:
        add_functions(session.store, HELPERS)
        build_api(session, data, tmp_path / "build", batch_size=3)
        calls = len(session.llm.calls)
        build_api(session, data, tmp_path / "build", batch_size=3)
        assert len(session.llm.calls) == calls


def test_an_unlabelled_build_judges_by_agreement_and_says_so(config, tmp_path):
    config.library.admission = "unlabelled"
    data = DataSelection().prepare()
    golds = {q.question: str(q.answer) for q in data.questions}
    with open_session(config, llm=scripted(golds)) as session:
        add_functions(session.store, HELPERS)
        build_api(session, data, tmp_path / "build", batch_size=3)
    report = json.loads((tmp_path / "build" / "validation.json").read_text())
    assert not report["labelled"] and "agree" in report["references"]
    # the two static-api programs agree everywhere (scripted); "nope" for a count is no reference
    assert report["judged"] == 4 and report["rounds"][0]["retired"] == ["_bad"]


def test_behind_with_nothing_losing_on_its_own_withdraws_everything():
    answered = [Answered("1", 0.0, 1.0, frozenset({"_h"}), frozenset({7})),
                Answered("2", 1.0, 0.0, frozenset({"_h"}), frozenset({7})),
                Answered("3", 0.0, 1.0, frozenset(), frozenset({8})),
                Answered("4", 1.0, 0.0, frozenset(), frozenset({8})),
                Answered("5", 0.0, 1.0, frozenset({"_h"}), frozenset({8}))]
    round_ = judge(answered)
    assert not round_.passed and round_.helpers["_h"].net == -1 and round_.examples[7].net == 0
    withdraw(round_, ["_h", "_other"], [7, 8])
    assert round_.retired == ["_h"] and round_.withdrawn == [8] and not round_.everything
    even = judge(answered[:4] + [Answered("5", 0.0, 1.0)])  # the last loss touched nothing
    withdraw(even, ["_h", "_other"], [7, 8])
    assert even.everything and even.retired == ["_h", "_other"] and even.withdrawn == [7, 8]
