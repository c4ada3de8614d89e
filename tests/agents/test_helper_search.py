"""Generate-and-test: sampled implementations of a checkable helper until one passes ground truth."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from api_store import ApiStore, FunctionStatus
from vadar.library.implementation_log import StoreLog
from vadar.agents.api import ApiAgent, TestContext
from vadar.agents.helper_search import Sample, SearchRule, SearchSettings, search
from vadar.library.truth_checks import TruthChecks, TruthVerifier
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.namespace import program_namespace
from vadar.runs.prepare import DataSelection
from vadar.sandbox import execute

from left_of_helpers import RIGHT, WRONG

SIGNATURE = "(image: Image, reference: BBox) -> list[BBox]"
ALSO_WRONG = WRONG.replace("< d]", "> d]")


@dataclass
class Verdict:
    passed: bool | None
    cases: int = 4
    failures: list[str] = field(default_factory=list)


def test_the_first_sample_that_passes_is_kept_and_the_search_recorded():
    verdicts = {"a": Verdict(False, failures=["x", "y"]), "b": Verdict(False, failures=["x"]), "c": Verdict(True)}
    drawn = []

    def sampler(index, failures, closest):
        drawn.append((index, list(failures), closest))
        return Sample("abc"[index] if index < 3 else None)

    found = search(sampler, lambda s: verdicts[s.code], SearchSettings(samples=8, rounds=2), "relation:left")
    assert found.sample.code == "c" and [d[0] for d in drawn] == [0, 1, 2]  # stops at the first pass
    assert found.record.samples == 3 and found.record.passed == [3] and found.record.rounds == 1
    assert found.record.pass_rate == pytest.approx(1 / 3) and found.record.cases == 4


def test_a_later_round_shows_the_closest_sample_its_failing_cases():
    drawn = []

    def sampler(index, failures, closest):
        drawn.append((list(failures), closest))
        return Sample("right" if index == 2 else ("close" if index == 0 else "far"))

    checks = {"close": Verdict(False, failures=["one case"]), "far": Verdict(False, failures=["a", "b"]),
              "right": Verdict(True)}
    found = search(sampler, lambda s: checks[s.code], SearchSettings(samples=2, rounds=3), "measure:height")
    assert drawn[:2] == [([], None), ([], None)]
    assert drawn[2] == (["one case"], "close")  # round 2 starts from the closest, with its failures
    assert found.sample.code == "right" and found.record.rounds == 2 and found.record.passed == [3]


def test_no_passing_sample_keeps_nothing_and_names_the_closest():
    found = search(lambda i, f, c: Sample("same"), lambda s: Verdict(False, failures=["off"]),
                   SearchSettings(samples=3, rounds=2), "relation:left")
    assert found.sample is None and found.closest.code == "same"
    assert found.record.samples == 6 and found.record.working == 6 and found.record.passed == []
    assert found.record.closest_failures == ["off"]


def test_a_round_ends_once_samples_keep_repeating_a_text_already_judged():
    drawn, judged = [], []

    def sampler(index, failures, closest):
        drawn.append(index)
        return Sample("copied" if not failures or index % 2 else f"new {index}")

    def check(sample):
        judged.append(sample.code)
        return Verdict(False, failures=["off"])

    found = search(sampler, check, SearchSettings(samples=8, rounds=2), "relation:behind")
    # round 1: one new text, then three repeats end it; in round 2 every other draw is new: all 8 drawn
    assert drawn == [0, 1, 2, 3, *range(8, 16)] and judged == ["copied", "new 8", "new 10", "new 12", "new 14"]
    assert found.record.samples == 12 and found.record.rounds == 2


def test_a_sample_without_cases_is_kept_as_the_single_implementation_would_be():
    found = search(lambda i, f, c: Sample(None if i == 0 else "works"), lambda s: Verdict(None, cases=0),
                   SearchSettings(samples=4), "relation:left")
    assert found.sample.code == "works" and found.record.samples == 2 and found.record.passed == []


@dataclass
class Scored(Verdict):
    right: float = 0.0
    enough: bool = True


def test_a_rule_that_keeps_the_best_keeps_the_highest_score_and_the_earlier_of_a_tie():
    scores = {"a": Scored(False, failures=["x", "y"], right=1), "b": Scored(False, failures=["x"], right=2),
              "c": Scored(False, failures=["z"], right=2)}
    rule = SearchRule(closeness=lambda r: r.right, keep_best=lambda r: r.enough)
    found = search(lambda i, f, c: Sample("abc"[i % 3]), lambda s: scores[s.code], SearchSettings(samples=3, rounds=1),
                   "outcome", rule=rule)
    assert found.sample.code == "b" and found.record.kept == 2 and found.record.passed == []


def test_a_rule_that_keeps_the_best_keeps_nothing_it_refuses():
    rule = SearchRule(closeness=lambda r: r.right, keep_best=lambda r: r.enough)
    found = search(lambda i, f, c: Sample(f"s{i}"), lambda s: Scored(False, failures=["x"], right=1, enough=False),
                   SearchSettings(samples=2, rounds=2), "outcome", rule=rule)
    assert found.sample is None and found.closest.code == "s0" and found.record.kept is None


# ----------------------------------------------------------------- the API agent with ground truth


@pytest.fixture
def sample_data():
    return DataSelection(limit=2).prepare()


def agent_for(llm, store, data, samples, rounds=2):
    verifier = TruthVerifier(TruthChecks(executor), store, data.dataset, data.modules, data.questions)
    return ApiAgent(llm, store, log=StoreLog(store), executor=executor, search=SearchSettings(samples=samples, rounds=rounds), verifier=verifier)


def executor(code, namespace):
    return execute(code, dict(namespace), timeout_s=20, memory_mb=1024)


def context(data):
    question = data.questions[0]
    return TestContext(question.question, program_namespace(data.dataset.image(question), data.modules))


def code(text):
    return f"```python\n{text}```"


def test_the_api_agent_keeps_the_first_sampled_implementation_that_ground_truth_confirms(sample_data):
    store = ApiStore.memory()
    store.propose("_objects_left_of", SIGNATURE, "Objects left of the reference object.")
    llm = ScriptedLLM([code(WRONG), code(ALSO_WRONG), code(RIGHT)])
    agent = agent_for(llm, store, sample_data, samples=4)
    events: list[str] = []
    agent.on_event = events.append
    report = agent.implement(["_objects_left_of"], [context(sample_data)])
    assert report.implemented == ["_objects_left_of"] and store.current("_objects_left_of").code.strip() == RIGHT.strip()
    # each sample is announced with its own replies, not an attempt count that outruns its bound
    assert [e for e in events if e.startswith("implementing")] == [
        "implementing _objects_left_of (attempt 1/5)", "implementing _objects_left_of (sample 2)",
        "implementing _objects_left_of (sample 3)"]
    searched = store.decisions("_objects_left_of")[-1]
    assert searched.decision == "searched" and searched.evidence["samples"] == 3
    assert searched.evidence["passed"] == [3] and searched.evidence["claim"] == "relation:left"
    assert searched.evidence["cases"] > 0 and "missing" in " ".join(searched.evidence["closest_failures"])
    # the first sample is today's greedy request; the others are drawn warmer, each with its own seed
    assert llm.requests[0]["temperature"] in (None, 0.0) and llm.requests[1]["temperature"] == 0.8
    assert [r.get("seed") for r in llm.requests[1:]] == [1, 2]
    assert [a.attempt for a in store.attempts("_objects_left_of")] == [1, 2, 3]  # numbered across samples
    # each request says how the data set's ground truth defines the claim (CLEVR: left in 3D)
    assert "It is checked against the true scene, where as CLEVR defines it, in 3D" in llm.calls[0][1]["content"]


def test_a_sample_that_does_not_run_gets_no_second_reply(sample_data):
    """The next sample is drawn instead: second replies mostly copied the failed sample back."""
    store = ApiStore.memory()
    store.propose("_objects_left_of", SIGNATURE, "Objects left of the reference object.")
    broken = WRONG.replace("return", "return undefined_name +", 1)
    llm = ScriptedLLM([code(WRONG), code(broken), code(RIGHT)])
    report = agent_for(llm, store, sample_data, samples=4).implement(["_objects_left_of"], [context(sample_data)])
    assert report.implemented == ["_objects_left_of"] and len(llm.calls) == 3
    # the next sample opens a new conversation: the request, then the stub the reply starts with
    assert [m["role"] for m in llm.calls[2]][-2:] == ["user", "assistant"]
    assert "undefined_name" not in llm.calls[2][-2]["content"] + llm.calls[2][-1]["content"]
    attempts = store.attempts("_objects_left_of")
    assert [a.passed for a in attempts] == [True, False, True] and "undefined_name" in attempts[1].error


def test_failing_cases_reach_the_next_round_without_any_question_or_its_answer(sample_data):
    store = ApiStore.memory()
    store.propose("_objects_left_of", SIGNATURE, "Objects left of the reference object.")
    llm = ScriptedLLM([code(WRONG), code(WRONG), code(RIGHT)])
    agent_for(llm, store, sample_data, samples=2).implement(["_objects_left_of"], [context(sample_data)])
    request = llm.calls[2][-2]["content"]
    assert request.startswith("Your implementation of `_objects_left_of` runs, but it is wrong on these cases")
    assert "missing" in request and llm.calls[2][-3]["content"].startswith("```python\ndef _objects_left_of")
    for question in sample_data.questions:
        assert question.question not in request and "Expected answer" not in request


def test_a_helper_no_sample_gets_right_fails_with_its_closest_failure(sample_data):
    store = ApiStore.memory()
    store.propose("_objects_left_of", SIGNATURE, "Objects left of the reference object.")
    report = agent_for(ScriptedLLM([code(WRONG)] * 4), store, sample_data, samples=2).implement(
        ["_objects_left_of"], [context(sample_data)])
    assert report.implemented == [] and "passed the ground-truth cases" in report.failed["_objects_left_of"]
    assert store.current("_objects_left_of").status == FunctionStatus.FAILED
    assert report.searches["_objects_left_of"].samples == 4 and report.searches["_objects_left_of"].rounds == 2


def test_a_search_with_a_sample_that_calls_itself_fails_for_all_its_samples_not_that_one(sample_data):
    """A CLEVR search's four samples failed four ways; its reason was one sample's recursion alone."""
    store = ApiStore.memory()
    store.propose("_objects_left_of", SIGNATURE, "Objects left of the reference object.")
    broken = WRONG.replace("return", "return undefined_name +", 1)
    recursive = WRONG.replace("return", "return _objects_left_of(image, reference) +", 1)
    report = agent_for(ScriptedLLM([code(recursive), code(broken)]), store, sample_data, samples=2,
                       rounds=1).implement(["_objects_left_of"], [context(sample_data)])
    reason = report.failed["_objects_left_of"]
    assert reason.startswith("no working implementation in 2 samples; 1 could not be tried, the last: "), reason
    assert "calls itself" in reason and store.current("_objects_left_of").status == FunctionStatus.FAILED


def test_one_sample_sends_exactly_the_requests_of_an_agent_without_a_search(sample_data):
    requests = []
    for verifier_on in (False, True):
        store = ApiStore.memory()
        store.propose("_objects_left_of", SIGNATURE, "Objects left of the reference object.")
        llm = ScriptedLLM([code(WRONG)])
        agent = agent_for(llm, store, sample_data, samples=1) if verifier_on else ApiAgent(llm, store, log=StoreLog(store), executor=executor)
        agent.implement(["_objects_left_of"], [context(sample_data)])
        requests.append(llm.requests)
        assert store.current("_objects_left_of").status == FunctionStatus.CANDIDATE  # no search: as before
    assert requests[0] == requests[1]


def test_a_name_without_a_checkable_claim_is_implemented_once(sample_data):
    store = ApiStore.memory()
    store.propose("_count_things", "(image: Image, object_prompt: str) -> int", "How many match.")
    llm = ScriptedLLM([code("def _count_things(image, object_prompt):\n    return len(loc(image, object_prompt))\n")])
    report = agent_for(llm, store, sample_data, samples=8).implement(["_count_things"], [context(sample_data)])
    assert report.implemented == ["_count_things"] and len(llm.calls) == 1 and report.searches == {}


def test_where_the_data_set_defines_the_claim_that_definition_is_the_docstring_the_api_agent_reads(sample_data):
    store = ApiStore.memory()
    misleading = "Every other object whose box centre is lower in the image than the reference."
    store.propose("_objects_left_of", SIGNATURE, misleading)
    llm = ScriptedLLM([code(RIGHT)])
    agent_for(llm, store, sample_data, samples=2).implement(["_objects_left_of"], [context(sample_data)])
    request = llm.calls[0][1]["content"]
    assert misleading not in request
    stub = request.split("```python")[1].split("```")[0]
    assert "What the name claims, checked on the true scene:" in stub and "depth(image, a)" in stub


def test_a_claimed_helper_choosing_from_candidates_is_told_to_choose_from_them():
    from vadar.agents.api_request import claimed_docstring

    store = ApiStore.memory()
    store.propose("_objects_behind", "(image: Image, bbox: BBox, candidates: list[BBox]) -> list[BBox]", "Behind.")
    text = claimed_docstring(store.current("_objects_behind"), "a is behind b when depth(image, a) > depth(image, b)")
    assert text.startswith("What the name claims, checked on the true scene: a is behind b when")
    assert "Return only objects from `candidates`" in text
    store.propose("_objects_left_of", SIGNATURE, "Left.")
    assert "candidates" not in claimed_docstring(store.current("_objects_left_of"), "a is left of b when ...")


def test_an_attribute_reader_is_told_what_one_objects_attribute_is_not_when_two_share_one(sample_data):
    """`_size_of_object` claims one object's size; shown the `same:size` convention ("a and b share a
    size when ..."), 16 samples compared two boxes and none read the object's size."""
    verifier = TruthVerifier(TruthChecks(executor), ApiStore.memory(), sample_data.dataset, sample_data.modules,
                             sample_data.questions)
    reader = verifier.convention("_size_of_object", "(image: Image, bbox: BBox) -> str")
    assert reader is not None and "an object's size" in reader and "share" not in reader
    assert "What size is this object?" in reader
    same = verifier.convention("_same_size", "(image: Image, bbox1: BBox, bbox2: BBox) -> bool")
    assert same is not None and "share a size" in same
