"""Jobs answered by a scripted LLM: the one place tests reach the session the CLI and the Python
API open (`vadar.app.instance.open_session`), so a moved entry point is mended here once."""

from __future__ import annotations

from pathlib import Path

import pytest

import vadar.app.instance as instance
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
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
