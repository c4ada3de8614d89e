"""Jobs answered by a scripted LLM: the one place tests reach the session the CLI and the Python
API open (`vadar.app.instance.open_session`), so a moved entry point is mended here once."""

from __future__ import annotations

from pathlib import Path

import pytest

import vadar.app.instance as instance
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
from vadar.programs.question_shape import shape_of
from vadar.runs.session import open_session


def answer_jobs_with(monkeypatch: pytest.MonkeyPatch, llm: ScriptedLLM, home: Path) -> ScriptedLLM:
    """Every job opened from here on talks to `llm` and keeps its library under `home`."""
    monkeypatch.setattr(instance, "open_session", lambda config, **kw: open_session(config, llm=llm, **kw))
    monkeypatch.setenv("VADAR_HOME", str(home))
    return llm


COUNT_STUB = '```python\ndef _count(image: Image, object_prompt: str) -> int:\n    """Count matches."""\n```'
COUNT_IMPLEMENTATION = "```python\ndef _count(image, object_prompt):\n    return len(loc(image, object_prompt))\n```"


def _count_signatures(messages: list[dict[str, str]]) -> str:
    return COUNT_STUB if "def _count(" not in messages[0]["content"] else "# no new functions"


# The Signature agent proposes `_count` once, the API agent implements it, programs call it.
count_helper_router = ByRole({Role.SIGNATURE: _count_signatures, Role.API_IMPLEMENT: COUNT_IMPLEMENTATION},
                             default="```python\nfinal_result = _count(image, 'cylinder')\n```")


ANSWER_OF_KIND = {"count": "2", "yes/no": "'yes'", "exists": "'yes'", "attribute": "'cube'", "measure": "1.5"}
"""A fixed answer per kind of answer a question asks for (`question_shape`); other kinds get 2."""


def asked(messages: list[dict[str, str]]) -> str:
    """The question of a Program agent conversation (its first user message)."""
    first = next(str(m["content"]) for m in messages if m["role"] == "user")
    return first.removeprefix("Question: ").split("\n")[0]


def program_of_its_kind(messages: list[dict[str, str]], looks: str = "") -> str:
    """A program whose answer is of the kind its question asks for: the writer sends an answer of
    another kind back (`vadar.programs.answer_kinds`), which a fixed script would not expect.
    `looks`: a line before the answer (a program that never looks at the scene is no worked example)."""
    kind = shape_of(asked(messages)).answer
    return f"```python\n{looks}final_result = {ANSWER_OF_KIND.get(kind, '2')}\n```"


def looking_program_of_its_kind(messages: list[dict[str, str]]) -> str:
    """`program_of_its_kind` that first asks `loc` for every object."""
    return program_of_its_kind(messages, looks="loc(image, 'objects')\n")
