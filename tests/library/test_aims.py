"""The Signature agent is aimed at what the batch asks for and what no build program got right."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from api_store.evidence import VerifiedProgram
from omni3d_bench.types import Question
from vadar.agents.signature import ProposalAims, SignatureAgent
from vadar.library.aims import proposal_aims, unsolved_kinds
from vadar.library.coverage import steps_of
from vadar.library.claims import CHECKABLE_NAMES, claim_of
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.api_text import render_api
from vadar.programs.question_form import parse_question

BASE = Question(question_id="0", question="", answer="1", answer_type="float", image_id="i", image_path="i.png",
                split="test", source="bench")


def question(qid: str, text: str, family: str) -> Question:
    return replace(BASE, question_id=qid, question=text, metadata={"family": family})


def program(qid: str, correct: bool) -> VerifiedProgram:
    return VerifiedProgram(int(qid), None, qid, "", "build", "final_result = 1", "1", "1", None, correct, ())


def labels(text: str) -> list[str]:
    return [step.label for step in steps_of(parse_question(text))]


def test_steps_read_from_the_parsed_question():
    assert labels("How tall is the red stool in meters?") == ["measure:height"]
    assert labels("What is the distance between the chair and the table in meters?") == ["measure:distance"]
    assert labels("How many things are left of the red sphere?") == ["relation:left", "count:objects"]
    assert labels("Is the mug the same color as the cube?") == ["same:color"]
    assert labels("How many times taller is the lamp than the mug?") == ["comparison:ratio"]
    assert labels("What color is the cylinder that is behind the red cylinder?") == ["relation:behind", "attribute:color"]
    assert labels("Are there fewer cylinders than cubes?") == ["comparison:count"]
    assert labels("Are there any rubber cylinders?") == []
    assert labels("How much closer to the camera is the chair than the table?") == ["measure:distance"]
    assert labels("How many objects are closer to the camera than the cabinet?") == ["relation:front", "count:objects"]


def test_the_aims_name_the_asks_the_unsolved_kinds_and_checkable_names():
    batch = [question("0", "How tall is the red stool in meters?", "metric_height"),
             question("1", "How tall is the lamp in meters?", "metric_height"),
             question("2", "How many chairs are there?", "count_class")]
    aims = proposal_aims(batch, batch, [program("0", False), program("1", False), program("2", True)])
    assert aims.asks == ["an object's height in metres (2 of 3 questions)",
                         "counting the objects that match a description (1 of 3 questions)"]
    assert aims.unsolved == ['"How tall is the red stool in meters?" (metric_height: 0 of 2 right)']
    assert aims.checkable == [(n.stub, n.says) for n in CHECKABLE_NAMES["height"]]


def test_a_kind_with_one_right_program_or_one_question_is_not_unsolved():
    questions = [question("0", "How tall?", "metric_height"), question("1", "How tall?", "metric_height"),
                 question("2", "How far?", "metric_distance")]
    assert unsolved_kinds(questions, [program("0", True), program("1", False), program("2", False)]) == []
    assert unsolved_kinds(questions, []) == []  # no program judged yet: nothing is known


def test_every_checkable_name_makes_the_claim_it_is_shown_for():
    for need, names in CHECKABLE_NAMES.items():
        for name in names:
            stub = name.stub
            claim = claim_of(SimpleNamespace(name=stub[:stub.index("(")], signature=stub[stub.index("("):]))
            assert claim is not None, stub
            assert {"spatial": ("relation", "relation_test"), "shared": ("same",), "height": ("measure",),
                    "distance": ("distance", "measure")}[need].count(claim.kind) == 1, (stub, claim)


def test_the_signature_request_carries_the_aims_and_is_unchanged_without_them():
    llm = ScriptedLLM(["# no new functions", "# no new functions"])
    agent = SignatureAgent(llm)
    agent.propose(["How tall is the stool?"], render_api(), [])
    agent.propose(["How tall is the stool?"], render_api(), [], aims=ProposalAims())
    assert llm.calls[0] == llm.calls[1]
    aims = ProposalAims(["one object's height in metres (1 of 1 questions)"], ['"How tall?" (metric_height: 0 of 2 right)'],
                        [("_height_of_object(image: Image, bbox: BBox) -> float", "the object's height in metres")])
    SignatureAgent(llm := ScriptedLLM(["# no new functions"])).propose(["How tall is the stool?"], render_api(), [],
                                                                       aims=aims)
    request = llm.calls[0][1]["content"]
    assert "What these questions need that no helper does yet (propose helpers for these):\n- one object's height in metres (1 of 1 questions)" in request
    assert "no program has answered right so far" in request and "metric_height: 0 of 2 right" in request
    assert "- `_height_of_object(image: Image, bbox: BBox) -> float`: the object's height in metres" in request


def test_the_library_lines_name_each_helper_with_its_claim_those_the_batch_needs_first():
    library = [SimpleNamespace(name=f"_measure_{k}", signature="(image: Image, bbox: BBox) -> float") for k in range(40)]
    library.append(SimpleNamespace(name="_objects_left_of", signature="(image: Image, bbox: BBox) -> list[BBox]"))
    aims = proposal_aims([question("0", "How many things are left of the red sphere?", "count_left")], [], [], library)
    assert aims.has[0] == "`_objects_left_of` (claims relation:left): the objects left of another object"
    assert len(aims.has) == 30
    assert aims.asks == ["counting the objects that match a description (1 of 1 questions)"]
    assert aims.checkable == []  # its one checkable step, left of, the library has


def test_an_attribute_asked_is_offered_a_name_ground_truth_checks():
    from vadar.library.aims import checkable_stubs
    from vadar.library.coverage import Step

    [(stub, says)] = checkable_stubs(Step("attribute", "material"))
    assert stub == "_material_of_object(image: Image, bbox: BBox) -> str" and says == "the material of the object in bbox"
    claim = claim_of(SimpleNamespace(name=stub[:stub.index("(")], signature=stub[stub.index("("):]))
    assert claim is not None and claim.label == "attribute:material"
    assert checkable_stubs(Step("count", "objects")) == []
