"""What the API agent shows the model for one helper: the system prompt (the API and one worked
example), the request with the helper's stub, and that stub again as the start of the reply.

Where the data set defines what a helper's name claims, that definition is the docstring shown
(`claimed_docstring`): a proposed one that says otherwise ("whose box centre is lower in the image"
for `_objects_behind`) was followed over the definition by every sample of a CLEVR build's search.

A reply repeats the stub's `def` line and docstring word for word before the body: 49% of the
characters of a 100-question CLEVR build's implementation replies, and on 2 cores a token written
costs about six times a token read. `reply_prefill` is that stub, sent as the start of the reply
(`StepLoop.prefill`), so the model writes only the body. Where the docstring spells the body's
first line, the assignment that picks a library helper by a parameter (a question-shape helper's
`same = {'color': _same_color, ...}[shared]`, `vadar.library.shape_proposal`), the reply starts
with that line too: samples of `_attribute_of_same` and `_count_same_attribute` in CLEVR builds
wrote the loop the docstring describes and called `same` or `read` without ever assigning it.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from api_store import FunctionRecord
from vadar import prompts
from vadar.programs.api_text import composes_helpers, function_stub
from vadar.programs.helper_calls import list_parameters, parameter_names

_PICK = re.compile(r"`(?P<line>[a-z_]\w* = \{[^`{}]*\}\[(?P<parameter>\w+)\])`")
"""An assignment a docstring spells, picking from a dict of helpers by one of its parameters."""


def shown_docstring(record: FunctionRecord, convention: str | None = None) -> str:
    """The docstring the request shows: the data set's definition of the claim, where it has one."""
    return claimed_docstring(record, convention) if convention else record.docstring


def claimed_docstring(record: FunctionRecord, convention: str) -> str:
    """The docstring shown for a helper whose name makes a claim the data set defines: that
    definition, and the list parameters it must choose from (a body that ignored its `candidates`
    for `loc(image, "objects")` was right on the scene and refused for the unread parameter)."""
    text = f"What the name claims, checked on the true scene: {convention}."
    lists = list_parameters(record.name, record.signature)
    if lists:
        text += (f" Return only objects from {', '.join(f'`{n}`' for n in lists)} (the objects to choose from, "
                 "never the reference itself); do not call loc for them.")
    return text


def opening_messages(record: FunctionRecord, api: str, implemented: Collection[str],
                     convention: str | None = None) -> list[dict[str, str]]:
    """The system prompt, with the worked example that composes library helpers when the docstring
    names `implemented` ones, and the request."""
    docstring = shown_docstring(record, convention)
    composing = composes_helpers(docstring, set(implemented))
    return [
        {"role": "system", "content": prompts.render("api_system", api=api, composing=composing)},
        {"role": "user", "content": prompts.render(
            "api_implement", stub=function_stub(record.name, record.signature, docstring), convention=convention)},
    ]


def reply_prefill(record: FunctionRecord, convention: str | None = None) -> str:
    """The start of every reply: the fence, the stub the request shows, and the first line of the
    body where the docstring spells it (`first_line`)."""
    docstring = shown_docstring(record, convention)
    first = first_line(docstring, parameter_names(record.name, record.signature))
    return f"```python\n{function_stub(record.name, record.signature, docstring)}\n" + (f"    {first}\n" if first else "")


def first_line(docstring: str, parameters: Collection[str]) -> str | None:
    """The one assignment the docstring spells that picks from a dict by one of `parameters`, or None
    (none, or two: which comes first is the body's choice)."""
    lines = {m["line"] for m in _PICK.finditer(docstring) if m["parameter"] in parameters}
    return lines.pop() if len(lines) == 1 else None
