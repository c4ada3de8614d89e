"""Search by outcome: a helper without a checkable claim, judged by its build questions' gold answers."""

from __future__ import annotations

import dataclasses

import pytest

from api_store import ApiStore
from vadar.agents.api import ApiAgent, TestContext
from vadar.agents.helper_search import SearchSettings
from vadar.agents.program import ProgramAgent
from vadar.config import AgentsConfig, LibraryConfig
from vadar.library.batch import BuildBatch
from vadar.library.implementation_log import StoreLog
from vadar.library.outcome_check import OutcomeVerifier
from vadar.library.proposals import api_agent
from vadar.library.story import helper_story
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
from vadar.programs.namespace import program_namespace
from vadar.runs.prepare import DataSelection
from vadar.sandbox import execute

NAME = "_answer_lookup"  # claims nothing ground truth can check
SIGNATURE = "(image: Image, key: str) -> str"
WRONG = {}


def executor(code, namespace):
    return execute(code, dict(namespace), timeout_s=20, memory_mb=1024)


@pytest.fixture(scope="module")
def data():
    return DataSelection(limit=12).prepare()


def writer(llm, **options) -> ProgramAgent:
    """The Program agent; the samples' one wrong word answers questions of every kind, so none is
    sent back for its kind (`agents.answer_kind_check`, tested in tests/programs)."""
    return ProgramAgent(llm, executor, check_answers=False, **options)


def implementation(table: dict[str, str]) -> str:
    """A sample whose answer to question `qN` is `table`'s (else a wrong word)."""
    return f"```python\ndef {NAME}(image, key):\n    return {table!r}.get(key, 'unknown')\n```"


def router(questions, samples, calls_helper=lambda question: True, without_right=False):
    """API samples in order; programs call the helper with their question's key when it is offered
    (and `calls_helper` says so), else answer a wrong word."""
    drawn = iter(samples)

    def program(messages):
        text = "\n".join(str(m["content"]) for m in messages)
        question = next(q for q in questions if q.question in text)
        if f"def {NAME}(" in messages[0]["content"] and calls_helper(question):
            return f"```python\nfinal_result = {NAME}(image, 'q{question.question_id}')\n```"
        return f"```python\nfinal_result = {str(question.answer) if without_right else 'unknown'!r}\n```"

    return ScriptedLLM([ByRole({Role.API_IMPLEMENT: lambda messages: next(drawn), Role.PROGRAM: program})] * 200)


def agent(llm, store, data, questions, *, samples, min_support=3):
    outcome = OutcomeVerifier(writer(llm), store, executor, data.dataset, data.modules, questions,
                              min_support=min_support)
    return ApiAgent(llm, store, executor, log=StoreLog(store), search=SearchSettings(samples=samples, rounds=1),
                    outcome=outcome)


def context(data, question):
    return TestContext(question.question, program_namespace(data.dataset.image(question), data.modules))


def gold(questions, *, only=None) -> dict[str, str]:
    return {f"q{q.question_id}": str(q.answer) for q in questions if only is None or q.question_id in only}


def test_the_sample_whose_programs_are_right_most_often_is_kept_over_wrong_ones(data):
    questions = data.questions[:3]
    first_two = {q.question_id for q in questions[:2]}
    samples = [implementation(WRONG), implementation(gold(questions, only=first_two)),
               implementation(gold(questions, only={questions[0].question_id}))]
    llm = router(questions, samples)
    store = ApiStore.memory()
    store.propose(NAME, SIGNATURE, "The answer recorded for a key.")
    report = agent(llm, store, data, questions, samples=3).implement([NAME], [context(data, questions[0])])

    assert report.implemented == [NAME]
    assert store.current(NAME).code.strip() == samples[1][10:-4].strip()
    assert len(llm.calls_of(Role.API_IMPLEMENT)) == 3  # every sample drawn: none was right on all three
    # one program per question with the helper, one without: later samples rerun the same programs
    assert len(llm.calls_of(Role.PROGRAM)) == 6
    searched = store.decisions(NAME)[-1]
    assert searched.decision == "searched" and searched.evidence["kept"] == 2
    assert searched.evidence["outcome"] == {"support": 3, "minimum": 3, "right_without": 0.0, "right": [0.0, 2.0, 1.0],
                                            "questions": [q.question_id for q in questions], "asked": 3, "weight": 3.0,
                                            "assumed": 0}
    story = helper_story(NAME, [dataclasses.asdict(d) for d in store.decisions(NAME)])
    assert "by outcome on 3 build questions: sample 2 of 3 kept" in story.text()
    assert "right 2 of 3 times (0 without it" in story.text()


def test_a_later_round_shows_the_closest_sample_the_questions_its_programs_got_wrong(data):
    questions = data.questions[:3]
    closest = implementation(gold(questions, only={questions[0].question_id}))
    samples = [closest, implementation(WRONG), implementation(gold(questions))]
    llm = router(questions, samples)
    store = ApiStore.memory()
    store.propose(NAME, SIGNATURE, "The answer recorded for a key.")
    outcome = OutcomeVerifier(writer(llm), store, executor, data.dataset, data.modules, questions,
                              min_support=3)
    report = ApiAgent(llm, store, executor, log=StoreLog(store), search=SearchSettings(samples=2, rounds=2),
                      outcome=outcome).implement([NAME], [context(data, questions[0])])

    assert report.searches[NAME].passed == [3] and report.searches[NAME].rounds == 2
    shown = llm.calls_of(Role.API_IMPLEMENT)[2]
    assert "'unknown'" in shown[-3]["content"] and f"'q{questions[0].question_id}'" in shown[-3]["content"]
    assert f"the right answer is {questions[1].answer!r}" in shown[-2]["content"]
    assert questions[2].question in shown[-2]["content"]


def test_a_helper_whose_samples_are_all_worse_than_programs_without_it_fails(data):
    questions = data.questions[:3]
    llm = router(questions, [implementation(WRONG), implementation(gold(questions, only={questions[0].question_id}))],
                 without_right=True)
    store = ApiStore.memory()
    store.propose(NAME, SIGNATURE, "The answer recorded for a key.")
    report = agent(llm, store, data, questions, samples=2).implement([NAME], [context(data, questions[0])])
    assert NAME in report.failed and "right as often as programs without it" in report.failed[NAME]
    assert store.decisions(NAME)[-1].evidence["outcome"]["right"] == [0.0, 1.0]


def test_below_the_minimum_support_the_greedy_implementation_is_kept_without_a_search(data):
    questions = data.questions[:3]
    llm = router(questions, [implementation(WRONG), implementation(gold(questions))],
                 calls_helper=lambda question: question.question_id != questions[2].question_id)
    store = ApiStore.memory()
    store.propose(NAME, SIGNATURE, "The answer recorded for a key.")
    report = agent(llm, store, data, questions, samples=4).implement([NAME], [context(data, questions[0])])

    assert report.implemented == [NAME] and store.current(NAME).code.strip() == implementation(WRONG)[10:-4].strip()
    assert len(llm.calls_of(Role.API_IMPLEMENT)) == 1  # greedy only
    assert len(llm.calls_of(Role.PROGRAM)) == 3  # the programs that found the support; none written without it
    outcome = store.decisions(NAME)[-1].evidence["outcome"]
    assert outcome["support"] == 2 and outcome["minimum"] == 3
    story = helper_story(NAME, [dataclasses.asdict(d) for d in store.decisions(NAME)])
    assert "fewer than the 3 a search needs" in story.text()


def test_a_batch_with_fewer_labelled_questions_than_the_minimum_writes_no_program(data):
    questions = data.questions[:2]
    llm = router(questions, [implementation(WRONG)])
    store = ApiStore.memory()
    store.propose(NAME, SIGNATURE, "The answer recorded for a key.")
    report = agent(llm, store, data, questions, samples=4).implement([NAME], [context(data, questions[0])])
    assert report.implemented == [NAME] and report.searches == {}
    assert llm.calls_of(Role.PROGRAM) == [] and len(llm.calls_of(Role.API_IMPLEMENT)) == 1


def test_only_the_batch_questions_judge_a_sample_never_a_scored_one(data):
    built, scored = data.questions[:3], data.questions[3:]
    llm = router(data.questions, [implementation(WRONG), implementation(gold(data.questions))])
    store = ApiStore.memory()
    store.propose(NAME, SIGNATURE, "The answer recorded for a key.")
    settings = LibraryConfig(search_samples=2, search_rounds=1)
    run = store.start_run("build")
    record = store.start_batch(run.id, [q.question_id for q in built])
    batch = BuildBatch(store, llm, executor, data.dataset, data.modules, tuple(built), tuple(built), tuple(built),
                       index=0, run_id=run.id, batch_id=record.id, model=None, settings=settings, limits=AgentsConfig(),
                       writer=lambda sampling: writer(llm, sampling=sampling))
    report = api_agent(batch, batch.questions).implement([NAME], [context(data, built[0])])

    assert report.searches[NAME].passed == [2]
    asked = ["\n".join(str(m["content"]) for m in call) for call in llm.calls_of(Role.PROGRAM)]
    assert asked and all(any(q.question in text for q in built) for text in asked)
    assert not any(q.question in text for text in asked for q in scored)
    assert store.decisions(NAME)[-1].evidence["outcome"]["questions"] == [q.question_id for q in built]


def test_a_sample_that_never_reads_a_parameter_runs_no_program_and_is_never_kept(data):
    questions = data.questions[:3]
    ignores_key = f"```python\ndef {NAME}(image, key):\n    return 'unknown'\n```"
    llm = router(questions, [ignores_key, ignores_key])
    store = ApiStore.memory()
    store.propose(NAME, SIGNATURE, "The answer recorded for a key.")
    report = agent(llm, store, data, questions, samples=2).implement([NAME], [context(data, questions[0])])

    assert NAME in report.failed and report.implemented == []  # kept before: as right as without it (0 of 3)
    assert llm.calls_of(Role.PROGRAM) == []  # the gate would refuse it whatever its programs answer


def test_programs_are_written_only_for_the_questions_needing_a_step_the_name_covers(data):
    counter, signature = "_count_things", "(image: Image, key: str) -> int"
    counting = {"0", "1", "6", "7"}  # "How many ...": the other questions need no count
    questions = data.questions[:8]

    def program(messages):
        text = "\n".join(str(m["content"]) for m in messages)
        question = next(q for q in questions if q.question in text)
        return f"```python\nfinal_result = {counter}(image, 'q{question.question_id}')\n```"

    sample = f"```python\ndef {counter}(image, key):\n    return {gold(questions)!r}.get(key, 0)\n```"
    llm = ScriptedLLM([ByRole({Role.API_IMPLEMENT: lambda messages: sample, Role.PROGRAM: program})] * 50)
    store = ApiStore.memory()
    store.propose(counter, signature, "How many things answer to a key.")
    outcome = OutcomeVerifier(writer(llm), store, executor, data.dataset, data.modules, questions,
                              min_support=3)
    agent = ApiAgent(llm, store, executor, log=StoreLog(store), search=SearchSettings(samples=2, rounds=1),
                     outcome=outcome)
    agent.implement([counter], [context(data, questions[0])])

    asked = {next(q.question_id for q in questions if q.question in "\n".join(str(m["content"]) for m in call))
             for call in llm.calls_of(Role.PROGRAM)}
    assert asked == counting
    assert store.decisions(counter)[-1].evidence["outcome"]["questions"] == sorted(counting, key=int)


def test_programs_stop_once_the_questions_left_cannot_reach_the_minimum_support(data):
    questions = data.questions[:6]
    llm = router(questions, [implementation(WRONG)], calls_helper=lambda question: False)
    store = ApiStore.memory()
    store.propose(NAME, SIGNATURE, "The answer recorded for a key.")
    agent(llm, store, data, questions, samples=4).implement([NAME], [context(data, questions[0])])

    # after 3 programs none of which called it, the questions left weigh 2 (a yes/no one counts half)
    assert [q.answer for q in questions[3:]] == ["yes", "cyan", "no"]
    assert len(llm.calls_of(Role.PROGRAM)) == 3
    outcome = store.decisions(NAME)[-1].evidence["outcome"]
    assert outcome["support"] == 0 and outcome["asked"] == 3


def test_yes_no_questions_weigh_half_so_four_of_them_start_no_search(data):
    questions = [q for q in data.questions if str(q.answer) in ("yes", "no")]
    assert len(questions) == 4
    llm = router(questions, [implementation(WRONG), implementation(gold(questions))])
    store = ApiStore.memory()
    store.propose(NAME, SIGNATURE, "The answer recorded for a key.")
    report = agent(llm, store, data, questions, samples=4).implement([NAME], [context(data, questions[0])])
    # weighing 2, they can never reach 3 (the gate's rule too): no program written, the greedy sample kept
    assert report.implemented == [NAME] and llm.calls_of(Role.PROGRAM) == []
    assert len(llm.calls_of(Role.API_IMPLEMENT)) == 1


def test_a_helper_for_a_step_no_batch_question_needs_writes_no_program(data):
    counter = "_count_things"
    questions = [q for q in data.questions[:8] if q.question_id not in {"0", "1", "6", "7"}]  # none asks a count
    sample = f"```python\ndef {counter}(image, key):\n    return len(loc(image, key))\n```"
    llm = ScriptedLLM([ByRole({Role.API_IMPLEMENT: lambda messages: sample,
                               Role.PROGRAM: lambda messages: f"```python\nfinal_result = {counter}(image, 'x')\n```"})] * 20)
    store = ApiStore.memory()
    store.propose(counter, "(image: Image, key: str) -> int", "How many things answer to a key.")
    outcome = OutcomeVerifier(writer(llm), store, executor, data.dataset, data.modules, questions,
                              min_support=3)
    report = ApiAgent(llm, store, executor, log=StoreLog(store), search=SearchSettings(samples=2, rounds=1),
                      outcome=outcome).implement([counter], [context(data, questions[0])])
    assert report.implemented == [counter] and llm.calls_of(Role.PROGRAM) == []
    assert len(llm.calls_of(Role.API_IMPLEMENT)) == 1  # the greedy sample, for the gate to judge


def test_a_program_right_on_its_scene_but_wrong_on_another_build_scene_earns_nothing(data):
    from vadar.library.scene_check import SceneChecker, build_scenes

    # three questions whose answer differs on another scene of the sample: a lookup of the gold
    # answers is right on each question's own scene and wrong on the other one
    questions = [q for q in data.questions if q.question in (
        "What shape is the cyan object?", "How many large things are there?", "Are there any rubber cylinders?")]
    lookup = implementation(gold(questions))
    scenes = SceneChecker(executor, data.dataset, data.modules, build_scenes(data.questions))

    def judged(checker):
        store = ApiStore.memory()
        store.propose(NAME, SIGNATURE, "The answer recorded for a key.")
        outcome = OutcomeVerifier(writer(router(questions, [lookup])), store, executor, data.dataset,
                                  data.modules, questions, min_support=2, scenes=checker)  # the yes/no one weighs half
        return outcome.verify(NAME, SIGNATURE, "The answer recorded for a key.", lookup[10:-4], [])

    assert judged(None).passed is True and judged(None).right == 3.0  # judged on their own scenes alone
    checked = judged(scenes)
    assert checked.passed is False and checked.right == 0.0 and len(checked.failures) == 3
    assert all("right here, but on another scene, where the answer is" in f for f in checked.failures)
