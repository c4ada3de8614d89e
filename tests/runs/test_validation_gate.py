"""The validation gate: every build question judges the library, each batch's questions without
what that batch added (leave-one-batch-out); a one-batch build is judged in-sample."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from api_store import ApiStore, FunctionStatus
from omni3d_bench import sample_path
from omni3d_bench.types import Question
from vadar.config import VadarConfig
from vadar.library.candidates import Candidate, Route
from vadar.library.gate import admit, admit_as_given
from vadar.library.hand import add_functions, parse_functions
from vadar.library.validation import Answered, behind_p, judge, left_out, sign_test, withdraw
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.methods import read_library
from vadar.runs.pipeline import build_api, select_questions
from vadar.runs.validation import BuiltBatch, spread_over_batches
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session
from validation_doubles import BAD_HELPER, GOOD_HELPER, gate_config, scripted


@pytest.fixture
def config(tmp_path):
    return gate_config(tmp_path)


def thirty_questions(tmp_path):
    """A CLEVR-layout data set of 30 questions: the sample's twelve, asked again in turn."""
    root = tmp_path / "clevr30"
    shutil.copytree(sample_path(), root)
    path = root / "questions" / "sample.json"
    data = json.loads(path.read_text())
    asked = data["questions"]
    data["questions"] = [{**asked[i % len(asked)], "question_index": i} for i in range(30)]
    path.write_text(json.dumps(data))
    return DataSelection(root).prepare()


def add_in_batch(store: ApiStore, source: str, run_id: int, index: int) -> None:
    """Helpers as batch `index` of build run `run_id` would have added them."""
    batch = next(b for b in store.batches(run_id) if b.index == index)
    functions = parse_functions(source)
    for f in functions:
        store.propose(f.name, f.signature, f.docstring, run_id=run_id, batch_id=batch.id)
        store.implement(f.name, f.code, dependencies=list(f.dependencies), run_id=run_id, batch_id=batch.id)
    admit_as_given(store, [f.name for f in functions], mode="hand")


def test_a_thirty_question_build_judges_each_helper_only_on_the_batches_that_did_not_add_it(config, tmp_path):
    data = thirty_questions(tmp_path)
    golds = {q.question: str(q.answer) for q in data.questions}
    with open_session(config, llm=scripted(golds)) as session:
        run_id = lambda: session.store.runs("build-api")[-1].id  # noqa: E731

        def added(report):  # batch 1 adds `_good`, batch 3 `_bad`
            source = {0: GOOD_HELPER, 2: BAD_HELPER}.get(report.index)
            if source is not None:
                add_in_batch(session.store, source, run_id(), report.index)

        validated = []
        build_api(session, data, tmp_path / "build", batch_size=10, on_batch=added, on_validation=validated.append)
        held_out = select_questions(data.questions, session.store.build_question_ids(
            data=str(data.dataset.root), split=data.split), "held-out")
    assert held_out == []  # every judged question is a build question: never scored
    report = json.loads((tmp_path / "build" / "validation.json").read_text())
    assert report["rule"] == "leave-one-batch-out" and report["batches"] == 3
    assert report["labelled"] and report["judged"] == 30 and len(report["questions"]) == 30
    # batch 1 (sample questions 0-9) answered without `_good`, with `_bad`: its two bad questions lose;
    # batch 2 (10-11, 0-7) with both: two lost, two won; batch 3 (8-11, 0-5) without `_bad`: no loss.
    # 2 won against 4 lost is no evidence against the library (p 0.34), but `_bad` lost all its 4 (p 0.06)
    first, second = report["rounds"]
    assert (first["questions"], first["won"], first["lost"], first["passed"]) == (30, 2, 4, True)
    assert first["behind_p"] == 0.3438 and first["level"] == 0.2
    assert first["retired"] == ["_bad"] and first["vadar"] == first["static"] - 2
    assert len(first["differing"]) == 6 and all(d["vadar"] != d["static"] for d in first["differing"])
    assert sum(d["helpers"] == ["_bad"] and d["vadar"] < d["static"] for d in first["differing"]) == 4
    assert (second["won"], second["lost"], second["passed"]) == (2, 0, True)
    assert "withdrawn: _bad" in report["decision"] and validated[0].judged == 30
    # something was withdrawn: static-api answered every question, and the round was judged on them all
    assert report["static_api_answered"] == 30 and first["assumed_ties"] == second["assumed_ties"] == 0
    store = ApiStore(config.paths.database)
    retired = [d for d in store.decisions("_bad") if d.decision == "retired"][-1]
    assert retired.mode == "validation" and retired.evidence["validation"]["losses"] == 4  # never 8: batch 3 added it
    assert "lost significantly more" in retired.evidence["reason"]
    validated_good = store.decisions("_good")[-1]
    assert validated_good.decision == "validated" and validated_good.evidence["tally"]["wins"] == 2
    assert store.current("_good").status == FunctionStatus.ADMITTED


def test_the_readme_sized_build_of_one_batch_is_judged_in_sample_and_says_on_how_many_questions(config, tmp_path):
    data = DataSelection(limit=6).prepare()
    golds = {q.question: str(q.answer) for q in data.questions}
    bad = {q.question for q in data.questions[3:]}
    with open_session(config, llm=scripted(golds, good=set(), bad=bad)) as session:
        add_functions(session.store, BAD_HELPER)
        validated = []
        build_api(session, data, tmp_path / "build", batch_size=6, on_validation=validated.append)
    report = json.loads((tmp_path / "build" / "validation.json").read_text())
    assert report["rule"] == "in-sample" and report["batches"] == 1 and report["judged"] == 6
    assert [(r["questions"], r["won"], r["lost"], r["passed"]) for r in report["rounds"]] == [
        (6, 0, 3, False), (6, 0, 0, True)]
    assert report["rounds"][0]["sign_test_p"] == 0.25 and report["rounds"][0]["retired"] == ["_bad"]
    assert validated[0].decision.startswith("withdrawn: _bad")
    assert ApiStore(config.paths.database).current("_bad").status == FunctionStatus.RETIRED


def test_the_gate_is_on_by_default_and_off_when_asked(config, tmp_path):
    assert VadarConfig().library.validation is True
    config.library.validation = False
    data = DataSelection(limit=3).prepare()
    with open_session(config, llm=ScriptedLLM([])) as session:
        build_api(session, data, tmp_path / "build", batch_size=3)
    assert not (tmp_path / "build" / "validation.json").exists()


def test_a_rerun_of_a_validated_build_does_not_validate_again(config, tmp_path):
    data = DataSelection().prepare()
    golds = {q.question: str(q.answer) for q in data.questions}
    with open_session(config, llm=scripted(golds)) as session:
        add_functions(session.store, GOOD_HELPER + BAD_HELPER)
        build_api(session, data, tmp_path / "build", batch_size=3)
        calls = len(session.llm.calls)
        build_api(session, data, tmp_path / "build", batch_size=3)
        assert len(session.llm.calls) == calls


def test_a_build_extended_by_a_batch_is_validated_again_over_every_batch(config, tmp_path):
    data = DataSelection(limit=6).prepare()
    golds = {q.question: str(q.answer) for q in data.questions}
    with open_session(config, llm=scripted(golds)) as session:
        build_api(session, data, tmp_path / "build", batch_size=3, batches=1)
        first = json.loads((tmp_path / "build" / "validation.json").read_text())
        build_api(session, data, tmp_path / "build", batch_size=3, batches=2)  # a new run: batch 1 skipped
        again = json.loads((tmp_path / "build" / "validation.json").read_text())
    assert (first["rule"], first["judged"]) == ("in-sample", 3)
    assert (again["rule"], again["batches"], again["judged"]) == ("leave-one-batch-out", 2, 6)


def test_an_unlabelled_build_judges_by_agreement_and_says_so(config, tmp_path):
    config.library.admission = "unlabelled"
    data = DataSelection().prepare()
    golds = {q.question: str(q.answer) for q in data.questions}
    with open_session(config, llm=scripted(golds)) as session:
        add_functions(session.store, GOOD_HELPER + BAD_HELPER)
        build_api(session, data, tmp_path / "build", batch_size=3)
    report = json.loads((tmp_path / "build" / "validation.json").read_text())
    assert not report["labelled"] and "agree" in report["references"]
    # the two static-api programs agree everywhere (scripted); "nope" for a count is no reference
    assert report["judged"] == 10 and report["rounds"][0]["retired"] == ["_bad"]


def test_a_library_a_question_or_two_behind_stays():
    """3 won against 4 lost (the CLEVR attribute build's first round) is a coin flip: nothing goes."""
    answered = [Answered(str(i), 1.0, 0.0, frozenset({"_h"})) for i in range(3)]
    answered += [Answered(str(i), 0.0, 1.0, frozenset({"_h"} if i < 5 else set())) for i in range(3, 7)]
    round_ = judge(answered)
    assert round_.vadar < round_.static and round_.passed and round_.behind_p == 0.5
    assert withdraw(round_, ["_h"], []) is False and round_.retired == [] and not round_.everything


def test_a_helper_whose_own_questions_lose_goes_whatever_the_totals():
    answered = [Answered(str(i), 0.0, 1.0, frozenset({"_bad"})) for i in range(3)]
    answered += [Answered(str(i), 1.0, 0.0, frozenset({"_good"})) for i in range(3, 9)]
    round_ = judge(answered)
    assert round_.passed and round_.helpers["_bad"].lost == 3 and round_.helpers["_bad"].behind(0.2)
    assert withdraw(round_, ["_bad", "_good"], []) and round_.retired == ["_bad"]
    two = judge(answered[:2])  # two losses alone are not evidence (p 0.25)
    assert not two.helpers["_bad"].behind(0.2) and two.passed and not withdraw(two, ["_bad"], [])
    strict = judge(answered, level=0.1)  # a stricter level needs more: 3 of 3 is p 0.125
    assert not withdraw(strict, ["_bad", "_good"], [])


def test_significantly_behind_with_nothing_losing_on_its_own_withdraws_everything():
    answered = [Answered("1", 0.0, 1.0, frozenset({"_h"}), frozenset({7})),
                Answered("2", 1.0, 0.0, frozenset({"_h"}), frozenset({7})),
                Answered("3", 0.0, 1.0, frozenset(), frozenset({8})),
                Answered("4", 0.0, 1.0, frozenset(), frozenset({8})),
                Answered("5", 0.0, 1.0, frozenset({"_h"}), frozenset({8})),
                Answered("6", 0.0, 1.0, frozenset()),
                Answered("7", 0.0, 1.0, frozenset())]
    round_ = judge(answered)
    assert not round_.passed and round_.helpers["_h"].net == -1 and round_.examples[7].net == 0
    assert (round_.won, round_.lost) == (1, 6) and round_.behind_p == 8 / 128
    # which questions the decision rests on, kept with the round and printed by the build
    assert [a.question_id for a in round_.differing] == ["1", "2", "3", "4", "5", "6", "7"]
    assert round_.to_dict()["differing"][0] == {"question": "1", "vadar": 0.0, "static": 1.0, "helpers": ["_h"],
                                                "examples": [7]}
    assert round_.differing_text().startswith("1 0 vs 1 (_h), 2 1 vs 0 (_h), 3 0 vs 1")
    assert judge([Answered("9", 1.0, 1.0)]).differing == []  # ties are no evidence
    # example 8 lost 3 of 3 on its own; `_h` lost more than it won while the whole is behind
    assert withdraw(round_, ["_h", "_other"], [7, 8])
    assert round_.retired == ["_h"] and round_.withdrawn == [8] and not round_.everything
    even = judge([*answered[:2], *(Answered(str(i), 0.0, 1.0) for i in range(3, 8))])  # losses touching nothing
    withdraw(even, ["_h", "_other"], [7, 8])
    assert even.everything and even.retired == ["_h", "_other"] and even.withdrawn == [7, 8]
    last = judge(answered)
    withdraw(last, ["_h", "_other"], [7, 8], everything=True)  # the last round: still behind, everything goes
    assert last.everything


def test_the_last_round_keeps_the_helpers_when_only_worked_examples_were_on_the_questions_lost():
    """A warehouse build: three counting questions lost with an example each time (each round withdrew
    the examples shown and retrieval showed the next ones); no lost question called a helper."""
    answered = [Answered(str(i), 0.0, 1.0, frozenset(), frozenset({9 + i})) for i in range(3)]
    answered += [Answered("3", 0.0, 1.0, frozenset(), frozenset({12})),
                 Answered("4", 1.0, 1.0, frozenset({"_objects_left_of"}), frozenset({13}))]
    last = judge(answered)
    assert not last.passed and (last.won, last.lost) == (0, 4)
    assert withdraw(last, ["_objects_left_of"], [9, 10, 11, 12, 13, 14], everything=True)
    assert last.withdrawn == [9, 10, 11, 12, 13, 14] and last.retired == [] and last.spared == "helpers"
    assert not last.everything and last.to_dict()["spared"] == "helpers"
    # the other way round: helpers on every lost question, no example shown there
    by_helpers = judge([Answered(str(i), 0.0, 1.0, frozenset({"_h"})) for i in range(4)])
    assert withdraw(by_helpers, ["_h", "_g"], [7], everything=True)
    assert by_helpers.retired == ["_g", "_h"] and by_helpers.withdrawn == [] and by_helpers.spared == "examples"
    # still behind in the round after that: the rest goes
    after = judge(answered)
    assert withdraw(after, ["_objects_left_of"], [], whole=True) and after.everything
    assert after.retired == ["_objects_left_of"]


def test_the_one_sided_test_counts_losing_as_evidence_only():
    assert behind_p(0, 0) == 1.0 and behind_p(3, 0) == 1.0 and behind_p(0, 3) == 1 / 8
    assert behind_p(1, 5) == 7 / 64 and behind_p(2, 2) == 11 / 16


def test_the_sign_test_is_exact_and_two_sided():
    assert sign_test(0, 0) == 1.0 and sign_test(3, 3) == 1.0
    assert sign_test(6, 0) == sign_test(0, 6) == 2 / 64  # the fewest differing questions that reach 5%
    assert sign_test(5, 0) == 2 / 32 and sign_test(4, 1) == 12 / 32


def test_leaving_a_batch_out_takes_the_helpers_that_call_its_helpers_with_it(config):
    with open_session(config, llm=ScriptedLLM([])) as session:
        add_functions(session.store, BAD_HELPER + '''
def _calls_bad(image: Image) -> str:
    """What `_bad` says."""
    return _bad(image)


def _alone(image: Image) -> int:
    """How many objects."""
    return len(loc(image, "objects"))
''')
        library = session.store.library()
    assert [f.name for f in left_out(library, ["_bad"])] == ["_alone"]


def test_a_helper_a_bottom_up_route_admitted_belongs_to_its_batch_so_leaving_the_batch_out_leaves_it_out():
    store = ApiStore.memory()
    run = store.start_run("build-api", config={"data": "d", "split": "s"})
    batch = store.start_batch(run.id, ["0", "1"], index=0)
    helper = parse_functions(BAD_HELPER)[0]
    admit(store, Candidate(Route.DISTILLED, helper.name, helper.signature, helper.docstring, helper.code),
          library=[], batch_id=batch.id, mode="labelled")
    assert store.current("_bad").batch_id == batch.id


def test_the_build_printout_says_which_kind_a_round_spared():
    from vadar.cli.jobs import _withdrawn_how

    answered = [Answered(str(i), 0.0, 1.0, frozenset(), frozenset({9})) for i in range(4)]
    spared = judge(answered)
    withdraw(spared, ["_h"], [9], everything=True)
    assert _withdrawn_how(spared) == " (every example; the helpers stay: no question lost used one)"
    whole = judge(answered)
    withdraw(whole, ["_h"], [9], whole=True)
    assert _withdrawn_how(whole) == " (everything)"


def test_a_library_still_behind_after_the_round_that_spared_a_kind_is_withdrawn_whole(config, tmp_path,
                                                                                      monkeypatch):
    """Four rounds: two helpers lose on their own; the last round of withdrawing takes the worked
    example and spares the helpers, which no lost question called; still behind, the round after takes
    every helper left, not only the one its lost questions called."""
    import vadar.runs.validation as validation

    data = DataSelection(limit=6).prepare()
    golds = {q.question: str(q.answer) for q in data.questions}
    ids = [q.question_id for q in data.questions]
    touched = [{"_bad"}, {"_worse"}, "example", {"_good"}]  # what each round's three lost questions used
    seen = []

    def scripted_round(session, data, batches, static, references, on_event, index, *, leave_out):
        library = read_library(session.store, "vadar")
        seen.append(({f.name for f in library.functions}, len(library.examples)))
        helpers, examples = (set(), {p.id for p in library.examples}) if touched[index] == "example" else (
            touched[index], set())
        return [Answered(i, 0.0, 1.0, frozenset(helpers), frozenset(examples)) if n < 3 else Answered(i, 1.0, 1.0)
                for n, i in enumerate(ids)]

    monkeypatch.setattr(validation, "_vadar_round", scripted_round)
    with open_session(config, llm=scripted(golds, good=set(), bad=set())) as session:
        add_functions(session.store, GOOD_HELPER + GOOD_HELPER.replace("_good", "_idle") + BAD_HELPER
                      + BAD_HELPER.replace("_bad", "_worse"))
        session.store.record_verified_program(batch_id=None, question_id=ids[0], question=data.questions[0].question,
                                              variant="without", code="final_result = len(loc(image, 'cube'))",
                                              answer="3", gold="3", error=None, correct=True, uses=[])
        build_api(session, data, tmp_path / "build", batch_size=6)
    report = json.loads((tmp_path / "build" / "validation.json").read_text())
    rounds = report["rounds"]
    assert [(r["lost"], r["passed"]) for r in rounds] == [(3, False)] * 4
    assert [r["retired"] for r in rounds] == [["_bad"], ["_worse"], [], ["_good", "_idle"]]
    assert rounds[2]["spared"] == "helpers" and not rounds[2]["everything"] and len(rounds[2]["withdrawn"]) == 1
    assert rounds[3]["everything"]
    assert seen == [({"_good", "_idle", "_bad", "_worse"}, 1), ({"_good", "_idle", "_worse"}, 1),
                    ({"_good", "_idle"}, 1), ({"_good", "_idle"}, 0)]
    assert report["decision"].startswith("the whole library and its worked examples were withdrawn")
    store = ApiStore(config.paths.database)
    assert {store.current(n).status for n in ("_good", "_idle")} == {FunctionStatus.RETIRED}


def test_the_gate_answers_at_most_validation_questions_spread_evenly_over_every_batch():
    def batch(batch_id, size):
        return BuiltBatch(batch_id, tuple(Question(f"{batch_id}-{i}", "How many?", "1", "int", "img", Path("img.png"),
                                            "dev", "clevr") for i in range(size)))

    ten = [batch(b, 10) for b in range(10)]
    picked = spread_over_batches(ten, 30)
    assert [len(b.questions) for b in picked] == [3] * 10  # every batch left out once, on 3 questions
    assert [q.question_id for q in picked[0].questions] == ["0-1", "0-5", "0-8"]  # along the batch, not its head
    uneven = spread_over_batches([batch(1, 10), batch(2, 10), batch(3, 4)], 12)
    assert [len(b.questions) for b in uneven] == [5, 5, 2]
    assert spread_over_batches(ten, 0) == ten and spread_over_batches(ten, 100) == ten
    assert VadarConfig().library.validation_questions == 30


def test_a_build_larger_than_validation_questions_is_judged_on_that_many_and_says_of_how_many(config, tmp_path):
    config.library.validation_questions = 12
    data = thirty_questions(tmp_path)
    golds = {q.question: str(q.answer) for q in data.questions}
    with open_session(config, llm=scripted(golds)) as session:
        add_functions(session.store, GOOD_HELPER)
        validated = []
        build_api(session, data, tmp_path / "build", batch_size=10, on_validation=validated.append)
    report = json.loads((tmp_path / "build" / "validation.json").read_text())
    assert (report["batches"], report["built"], report["judged"]) == (3, 30, 12)
    assert report["questions"] == ["1", "3", "6", "8", "11", "13", "16", "18", "21", "23", "26", "28"]
    assert report["rounds"][0]["questions"] == 12
    assert validated[0].answered_text() == ("12 of 30 build questions (12 answered, spread over the batches: "
                                            "library.validation_questions)")
