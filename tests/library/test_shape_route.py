"""Question-shape helpers one level up: proposed from the catalogue once enough build questions share
a shape, searched and admitted by outcome on those questions, and shown first to the programs."""

from __future__ import annotations

from pathlib import Path

import pytest

from api_store import ApiStore, FunctionStatus
from omni3d_bench.datasets.clevr import ClevrDataset
from vadar.agents.program import ProgramAgent
from vadar.config import AgentsConfig, LibraryConfig
from vadar.library.batch import BuildBatch
from vadar.library.coverage import coverage_of
from vadar.library.shape_route import due_helpers, shape_route
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
from vadar.runs.build_history import earlier_build_questions
from vadar.runs.prepare import oracle_modules
from vadar.sandbox import execute
from shape_samples import CALLS, NAME, RIGHT, WRONG, program_writer

CLEVR_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "clevr"
pytestmark = pytest.mark.skipif(not CLEVR_DIR.is_dir(), reason="shared CLEVR data not present")
def executor(code, namespace):
    return execute(code, dict(namespace), timeout_s=20, memory_mb=1024)


@pytest.fixture(scope="module")
def clevr():
    dataset = ClevrDataset(CLEVR_DIR)
    return dataset, oracle_modules(dataset), dataset.questions("dev")


def scripted(questions, samples, calls_helper=True):
    drawn = iter(samples)
    return ScriptedLLM([ByRole({Role.API_IMPLEMENT: lambda messages: next(drawn),
                                Role.PROGRAM: program_writer(questions, calls_helper)})] * 400)


def batch(store, llm, questions, *, index=0, earlier=(), **settings):
    run = store.start_run("build-api", model="test")
    record = store.start_batch(run.id, [q.question_id for q in questions], index=index)
    dataset, modules, _ = questions.clevr
    library = LibraryConfig(**{"search_samples": 2, "shape_search_samples": 2, "search_rounds": 1, **settings})
    return BuildBatch(store, llm, executor, dataset, modules, tuple(questions), tuple(questions), tuple(questions),
                      index, run.id, record.id, "test", library, AgentsConfig(),
                      lambda sampling: ProgramAgent(llm, executor), earlier=tuple(earlier))


class Questions(list):
    """Build questions that carry the data set they come from."""

    def __init__(self, clevr, ids):
        super().__init__(q for q in clevr[2] if q.question_id in ids)
        self.clevr = clevr


def test_a_shape_helper_is_due_only_with_enough_build_questions_of_its_shape(clevr):
    store = ApiStore.memory()
    llm = ScriptedLLM([])
    # 16-19 count others of a shared attribute; 12-15 ask whether another thing shares one
    four = batch(store, llm, Questions(clevr, {"16", "17", "18", "19", "12", "13"}))
    assert [(h.name, [q.question_id for q in qs]) for h, qs in due_helpers(four)] == [
        (NAME, ["16", "17", "18", "19"])]  # two `exists, shared` questions are below the minimum of 3
    assert due_helpers(batch(store, llm, Questions(clevr, {"16", "17", "18", "19"}),
                             shape_helpers_per_batch=0)) == []
    assert due_helpers(batch(store, llm, Questions(clevr, {"16", "17"}))) == []
    store.propose(NAME, "(image: Image) -> int", "Tried before.")
    assert due_helpers(batch(store, llm, Questions(clevr, {"16", "17", "18", "19"}))) == []  # never proposed again


def test_a_helper_that_is_only_a_step_of_a_shape_is_never_due(clevr):
    """Eight "What size is the cube in front of the yellow object ...?" questions, each a chain of two or
    three relations: `_objects_along` and `_attribute_of_related` answer them in one call; `_find_related`
    and `_attribute_of` are links of their chains, refused in every CLEVR build for want of programs
    calling them, so they cost no proposal, search or gate."""
    questions = Questions(clevr, {"2", "3", "4", "5", "8", "9", "10", "11"})
    due = due_helpers(batch(ApiStore.memory(), ScriptedLLM([]), questions, shape_search_support=0))
    assert [(h.name, len(qs)) for h, qs in due] == [("_objects_along", 8), ("_attribute_of_related", 8)]


def test_questions_an_admitted_shape_helper_answers_whole_leave_no_support_to_another(clevr):
    """The same chained attribute questions once `_objects_along` is admitted: their programs are shown
    its call, so `_attribute_of_related`, later in the catalogue, could gather no support there."""
    questions = Questions(clevr, {"2", "3", "4", "5", "8", "9", "10", "11"})
    store = ApiStore.memory()
    store.propose("_objects_along", "(image: Image, chain: list[str]) -> list[BBox]", "Walks a chain.")
    store.implement("_objects_along", "def _objects_along(image, chain):\n    return []\n")
    store.mark_admitted("_objects_along")
    assert due_helpers(batch(store, ScriptedLLM([]), questions)) == []


def test_a_shape_helper_is_searched_on_its_latest_questions_weighing_at_most_the_cap(clevr):
    """Attribute questions weigh 1 and yes/no questions half: of eight attribute questions the last
    five, of eight yes/no questions the last six for a cap of 3; a cap below the minimum is raised to it."""
    counts = Questions(clevr, {"2", "3", "4", "5", "8", "9", "10", "11"})
    due = due_helpers(batch(ApiStore.memory(), ScriptedLLM([]), counts))
    assert [(h.name, [q.question_id for q in qs]) for h, qs in due][0] == ("_objects_along", ["5", "8", "9", "10", "11"])
    due = due_helpers(batch(ApiStore.memory(), ScriptedLLM([]), counts, shape_search_support=1))
    assert [len(qs) for _, qs in due] == [3, 3]  # the minimum of 3
    yes_no = Questions(clevr, {"12", "13", "14", "15", "20", "21", "22", "23"})
    due = due_helpers(batch(ApiStore.memory(), ScriptedLLM([]), yes_no, shape_search_support=3))
    assert [(h.name, [q.question_id for q in qs]) for h, qs in due] == [
        ("_exists_same_attribute", ["14", "15", "20", "21", "22", "23"])]  # six yes/no weigh 3


def test_build_questions_of_an_earlier_run_count_toward_a_shape_helper(clevr):
    """A library grown in a second run: two questions of the shape now and two in the first run's build."""
    store, llm = ApiStore.memory(), ScriptedLLM([])
    dataset = clevr[0]
    first = store.start_run("build-api", model="test", config={"data": str(dataset.root), "split": "dev"})
    store.start_batch(first.id, ["18", "19"], index=0)
    now = Questions(clevr, {"16", "17"})
    assert due_helpers(batch(store, llm, now)) == []  # two alone are below the minimum of 3

    earlier = earlier_build_questions(store, dataset, "dev", exclude={"16", "17"})
    assert [q.question_id for q in earlier] == ["18", "19"]
    due = due_helpers(batch(store, llm, now, earlier=earlier))
    assert [(h.name, sorted(q.question_id for q in qs)) for h, qs in due] == [(NAME, ["16", "17", "18", "19"])]
    assert earlier_build_questions(store, dataset, "dev", exclude={"18", "19"}) == ()


def test_a_failed_shape_helper_is_tried_again_only_when_its_proposal_would_differ(clevr):
    from vadar.library.shape_helpers import shape_helper
    from vadar.library.shape_proposal import proposed_docstring

    store, llm = ApiStore.memory(), ScriptedLLM([])
    four = Questions(clevr, {"16", "17", "18", "19"})
    helper = shape_helper(NAME)
    store.propose(NAME, helper.signature, helper.what)  # the catalogue text without the hint of how to read
    store.mark_failed(NAME, "no sample passed")
    assert [h.name for h, _ in due_helpers(batch(store, llm, four))] == [NAME]  # it would be proposed otherwise now

    store.propose(NAME, helper.signature, proposed_docstring(helper, store.library()))
    store.mark_failed(NAME, "no sample passed")
    assert due_helpers(batch(store, llm, four)) == []  # failed with the proposal it would get now


def test_a_helper_never_tried_takes_the_batch_s_slot_before_a_retry(clevr):
    """Eight yes/no questions of a shared attribute (weight 4) and four counts of one (weight 4): the
    yes/no helper comes first by questions, but once it failed, the count helper is tried first."""
    from vadar.library.shape_helpers import shape_helper

    store, llm = ApiStore.memory(), ScriptedLLM([])
    twelve = Questions(clevr, {"12", "13", "14", "15", "20", "21", "22", "23", "16", "17", "18", "19"})
    assert [h.name for h, _ in due_helpers(batch(store, llm, twelve))] == ["_exists_same_attribute", NAME]
    helper = shape_helper("_exists_same_attribute")
    store.propose(helper.name, helper.signature, helper.what)  # an older proposal: due again
    store.mark_failed(helper.name, "no sample passed")
    assert [h.name for h, _ in due_helpers(batch(store, llm, twelve))] == [NAME, "_exists_same_attribute"]
    assert [h.name for h, _ in due_helpers(batch(store, llm, twelve, shape_helpers_per_batch=1))] == [NAME]


def test_yes_no_questions_weigh_half_toward_a_shape_helper_s_support(clevr):
    """12-15 and 20-23 ask whether another thing shares an attribute: four weigh 2, eight weigh 4."""
    store, llm = ApiStore.memory(), ScriptedLLM([])
    four = Questions(clevr, {"12", "13", "14", "15"})
    assert {str(q.answer) for q in four} <= {"yes", "no"}
    assert due_helpers(batch(store, llm, four)) == []
    eight = Questions(clevr, {"12", "13", "14", "15", "20", "21", "22", "23"})
    assert [h.name for h, _ in due_helpers(batch(store, llm, eight))] == ["_exists_same_attribute"]


def test_the_sample_whose_programs_answer_the_shape_is_admitted_with_worked_examples_calling_it(clevr):
    questions = Questions(clevr, set(CALLS))
    store = ApiStore.memory()
    llm = scripted(questions, [WRONG, RIGHT])
    report = shape_route(batch(store, llm, questions))

    assert report.proposed == [NAME] and report.admitted == [NAME], report
    assert report.support[NAME] == 4 and report.questions[NAME] == 4
    record = store.current(NAME)
    assert record.status is FunctionStatus.ADMITTED and "same_object" in record.code  # the right sample, not the first
    examples = [p for p in store.verified_programs(correct_only=True) if NAME in p.uses]
    assert {p.question_id for p in examples} == set(CALLS)  # the worked examples call it
    before = coverage_of([q.question for q in questions], [])
    after = coverage_of([q.question for q in questions], store.library())
    assert (before.covered, after.covered) == (0, 4)


def test_a_shape_helper_no_program_calls_is_refused_for_too_little_support(clevr):
    questions = Questions(clevr, set(CALLS))
    store = ApiStore.memory()
    llm = scripted(questions, [RIGHT, RIGHT], calls_helper=False)
    report = shape_route(batch(store, llm, questions))

    assert report.admitted == [] and "too few supporting build questions" in report.not_admitted[NAME]
    assert store.current(NAME).status is FunctionStatus.FAILED
    assert len(llm.calls_of(Role.API_IMPLEMENT)) == 1  # no search without support
    assert due_helpers(batch(store, llm, questions, index=1)) == []


def test_programs_see_the_question_s_shape_helper_first(clevr):
    questions = Questions(clevr, set(CALLS))
    store = ApiStore.memory()
    store.propose("_zz_other", "(image: Image) -> int", "Another helper.")
    store.implement("_zz_other", "def _zz_other(image):\n    return 1\n")
    store.mark_admitted("_zz_other")
    llm = scripted(questions, [RIGHT])
    shape_route(batch(store, llm, questions))

    shown = llm.calls_of(Role.PROGRAM)[0][0]["content"]
    assert shown.index(f"def {NAME}(") < shown.index("def _zz_other(")


def test_a_shape_helper_proposed_before_an_interruption_is_resumed_by_its_route_not_the_step_route(clevr):
    from vadar.library.proposals import proposal_route
    from vadar.library.shape_helpers import shape_helper
    questions = Questions(clevr, set(CALLS))
    store = ApiStore.memory()
    helper = shape_helper(NAME)
    store.propose(NAME, helper.signature, helper.docstring)  # the route proposed it, then the build stopped
    assert [h.name for h, _ in due_helpers(batch(store, ScriptedLLM([]), questions))] == [NAME]

    llm = scripted(questions, [RIGHT])
    resumed = batch(store, llm, questions, index=1, propose=True, distill=False, aim=False)
    record = store.record_proposals(store.start_batch(resumed.run_id, [q.question_id for q in questions]).id,
                                    [], [], [])  # a batch whose step proposals are all recorded: nothing asked
    steps = proposal_route(resumed, record)
    assert NAME not in steps.implemented  # the step route leaves it to its own route
    report = shape_route(resumed)
    assert report.proposed == [NAME] and report.admitted == [NAME]


def test_a_shape_helper_that_failed_is_tried_again_once_the_library_has_a_step_helper_to_build_on(clevr):
    questions = Questions(clevr, set(CALLS))
    store = ApiStore.memory()
    shape_route(batch(store, scripted(questions, [RIGHT, RIGHT], calls_helper=False), questions))
    assert store.current(NAME).status is FunctionStatus.FAILED
    assert due_helpers(batch(store, ScriptedLLM([]), questions, index=1)) == []  # nothing new to build on

    store.propose("_same_color", "(image: Image, bbox: BBox, bbox2: BBox) -> bool", "Whether they share a color.")
    store.implement("_same_color", "def _same_color(image, bbox, bbox2):\n    return True\n")
    store.mark_admitted("_same_color")
    assert [h.name for h, _ in due_helpers(batch(store, ScriptedLLM([]), questions, index=2))] == [NAME]
    report = shape_route(batch(store, scripted(questions, [RIGHT]), questions, index=2))
    assert report.proposed == [NAME] and report.admitted == [NAME], report
    assert "`_same_color(image, bbox, bbox2)` (same color)" in store.current(NAME).docstring
    assert due_helpers(batch(store, ScriptedLLM([]), questions, index=3)) == []


def test_a_shape_helper_built_on_library_helpers_is_shown_an_example_that_composes_helpers(clevr):
    questions = Questions(clevr, set(CALLS))
    store = ApiStore.memory()
    alone = scripted(questions, [WRONG, WRONG])
    shape_route(batch(store, alone, questions))  # nothing to build on: the loop over loc is the example
    assert "def _objects_above(" in alone.calls_of(Role.API_IMPLEMENT)[0][0]["content"]

    store.propose("_same_color", "(image: Image, bbox: BBox, bbox2: BBox) -> bool", "Whether they share a color.")
    store.implement("_same_color", "def _same_color(image, bbox, bbox2):\n    return True\n")
    store.mark_admitted("_same_color")
    composing = scripted(questions, [RIGHT])
    shape_route(batch(store, composing, questions, index=1))
    system = composing.calls_of(Role.API_IMPLEMENT)[0][0]["content"]
    assert "def _heights_of_related(" in system and "def _objects_above(" not in system


def test_before_any_program_calls_a_shape_helper_programs_are_shown_the_catalogue_s_call_of_it(clevr):
    from vadar.library.retrieval import example_calls
    from vadar.library.shape_helpers import catalogue_calls

    questions = Questions(clevr, set(CALLS))
    store = ApiStore.memory()
    llm = scripted(questions, [RIGHT])
    shape_route(batch(store, llm, questions))
    shown = llm.calls_of(Role.PROGRAM)[0][0]["content"]
    assert 'Example, for "How many other things are the same size as the gray cylinder?"' in shown
    # and, with no right program of the shape yet, the catalogue's program is its worked example
    asked = "\n".join(str(m["content"]) for m in llm.calls_of(Role.PROGRAM)[0])
    assert "Example question: How many other things are the same size as the gray cylinder?" in asked
    assert "How many red cubes are in front of the small sphere?" not in asked  # not the fixed example
    assert f'final_result = {NAME}(image, "size", "things", cylinder)' in shown
    # once a right program of the build calls it, that call is shown instead
    found = example_calls(store.verified_programs(correct_only=True), [NAME])
    assert catalogue_calls([NAME], found)[NAME] == found[NAME] != catalogue_calls([NAME])[NAME]


NO_SIZE = RIGHT.replace("    asked = ", "    if attribute == 'size':\n        return 0\n    asked = ")


def test_a_sample_right_on_its_questions_but_wrong_on_a_value_none_took_is_refused_by_ground_truth(clevr):
    """The build questions ask color, material and shape; a body with no 'size' branch answers every
    one of them right, and only ground truth, trying every attribute, sees what it gets wrong. The
    search refuses it before writing any program and shows the next round the failing case."""
    questions = Questions(clevr, {"17", "18", "19"})
    store = ApiStore.memory()
    llm = scripted(questions, [NO_SIZE, NO_SIZE, RIGHT])  # round 1: two samples; round 2 is shown the case
    report = shape_route(batch(store, llm, questions, search_rounds=2))

    assert report.admitted == [NAME] and "if attribute == 'size'" not in store.current(NAME).code, report
    shown = str(llm.calls_of(Role.API_IMPLEMENT)[2][-2]["content"])
    assert "on a ground-truth case: _count_same_attribute(image, 'size', 'objects', box of" in shown
    programs = [c for c in llm.calls_of(Role.PROGRAM)]
    assert all("if attribute == 'size'" not in str(c[0]["content"]) for c in programs)  # none written with it


def test_when_no_sample_passes_ground_truth_the_shape_helper_fails_with_the_case(clevr):
    questions = Questions(clevr, {"17", "18", "19"})
    store = ApiStore.memory()
    report = shape_route(batch(store, scripted(questions, [NO_SIZE, NO_SIZE.replace("return 0", "return -1")]),
                               questions))
    assert report.admitted == [] and "'size'" in report.failed[NAME], report
    assert store.current(NAME).status is FunctionStatus.FAILED


def test_a_shape_helper_s_search_draws_at_most_shape_search_samples(clevr):
    questions = Questions(clevr, {"17", "18", "19"})
    store = ApiStore.memory()
    llm = scripted(questions, [NO_SIZE] * 8)
    report = shape_route(batch(store, llm, questions, search_samples=8, shape_search_samples=3))
    assert report.admitted == [] and NAME in report.failed
    assert len(llm.calls_of(Role.API_IMPLEMENT)) == 3  # not the 8 a proposal's search may draw
    assert LibraryConfig().shape_search_samples == 4


def test_the_same_questions_admit_a_body_right_on_every_value(clevr):
    questions = Questions(clevr, {"17", "18", "19"})
    store = ApiStore.memory()
    report = shape_route(batch(store, scripted(questions, [RIGHT] * 2), questions))
    assert report.admitted == [NAME], report
    truth = [d for d in store.decisions(NAME) if d.decision == "admitted"][-1].evidence.get("truth_check")
    assert truth["passed"] is True and truth["claim"] == f"question shape {NAME}" and truth["cases"] >= 4


def test_a_batch_of_count_comparisons_waits_for_the_shape_route_instead_of_asking_for_count_steps(clevr):
    """A 100-question CLEVR build's Signature agent, asked for comparing counts, proposed four count
    helpers that no program called; `_compare_counts`, which answers the questions whole, came after."""
    from vadar.library.proposals import proposal_route
    questions = Questions(clevr, {"76", "77", "78"})  # "Are there more brown cylinders than purple cubes?", ...

    def asked(**settings) -> int:
        store = ApiStore.memory()
        signature = []
        llm = ScriptedLLM([ByRole({Role.SIGNATURE: lambda m: signature.append(m) or "# no new functions"})] * 5)
        built = batch(store, llm, questions, propose=True, distill=False, aim=False, **settings)
        proposal_route(built, store.start_batch(built.run_id, [q.question_id for q in questions], index=1))
        return len(signature)

    assert asked() == 0  # `_compare_counts` is still untried: its questions' comparisons wait for it
    assert asked(shape_helpers_per_batch=0) == 1  # no shape route to wait for: the step is asked for


def test_the_chain_helper_walks_on_the_relation_helpers_where_they_do_all_four():
    from vadar.library.shape_helpers import CHAIN_WALK, proposed_by_shape_route, shape_helper
    from vadar.library.shape_proposal import proposed_docstring
    along = shape_helper("_objects_along")
    store = ApiStore.memory()
    names = {"left": "_objects_left_of", "right": "_objects_right_of", "front": "_objects_in_front_of"}
    def admit(name):
        store.propose(name, "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]", "Related.")
        store.implement(name, f"def {name}(image, bbox, candidates):\n    return []\n")
        store.mark_admitted(name)
    for name in names.values():
        admit(name)
    three = proposed_docstring(along, store.library())
    assert CHAIN_WALK in three  # 'behind' done by no helper: the walk tests each relation itself
    admit("_objects_behind")
    four = proposed_docstring(along, store.library())
    assert CHAIN_WALK not in four and "'behind': _objects_behind}" in four
    assert "boxes = pick[word](image, found, loc(image, chain[i - 1]))" in four
    assert proposed_by_shape_route("_objects_along", four) and proposed_by_shape_route("_objects_along", three)


def test_a_helper_admitted_in_the_batch_leaves_the_next_one_the_questions_it_answers(clevr, monkeypatch):
    """Both are due for the chained attribute questions when the batch starts; once `_objects_along` is
    admitted, `_attribute_of_related` has none of them left and is not tried."""
    from vadar.library import shape_route as route

    tried = []

    def admitted(batch_, helper, questions, report):
        tried.append(helper.name)
        batch_.store.propose(helper.name, helper.signature, "Walks a chain.")
        batch_.store.implement(helper.name, f"def {helper.name}(image, chain):\n    return []\n")
        batch_.store.mark_admitted(helper.name)

    monkeypatch.setattr(route, "try_shape_helper", admitted)
    questions = Questions(clevr, {"2", "3", "4", "5", "8", "9", "10", "11"})
    assert [h.name for h, _ in due_helpers(batch(ApiStore.memory(), ScriptedLLM([]), questions))] == [
        "_objects_along", "_attribute_of_related"]
    route.shape_route(batch(ApiStore.memory(), ScriptedLLM([]), questions))
    assert tried == ["_objects_along"]
