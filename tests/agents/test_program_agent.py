import pytest

from vadar.programs.outcome import InfrastructureFailure
from vadar.agents.program import ProgramAgent
from vadar.programs.answers import ERROR_ANSWER
from vadar.programs.api_text import render_api
from vadar.llm.doubles import ScriptedLLM
from vadar.sandbox import ExecutionResult, execute

NAMESPACE = {"image": "img", "loc": lambda image, prompt: [[0.0, 0.0, 5.0, 5.0]] * 3}


def run(code, namespace):
    return execute(code, dict(namespace), timeout_s=10, memory_mb=512)


def test_stable_prefix_first_question_last():
    llm = ScriptedLLM(["```python\nfinal_result = len(loc(image, 'cube'))\n```"])
    outcome = ProgramAgent(llm, run).solve("How many cubes?", render_api(), NAMESPACE)
    assert outcome.answer == 3 and outcome.error is None and outcome.attempts == 1
    system, user = llm.calls[0]
    assert system["role"] == "system" and "def loc(image: Image" in system["content"]
    assert "Example program:" in system["content"]
    assert "How many cubes?" not in system["content"]  # the cacheable prefix is question-free
    assert user["content"].startswith("Question: How many cubes?")
    assert outcome.calls[0].name == "loc"


def test_same_prefix_for_different_questions():
    llm = ScriptedLLM(["final_result = 1", "final_result = 2"])
    agent = ProgramAgent(llm, run)
    agent.solve("q one", render_api(), NAMESPACE)
    agent.solve("q two", render_api(), NAMESPACE)
    assert llm.calls[0][0] == llm.calls[1][0]


def test_error_is_fed_back_with_line_then_fixed_and_bool_normalised():
    llm = ScriptedLLM([
        "```python\nboxes = loc(image, 'cube')\nfinal_result = boxes[10]\n```",
        "```python\nfinal_result = len(loc(image, 'cube')) > 2\n```",
    ])
    outcome = ProgramAgent(llm, run).solve("Are there more than two cubes?", render_api(), NAMESPACE)
    assert outcome.answer == "yes" and outcome.attempts == 2
    feedback = llm.calls[1][-1]["content"]
    assert "IndexError" in feedback and "line 2" in feedback
    assert llm.calls[1][-2]["role"] == "assistant"


def test_missing_final_result_and_exhaustion_give_the_error_marker():
    llm = ScriptedLLM(["x = 1"] * 5)
    outcome = ProgramAgent(llm, run, max_attempts=5).solve("q", render_api(), NAMESPACE)
    assert outcome.answer == ERROR_ANSWER and outcome.attempts == 5
    assert "final_result" in outcome.error
    assert len(outcome.errors) == 5


def test_infrastructure_failure_is_not_blamed_on_the_program():
    def broken(code, namespace):
        return ExecutionResult(infrastructure_error="worker could not start")

    with pytest.raises(InfrastructureFailure, match="worker could not start"):
        ProgramAgent(ScriptedLLM(["final_result = 1"]), broken).solve("q", render_api(), NAMESPACE)


def test_cut_off_reply_is_not_run_and_retries_sample_warmer():
    from vadar.llm.chat import ChatResponse

    looping = ChatResponse(text="```python\nx = loc(image, 'a')\nx = loc(image, 'a')\nx = lo", finish_reason="length")
    llm = ScriptedLLM([looping, "final_result = 1"])
    outcome = ProgramAgent(llm, run).solve("q", render_api(), NAMESPACE)
    assert outcome.answer == 1 and outcome.attempts == 2
    assert "cut off at 400 tokens" in llm.calls[1][-1]["content"]
    assert outcome.calls == []  # the cut-off program never ran
    assert [r["temperature"] for r in llm.requests] == [None, 0.3]
    assert {r["max_tokens"] for r in llm.requests} == {400}


def test_an_index_error_after_an_empty_loc_names_the_phrase_that_found_nothing():
    def loc(image, prompt):
        return [[0.0, 0.0, 5.0, 5.0]] if prompt == "cylinder" else []

    llm = ScriptedLLM([
        "```python\ncylinder = loc(image, 'small matte cylinder')[0]\nfinal_result = 1\n```",
        "```python\ncylinder = loc(image, 'cylinder')[0]\nfinal_result = 1\n```",
    ])
    outcome = ProgramAgent(llm, run).solve("Is there a small cylinder?", render_api(), {"image": "img", "loc": loc})
    assert outcome.answer == 1 and outcome.attempts == 2
    feedback = llm.calls[1][-1]["content"]
    assert "IndexError" in feedback
    assert "Hint: loc(image, 'small matte cylinder') returned an empty list" in feedback
    # the failing line is a lookup of the first box: the test is spelled out with its own names
    assert "`cylinder_boxes = loc(image, 'small matte cylinder')`" in feedback
    assert "`if cylinder_boxes:` take `cylinder = cylinder_boxes[0]`" in feedback


def test_an_index_error_without_an_empty_call_gets_no_hint():
    llm = ScriptedLLM(["```python\nfinal_result = loc(image, 'cube')[5]\n```", "final_result = 1"])
    ProgramAgent(llm, run).solve("How many cubes are there?", render_api(), NAMESPACE)
    assert "IndexError" in llm.calls[1][-1]["content"] and "Hint" not in llm.calls[1][-1]["content"]


def test_an_empty_list_indexed_elsewhere_than_a_lookup_gets_the_plain_hint():
    llm = ScriptedLLM(["```python\nboxes = loc(image, 'small cube')\nfinal_result = depth(image, boxes[0])\n```",
                       "final_result = 1"])
    ProgramAgent(llm, run).solve("How deep is the small cube?", render_api(),
                                 {"image": "img", "loc": lambda image, prompt: [],
                                  "depth": lambda image, box: 1.0})
    feedback = llm.calls[1][-1]["content"]
    assert "returned an empty list" in feedback and "keep the list" not in feedback


def test_the_same_error_twice_in_a_row_gives_the_question_up():
    same = ["```python\nx = 1\nfinal_result = sphere\n```", "```python\nfinal_result = sphere\n```"]
    llm = ScriptedLLM([*same, "final_result = 1"])
    outcome = ProgramAgent(llm, run, same_error_limit=2).solve("q", render_api(), NAMESPACE)
    assert outcome.answer == ERROR_ANSWER and outcome.attempts == 2  # line 2, then line 1: one mistake
    assert "NameError" in outcome.error and len(outcome.errors) == 2


def test_different_errors_keep_retrying_and_no_limit_uses_every_attempt():
    varied = ["final_result = a", "final_result = b", "final_result = 1"]
    assert ProgramAgent(ScriptedLLM(varied), run, same_error_limit=2).solve("q", render_api(), NAMESPACE).answer == 1
    repeated = ["final_result = a", "final_result = a", "final_result = 1"]
    outcome = ProgramAgent(ScriptedLLM(repeated), run).solve("q", render_api(), NAMESPACE)
    assert outcome.answer == 1 and outcome.attempts == 3


def test_a_variable_borrowed_from_the_example_program_is_called_out():
    llm = ScriptedLLM(["```python\nfinal_result = loc(image, sphere)\n```", "final_result = 1"])
    ProgramAgent(llm, run).solve("How far is the ball?", render_api(), NAMESPACE)
    feedback = llm.calls[1][-1]["content"]
    assert "`sphere` is a variable of the example program, not of this one" in feedback
    llm = ScriptedLLM(["```python\nfinal_result = loc(image, ball)\n```", "final_result = 1"])
    ProgramAgent(llm, run).solve("How far is the ball?", render_api(), NAMESPACE)
    assert "example program" not in llm.calls[1][-1]["content"]
