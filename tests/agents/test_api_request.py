"""What the API agent shows for one helper, and how its reply starts (`vadar.agents.api_request`)."""

from __future__ import annotations

from api_store import ApiStore
from vadar.agents.api_request import first_line, opening_messages, reply_prefill

SAME = ("The `asked` attribute of the object matching `description` that has the same `shared` attribute. "
        "Pick the one `shared` names with a dict, `same = {'color': _same_color, 'size': _same_size}[shared]`, "
        "then the object is the first `other` of `loc(image, description)` with `same(image, other, reference)`.")
SIGNATURE = "(image: Image, asked: str, description: str, shared: str, reference: BBox) -> str"


def proposed(docstring: str, name: str = "_attribute_of_same", signature: str = SIGNATURE):
    store = ApiStore.memory()
    store.propose(name, signature, docstring)
    return store.current(name)


def test_the_reply_starts_with_the_stub_the_request_shows():
    record = proposed("Objects left of the reference.", "_objects_left_of", "(image: Image, bbox: BBox) -> list[BBox]")
    prefill = reply_prefill(record)
    request = opening_messages(record, api="def loc(image, prompt): ...", implemented=set())[-1]["content"]
    assert prefill.startswith("```python\ndef _objects_left_of(image: Image, bbox: BBox) -> list[BBox]:\n")
    assert prefill.endswith('    """\n') and prefill.removeprefix("```python\n").rstrip("\n") in request


def test_a_docstring_that_spells_the_pick_by_a_parameter_starts_the_body_with_it():
    # samples wrote the loop the docstring describes and called `same` without ever assigning it
    assert reply_prefill(proposed(SAME)).endswith(
        "    \"\"\"\n    same = {'color': _same_color, 'size': _same_size}[shared]\n")


def test_no_first_line_for_a_pick_by_no_parameter_a_call_without_assignment_or_two_picks():
    parameters = ["image", "asked", "description", "shared", "reference"]
    assert first_line(SAME, ["image"]) is None
    assert first_line("Pick with a dict: `{'left': _objects_left_of}[relation](image, reference)`.", ["relation"]) is None
    two = SAME + " Or `read = {'color': _color_of_object}[asked]`."
    assert first_line(two, parameters) is None
    assert first_line(SAME, parameters) == "same = {'color': _same_color, 'size': _same_size}[shared]"
