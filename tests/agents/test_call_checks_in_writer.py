"""Programs whose calls do not fit the API are sent back before the sandbox runs them."""

from __future__ import annotations

from dataclasses import dataclass

from vadar.agents.program import ProgramAgent
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.answers import ERROR_ANSWER
from vadar.programs.api_text import render_api
from vadar.sandbox import execute

CUBE, SPHERE = [10.0, 10.0, 20.0, 20.0], [50.0, 10.0, 60.0, 20.0]


@dataclass(frozen=True)
class Helper:
    name: str
    signature: str
    docstring: str


API = render_api([
    Helper("_is_left_of", "(image: Image, bbox: BBox, reference: BBox) -> bool", "Whether bbox is left of reference."),
    Helper("_objects_left_of", "(image: Image, reference: BBox) -> list[BBox]", "Every object left of reference."),
    Helper("_objects_behind", "(image: Image, reference: BBox) -> list[BBox]", "Every object behind reference."),
])


def loc(image, prompt):
    return {"cube": [CUBE], "sphere": [SPHERE], "objects": [CUBE, SPHERE]}.get(prompt, [])


def objects_left_of(image, reference):
    if not (isinstance(reference, list) and len(reference) == 4):
        raise TypeError("reference must be a box")
    return [b for b in (CUBE, SPHERE) if b[2] <= reference[0]]


NAMESPACE = {"image": "img", "loc": loc, "depth": lambda image, box: 1.0,
             "_is_left_of": lambda image, bbox, reference: bbox[2] <= reference[0],
             "_objects_left_of": objects_left_of, "_objects_behind": lambda image, reference: []}


class CountingSandbox:
    """The sandbox, counting the programs it runs."""

    def __init__(self) -> None:
        self.programs: list[str] = []

    def __call__(self, code, namespace):
        self.programs.append(code)
        return execute(code, dict(namespace), timeout_s=10, memory_mb=512)


def block(code: str) -> str:
    return f"```python\n{code}```"


BOOL_AS_BOX = block("cube = loc(image, 'cube')[0]\nsphere = loc(image, 'sphere')[0]\n"
                    "x = _is_left_of(image, cube, sphere)\nfinal_result = len(_objects_left_of(image, x))\n")
REPAIRED = block("sphere = loc(image, 'sphere')[0]\nfinal_result = len(_objects_left_of(image, sphere))\n")


def solve(replies, question="How many objects are left of the sphere?"):
    llm, sandbox = ScriptedLLM(replies), CountingSandbox()
    outcome = ProgramAgent(llm, sandbox).solve(question, API, NAMESPACE)
    return outcome, llm, sandbox


def test_a_bool_passed_as_a_box_is_caught_before_it_runs_and_the_repair_runs():
    outcome, llm, sandbox = solve([BOOL_AS_BOX, REPAIRED])
    assert outcome.answer == 1 and outcome.error is None
    assert outcome.attempts == 2 and outcome.checks_refused == 1
    assert len(sandbox.programs) == 1  # only the repaired program ran: one sandbox run saved
    feedback = llm.calls[1][-1]["content"]
    assert feedback.startswith("The program was not run: its calls do not fit the API.")
    assert ("`_objects_left_of(reference=...)` gets a bool from `_is_left_of` at line 3; `reference` needs "
            "one box [x_min, y_min, x_max, y_max]") in feedback
    assert outcome.errors == [outcome.errors[0]] and "_objects_left_of(reference=...)" in outcome.errors[0]


def test_the_same_program_run_unchecked_costs_a_sandbox_run_to_find_the_mistake():
    llm, sandbox = ScriptedLLM([BOOL_AS_BOX, REPAIRED]), CountingSandbox()
    agent = ProgramAgent(llm, sandbox)
    agent.writer.call_checks = ()
    outcome = agent.solve("How many objects are left of the sphere?", API, NAMESPACE)
    assert outcome.answer == 1 and len(sandbox.programs) == 2 and outcome.checks_refused == 0
    assert "reference must be a box" in outcome.errors[0]


def test_an_unknown_helper_is_answered_with_the_nearest_name():
    outcome, llm, sandbox = solve([
        block("sphere = loc(image, 'sphere')[0]\nfinal_result = len(_objects_behind_of(image, sphere))\n"),
        block("sphere = loc(image, 'sphere')[0]\nfinal_result = len(_objects_behind(image, sphere))\n"),
    ], "How many objects are behind the sphere?")
    assert outcome.answer == 0 and len(sandbox.programs) == 1
    assert ("`_objects_behind_of` does not exist (it is not in the API and the program does not define it); "
            "the nearest existing name") in llm.calls[1][-1]["content"]
    assert "`_objects_behind(image: Image, reference: BBox) -> list[BBox]`" in llm.calls[1][-1]["content"]


def test_a_relational_phrase_to_loc_is_caught():
    outcome, llm, sandbox = solve([
        block("final_result = len(loc(image, 'cube left of the sphere'))\n"),
        block("sphere = loc(image, 'sphere')[0]\nfinal_result = len(_objects_left_of(image, sphere))\n"),
    ], "How many cubes are left of the sphere?")
    assert outcome.answer == 1 and len(sandbox.programs) == 1
    assert "asks loc for a relation ('left of')" in llm.calls[1][-1]["content"]


def test_a_correct_program_runs_at_once():
    outcome, llm, sandbox = solve([REPAIRED])
    assert outcome.answer == 1 and outcome.attempts == 1 and outcome.checks_refused == 0
    assert len(sandbox.programs) == 1


def test_a_refused_program_counts_as_an_attempt_and_the_last_refusal_is_the_error():
    outcome, llm, sandbox = solve([BOOL_AS_BOX] * 5)
    assert outcome.answer == ERROR_ANSWER and outcome.attempts == 5 and outcome.checks_refused == 5
    assert sandbox.programs == [] and "_objects_left_of(reference=...)" in outcome.error


def test_a_chain_list_that_drops_a_relation_of_the_question_is_sent_back_unrun():
    """The writer checks calls against the question it writes for: the chain helper's list first
    drops the outermost relation, then, told the question's list, walks both."""
    along = render_api([Helper("_objects_along", "(image: Image, chain: list[str]) -> list[BBox]", "A chain's objects.")])
    namespace = {"image": "img", "_objects_along": lambda image, chain: [CUBE] * (len(chain) // 2)}
    question = "How many things are left of the cube behind the sphere?"
    dropped = block('final_result = len(_objects_along(image, ["cube", "behind", "sphere"]))\n')
    whole = block('final_result = len(_objects_along(image, ["things", "left", "cube", "behind", "sphere"]))\n')
    llm, sandbox = ScriptedLLM([dropped, whole]), CountingSandbox()
    outcome = ProgramAgent(llm, sandbox).solve(question, along, namespace)
    assert outcome.answer == 2 and outcome.checks_refused == 1 and len(sandbox.programs) == 1
    feedback = llm.calls[1][-1]["content"]
    assert "it walks 'behind', but the question's chain walks 'left', 'behind'" in feedback
    assert "['things', 'left', 'cube', 'behind', 'sphere']" in feedback


def test_an_answer_of_another_kind_than_the_question_asks_is_sent_back_after_it_ran():
    size = block("cube = loc(image, 'cube')[0]\nfinal_result = [cube[2] - cube[0], cube[3] - cube[1]]\n")
    fixed = block("cube = loc(image, 'cube')[0]\nfinal_result = 'small'\n")
    llm, sandbox = ScriptedLLM([size, fixed]), CountingSandbox()
    outcome = ProgramAgent(llm, sandbox).solve("What size is the cube?", API, NAMESPACE)
    assert outcome.answer == "small" and outcome.error is None and outcome.answers_refused == 1
    assert len(sandbox.programs) == 2  # the first ran: only its answer shows the mistake
    feedback = llm.calls[1][-1]["content"]
    assert feedback.startswith("The program ran, but its answer cannot answer this question:")
    assert "the program answered [10.0, 10.0], which is no size" in feedback


def test_an_answer_of_another_kind_every_time_stands_once_the_repairs_are_spent():
    """When no repair answers in kind, the last program that ran stands, as it would have without
    the check: a question is never left without an answer by it."""
    size = block("cube = loc(image, 'cube')[0]\nfinal_result = [cube[2] - cube[0], cube[3] - cube[1]]\n")
    outcome, llm, _ = solve([size] * 5, question="What size is the cube?")
    assert outcome.answer == [10.0, 10.0] and outcome.error is None and outcome.answers_refused == 5
    assert len(llm.calls) == 5 and "which is no size" in outcome.errors[-1]
    broken = block("final_result = undefined_name\n")
    outcome, _, _ = solve([size] + [broken] * 4, question="What size is the cube?")
    assert outcome.answer == [10.0, 10.0] and outcome.error is None and outcome.answers_refused == 1
    assert outcome.program.startswith("cube = loc(image, 'cube')[0]") and "undefined_name" in outcome.errors[-1]
