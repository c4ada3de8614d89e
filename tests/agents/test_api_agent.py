"""The API agent with a scripted LLM, the real sandbox and simple host modules."""

import pytest

from api_store import ApiStore, FunctionStatus
from vadar.library.implementation_log import StoreLog
from vadar.agents.api import ApiAgent, TestContext, library_namespace
from vadar.llm.doubles import ScriptedLLM
from vadar.sandbox import execute

BOXES = [[0.0, 0.0, 10.0, 10.0], [50.0, 0.0, 60.0, 10.0]]


def fake_loc(image, prompt):
    return [list(b) for b in BOXES]


def fake_depth(image, bbox):
    return 1.0 + bbox[0] / 10.0


CONTEXT = TestContext("How many objects?", {"image": "img", "loc": fake_loc, "depth": fake_depth})


def executor(code, namespace):
    return execute(code, dict(namespace), timeout_s=10, memory_mb=512)


def code(text):
    return f"```python\n{text}\n```"


@pytest.fixture
def store():
    s = ApiStore.memory()
    s.propose("_count_all", "(image: Image) -> int", "Count all objects.")
    s.propose("_center_x", "(bbox: BBox) -> float", "Horizontal centre of a box.")
    yield s
    s.close()


def test_depth_first_dependency_is_implemented_before_its_caller(store):
    llm = ScriptedLLM([
        code("def _count_all(image):\n    xs = [_center_x(b) for b in loc(image, 'objects')]\n    return len(xs)"),
        code("def _center_x(bbox):\n    return (bbox[0] + bbox[2]) / 2"),
    ])
    report = ApiAgent(llm, store, log=StoreLog(store), executor=executor).implement(["_count_all", "_center_x"], [CONTEXT])
    assert report.implemented == ["_center_x", "_count_all"]  # the callee finished first
    assert store.current("_count_all").status == FunctionStatus.CANDIDATE
    assert store.dependencies("_count_all") == ["_center_x"]
    assert "Implement this function:\n```python\ndef _center_x(bbox: BBox) -> float:" in llm.calls[1][-2]["content"]
    # the reply starts with the stub: the model writes the body only
    assert llm.calls[1][-1] == {"role": "assistant", "content": '```python\ndef _center_x(bbox: BBox) -> float:\n'
                                                                '    """\n    Horizontal centre of a box.\n    """\n'}
    # the caller's prompt showed the proposed signature it could call
    assert "def _center_x(bbox: BBox) -> float:" in llm.calls[0][0]["content"]
    attempt = store.attempts("_count_all")[-1]
    assert attempt.passed and attempt.test_call == "_count_all(image)" and attempt.test_result == "2"
    assert set(library_namespace(store)) == {"_count_all", "_center_x"}


def test_retry_feeds_back_the_failing_line_then_succeeds(store):
    llm = ScriptedLLM([
        code("def _center_x(bbox):\n    y = 1\n    return bbox[7]"),
        code("def _center_x(bbox):\n    return (bbox[0] + bbox[2]) / 2"),
    ])
    report = ApiAgent(llm, store, log=StoreLog(store), executor=executor).implement(["_center_x"], [CONTEXT])
    assert report.implemented == ["_center_x"] and report.attempts["_center_x"] == 2
    feedback = llm.calls[1][-2]["content"]
    assert "IndexError" in feedback and "line 3" in feedback
    attempts = store.attempts("_center_x")
    assert [a.passed for a in attempts] == [False, True]
    assert "IndexError" in attempts[0].error


def test_a_value_of_another_kind_than_the_signature_promises_is_sent_back(store):
    # a build's `_count_related` sample returned the boxes it should have counted: it ran, and was judged
    llm = ScriptedLLM([
        code("def _count_all(image):\n    return loc(image, 'objects')"),
        code("def _count_all(image):\n    return len(loc(image, 'objects'))"),
    ])
    report = ApiAgent(llm, store, log=StoreLog(store), executor=executor).implement(["_count_all"], [CONTEXT])
    assert report.implemented == ["_count_all"] and report.attempts["_count_all"] == 2
    assert ("it returned a list of boxes, but its signature promises a number (`-> int`): return what the "
            "signature says") in llm.calls[1][-2]["content"]
    assert [a.passed for a in store.attempts("_count_all")] == [False, True]


def test_retry_exhaustion_marks_failed_and_hides_it(store):
    llm = ScriptedLLM([code(f"def _center_x(bbox):\n    return undefined_name_{n}") for n in range(5)])
    report = ApiAgent(llm, store, log=StoreLog(store), executor=executor, max_attempts=5).implement(["_center_x"], [CONTEXT])
    assert "_center_x" in report.failed and "after 5 attempts" in report.failed["_center_x"]
    assert store.current("_center_x").status == FunctionStatus.FAILED
    assert "_center_x" not in [f.name for f in store.functions()]
    assert len(store.attempts("_center_x")) == 5
    assert llm.remaining == 0


def test_a_reply_that_copies_its_failed_code_back_ends_the_conversation(store):
    """The same code failing the same way again: every later reply would be that copy too."""
    broken = code("def _center_x(bbox):\n    return undefined_name")
    llm = ScriptedLLM([broken, broken, code("def _center_x(bbox):\n    return (bbox[0] + bbox[2]) / 2")])
    report = ApiAgent(llm, store, log=StoreLog(store), executor=executor, max_attempts=5).implement(["_center_x"], [CONTEXT])
    assert len(llm.calls) == 2 and llm.remaining == 1
    assert "after 2 attempts (the last one repeated an earlier reply word for word)" in report.failed["_center_x"]
    assert len(store.attempts("_center_x")) == 2


def test_a_copy_of_any_earlier_failed_reply_ends_the_conversation(store):
    llm = ScriptedLLM([code("def _center_x(bbox):\n    return undefined_name"),
                       code("def _center_x(bbox):\n    return bbox[9]"),
                       code("def _center_x(bbox):\n    return undefined_name"),
                       code("def _center_x(bbox):\n    return (bbox[0] + bbox[2]) / 2")])
    report = ApiAgent(llm, store, log=StoreLog(store), executor=executor, max_attempts=5).implement(["_center_x"], [CONTEXT])
    assert report.implemented == [] and len(llm.calls) == 3  # the third reply copies the first: stop
    assert "repeated an earlier reply" in report.failed["_center_x"]


def test_self_recursion_fails_cleanly(store):
    llm = ScriptedLLM([code("def _center_x(bbox):\n    return _center_x(bbox)")])
    report = ApiAgent(llm, store, log=StoreLog(store), executor=executor).implement(["_center_x"], [CONTEXT])
    assert "calls itself" in report.failed["_center_x"]
    assert store.current("_center_x").last_error.startswith("`_center_x` calls itself")


def test_two_cycle_is_detected_and_the_caller_recovers(store):
    llm = ScriptedLLM([
        code("def _count_all(image):\n    return _center_x([0, 0, 1, 1])"),  # A -> B
        code("def _center_x(bbox):\n    return _count_all(None)"),  # B -> A: cycle
        code("def _count_all(image):\n    return len(loc(image, 'objects'))"),  # A without B
    ])
    report = ApiAgent(llm, store, log=StoreLog(store), executor=executor).implement(["_count_all", "_center_x"], [CONTEXT])
    assert report.failed["_center_x"] == "cycle of calls: _count_all -> _center_x -> _count_all"
    assert report.implemented == ["_count_all"]
    assert "`_center_x` is not available" in llm.calls[2][-2]["content"]
    assert llm.remaining == 0  # nothing more was asked for the failed function


def test_malformed_reply_is_retried(store):
    llm = ScriptedLLM(["I cannot do that", code("def _center_x(bbox):\n    return 1.0")])
    report = ApiAgent(llm, store, log=StoreLog(store), executor=executor).implement(["_center_x"], [CONTEXT])
    assert report.implemented == ["_center_x"]
    assert "syntax error" in store.attempts("_center_x")[0].error


def test_progress_events_name_each_attempt_and_outcome(store):
    events = []
    llm = ScriptedLLM([code("def _center_x(bbox):\n    return bbox[9]"), code("def _center_x(bbox):\n    return 1.0")])
    ApiAgent(llm, store, log=StoreLog(store), executor=executor, on_event=events.append).implement(["_center_x"], [CONTEXT])
    assert events == [
        "implementing _center_x (attempt 1/5)",
        "implementing _center_x (attempt 2/5)",
        "implemented _center_x",
    ]


def test_a_long_docstring_gets_room_in_the_reply_that_repeats_it(store):
    from vadar.programs.sampling import IMPLEMENTATION, implementation_sampling

    assert implementation_sampling("Count all objects.") == IMPLEMENTATION
    assert implementation_sampling("x" * 1000).max_tokens == IMPLEMENTATION.max_tokens + 150
    store.propose("_long", "(image: Image) -> int", "Count all objects. " + "Build it on the helpers. " * 40)
    llm = ScriptedLLM([code("def _count_all(image):\n    return len(loc(image, 'objects'))"),
                       code("def _long(image):\n    return _count_all(image)")])
    ApiAgent(llm, store, log=StoreLog(store), executor=executor).implement(["_count_all", "_long"], [CONTEXT])
    assert [r["max_tokens"] for r in llm.requests] == [400, 400 + (len(store.current("_long").docstring) - 400) // 4]
