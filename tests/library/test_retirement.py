"""One way out of the library: a retired helper takes every admitted helper that calls it along."""

from __future__ import annotations

from api_store import ApiStore, FunctionStatus
from vadar.library.retirement import retire_harmful, retire_helpers


def _admitted(store: ApiStore, name: str, code: str, dependencies: tuple[str, ...] = ()) -> None:
    store.propose(name, "(image: Image) -> int", "Count things.")
    store.implement(name, code, dependencies=list(dependencies))
    store.record_decision(name, "admitted", mode="labelled")
    store.mark_admitted(name)


def _library(store: ApiStore) -> None:
    _admitted(store, "_base", "def _base(image):\n    return 1\n")
    _admitted(store, "_caller", "def _caller(image):\n    return _base(image) + 1\n", ("_base",))
    _admitted(store, "_outer", "def _outer(image):\n    return _caller(image) * 2\n", ("_caller",))
    _admitted(store, "_alone", "def _alone(image):\n    return 3\n")


def test_a_helper_retired_for_its_build_figures_takes_its_callers_along():
    with ApiStore.memory() as store:
        _library(store)
        for i in range(4):
            store.record_verified_program(batch_id=None, question_id=str(i), question="q", variant="with",
                                          code="final_result = _base(image)", answer=1, gold=1, error=None,
                                          correct=i == 0, uses=["_base"])
        retired = retire_harmful(store, min_uses=4, below=0.3)
        assert retired == {"_base": "programs using it were right 1 of 4 times",
                           "_caller": "it calls the retired helper _base",
                           "_outer": "it calls the retired helper _caller"}
        assert [f.name for f in store.library()] == ["_alone"]
        assert {store.current(n).status for n in retired} == {FunctionStatus.RETIRED}
        decision = [d for d in store.decisions("_base") if d.decision == "retired"][0]
        assert (decision.mode, decision.evidence["judged"], decision.evidence["correct"]) == ("stats", 4, 1)


def test_every_rule_retires_the_same_way():
    with ApiStore.memory() as store:
        _library(store)
        retired = retire_helpers(store, {"_caller": "validation: lost 3 of 4"}, mode="validation",
                                 evidence={"_caller": {"validation": {"wins": 1}}})
        assert set(retired) == {"_caller", "_outer"} and [f.name for f in store.library()] == ["_base", "_alone"]
        assert [d.evidence for d in store.decisions("_caller") if d.decision == "retired"] == [
            {"validation": {"wins": 1}, "reason": "validation: lost 3 of 4"}]


def test_a_helper_shown_right_on_ground_truth_is_not_retired_for_its_programs():
    with ApiStore.memory() as store:
        store.propose("_objects_left_of", "(image: Image, reference: BBox) -> list[BBox]", "Objects left of it.")
        store.implement("_objects_left_of", "def _objects_left_of(image, reference):\n    return []\n")
        store.record_decision("_objects_left_of", "admitted", mode="labelled",
                              evidence={"truth_check": {"passed": True, "claim": "relation:left", "cases": 8}})
        store.mark_admitted("_objects_left_of")
        _admitted(store, "_unchecked", "def _unchecked(image):\n    return 1\n")
        for i in range(4):
            for name in ("_objects_left_of", "_unchecked"):
                store.record_verified_program(batch_id=None, question_id=str(i), question="q", variant="with",
                                              code=f"final_result = {name}(image)", answer=1, gold=2,
                                              error=None, correct=False, uses=[name])
        assert retire_harmful(store, min_uses=4, below=0.3) == {"_unchecked": "programs using it were right 0 of 4 times"}
        assert [f.name for f in store.library()] == ["_objects_left_of"]
