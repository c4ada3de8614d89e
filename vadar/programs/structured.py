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


MAX_JSON_CHARS = 100_000
"""Longest structured reply parsed (the bound of any LLM reply); a longer one is refused unread."""

MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects parsed; the schemas asked for nest 6 levels at most. Deeper
text (3,000 `[` in a row) would exhaust the parser's or the validator's recursion."""

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """How deeply the arrays and objects of JSON `text` nest (brackets inside strings do not count)."""
    depth = deepest = 0
    for bracket in _BRACKET.finditer(_STRING.sub('""', text)):
        depth += 1 if bracket.group() in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def json_object(text: str, schema: dict[str, Any]) -> Any:
    """The JSON value in `text` (a fenced block is unwrapped), or ValueError saying what is wrong.

    Parsed only within `MAX_JSON_CHARS` and `MAX_JSON_DEPTH`: whatever the reply holds, the answer
    is a value or a ValueError, which is retried like any reply that is not JSON.
    """
    body = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", body, re.DOTALL)
    body = fenced.group(1) if fenced else body
    if len(body) > MAX_JSON_CHARS:
        raise ValueError(f"the reply is not a JSON object (longer than {MAX_JSON_CHARS} characters)")
    if json_depth(body) > MAX_JSON_DEPTH:
        raise ValueError(f"the reply is not a JSON object (nested more than {MAX_JSON_DEPTH} levels deep)")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not a JSON object ({exc.msg})") from None
    except (RecursionError, MemoryError) as exc:  # the bounds above come first; this is a last guard
        raise ValueError(f"the reply is not a JSON object ({type(exc).__name__})") from None
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or "the object"
        raise ValueError(f"{where}: {exc.message}") from None
    except RecursionError:
        raise ValueError("the reply is not a JSON object (nested too deeply)") from None
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
