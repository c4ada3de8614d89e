"""A behaviour check must call the helper it checks: read from the check's syntax tree, so a check
of `_left_of` that only calls `_objects_left_of` is sent back instead of run."""

from __future__ import annotations

from types import SimpleNamespace

from vadar.library.checks import BehaviourChecks
from vadar.llm.doubles import ScriptedLLM

HELPER = SimpleNamespace(name="_left_of", signature="(a: BBox, b: BBox) -> bool",
                         docstring="True when box a is left of box b.", code=None)
ONLY_THE_LONGER_NAME = "```python\nassert _objects_left_of([0, 0, 1, 1], [[2, 0, 3, 1]]) == []\n```"
THE_HELPER = "```python\nassert _left_of([0, 0, 1, 1], [2, 0, 3, 1])\n```"


def test_a_check_that_calls_only_a_longer_name_is_sent_back():
    ran: list[str] = []

    def executor(code, namespace):
        ran.append(code)
        return SimpleNamespace(error=None, infrastructure_error=None, stdout="", calls=())

    llm = ScriptedLLM([ONLY_THE_LONGER_NAME, THE_HELPER])
    result = BehaviourChecks(llm, executor).run(HELPER, [], {})
    assert len(llm.calls) == 2 and "must call _left_of" in llm.calls[1][-1]["content"]
    assert len(ran) == 1 and "_left_of([0, 0, 1, 1]" in ran[0] and result.passed is True
