"""Structured replies: a JSON object decoded under a schema by the endpoint, checked here, and
asked again once with the reason when it does not hold (the model may still break the schema when
the endpoint ignores `response_format`, and no schema can say that a phrase comes from the question)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

import jsonschema

from vadar import prompts
from vadar.programs.step_loop import LLMCost, Message, Reply, StepLoop, Verdict

T = TypeVar("T")


def response_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The `response_format` of a chat request asking for JSON under `schema`."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


def json_object(text: str, schema: dict[str, Any]) -> Any:
    """The JSON value in `text` (a fenced block is unwrapped), or ValueError saying what is wrong."""
    body = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", body, re.DOTALL)
    try:
        data = json.loads(fenced.group(1) if fenced else body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not a JSON object ({exc.msg})") from None
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or "the object"
        raise ValueError(f"{where}: {exc.message}") from None
    return data


def ask_structured(loop: StepLoop, messages: list[Message], parse: Callable[[str], T],
                   cost: LLMCost | None = None) -> tuple[T | None, list[str]]:
    """Run `loop` until `parse` accepts a reply; the value (None if never) and the refusals."""
    accepted: list[T] = []
    refused: list[str] = []

    def judge(reply: Reply) -> Verdict:
        try:
            accepted.append(parse(reply.text))
        except ValueError as exc:
            refused.append(str(exc))
            return Verdict.retry(prompts.render("structured_retry", reason=str(exc)))
        return Verdict.accept()

    loop.run(messages, judge, cost)
    return (accepted[0] if accepted else None), refused
