"""Distillation: helpers found in right programs, named by a scripted LLM, admitted by reproduction."""

from __future__ import annotations

import re

import pytest

from api_store import ApiStore
from omni3d_bench import sample_path
from omni3d_bench.datasets import load_dataset
from omni3d_bench.metrics import score_answer
from vadar.programs.answers import normalize_answer
from vadar.library import distill as distill_module
from vadar.library.distill import Distiller
from vadar.library.gate import REWRITTEN
from vadar.library.drafting import HelperDraft
from vadar.library.rules import silent_parameter
from vadar.programs.namespace import program_namespace
from vadar.library.retrieval import ExampleRetriever
from vadar.library import truth_checks
from vadar.library.truth_checks import TruthChecks
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.prepare import oracle_modules
from vadar.sandbox import execute

# Right programs for questions of the built-in sample; three of them find an object and its depth.
PROGRAMS = {
    "How many things are in front of the cyan sphere?":
        'sphere = loc(image, "cyan sphere")[0]\nd = depth(image, sphere)\n'
        'final_result = len([b for b in loc(image, "objects") if depth(image, b) < d])\n',
    "What color is the cylinder that is behind the red cylinder?":
        'ref = loc(image, "red cylinder")[0]\nref_depth = depth(image, ref)\n'
        'behind = [b for b in loc(image, "cylinder") if depth(image, b) > ref_depth]\n'
        'final_result = vqa(image, "What color is this object?", behind[0])\n',
    "What material is the yellow cylinder?":
        'cylinder = loc(image, "yellow cylinder")[0]\ncylinder_depth = depth(image, cylinder)\n'
        'at_depth = [b for b in loc(image, "cylinder") if depth(image, b) == cylinder_depth]\n'
        'final_result = vqa(image, "What material is this object made of?", at_depth[0])\n',
    "What shape is the cyan object?":
        'obj = loc(image, "cyan object")[0]\nfinal_result = vqa(image, "What shape is this object?", obj)\n',
}
NAMED = '```python\ndef _first_object_depth(image: Image, object_prompt: str) -> float:\n' \
        '    """The camera depth of the first object matching object_prompt."""\n```'


def run(code, namespace):
    return execute(code, namespace, timeout_s=10)


def record_programs(store, dataset, modules) -> list:
    """PROGRAMS, run on the oracle and checked right, stored as verified build programs."""
    questions = {q.question: q for q in dataset.questions("sample")}
    for text, code in PROGRAMS.items():
        question = questions[text]
        result = run(code, program_namespace(dataset.image(question), modules))
        assert result.error is None and score_answer(normalize_answer(result.value), question.answer,
                                                     question.answer_type) == 1.0, (text, result)
        store.record_verified_program(batch_id=None, question_id=question.question_id, question=text,
                                      variant="without", code=code, answer=normalize_answer(result.value),
                                      gold=question.answer, error=None, correct=True, uses=[])
    return list(questions.values())


@pytest.fixture
def sample(tmp_path):
    dataset = load_dataset(sample_path())
    modules = oracle_modules(dataset)
    store = ApiStore(tmp_path / "lib.sqlite")
    questions = record_programs(store, dataset, modules)
    yield store, dataset, modules, questions
    store.close()


def distiller(store, llm, **kwargs):
    return Distiller(store, llm, run, truth=TruthChecks(run), **kwargs)


def test_a_repeated_pattern_becomes_a_helper_and_every_source_program_is_rewritten(sample):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM([NAMED])
    report = distiller(store, llm).distill(dataset, modules, questions)
    assert report.admitted == ["_first_object_depth"]
    helper = store.current("_first_object_depth")
    assert helper.signature == "(image: Image, object_prompt: str) -> float"
    assert "return" in helper.code and "depth(image" in helper.code
    decision = [d for d in store.decisions("_first_object_depth")][-1]
    assert decision.mode == "distilled" and decision.evidence["reproduced"] == decision.evidence["programs"] == 3
    assert decision.evidence["tokens_saved"] > 0 and len(decision.evidence["questions"]) == 3
    rewritten = [p for p in store.verified_programs() if p.variant == REWRITTEN]
    assert len(rewritten) == 3 and all(p.uses == ("_first_object_depth",) for p in rewritten)
    assert all("_first_object_depth(image, " in p.code for p in rewritten)
    assert report.tokens_after < report.tokens_before
    # the LLM only named it: it saw the body and two uses, never wrote code
    prompt = llm.calls[0][1]["content"]
    assert "def _UNNAMED(image: Image, object_prompt: str) -> float:" in prompt and prompt.count("Use ") == 2
    # each use shows the call with its own argument, as the rewritten program will hold it
    assert prompt.count("_UNNAMED(image, '") == 2 and "_UNNAMED(image)" not in prompt


def test_retrieved_examples_show_the_rewritten_programs(sample):
    store, dataset, modules, questions = sample
    distiller(store, ScriptedLLM([NAMED])).distill(dataset, modules, questions)
    examples = ExampleRetriever(store.verified_programs(correct_only=True), 2, {"_first_object_depth"})
    shown = examples.render("How many things are in front of the cyan sphere?")
    assert "_first_object_depth(image, 'cyan sphere')" in shown
    assert 'sphere = loc(image, "cyan sphere")[0]' not in shown


def test_a_candidate_that_changes_one_answer_is_rejected(sample, monkeypatch):
    store, dataset, modules, questions = sample
    real = distill_module.draft_helper

    def a_metre_off(*args, **kwargs) -> HelperDraft:  # a body that no longer computes what the programs did
        draft = real(*args, **kwargs)
        lines = draft.body.splitlines()
        return HelperDraft(draft.parameters, draft.annotations, draft.returns,
                           "\n".join([*lines[:-1], lines[-1] + " + 1.0"]), draft.has_output)

    monkeypatch.setattr(distill_module, "draft_helper", a_metre_off)
    report = distiller(store, ScriptedLLM([NAMED])).distill(dataset, modules, questions)
    assert report.admitted == []
    assert "rewritten programs changed" in report.rejected["_first_object_depth"]
    assert "_first_object_depth" not in store
    assert not [p for p in store.verified_programs() if p.variant == REWRITTEN]


def test_a_pattern_used_by_fewer_questions_than_the_minimum_is_not_proposed(sample):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM([])
    report = distiller(store, llm, min_uses=4).distill(dataset, modules, questions)
    assert report.admitted == [] and not llm.calls


def test_a_bad_name_is_refused_and_a_candidate_left_without_a_name_is_not_admitted(sample):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM(['```python\ndef loc(image, object_prompt):\n    """x"""\n```', "no code at all"])
    report = distiller(store, llm).distill(dataset, modules, questions)
    assert report.admitted == []
    assert "not a valid name" in llm.calls[1][-1]["content"]
    assert report.rejected["_loc_then_depth"].startswith("the LLM gave it no usable name")
    assert "_loc_then_depth" not in store
    assert not [p for p in store.verified_programs() if p.variant == REWRITTEN]


@pytest.mark.parametrize("refused, feedback", [
    # the placeholder name copied back
    ('```python\ndef _UNNAMED(image, object_prompt):\n    """Depth."""\n```', "is the placeholder"),
    # a name built from one use's values
    (NAMED.replace("_first_object_depth", "_cyan_sphere_depth"), "names the value of one use (cyan, sphere)"),
    # a docstring that speaks of one use's object
    (NAMED.replace("the first object matching object_prompt", "the yellow cylinder (object_prompt)"),
     "the docstring names the value of one use (cylinder, yellow)"),
])
def test_a_refused_name_is_sent_back_with_the_reason_and_the_next_reply_admitted(sample, refused, feedback):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM([refused, NAMED])
    report = distiller(store, llm).distill(dataset, modules, questions)
    assert report.admitted == ["_first_object_depth"]
    assert feedback in llm.calls[1][-1]["content"]


def test_a_docstring_silent_on_a_parameter_is_completed_by_the_bodys_return_formula(sample):
    store, dataset, modules, questions = sample
    llm = ScriptedLLM([NAMED.replace("of the first object matching object_prompt", "of the first thing found")])
    report = distiller(store, llm).distill(dataset, modules, questions)
    assert report.admitted == ["_first_object_depth"] and len(llm.calls) == 1
    docstring = store.current("_first_object_depth").docstring
    assert docstring.endswith("Returns `depth(image, loc(image, object_prompt)[0])`.")


def test_return_formula_inlines_straight_line_steps_and_refuses_loops():
    from vadar.programs.formula import return_formula

    body = "a = depth(image, bbox)\nb = depth(image, bbox2)\nd = a - b\nreturn d\n"
    assert return_formula(body) == "depth(image, bbox) - depth(image, bbox2)"
    assert return_formula("n = 0\nfor b in loc(image, p):\n    n += 1\nreturn n\n") is None
    assert return_formula("return len([b for b in loc(image, p)])\n") is None
    assert return_formula("x = 1\n") is None


def test_the_program_prompt_shows_the_helper_with_a_call_and_its_rewritten_examples(sample):
    from vadar.config import VadarConfig
    from vadar.runs.methods import build_answerer, read_library

    store, dataset, modules, questions = sample
    distiller(store, ScriptedLLM([NAMED])).distill(dataset, modules, questions)
    llm = ScriptedLLM(["```python\nfinal_result = 1\n```"])
    answer = build_answerer("vadar", read_library(store, "vadar"), llm=llm, executor=run, config=VadarConfig(),
                            dataset=dataset, modules=modules, backends={})
    answer(next(q for q in questions if q.question == "How many things are in front of the cyan sphere?"))
    system = llm.calls[0][0]["content"]
    assert "def _first_object_depth(image: Image, object_prompt: str) -> float:" in system
    assert re.search(r'Example, for "How many things are in front of the cyan sphere\?":\n'
                     r" +d = _first_object_depth\(image, 'cyan sphere'\)\n", system)  # with its question
    assert "d = _first_object_depth(image, 'cyan sphere')\nfinal_result = len(" in system  # the worked example


def test_a_docstring_silent_on_a_parameter_is_sent_back():
    assert silent_parameter(["image", "object_prompt"], "The camera depth of the first object matching object_prompt.") is None
    assert silent_parameter(["image", "reference_prompt", "side"], "Objects on the given side of the reference.") is None
    problem = silent_parameter(["image", "object1_prompt", "object2_prompt"],
                               "The metric distance of the object in `object1_prompt` from the camera, in metres.")
    assert problem is not None and "`object2_prompt`" in problem
    assert silent_parameter(["image", "bbox"], "The depth at the centre of the given box.") is None
    assert silent_parameter(["image", "bbox1", "bbox2"], "The depth of the first box minus that of the second box.") is None
    assert silent_parameter(["image", "object1_prompt", "object2_prompt"],
                            "How much farther the second object is than the first object.") is None
    assert "`bbox2`" in silent_parameter(["image", "bbox1", "bbox2"], "The depth of the first box.")


def test_a_name_whose_claim_fails_against_ground_truth_is_asked_again_with_the_failure(sample):
    store, dataset, modules, questions = sample

    class HeightClaims(TruthChecks):  # the real checks are in test_claims.py; here only the loop
        def check(self, record, *args):
            if record.name == "_object_height":
                return truth_checks.TruthResult(False, "measure:height", 1,
                                                ["s: _object_height(image, 'cyan sphere') returned 10.8, but the "
                                                 "cyan sphere #0 is 0.70 m tall"])
            return truth_checks.TruthResult(None)

    false_name = NAMED.replace("_first_object_depth", "_object_height")
    llm = ScriptedLLM([false_name, NAMED])
    report = Distiller(store, llm, run, truth=HeightClaims(run)).distill(dataset, modules, questions)
    assert report.admitted == ["_first_object_depth"]
    retry = llm.calls[1][-1]["content"]
    assert "`_object_height` claims something this body does not compute" in retry and "0.70 m tall" in retry
    assert "_object_height" not in store


def test_a_body_the_library_already_holds_is_not_distilled_again_under_another_name(sample):
    from vadar.library.hand import add_functions

    store, dataset, modules, questions = sample
    add_functions(store, 'def _depth_of_match(image, object_prompt: str) -> float:\n'
                         '    """The depth of the first object found for object_prompt."""\n'
                         '    found = loc(image, object_prompt)[0]\n    d = depth(image, found)\n    return d\n')
    llm = ScriptedLLM([NAMED])
    report = distiller(store, llm).distill(dataset, modules, questions)
    assert report.admitted == [] and llm.calls == []  # nothing to name: the only pattern is known


def test_one_call_of_a_library_helper_with_its_box_looked_up_is_not_distilled_as_a_new_helper(tmp_path):
    from vadar.library.hand import add_functions

    dataset = load_dataset(sample_path())
    modules = oracle_modules(dataset)
    questions = {q.question_id: q for q in dataset.questions("sample")}
    # the same two lines in each right program: look the object up, then ask the library helper
    programs = {"2": ("cyan object", "shape"), "8": ("yellow cylinder", "material"), "10": ("gray cylinder", "color")}
    with ApiStore(tmp_path / "lib.sqlite") as store:
        add_functions(store, 'def _asked_of(image: Image, bbox: BBox, asked: str) -> str:\n'
                             '    """The attribute `asked` (color, shape, material, size) of the object in bbox."""\n'
                             '    return vqa(image, f"What {asked} is this object?", bbox)\n')
        for question_id, (noun, asked) in programs.items():
            question = questions[question_id]
            code = f'obj = loc(image, "{noun}")[0]\nfinal_result = _asked_of(image, obj, "{asked}")\n'
            result = run(code, program_namespace(dataset.image(question), modules, store.library()))
            assert normalize_answer(result.value) == question.answer, (code, result)
            store.record_verified_program(batch_id=None, question_id=question_id, question=question.question,
                                          variant="build", code=code, answer=question.answer, gold=question.answer,
                                          error=None, correct=True, uses=["_asked_of"])
        llm = ScriptedLLM([])
        report = Distiller(store, llm, run).distill(dataset, modules, [questions[i] for i in programs])
    assert report.programs == 3
    assert report.admitted == [] and llm.calls == []  # an alias of `_asked_of` is no helper: nothing to name


def test_a_naming_reply_cut_off_inside_the_copied_body_still_gives_its_name_and_docstring():
    from vadar.library.distill import _parse_stub
    reply = ('def _color_twins(image: Image, reference: BBox, object_prompt: str) -> list:\n'
             '    """The objects matching `object_prompt` with the colour of `reference`."""\n'
             '    kept = [box for box in loc(image, object_prompt) if not same_object(image, box, ')
    assert _parse_stub(reply) == ("_color_twins", "The objects matching `object_prompt` with the colour of `reference`.")
    assert _parse_stub('def _f(image):\n    """Doc."""') == ("_f", "Doc.")
