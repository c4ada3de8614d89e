"""Group helpers: one helper per group of similar questions, written by a scripted LLM, admitted by reproduction."""

from __future__ import annotations

import pytest
from group_samples import COUNT, LOOKUP, OFF_BY_ONE, run, sample_fixture, writer  # noqa: F401 (a fixture)

from api_store import ApiStore
from omni3d_bench.metrics import score_answer
from vadar.programs.answers import normalize_answer
from vadar.library.clusters import GroupWriter
from vadar.library.docstrings import reply_docstring
from vadar.library.frames import group_programs, question_frame
from vadar.library.gate import REWRITTEN
from vadar.programs.namespace import program_namespace
from vadar.library.retrieval import ExampleRetriever
from vadar.library.truth_checks import TruthChecks
from vadar.llm.doubles import ScriptedLLM


def test_the_frame_masks_the_phrases_the_program_passed_to_the_api():
    assert question_frame("How many cylinders are there?", 'loc(image, "cylinders")') == \
        ("how", "many", "_", "are", "there")
    assert question_frame("How many large things are there?", 'loc(image, "large things")') == \
        ("how", "many", "_", "are", "there")
    assert question_frame("What shape is it?", "not python (") == ("what", "shape", "is", "it")
    # a literal that is not a phrase of the question (a vqa prompt) masks nothing
    assert question_frame("What is the material of the small cylinder?",
                          'o = loc(image, "small cylinder")[0]\nvqa(image, "What is the material of this object?", o)') == \
        ("what", "is", "the", "material", "of", "the", "_")


def test_similar_questions_form_one_group_and_others_stay_apart(sample):
    store = sample[0]
    groups = group_programs(store.verified_programs(correct_only=True))
    assert sorted(len(g) for g in groups) == [1, 1, 2]
    assert {p.question for p in groups[0]} == {"How many cylinders are there?", "How many large things are there?"}


def test_a_group_helper_is_admitted_when_every_call_reproduces_the_right_answer(sample):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM([COUNT])
    report = writer(store, llm).write(dataset, modules, questions)
    assert report.admitted == ["_count_matching"]
    helper = store.current("_count_matching")
    assert helper.signature == "(image, object_prompt: str) -> int"
    decision = store.decisions("_count_matching")[-1]
    assert decision.evidence["origin"] == "group" and decision.evidence["reproduced"] == 2
    assert decision.evidence["tokens_saved"] > 0 and decision.evidence["frame"] == "how many _ are there"
    rewritten = sorted(p.code for p in store.verified_programs() if p.variant == REWRITTEN)
    assert rewritten == ["final_result = _count_matching(image, 'cylinders')\n",
                         "final_result = _count_matching(image, 'large things')\n"]
    request = llm.calls[0][1]["content"]
    assert request.count("Correct program:") == 2 and "1. How many" in request and "2. How many" in request
    assert "def loc(" in llm.calls[0][0]["content"]  # the API is shown
    shown = ExampleRetriever(store.verified_programs(correct_only=True), 1, {"_count_matching"}).render(
        "How many cubes are there?")
    assert "_count_matching(image, " in shown
    # a group that has its helper is not written again
    again = ScriptedLLM([])
    assert writer(store, again).write(dataset, modules, questions).admitted == [] and not again.calls


def test_a_helper_that_tests_for_the_questions_own_phrases_is_refused_and_rewritten(sample):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM([LOOKUP, COUNT])
    report = writer(store, llm).write(dataset, modules, questions)
    assert report.admitted == ["_count_matching"]
    assert "pass it on to the API instead of testing for it" in llm.calls[1][-1]["content"]
    assert "== 'cylinders'" not in store.current("_count_matching").code


def test_a_helper_that_ignores_one_of_its_parameters_is_sent_back_and_its_fix_admitted(sample):
    store, dataset, modules, questions = sample
    unread = COUNT.replace("object_prompt: str) -> int", "object_prompt: str, side: str = 'left') -> int")
    llm = ScriptedLLM([unread, COUNT])
    report = writer(store, llm).write(dataset, modules, questions)
    assert report.admitted == ["_count_matching"]
    assert "never reads `side`" in llm.calls[1][-1]["content"]
    assert "side" not in store.current("_count_matching").signature


def test_a_helper_that_changes_an_answer_is_rejected_without_being_told_the_right_one(sample):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM([OFF_BY_ONE, OFF_BY_ONE])
    report = writer(store, llm).write(dataset, modules, questions)
    assert report.admitted == [] and "rewritten programs changed" in report.rejected["_count_matching"]
    feedback = llm.calls[1][-1]["content"]
    assert "question 1 (How many cylinders are there?): answered 3, which is wrong" in feedback
    assert "make that a parameter" in feedback
    assert "_count_matching" not in store
    assert not [p for p in store.verified_programs() if p.variant == REWRITTEN]


@pytest.mark.parametrize("reply, problem", [
    ("```python\nfinal_result = 2\n```", "exactly one helper"),
    (COUNT.replace("final_result = _count_matching(image, \"cylinders\")",
                   "def _count_large(image):\n    \"\"\"Large.\"\"\"\n    return len(loc(image, 'large things'))\n\n"
                   "final_result = _count_matching(image, \"cylinders\")"),
     "(`_count_matching`, `_count_large`): make what differs between them"),
    (COUNT.replace('final_result = _count_matching(image, "large things")\n', ""), "for each of the 2 questions"),
    (COUNT.replace('"large things"', '"cylinders"'), "the same arguments"),
    (COUNT.replace("def _count_matching(image", "@staticmethod\ndef _count_matching(image"), "decorators are not allowed"),
    (COUNT.replace("object_prompt: str)", "object_prompt: str, n=len([]))"), "default values must be constants"),
    (COUNT.replace("    return len(loc(image, object_prompt))\n", "    return 2\n"), "must call the API"),
])
def test_malformed_replies_are_sent_back_with_the_reason(sample, reply, problem):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM([reply, reply])
    report = writer(store, llm).write(dataset, modules, questions)
    assert report.admitted == []
    assert problem in llm.calls[1][-1]["content"]


LEFT_OF = ('ref = loc(image, "red sphere")[0]\ncentre = (ref[0] + ref[2]) / 2\n'
           'final_result = len([b for b in loc(image, "things") if (b[0] + b[2]) / 2 < centre])\n')
COUNT_THREE = COUNT.replace('final_result = _count_matching(image, "large things")\n',
                            'final_result = _count_matching(image, "large things")\n'
                            'final_result = _count_matching(image, "things left of the red sphere")\n')


def test_a_helper_right_on_most_of_its_group_is_kept_for_those_questions(sample):
    store, dataset, modules, questions = sample
    question = next(q for q in questions if q.question == "How many things are left of the red sphere?")
    result = run(LEFT_OF, program_namespace(dataset.image(question), modules))
    assert result.error is None and score_answer(normalize_answer(result.value), question.answer, "int") == 1.0
    store.record_verified_program(batch_id=None, question_id=question.question_id, question=question.question,
                                  variant="without", code=LEFT_OF, answer=question.answer, gold=question.answer,
                                  error=None, correct=True, uses=[])
    llm = ScriptedLLM([COUNT_THREE, COUNT_THREE])
    report = writer(store, llm).write(dataset, modules, questions)
    assert report.admitted == ["_count_matching"]
    evidence = store.decisions("_count_matching")[-1].evidence
    assert evidence["left_out"] == [question.question_id] and evidence["uses"] == 2
    assert evidence["reproduced"] == evidence["programs"] == 2
    rewritten = [p for p in store.verified_programs() if p.variant == REWRITTEN]
    assert len(rewritten) == 2 and question.question_id not in {p.question_id for p in rewritten}
    # with a minimum of three uses, two right answers of three are not enough
    store2 = ApiStore(store.path.parent / "other.sqlite")
    for program in store.verified_programs():
        if program.variant != REWRITTEN:
            store2.record_verified_program(batch_id=None, question_id=program.question_id, question=program.question,
                                           variant=program.variant, code=program.code, answer=program.answer,
                                           gold=program.gold, error=None, correct=True, uses=[])
    strict = GroupWriter(store2, ScriptedLLM([COUNT_THREE, COUNT_THREE]), run, min_uses=3, truth=TruthChecks(run))
    assert strict.write(dataset, modules, questions).admitted == []
    store2.close()


def test_a_parameter_compared_with_a_closed_set_of_words_is_no_lookup():
    from vadar.library.group_replies import Written, misuse
    from vadar.library.sources import api_signatures

    side = ('def _count_beside(image, object_prompt, reference_prompt, side):\n    """Count."""\n'
            '    ref = loc(image, reference_prompt)[0]\n    boxes = loc(image, object_prompt)\n'
            '    if side == "left":\n        return len([b for b in boxes if b[2] < ref[0]])\n'
            '    return len([b for b in boxes if b[0] > ref[2]])\n')
    calls = ["_count_beside(image, 'chairs', 'table', 'left')", "_count_beside(image, 'cups', 'plate', 'right')"]
    assert misuse(Written("_count_beside", "Count.", "(...)", side, calls), api_signatures([])[0]) is None
    lookup = side.replace('if side == "left"', 'if reference_prompt == "table"')
    assert "tests `reference_prompt`" in str(misuse(Written("_count_beside", "Count.", "(...)", lookup, calls),
                                                 api_signatures([])[0]))


def test_the_request_lays_out_one_line_per_question_to_complete(sample):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM([COUNT])
    writer(store, llm).write(dataset, modules, questions)
    request = llm.calls[0][-1]["content"]
    assert "final_result = ...  # 1. How many" in request and "final_result = ...  # 2. How many" in request


CAPPED = COUNT.replace("return len(loc(image, object_prompt))", "return min(len(loc(image, object_prompt)), 3)")


def test_a_helper_must_also_answer_the_frames_questions_no_right_program_answered(sample):
    """Reproducing the right programs is not enough: the build questions of the same frame whose
    programs were wrong are answered by the helper too (a request of their own), checked against gold."""
    import dataclasses

    store, dataset, modules, questions = sample
    first = next(q for q in questions if q.question == "How many cylinders are there?")
    every = len(run('final_result = loc(image, "objects")', program_namespace(dataset.image(first), modules)).value)
    assert every > 3
    objects = dataclasses.replace(first, question_id="all-objects", question="How many objects are there?",
                                  answer=str(every))
    store.record_verified_program(batch_id=None, question_id="all-objects", question=objects.question,
                                  variant="build", code='final_result = len(loc(image, "objects")) - 1\n',
                                  answer=str(every - 1), gold=str(every), error=None, correct=False, uses=[])
    other_call = '```python\nfinal_result = _count_matching(image, "objects")\n```'
    llm = ScriptedLLM([CAPPED, other_call, COUNT, other_call])
    report = writer(store, llm).write(dataset, modules, [*questions, objects])
    assert report.admitted == ["_count_matching"]
    assert "How many objects are there?" not in llm.calls[0][1]["content"]  # the group request is unchanged
    frame_request = llm.calls[1][-1]["content"]
    assert "min(len(loc(image, object_prompt)), 3)" in frame_request and "1. How many objects are there?" in frame_request
    retry = llm.calls[2][-1]["content"]
    assert "on 1 of 1 other questions of this kind the helper is wrong" in retry
    assert "'How many objects are there?': it answered 3, which is wrong" in retry
    evidence = store.decisions("_count_matching")[-1].evidence
    assert evidence["frame_check"] == {"questions": 1, "right": 1} and evidence["reproduced"] == 2
    # only the right programs are rewritten into worked examples
    assert sorted(p.question_id for p in store.verified_programs() if p.variant == REWRITTEN) == ["0", "6"]


def test_a_frame_reply_without_a_call_per_question_is_no_evidence(sample):
    import dataclasses

    store, dataset, modules, questions = sample
    first = next(q for q in questions if q.question == "How many cylinders are there?")
    objects = dataclasses.replace(first, question_id="all-objects", question="How many objects are there?",
                                  answer="99")
    store.record_verified_program(batch_id=None, question_id="all-objects", question=objects.question,
                                  variant="build", code='final_result = len(loc(image, "objects"))\n',
                                  answer="6", gold="99", error=None, correct=False, uses=[])
    llm = ScriptedLLM([COUNT, "I cannot.", "Still no code."])
    assert writer(store, llm).write(dataset, modules, [*questions, objects]).admitted == ["_count_matching"]
    assert len(llm.calls) == 3 and llm.calls[2][-1]["content"].startswith("That reply cannot be used")
    assert store.decisions("_count_matching")[-1].evidence["frame_check"] == {"questions": 1, "right": None}


def test_a_line_that_does_not_call_the_helper_leaves_its_question_out(sample):
    """The LLM's own sign that a question does not fit: the helper is kept for the others when they
    are enough, and the question is recorded as left out."""
    import dataclasses

    store, dataset, modules, questions = sample
    first = next(q for q in questions if q.question == "How many cylinders are there?")
    for n, phrase in enumerate(("cubes", "spheres")):
        code = f'final_result = len(loc(image, "{phrase}"))\n'
        value = run(code, program_namespace(dataset.image(first), modules)).value
        extra = dataclasses.replace(first, question_id=f"x{n}", question=f"How many {phrase} are there?",
                                    answer=str(value))
        questions = [*questions, extra]
        store.record_verified_program(batch_id=None, question_id=extra.question_id, question=extra.question,
                                      variant="without", code=code, answer=str(value), gold=str(value),
                                      error=None, correct=True, uses=[])
    group = [p.question for p in group_programs(store.verified_programs(correct_only=True))[0]]
    lines = {"How many cylinders are there?": '_count_matching(image, "cylinders")',
             "How many large things are there?": 'len(loc(image, "large things"))',
             "How many cubes are there?": '_count_matching(image, "cubes")',
             "How many spheres are there?": '_count_matching(image, "spheres")'}
    reply = COUNT.split("\n\nfinal_result")[0] + "\n\n" + "".join(f"final_result = {lines[q]}\n" for q in group) + "```"
    report = GroupWriter(store, ScriptedLLM([reply]), run, min_uses=3, truth=TruthChecks(run)).write(
        dataset, modules, questions)
    assert report.admitted == ["_count_matching"]
    evidence = store.decisions("_count_matching")[-1].evidence
    large = next(q.question_id for q in questions if q.question == "How many large things are there?")
    assert evidence["left_out"] == [large] and evidence["reproduced"] == 3


def test_answer_lines_are_the_final_result_lines_and_bare_helper_calls():
    tree = __import__("ast").parse('final_result = _h(image, "a")\nfinal_result = len(loc(image, "b"))\n'
                                   'print("x")\n_h(image, "c")\n')
    from vadar.library.group_replies import answer_lines
    assert answer_lines(tree, "_h") == ["_h(image, 'a')", None, "_h(image, 'c')"]


SILENT = COUNT.replace("object_prompt: str) -> int", "object_prompt: str, limit: int = 100) -> int").replace(
    "return len(loc(image, object_prompt))", "return min(len(loc(image, object_prompt)), limit)")
NAMED = "The number of objects that match object_prompt, at most limit."


def test_right_code_with_a_docstring_silent_on_a_parameter_gets_a_new_docstring_alone(sample):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM([SILENT, f'"""{NAMED}"""'])
    report = writer(store, llm).write(dataset, modules, questions)
    assert report.admitted == ["_count_matching"]
    request = llm.calls[1][-1]["content"]
    assert "says nothing of `limit`" in request and "Do not change the code" in request
    assert "`object_prompt`, `limit`" in request and len(llm.calls[1]) == 2  # a request of its own
    helper = store.current("_count_matching")
    assert helper.docstring == NAMED and NAMED in helper.code
    assert "return min(len(loc(image, object_prompt)), limit)" in helper.code
    evidence = store.decisions("_count_matching")[-1].evidence
    assert evidence["docstring_rewritten_from"] == "The number of objects that match object_prompt."


def test_a_docstring_still_silent_sends_the_whole_reply_back(sample):
    store, dataset, modules, questions = sample
    vague = "The number of matching objects."
    llm = ScriptedLLM([SILENT, vague, vague, SILENT, vague, vague])
    report = writer(store, llm).write(dataset, modules, questions)
    assert report.admitted == [] and "says nothing of `limit`" in report.rejected["_count_matching"]
    assert llm.calls[2][-1]["content"].startswith("That docstring cannot be used")  # the docstring retry
    assert "says nothing of `limit`" in llm.calls[3][-1]["content"]  # then the group reply again
    assert "_count_matching" not in store


@pytest.mark.parametrize("reply, docstring", [
    ("Counts the objects.", "Counts the objects."),
    ('```python\ndef _f(image, x):\n    """Counts x."""\n    return 1\n```', "Counts x."),
    ("'''Counts   the\n objects.'''", "Counts the objects."),
])
def test_the_docstring_is_read_from_a_sentence_a_string_or_a_def(reply, docstring):
    assert reply_docstring(reply) == docstring


def test_an_empty_or_long_docstring_reply_is_refused():
    with pytest.raises(ValueError, match="no docstring"):
        reply_docstring("  ")
    with pytest.raises(ValueError, match="one sentence"):
        reply_docstring("word " * 200)


def test_a_group_helper_with_a_body_the_library_has_is_refused_without_another_request(sample):
    from vadar.library.hand import add_functions

    store, dataset, modules, questions = sample
    add_functions(store, 'def _count_things(image, prompt: str) -> int:\n    """How many match."""\n'
                         '    found = loc(image, prompt)\n    return len(found)\n')
    llm = ScriptedLLM([COUNT, COUNT])
    report = writer(store, llm).write(dataset, modules, questions)
    assert report.admitted == [] and len(llm.calls) == 1
    assert report.rejected["_count_matching"] == "the body of `_count_things`, which the library has"
    # one call of a library helper under a second name is the same helper too
    alias = COUNT.replace("return len(loc(image, object_prompt))", "return _count_things(image, object_prompt)")
    assert writer(store, ScriptedLLM([alias])).write(dataset, modules, questions).admitted == []

