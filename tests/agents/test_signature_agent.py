import pytest

from vadar.agents.signature import SignatureAgent, rejection_reason
from vadar.programs.calls import called_names
from vadar.programs.stubs import Stub, StubFormatError, normalized_name, parse_implementation, parse_stubs
from vadar.programs.api_text import render_api
from vadar.llm.doubles import ScriptedLLM

GOOD = '''```python
def _objects_left_of(image: Image, reference: BBox, candidates: list[BBox]) -> list[BBox]:
    """Return candidates whose objects are left of the reference object."""

def _count_matching(image: Image, prompt: str) -> int:
    """Count the objects matching prompt."""
```'''


def test_parse_stubs_keeps_signature_and_docstring():
    stubs = parse_stubs(GOOD)
    assert [s.name for s in stubs] == ["_objects_left_of", "_count_matching"]
    assert stubs[0].signature == "(image: Image, reference: BBox, candidates: list[BBox]) -> list[BBox]"
    assert stubs[1].docstring == "Count the objects matching prompt."


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        ("```python\ndef _f(x) -> int:\n    return 1\n```", "has no docstring"),
        ("```python\ndef _f(x:\n```", "syntax error"),
        ("```python\nx = 3\n```", "only `def` stubs"),
        ("I would add nothing useful.", "syntax error"),
    ],
)
def test_malformed_stub_replies_raise_with_a_reason(reply, needle):
    with pytest.raises(StubFormatError, match=needle):
        parse_stubs(reply)


def test_naming_rules():
    def stub(name):
        return Stub(name, "() -> int", "doc")

    assert rejection_reason(stub("_new_one"), set()) is None
    assert "exactly one underscore" in rejection_reason(stub("no_underscore"), set())
    assert "exactly one underscore" in rejection_reason(stub("__dunder"), set())
    assert "predefined module" in rejection_reason(stub("_loc"), set())
    assert "predefined module" in rejection_reason(stub("_get_2d_object_size"), set())
    assert "duplicates an existing" in rejection_reason(stub("_Count_Matching"), {normalized_name("_count_matching")})
    assert "the sandbox reserves" in rejection_reason(stub("_Count_Matching_"), set())


def test_agent_retries_malformed_output_then_accepts_and_screens():
    llm = ScriptedLLM([
        "```python\ndef _f(x:\n```",
        GOOD.replace("_count_matching", "_loc"),
    ])
    result = SignatureAgent(llm).propose(["How many red cubes?"], render_api(), existing=[])
    assert result.attempts == 2
    assert [s.name for s in result.accepted] == ["_objects_left_of"]
    assert [s.name for s, _ in result.rejected] == ["_loc"]
    assert "syntax error" in result.errors[0]
    # the retry shows the model its own reply and the parse error
    assert llm.calls[1][-2]["role"] == "assistant"
    assert "syntax error" in llm.calls[1][-1]["content"]
    # the batch questions and the API text reach the prompt
    assert "1. How many red cubes?" in llm.calls[0][-1]["content"]
    assert "def loc(image: Image" in llm.calls[0][0]["content"]


def test_agent_rejects_duplicates_within_and_across_batches():
    reply = GOOD + "\n```python\ndef _countMatching(image: Image) -> int:\n    \"\"\"Again.\"\"\"\n```"
    result = SignatureAgent(ScriptedLLM([reply])).propose(["q"], render_api(), existing=["_objects_left_of"])
    assert [s.name for s in result.accepted] == ["_count_matching"]
    assert {s.name for s, _ in result.rejected} == {"_objects_left_of", "_countMatching"}


def test_agent_gives_up_after_max_attempts_without_crashing():
    result = SignatureAgent(ScriptedLLM(["nonsense (", "nonsense (", "nonsense ("]), max_attempts=3).propose(
        ["q"], render_api(), existing=[])
    assert result.accepted == [] and result.attempts == 3 and len(result.errors) == 3


def test_no_new_functions_reply():
    result = SignatureAgent(ScriptedLLM(["# no new functions"])).propose(["q"], render_api(), existing=[])
    assert result.accepted == [] and result.errors == []


def test_parse_implementation_and_called_names():
    reply = "```python\nimport math\n\ndef _helper(x):\n    return x\n\ndef _f(image, box):\n    return _helper(depth(image, box))\n```"
    source = parse_implementation(reply, "_f")
    assert source.startswith("def _f(image, box):") and "import" not in source
    assert called_names(source) == {"_helper", "depth"}
    with pytest.raises(StubFormatError, match="must define `_g`"):
        parse_implementation(reply, "_g")


def test_an_implementation_that_only_repeats_its_docstring_is_refused_before_it_runs():
    # a small model re-typed a long docstring and stopped: the function ran, returned None, and was judged
    for body in ('    """The colour."""\n', '    """The colour."""\n    pass\n', "    ...\n"):
        with pytest.raises(StubFormatError, match="`_f` has no body"):
            parse_implementation(f"```python\ndef _f(image, box):\n{body}```", "_f")
    kept = parse_implementation('```python\ndef _f(image, box):\n    """The colour."""\n    return 1\n```', "_f")
    assert kept.endswith("return 1\n")


def test_cut_off_signature_reply_keeps_its_complete_stubs():
    from vadar.llm.chat import ChatResponse

    text = GOOD.rstrip("`\n") + '\n\ndef _objects_left_of(image: Image, refer'
    llm = ScriptedLLM([ChatResponse(text=text, finish_reason="length")])
    result = SignatureAgent(llm).propose(["q"], render_api(), existing=[])
    assert [s.name for s in result.accepted] == ["_objects_left_of", "_count_matching"]
    assert result.attempts == 1


def test_the_worked_example_is_the_one_least_related_to_the_batch():
    from vadar.agents.signature import example_stub

    assert "_objects_in_front_of" not in example_stub(["How many things are in front of the cyan sphere?"])
    assert "_objects_in_front_of" in example_stub(["How many cylinders are there?"])


def test_near_duplicate_names_are_rejected_with_the_name_to_use():
    from vadar.agents.signature import SignatureAgent

    reply = ('```python\ndef _get_objects_left_of(image: Image, reference: BBox) -> list[BBox]:\n    """Left."""\n\n'
             'def _left_of_count(image: Image, reference: BBox) -> int:\n    """Count left."""\n\n'
             'def _count_left_of(image: Image, reference: BBox) -> int:\n    """Count left again."""\n```')
    proposals = SignatureAgent(ScriptedLLM([reply])).propose(["q"], "API", ["_objects_left_of"])
    assert [s.name for s in proposals.accepted] == ["_left_of_count"]
    reasons = [reason for _, reason in proposals.rejected]
    assert "near-duplicate of `_objects_left_of`" in reasons[0] and "near-duplicate of `_left_of_count`" in reasons[1]


def test_remembered_rejections_shown_to_the_agent_are_bounded_and_all_still_screened():
    from vadar.agents.signature import MAX_TRIED_CHARS, MAX_TRIED_SHOWN

    tried = {f"_helper_number_{i}": f"its ground-truth check failed on case {i} " + "x" * 100 for i in range(2000)}
    tried["_objects_left_of"] = "it returned the reference itself"  # the most relevant to the batch
    reply = GOOD.replace("_count_matching", "_helper_number_7")  # tried long ago, not shown
    llm = ScriptedLLM([reply])
    agent = SignatureAgent(llm)
    proposals = agent.propose(["Which objects are left of the cube?"], render_api(), existing=[], tried=tried)
    request = llm.calls[0][-1]["content"]
    listed = [line for line in request.splitlines() if line.startswith("- `_")]
    assert 0 < len(listed) <= MAX_TRIED_SHOWN and sum(map(len, listed)) <= MAX_TRIED_CHARS + 10 * len(listed)
    assert "- `_objects_left_of`: it returned the reference itself" in listed
    assert "`_helper_number_1999`" in request and "`_helper_number_7`:" not in request  # the most recent first
    assert len(request) < 6_000
    assert {s.name for s, _ in proposals.rejected} == {"_objects_left_of", "_helper_number_7"}


def test_a_few_remembered_rejections_are_all_shown_sorted_by_name():
    from vadar.agents.signature import shown_tried

    tried = {"_b_thing": "wrong", "_a_thing": "unused"}
    assert shown_tried(tried, ["q"]) == [("_a_thing", "unused"), ("_b_thing", "wrong")]


@pytest.mark.parametrize("name", ["_objects_lеft_of", "_соunt"])  # Cyrillic е, с and о
def test_a_name_with_a_non_ascii_letter_is_refused_so_it_cannot_pass_beside_its_ascii_twin(name):
    stub = Stub(name, "(image: Image) -> int", "doc")
    reason = rejection_reason(stub, {normalized_name("_objects_left_of")}, tried={"_count": "wrong"})
    assert reason is not None and "non-ASCII character" in reason
