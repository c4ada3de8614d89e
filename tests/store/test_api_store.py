"""The function library: proposals, versions, statuses, names, dependencies, attempts, export."""

from __future__ import annotations

import json
import sqlite3

import pytest

from api_store import (
    MIGRATIONS,
    ApiStore,
    DuplicateFunctionError,
    FunctionStatus,
    StoreError,
    UnknownFunctionError,
    normalize_name,
    prompt_hash,
)


@pytest.fixture
def store() -> ApiStore:
    with ApiStore.memory() as s:
        yield s


def _propose(store: ApiStore, name: str, **kwargs) -> None:
    store.propose(name, f"{name}(a) -> int", f"Doc of {name}.", **kwargs)


def test_propose_records_a_proposed_first_version_with_provenance(store: ApiStore) -> None:
    run = store.start_run("eval", model="m")
    batch = store.start_batch(run.id, ["q1"])
    record = store.propose(
        "_left_of", "(a, b) -> bool", "True if a is left of b.",
        run_id=run.id, batch_id=batch.id, model="m",
    )
    assert (record.name, record.version, record.status) == ("_left_of", 1, FunctionStatus.PROPOSED)
    assert record.code is None and record.is_current
    assert (record.run_id, record.batch_id, record.model) == (run.id, batch.id, "m")
    assert record.normalized_name == "leftof"
    assert store.current("_left_of") == record
    assert "_left_of" in store and "_right_of" not in store


def test_implement_adds_a_version_and_keeps_the_old_one(store: ApiStore) -> None:
    _propose(store, "_f")
    v2 = store.implement("_f", "def _f(a):\n    return 1\n", model="coder")
    v3 = store.implement("_f", "def _f(a):\n    return 2\n", docstring="Better doc.")
    assert (v2.version, v3.version) == (2, 3)
    history = store.history("_f")
    assert [h.version for h in history] == [1, 2, 3]
    assert [h.is_current for h in history] == [False, False, True]
    assert history[0].code is None and history[0].status == FunctionStatus.PROPOSED
    assert history[1].code == "def _f(a):\n    return 1\n" and history[1].model == "coder"
    assert history[2].docstring == "Better doc." and history[2].signature == history[0].signature
    assert store.current("_f").version == 3
    assert len({h.content_hash for h in history}) == 3


def test_implementing_identical_content_is_a_no_op(store: ApiStore) -> None:
    _propose(store, "_f")
    first = store.implement("_f", "def _f(a): return 1")
    again = store.implement("_f", "def _f(a): return 1")
    assert again == first
    assert len(store.history("_f")) == 2


def test_versions_are_append_only_in_the_database(store: ApiStore) -> None:
    _propose(store, "_f")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.db.execute("UPDATE function_versions SET code = 'x'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.db.execute("DELETE FROM function_versions")
    assert store.current("_f").code is None


def test_status_transitions_and_failed_functions_are_hidden(store: ApiStore) -> None:
    for name in ("_a", "_b", "_c"):
        _propose(store, name)
    store.implement("_a", "def _a(a): return 1")
    failed = store.mark_failed("_b", "5 attempts failed: NameError")
    assert failed.status == FunctionStatus.FAILED and failed.version == 1
    assert failed.last_error == "5 attempts failed: NameError"

    assert [f.name for f in store.functions()] == ["_a", "_c"]
    assert [f.name for f in store.functions(include_failed=True)] == ["_a", "_b", "_c"]
    assert [f.name for f in store.functions("candidate")] == ["_a"]
    assert [f.name for f in store.functions(FunctionStatus.FAILED)] == ["_b"]
    assert [f.name for f in store.functions(["proposed", "failed"])] == ["_b", "_c"]
    with pytest.raises(ValueError):
        store.functions("bogus")


def test_failed_function_can_be_proposed_again_but_live_ones_cannot(store: ApiStore) -> None:
    _propose(store, "_a")
    with pytest.raises(DuplicateFunctionError, match="already exists"):
        _propose(store, "_a")
    store.implement("_a", "def _a(a): return 1")
    with pytest.raises(DuplicateFunctionError):
        _propose(store, "_a")
    store.mark_failed("_a", "broke")
    assert store.functions() == []
    again = store.propose("_a", "(a, b) -> int", "Second try.")
    assert (again.version, again.status, again.last_error) == (3, FunctionStatus.PROPOSED, None)
    assert [h.status for h in store.history("_a")] == ["proposed", "failed", "proposed"]


def test_a_failed_function_can_be_repaired_by_a_new_implementation(store: ApiStore) -> None:
    _propose(store, "_a")
    store.mark_failed("_a", "NameError")
    repaired = store.implement("_a", "def _a(a): return 1")
    assert (repaired.version, repaired.status, repaired.last_error) == (2, "candidate", None)
    assert [h.status for h in store.history("_a")] == ["failed", "candidate"]
    assert [f.name for f in store.candidates()] == ["_a"]


def test_implemented_functions_come_in_creation_order_with_their_text(store: ApiStore) -> None:
    for name in ("_z", "_m", "_a"):
        _propose(store, name)
    for name in ("_a", "_z", "_m"):  # implemented in another order, and _z twice
        store.implement(name, f"def {name}(a): return 0")
    store.implement("_z", "def _z(a): return 1")
    records = store.functions(status="candidate")
    assert [r.name for r in records] == ["_z", "_m", "_a"]
    assert records[0].signature == "_z(a) -> int" and records[0].docstring == "Doc of _z."
    assert records[0].code == "def _z(a): return 1"


@pytest.mark.parametrize(
    "variant", ["_get_Left_Object", "_get_left_object_", "get_left_object", "_getLeftObject", "__GET_LEFT_OBJECT"]
)
def test_trivial_renames_share_a_normalized_name_and_are_rejected(store: ApiStore, variant: str) -> None:
    _propose(store, "_get_left_object")
    assert normalize_name(variant) == normalize_name("_get_left_object")
    found = store.find_by_normalized_name(variant)
    assert found is not None and found.name == "_get_left_object"
    with pytest.raises(DuplicateFunctionError, match="trivial rename") as info:
        _propose(store, variant)
    assert info.value.existing == "_get_left_object"
    assert store.find_by_normalized_name("_get_right_object") is None


@pytest.mark.parametrize("bad", ["", "1abc", "has space", "class", "___"])
def test_invalid_names_are_refused(store: ApiStore, bad: str) -> None:
    with pytest.raises(ValueError):
        _propose(store, bad)


def test_unknown_names_raise_unknown_function_error(store: ApiStore) -> None:
    for call in (
        lambda: store.current("_nope"),
        lambda: store.history("_nope"),
        lambda: store.implement("_nope", "code"),
        lambda: store.mark_failed("_nope", "x"),
        lambda: store.record_attempt("_nope", 1),
        lambda: store.dependencies("_nope"),
    ):
        with pytest.raises(UnknownFunctionError, match="_nope"):
            call()
    assert issubclass(UnknownFunctionError, StoreError) and issubclass(UnknownFunctionError, KeyError)


def test_dependencies_are_per_version_and_reject_unknowns_and_cycles(store: ApiStore) -> None:
    for name in ("_a", "_b", "_c"):
        _propose(store, name)
    store.implement("_c", "def _c(a): return 1")
    store.implement("_b", "def _b(a): return _c(a)", dependencies=["_c"])
    store.set_dependencies("_a", ["_b", "_c", "_b"])
    assert store.dependencies("_a") == ["_b", "_c"]
    assert store.dependents("_c") == ["_a", "_b"]

    with pytest.raises(UnknownFunctionError):
        store.set_dependencies("_a", ["_missing"])
    with pytest.raises(StoreError, match="cycle"):
        store.set_dependencies("_c", ["_a"])  # _a -> _b -> _c
    with pytest.raises(StoreError, match="cycle"):
        store.set_dependencies("_c", ["_c"])
    assert store.dependencies("_a") == ["_b", "_c"] and store.dependencies("_c") == []

    store.implement("_a", "def _a(a): return _c(a)")  # None keeps the dependency list
    assert store.dependencies("_a") == ["_b", "_c"]
    store.implement("_a", "def _a(a): return 3", dependencies=[])
    assert store.dependencies("_a") == []
    assert [h.dependencies for h in store.history("_a")] == [("_b", "_c"), ("_b", "_c"), ()]


def test_every_attempt_is_recorded_against_the_proposal(store: ApiStore) -> None:
    run = store.start_run("eval")
    _propose(store, "_f")
    store.record_attempt(
        "_f", 1, code="def _f(a): retrun", error="SyntaxError", test_call="_f(1)",
        prompt_hash=prompt_hash("implement _f"), passed=False, run_id=run.id, model="m",
    )
    store.record_attempt("_f", 2, code="def _f(a): return 1", test_call="_f(1)", test_result="1", passed=True)
    store.implement("_f", "def _f(a): return 1")
    store.record_attempt("_f", 2, code="again after a resume")
    attempts = store.attempts("_f")
    assert [(a.attempt, a.version, a.passed) for a in attempts] == [(1, 1, False), (2, 1, True), (2, 2, None)]
    first = attempts[0]
    assert (first.error, first.test_call, first.run_id, first.model) == ("SyntaxError", "_f(1)", run.id, "m")
    assert first.prompt_hash == prompt_hash("implement _f") and len(first.prompt_hash) == 64
    assert attempts[1].test_result == "1"


def test_export_is_json_and_contains_the_full_history(store: ApiStore) -> None:
    run = store.start_run("eval", config={"batch_size": 3})
    store.start_batch(run.id, ["q1", "q2"])
    _propose(store, "_a")
    _propose(store, "_b")
    store.record_attempt("_a", 1, error="boom", passed=False)
    store.implement("_a", "def _a(a): return 1")
    store.implement("_b", "def _b(a): return _a(a)", dependencies=["_a"])
    store.mark_failed("_b", "dependency broke")
    store.record_program(run.id, "q1", code="x", answer=True)

    data = json.loads(json.dumps(store.export()))
    assert data["format"] == "vadar-api-store" and data["migrations"] == [name for name, _ in MIGRATIONS]
    assert [f["name"] for f in data["functions"]] == ["_a", "_b"]
    a, b = data["functions"]
    assert (a["status"], a["version"], a["code"]) == ("candidate", 2, "def _a(a): return 1")
    assert [h["version"] for h in a["history"]] == [1, 2]
    assert [x["error"] for x in a["history"][0]["attempts"]] == ["boom"]
    assert (b["status"], b["last_error"], b["dependencies"]) == ("failed", "dependency broke", ["_a"])
    assert data["runs"][0]["config"] == {"batch_size": 3}
    assert data["runs"][0]["batches"][0]["question_ids"] == ["q1", "q2"]
    assert "programs" not in data
    with_programs = store.export(include_programs=True)
    assert [p["answer"] for p in with_programs["programs"]] == [True]
