"""A build keeps discovering: what the cap cuts waits for the next batch, the Signature agent is shown
what the library has and asked only for the steps nothing covers, and the build reports its coverage."""

from __future__ import annotations

import dataclasses
import json

import pytest

from api_store import ApiStore
from vadar.agents.signature import SignatureAgent
from vadar.config import VadarConfig
from vadar.library.gate import admit_as_given
from vadar.library.proposals import ClaimScreen
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
from vadar.programs.api_text import render_api
from vadar.runs.pipeline import build_api
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

STUBS = {
    "_count_matching": ("(image: Image, object_prompt: str) -> int", "Count the objects matching object_prompt.",
                        "return len(loc(image, object_prompt))"),
    "_count_left_of": ("(image: Image, object_prompt: str, reference_prompt: str) -> int",
                       "Count the objects matching object_prompt left of the one matching reference_prompt.",
                       "reference = loc(image, reference_prompt)\n"
                       "    if not reference:\n        return 0\n"
                       "    return len([b for b in loc(image, object_prompt) if b[0] < reference[0][0]])"),
    "_object_shape": ("(image: Image, bbox: BBox) -> str", "The shape of the object in bbox.",
                      "return vqa(image, 'What shape is it?', bbox)"),
}


def stubs(*names: str) -> str:
    body = "\n\n".join(f'def {n}{STUBS[n][0]}:\n    """{STUBS[n][1]}"""' for n in names)
    return f"```python\n{body}\n```"


def implementation(messages: list[dict[str, str]]) -> str:
    name = next(n for n in STUBS if f"def {n}(" in messages[1]["content"])
    signature = STUBS[name][0].split(" -> ")[0].replace(": Image", "").replace(": str", "").replace(": BBox", "")
    return f"```python\ndef {name}{signature}:\n    {STUBS[name][2]}\n```"


def router(*signature_replies: str) -> ByRole:
    """The Signature agent's replies in order (then `# no new functions`); the API agent implements."""
    replies = list(signature_replies)

    def propose(messages: list[dict[str, str]]) -> str:
        return replies.pop(0) if replies else "# no new functions"

    return ByRole({Role.SIGNATURE: propose, Role.API_IMPLEMENT: implementation})


def scripted(*signature_replies: str) -> ScriptedLLM:
    return ScriptedLLM([router(*signature_replies)] * 40)


class InterruptedAt:
    """Answers as `router` does, and raises Ctrl-C on the `at`-th request (1-based)."""

    def __init__(self, answers: ByRole, at: int) -> None:
        self.answers, self.at, self.calls = answers, at, 0

    def answer(self, role, messages):
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return self.answers.answer(role, messages)


@pytest.fixture
def config(tmp_path):
    config = VadarConfig()
    config.library.distill = False  # the top-down proposals alone
    config.library.admission = "off"  # implemented helpers join the library as they are
    config.library.validation = False  # the validation gate is tested on its own (tests/runs/test_validation_gate.py)
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s = 10
    config.sandbox.memory_mb = 512
    config.agents.implementation_attempts = 2
    config.agents.max_new_functions = 2
    return config


def sample(*ids: int):
    data = DataSelection(limit=12).prepare()
    return dataclasses.replace(data, questions=[data.questions[i] for i in ids])


def implementing(llm: ScriptedLLM, name: str) -> int:
    return sum(f"def {name}(" in call[1]["content"] for call in llm.calls_of(Role.API_IMPLEMENT))


def test_a_proposal_cut_by_the_cap_is_implemented_in_the_next_batch(config, tmp_path):
    # batch 1: "How many cylinders?", "How many things are left of the red sphere?";
    # batch 2: "What shape is the cyan object?", "Are there any metal cubes?"
    llm = scripted(stubs("_count_matching", "_count_left_of", "_object_shape"))
    with open_session(config, llm=llm) as session:
        first, second = build_api(session, sample(0, 1, 2, 3), tmp_path / "run", batch_size=2)
    assert first.proposed == ["_count_matching", "_count_left_of"]
    assert first.queued == ["_object_shape"] and first.rejected == []  # not lost to "more than 2 proposals"
    assert second.from_queue == ["_object_shape"] and second.implemented == ["_object_shape"]
    # the waiting proposal covers the batch's one step: the Signature agent is not asked again
    assert second.signature_requests == 0 and len(llm.calls_of(Role.SIGNATURE)) == 1
    assert second.queued == []


def test_the_queue_survives_an_interrupted_build(config, tmp_path):
    # request 1: signatures; request 2, the first implementation: Ctrl-C
    llm = ScriptedLLM([InterruptedAt(router(stubs("_count_matching", "_count_left_of", "_object_shape")), 2)] * 40)
    with open_session(config, llm=llm) as session, pytest.raises(KeyboardInterrupt):
        build_api(session, sample(0, 1, 2, 3), tmp_path / "run", batch_size=2)
    again = scripted()
    with open_session(config, llm=again) as session:
        first, second = build_api(session, sample(0, 1, 2, 3), tmp_path / "run", batch_size=2)
    assert Role.SIGNATURE not in again.roles  # the recorded proposals and their queue
    assert first.implemented == ["_count_matching", "_count_left_of"]
    assert second.from_queue == ["_object_shape"] and second.implemented == ["_object_shape"]


def test_an_existing_name_is_shown_and_a_reply_repeating_it_costs_no_implementation(config, tmp_path):
    llm = scripted(stubs("_count_matching"), stubs("_count_matching", "_object_shape"))
    with open_session(config, llm=llm) as session:
        first, second = build_api(session, sample(0, 1, 2, 3), tmp_path / "run", batch_size=2)
    asked = llm.calls_of(Role.SIGNATURE)[1][1]["content"]
    has = asked[asked.index("The library already has"):asked.index("What these questions need")]
    assert "- `_count_matching`: counting the objects that match a description" in has
    need = asked[asked.index("What these questions need"):]
    assert "the shape of an object (1 of 2 questions)" in need and "counting" not in need
    assert second.proposed == ["_object_shape"]
    assert any(line.startswith("_count_matching:") for line in second.rejected)
    assert implementing(llm, "_count_matching") == 1  # batch 1's only


def test_a_duplicate_claim_takes_no_place_under_the_cap(tmp_path):
    with ApiStore(tmp_path / "library.db") as store:
        store.propose("_objects_left_of", "(image: Image, bbox: BBox) -> list[BBox]", "Objects left of bbox.")
        store.implement("_objects_left_of", "def _objects_left_of(image, bbox):\n    return []\n")
        admit_as_given(store, ["_objects_left_of"], mode="hand")
        screen = ClaimScreen(store)
    reply = ('```python\ndef _objects_to_the_left(image: Image, bbox: BBox) -> list[BBox]:\n    """Left of bbox."""\n\n'
             'def _count_matching(image: Image, object_prompt: str) -> int:\n    """Count."""\n\n'
             'def _object_shape(image: Image, bbox: BBox) -> str:\n    """Shape."""\n```')
    agent = SignatureAgent(ScriptedLLM([reply]), max_functions=1)
    proposals = agent.propose(["How many things are left of the cube?"], render_api(), ["_objects_left_of"],
                              screen=screen)
    assert [(s.name, why) for s, why in proposals.rejected] == [
        ("_objects_to_the_left", "claims relation:left, as `_objects_left_of` does already")]
    assert [s.name for s in proposals.accepted] == ["_count_matching"]
    assert [s.name for s in proposals.queued] == ["_object_shape"]


def test_a_covered_batch_asks_nothing_and_the_coverage_is_reported(config, tmp_path):
    # batch 1: "How many cylinders?", "How many things are left of the red sphere?";
    # batch 2: "How many large things are there?" (a count), "Are there any rubber cylinders?" (no step)
    llm = scripted(stubs("_count_matching"))
    with open_session(config, llm=llm) as session:
        first, second = build_api(session, sample(0, 1, 6, 9), tmp_path / "run", batch_size=2)
    assert len(llm.calls_of(Role.SIGNATURE)) == 1
    assert not first.signature_skipped and first.signature_requests == 1
    assert second.signature_skipped and second.signature_requests == 0 and second.proposed == []
    assert first.coverage is not None and second.coverage is not None
    assert (first.coverage.questions, first.coverage.covered, first.coverage.share) == (2, 1, 0.5)
    assert first.coverage.uncovered == (("relation:left", 1),)
    assert (second.coverage.questions, second.coverage.covered, second.coverage.without_steps) == (4, 3, 1)
    written = json.loads((tmp_path / "run" / "coverage.json").read_text())
    assert written == {"questions": 4, "covered": 3, "share": 0.75, "without_steps": 1,
                       "uncovered": {"relation:left": 1}}
