"""A helper rejected only for lack of evidence may come back with its stored code, but only code that
keeps today's helper rules, as every other way in must."""

from __future__ import annotations

import pytest

from api_store import ApiStore
from vadar.library.memory import remembered_helpers

GOOD = "def _twice(x):\n    return 2 * x\n"


def _rejected_for_lack_of_use(tmp_path, code: str, name: str = "_twice") -> ApiStore:
    store = ApiStore(tmp_path / "lib.sqlite")
    store.propose(name, "(x: int) -> int", "Twice x.")
    store.implement(name, code)
    store.record_decision(name, "rejected", mode="labelled", evidence={"problem": "Unused"})
    store.mark_failed(name, "not admitted: no program of its batch used it")
    return store


def test_stored_code_that_keeps_the_rules_may_come_back(tmp_path):
    with _rejected_for_lack_of_use(tmp_path, GOOD) as store:
        remembered = remembered_helpers(store)["_twice"]
    assert not remembered.blocked and remembered.code == GOOD


@pytest.mark.parametrize(("code", "rule"), [
    ("@staticmethod\n" + GOOD, "decorators are not allowed"),
    ("import os\n" + GOOD, "exactly one `def`"),
    (GOOD + "    # " + "x" * 9_000 + "\n", "more than the 8,000 allowed"),
    ("def _twice(x):\n    return x.__class__\n", "__class__"),
])
def test_stored_code_that_breaks_a_rule_is_not_reused(tmp_path, code, rule):
    with _rejected_for_lack_of_use(tmp_path, code) as store:
        remembered = remembered_helpers(store)["_twice"]
    assert remembered.blocked and remembered.code is None
    assert remembered.reason.startswith("its stored code breaks a helper rule:") and rule in remembered.reason


def test_a_helper_rejected_for_lack_of_use_comes_back_only_with_the_signature_it_was_judged_with(tmp_path):
    from vadar.agents.signature import Stub
    from vadar.library.proposals import ClaimScreen

    with _rejected_for_lack_of_use(tmp_path, GOOD) as store:
        memory = remembered_helpers(store)
        screen = ClaimScreen(store, comebacks={m.name: m.signature for m in memory.values() if not m.blocked})
    assert screen(Stub("_twice", "(x: int) -> int", "Twice x.")) is None  # as it was: its stored code is judged
    reason = screen(Stub("_twice", "(image: Image, bbox: BBox) -> int", "Twice the objects in bbox."))
    assert reason == ("`_twice` was not admitted before for lack of uses with the signature (x: int) -> int; "
                      "it may come back only as it was")
