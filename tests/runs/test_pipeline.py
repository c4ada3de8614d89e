"""End-to-end jobs on the built-in sample with a scripted LLM, the real sandbox and oracles."""

import dataclasses
import json

import pytest

from api_store import FunctionStatus
from vadar.config import VadarConfig
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
from vadar.runs.pipeline import build_api, evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session
from scripted_jobs import looking_program_of_its_kind

STUB = '''```python
def _count(image: Image, object_prompt: str) -> int:
    """Count the objects matching object_prompt."""
```'''
IMPLEMENTATION = "```python\ndef _count(image, object_prompt):\n    return len(loc(image, object_prompt))\n```"
PROGRAMS = {
    "How many cylinders are there?": "final_result = _count(image, 'cylinder')",
    "How many large things are there?": "final_result = len(loc(image, 'large things'))",
    "Are there any metal cubes?": "final_result = len(loc(image, 'metal cube')) > 0",
}


def question_program(messages):
    question = messages[-1]["content"].removeprefix("Question: ").split("\n")[0]
    return "```python\n" + PROGRAMS.get(question, "final_result = undefined_name") + "\n```"


def signatures(messages):
    return STUB if "def _count(" not in messages[0]["content"] else "# no new functions"


router = ByRole({Role.SIGNATURE: signatures, Role.API_IMPLEMENT: IMPLEMENTATION}, default=question_program)
# the distillation and group routes' requests: a reply they cannot use
NO_HELPER = dict.fromkeys([Role.GROUP_WRITE, Role.GROUP_FRAME, Role.GROUP_DOCSTRING, Role.DISTILL_NAME], "no code")


@pytest.fixture
def config(tmp_path):
    config = VadarConfig()
    config.library.distill = False  # these tests follow the top-down proposals alone
    config.library.admit_min_uses = 1  # their batches have one question that uses the helper
    config.library.validation = False  # these tests count the build's replies; the gate has its own tests
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s = 10
    config.sandbox.memory_mb = 512
    return config


def test_build_then_evaluate_then_resume(config, tmp_path):
    selection = DataSelection(limit=4).prepare()
    out = tmp_path / "run"
    llm = ScriptedLLM([router] * 200)
    with open_session(config, llm=llm) as session:
        reports = build_api(session, selection, out, batch_size=2)
        assert [r.proposed for r in reports] == [["_count"], []]
        assert reports[0].implemented == ["_count"]
        implemented = session.store.library()
        assert [f.name for f in implemented] == ["_count"]
        summary = evaluate(session, selection, out, show_progress=False, scope="all")
    assert summary.questions == 4
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by_question = {r["question"]: r for r in results}
    assert by_question["How many cylinders are there?"]["answer"] == 2
    assert by_question["How many cylinders are there?"]["correct"] is True
    assert by_question["Are there any metal cubes?"]["answer"] == "yes"
    failed = [r for r in results if r["error"]]
    # the same NameError twice in a row ends the question (agents.program_same_error_limit), and so
    # does the program written again without the library (library.fallback)
    assert all(r["answer"] == "<error>" and r["attempts"] == 6 for r in failed)
    assert all(r["techniques"]["fallback"]["worked"] is False for r in failed)
    assert summary.failed == [r["question_id"] for r in failed]
    assert summary.header["library_functions"] == 1 and summary.header["library_functions_used"] == 1
    assert (out / "summary.md").read_text().startswith("# Evaluation summary")
    calls_before = len(llm.calls)

    # rerunning both jobs asks the LLM nothing new and adds no rows
    with open_session(config, llm=llm) as session:
        reports = build_api(session, selection, out, batch_size=2)
        assert all(r.skipped for r in reports)
        again = evaluate(session, selection, out, show_progress=False, scope="all")
    assert len(llm.calls) == calls_before
    assert again.metrics.total == summary.metrics.total
    assert len((out / "results.jsonl").read_text().splitlines()) == 4


def test_static_api_baseline_hides_the_library(config, tmp_path):
    llm = ScriptedLLM([router] * 50)
    with open_session(config, llm=llm) as session:
        session.store.propose("_count", "(image: Image, object_prompt: str) -> int", "Count.")
        session.store.implement("_count", IMPLEMENTATION.strip("`").removeprefix("python\n"))
        evaluate(session, DataSelection(limit=1).prepare(), tmp_path / "static", method="static-api", show_progress=False)
    assert "_count" not in llm.calls[0][0]["content"]
    result = json.loads((tmp_path / "static" / "results.jsonl").read_text())
    assert result["method"] == "static-api" and "NameError" in result["error"]


@pytest.mark.parametrize(
    ("method", "reply"),
    [("tool-agent", "<answer>2</answer>"), ("direct", "<answer>2</answer>")],
)
def test_other_methods_share_the_result_format(config, tmp_path, method, reply):
    llm = ScriptedLLM([reply])
    with open_session(config, llm=llm) as session:
        summary = evaluate(session, DataSelection(limit=1).prepare(), tmp_path / method, method=method,
                           show_progress=False)
    result = json.loads((tmp_path / method / "results.jsonl").read_text())
    assert result["method"] == method and result["answer"] == "2" and result["correct"] is True
    assert summary.header["method"] == method and summary.metrics.total == 1.0
    if method == "direct":
        assert '"shape": "cylinder"' in llm.calls[0][0]["content"]  # the scene as text


def test_configured_limits_reach_the_agents(config, tmp_path):
    config.agents.tool_budget, config.agents.program_attempts = 2, 1
    llm = ScriptedLLM(["<execute>print(1)</execute>"] * 2 + ["```python\nfinal_result = undefined_name\n```"])
    data = DataSelection(limit=1).prepare()
    with open_session(config, llm=llm) as session:
        evaluate(session, data, tmp_path / "tool", method="tool-agent", show_progress=False)
        evaluate(session, data, tmp_path / "static", method="static-api", show_progress=False)
    tool = json.loads((tmp_path / "tool" / "results.jsonl").read_text())
    static = json.loads((tmp_path / "static" / "results.jsonl").read_text())
    assert "no <answer> within 2 replies" in tool["error"] and len(llm.calls) == 3  # 2 tool turns + 1 program try
    assert tool["step_errors"] == ["repeated an earlier step; its result was shown again"]
    assert "NameError" in static["error"]
    header = json.loads((tmp_path / "tool" / "summary.json").read_text())
    assert header["agent_limits"]["tool_budget"] == 2 and header["mean_llm_replies_per_question"] == 2


def test_direct_reads_annotations_only_with_oracle_perception(config):
    from vadar.runs.methods import make_answerer

    data = DataSelection(limit=1).prepare()
    real = dataclasses.replace(data, backends={**data.backends, "depth": "real"})
    llm = ScriptedLLM(["<answer>2</answer>"] * 2)
    with open_session(config, llm=llm) as session:
        for prepared in (data, real):
            answer, _ = make_answerer("direct", session, prepared)
            assert answer(data.questions[0]).answer == "2"
    oracle_prompt, real_prompt = llm.calls
    assert "Scene annotations" in oracle_prompt[0]["content"]
    assert "Scene annotations" not in real_prompt[0]["content"]
    assert real_prompt[1]["content"][1]["image_url"]["url"].startswith("data:image/")


def test_resuming_a_run_with_other_settings_is_refused(config, tmp_path):
    from vadar.runs.manifest import RunMismatchError

    data = DataSelection(limit=1).prepare()
    llm = ScriptedLLM(["<answer>2</answer>"])
    with open_session(config, llm=llm) as session:
        evaluate(session, data, tmp_path / "run", method="direct", show_progress=False)
        with pytest.raises(RunMismatchError, match="method=direct; this command asks for method=tool-agent"):
            evaluate(session, data, tmp_path / "run", method="tool-agent", show_progress=False)
        real = dataclasses.replace(data, backends={**data.backends, "depth": "real"})
        with pytest.raises(RunMismatchError, match="modules.depth=oracle"):
            evaluate(session, real, tmp_path / "run", method="direct", show_progress=False)
        evaluate(session, data, tmp_path / "run", method="direct", show_progress=False)  # same settings resume
    assert len(llm.calls) == 1


def test_unknown_method_is_refused(config, tmp_path):
    with open_session(config, llm=ScriptedLLM([])) as session, pytest.raises(ValueError, match="unknown method"):
        evaluate(session, DataSelection(limit=1).prepare(), tmp_path / "x", method="magic", show_progress=False)


class Crash(Exception):
    pass


def test_eval_resumes_after_a_crash_without_duplicates(config, tmp_path):
    data = DataSelection(limit=3).prepare()
    out = tmp_path / "run"
    program = looking_program_of_its_kind  # the third question asks for a shape
    with open_session(config, llm=ScriptedLLM([program, Crash("killed")])) as session:
        with pytest.raises(Crash):
            evaluate(session, data, out, show_progress=False)
    assert len((out / "results.jsonl").read_text().splitlines()) == 1  # the first answer survived
    second = ScriptedLLM([program, program])
    with open_session(config, llm=second) as session:
        summary = evaluate(session, data, out, show_progress=False)
    assert len(second.calls) == 2  # only the two unanswered questions were asked
    ids = [json.loads(line)["question_id"] for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(ids) == sorted(q.question_id for q in data.questions) and summary.questions == 3


def test_build_resumes_after_a_crash_and_finishes_leftover_proposals(config, tmp_path):
    data = DataSelection(limit=4).prepare()
    out = tmp_path / "run"
    with open_session(config, llm=ScriptedLLM([STUB, Crash("killed mid-batch")])) as session:
        with pytest.raises(Crash):
            build_api(session, data, out, batch_size=2)
        assert session.store.current("_count").status == FunctionStatus.PROPOSED
    llm = ScriptedLLM([router] * 20)
    with open_session(config, llm=llm) as session:
        reports = build_api(session, data, out, batch_size=2)
        assert reports[0].implemented == ["_count"]  # the leftover proposal was implemented
        assert [f.name for f in session.store.functions()] == ["_count"]  # no duplicate rows
        assert len(session.store.history("_count")) == 2  # proposed, then implemented
        again = build_api(session, data, out, batch_size=2)
    assert all(r.skipped for r in again)


def test_a_reworded_system_prompt_does_not_change_which_scripted_reply_is_chosen(config, tmp_path, monkeypatch):
    from vadar import prompts
    render = prompts.render

    def reworded(template, **variables):
        text = render(template, **variables)
        return "Reworded: " + text if template.endswith("_system") else text

    monkeypatch.setattr(prompts, "render", reworded)
    llm = ScriptedLLM([router] * 50)
    with open_session(config, llm=llm) as session:
        [report] = build_api(session, DataSelection(limit=2).prepare(), tmp_path / "run", batch_size=2)
    assert all(call[0]["content"].startswith("Reworded: You ") for call in llm.calls)  # every prompt reworded
    assert llm.roles[:2] == [Role.SIGNATURE, Role.API_IMPLEMENT]
    assert report.proposed == ["_count"] and report.implemented == ["_count"]  # the stub and its code were chosen


def test_a_build_program_that_does_not_parse_is_recorded_wrong_and_the_build_goes_on(config, tmp_path):
    config.library.distill, config.library.propose = True, False

    # a parenthesis short, every attempt
    unparsable = ByRole(NO_HELPER, default="```python\nfinal_result = len(loc(image, 'cylinder')\n```")

    selection = DataSelection(limit=4).prepare()
    with open_session(config, llm=ScriptedLLM([unparsable] * 200)) as session:
        reports = build_api(session, selection, tmp_path / "run", batch_size=2)
        programs = session.store.verified_programs()
    assert len(reports) == 2 and not any(r.distilled for r in reports)
    assert len(programs) == 4 and not any(p.correct or p.uses for p in programs)


def test_build_tries_resample_a_wrong_build_program_until_right_but_never_a_yes_no_one(config, tmp_path):
    config.library.distill, config.library.propose, config.library.build_tries = True, False, 3
    config.library.scene_checks = 0  # no other scene checks a yes/no answer: another try would be a guess
    programs = {  # per question, the program of each try in turn
        "How many cylinders are there?": ["final_result = 3", "final_result = len(loc(image, 'cylinder'))"],
        "How many things are left of the red sphere?": ["final_result = 1", "final_result = 2", "final_result = 4"],
        "What shape is the cyan object?": ["final_result = 'cube'"],
        "Are there any metal cubes?": ["final_result = 'no'", "final_result = 'yes'"],
    }
    asked: dict[str, list[dict]] = {}

    def program(messages):
        question = messages[1]["content"].removeprefix("Question: ").split("\n")[0]
        asked.setdefault(question, []).append(messages)
        return "```python\n" + programs[question][len(asked[question]) - 1] + "\n```"

    llm = ScriptedLLM([ByRole(NO_HELPER, default=program)] * 50)
    selection = DataSelection(limit=4).prepare()
    with open_session(config, llm=llm) as session:
        build_api(session, selection, tmp_path / "run", batch_size=4)
        stored = {p.question: p for p in session.store.verified_programs()}
    assert {q: len(m) for q, m in asked.items()} == {
        "How many cylinders are there?": 2, "How many things are left of the red sphere?": 3,
        "What shape is the cyan object?": 1, "Are there any metal cubes?": 1}
    assert stored["How many cylinders are there?"].correct
    assert stored["How many cylinders are there?"].code.strip() == "final_result = len(loc(image, 'cylinder'))"
    assert not stored["How many things are left of the red sphere?"].correct
    assert stored["How many things are left of the red sphere?"].code.strip() == "final_result = 1"  # the greedy one
    assert not stored["Are there any metal cubes?"].correct  # a yes/no answer is never tried again
    tries = [(r["temperature"], r.get("seed")) for r in llm.requests if len(r["messages"]) > 1
             and r["messages"][1]["content"].startswith("Question: How many things are left")]
    assert tries[0][1] is None and [seed for _, seed in tries[1:]] == [1, 2] and tries[1][0] == 0.7


@pytest.mark.parametrize(("build_attempts", "replies"), [(2, 2), (5, 4)])
def test_a_build_program_gets_at_most_build_program_attempts_replies(config, tmp_path, build_attempts, replies):
    config.library.distill, config.library.propose, config.library.build_tries = True, False, 1
    config.library.validation, config.library.build_program_attempts = False, build_attempts
    config.agents.program_attempts, config.agents.program_same_error_limit = 4, 4
    asked: list[int] = []

    def program(messages):  # a new undefined name each reply: never the same error twice
        asked.append(len(messages))
        return f"```python\nfinal_result = missing_{len(asked)}\n```"

    selection = DataSelection(limit=1).prepare()
    with open_session(config, llm=ScriptedLLM([ByRole(NO_HELPER, default=program)] * 20)) as session:
        build_api(session, selection, tmp_path / "run", batch_size=1)
        recorded = session.store.verified_programs()
    assert len(asked) == replies  # the build's cap; the evaluation's program_attempts stays 4
    assert config.agents.program_attempts == 4
    assert len(recorded) == 1 and not recorded[0].correct


def test_a_yes_no_build_question_other_scenes_check_is_tried_again_until_right_everywhere(config, tmp_path):
    config.library.distill, config.library.propose, config.library.build_tries = True, False, 3
    question = "Are there any rubber cylinders?"  # no here, yes on the two other scenes it applies to
    tries = ["final_result = 'yes'", "final_result = 'no'",
             "final_result = 'yes' if loc(image, 'rubber cylinder') else 'no'"]
    asked: list[str] = []

    def program(messages):
        asked_now = messages[1]["content"].removeprefix("Question: ").split("\n")[0]
        if asked_now != question:
            return "```python\nfinal_result = 0\n```"
        asked.append(asked_now)
        return "```python\n" + tries[len(asked) - 1] + "\n```"

    selection = DataSelection(limit=12).prepare()
    yes_no = next(q for q in selection.questions if q.question == question)
    from omni3d_bench.counterfactuals import on_other_scenes
    others = list(on_other_scenes(selection.dataset, yes_no, {q.image_id for q in selection.questions}))
    assert {o.answer for o in others} == {"yes"} and yes_no.answer == "no"
    with open_session(config, llm=ScriptedLLM([ByRole(NO_HELPER, default=program)] * 50)) as session:
        build_api(session, selection, tmp_path / "run", batch_size=12)
        stored = [p for p in session.store.verified_programs() if p.question == question]
    # 'yes' is wrong here, a constant 'no' right here and wrong on the other scenes, the third right on all
    assert len(asked) == 3
    assert [p.code.strip() for p in stored] == [tries[2]] and stored[0].correct
    assert stored[0].other_scenes.checked == len(others) and stored[0].other_scenes.holds
