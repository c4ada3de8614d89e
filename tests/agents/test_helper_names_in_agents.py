"""The Signature and API agents and distillation accept a helper's name only under the helper
rules: a proposal named after a module, a built-in or a sandbox name, or with a huge docstring, is
rejected with the reason; a stored proposal of such a name is never implemented."""

from __future__ import annotations

import pytest

from api_store import ApiStore, FunctionStatus
from vadar.library.implementation_log import StoreLog
from vadar.agents.api import ApiAgent, TestContext
from vadar.agents.signature import SignatureAgent
from vadar.library.group_replies import parse_reply
from vadar.library.rules import name_problem
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.api_text import render_api
from vadar.programs.helper_rules import MAX_DOCSTRING_CHARS, MAX_SIGNATURE_CHARS
from vadar.sandbox import execute

RESERVED = ["_getattr_", "_print_", "_write_", "_tmp0"]
TAKEN = ["print", "len", "loc", "math", "image", "region"]


def _stub(name: str, docstring: str = "Count things.", params: str = "image") -> str:
    return f'def {name}({params}) -> int:\n    """{docstring}"""\n'


@pytest.mark.parametrize("name", RESERVED + TAKEN)
def test_the_signature_agent_rejects_names_programs_need(name):
    reply = "```python\n" + _stub(name) + "\n" + _stub("_count_things") + "```"
    result = SignatureAgent(ScriptedLLM([reply])).propose(["How many things?"], render_api(), existing=[])
    assert [s.name for s in result.accepted] == ["_count_things"]
    [(stub, reason)] = result.rejected
    assert stub.name == name and ("reserves" in reason or "replace it" in reason)


@pytest.mark.parametrize("part", ["docstring", "signature"])
def test_the_signature_agent_rejects_huge_stubs(part):
    stub = _stub("_huge", docstring="Doc " * MAX_DOCSTRING_CHARS) if part == "docstring" else \
        _stub("_huge", params=", ".join(f"a{k}" for k in range(MAX_SIGNATURE_CHARS // 3)))
    result = SignatureAgent(ScriptedLLM(["```python\n" + stub + "```"])).propose(["How many?"], render_api(), [])
    assert result.accepted == [] and f"its {part} has" in result.rejected[0][1]


@pytest.mark.parametrize("name", ["loc", "print", "_getattr_", "math"])
def test_the_api_agent_never_implements_a_stored_proposal_of_such_a_name(name):
    store = ApiStore.memory()
    store.propose(name, "(image: Image) -> int", "Count all objects.")
    llm = ScriptedLLM([])
    context = TestContext("How many objects?", {"image": "img", "loc": lambda image, prompt: []})
    report = ApiAgent(llm, store, log=StoreLog(store), executor=lambda code, ns: execute(code, dict(ns), timeout_s=10, memory_mb=512)).implement(
        [name], [context])
    assert report.implemented == [] and name in report.failed and llm.calls == []
    assert store.current(name).status == FunctionStatus.FAILED


@pytest.mark.parametrize("name", ["_getattr_", "_print_", "_write_", "_tmp12", "_apply_"])
def test_distillation_refuses_sandbox_names(name):
    problem = name_problem(name, set())  # the name rule of every library route
    assert problem is not None and "the sandbox reserves" in problem
    assert name_problem("_count_red_things", set()) is None
    reply = f"```python\ndef {name}(image):\n    \"\"\"Count.\"\"\"\n    return 1\n\nfinal_result = {name}(image)\n```"
    with pytest.raises(ValueError, match="the sandbox reserves"):
        parse_reply(reply, 1, set())
