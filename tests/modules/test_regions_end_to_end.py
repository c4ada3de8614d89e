"""A question with regions, end to end: benchmark files -> Program agent (scripted) -> sandbox ->
oracle region tools -> score; and questions without regions keep their request text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from base_modules.oracle.annotations3d import annotations3d_oracle_modules
from omni3d_bench.datasets import BenchDataset
from regions_scene import OBJECTS, region_record, write_bench
from vadar.programs.api_text import render_api, with_regions
from vadar.agents.program import opening_messages
from vadar.config import VadarConfig
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.evaluation import to_result
from vadar.runs.methods import LibrarySnapshot, build_answerer
from vadar.sandbox import execute

GOLD_DISTANCE = float(np.linalg.norm(np.subtract(OBJECTS[0]["center_world"], OBJECTS[1]["center_world"])))
QUESTIONS = [
    {"question_id": "q-dist", "question": "What is the distance between the pallet <mask> and the pallet <mask>?",
     "answer": f"{GOLD_DISTANCE * 1.05:.3f}", "answer_type": "float", "metric": "acc@10",
     "regions": [region_record(0), region_record(1)]},
    {"question_id": "q-count", "question": "How many pallets are in the buffer region <mask>?",
     "answer": "1", "answer_type": "int", "metric": "acc@10", "regions": [region_record(3, with_id=False)]},
    {"question_id": "q-mcq", "question": "Which of the pallets <mask>, <mask> and the box <mask> is the leftmost?",
     "answer": "0", "answer_type": "int", "regions": [region_record(0), region_record(1), region_record(2)]},
    {"question_id": "q-plain", "question": "How many pallets are there?", "answer": "2", "answer_type": "int"},
]
PROGRAMS = {
    "q-dist": 'final_result = distance(image, region("<pallet_0>"), region(1))',
    "q-count": ('final_result = sum(1 for box in loc(image, "pallet") '
                'if inside(image, box, "<buffer_0>"))'),
    "q-mcq": 'final_result = pick_region(image, [0, 1, 2], "leftmost")',
    "q-plain": 'final_result = len(loc(image, "pallet"))',
}


def run(code, namespace):
    return execute(code, namespace, timeout_s=20)


@pytest.fixture()
def bench(tmp_path: Path) -> BenchDataset:
    return BenchDataset(write_bench(tmp_path / "bench", QUESTIONS))


def answer(bench: BenchDataset, question_id: str, method: str = "static-api"):
    question = next(q for q in bench.questions("test") if q.question_id == question_id)
    llm = ScriptedLLM([f"```python\n{PROGRAMS[question_id]}\n```"])
    modules = annotations3d_oracle_modules(bench.scene)
    solve = build_answerer(method, LibrarySnapshot(), llm=llm, executor=run, config=VadarConfig(),
                           dataset=bench, modules=modules, backends={})
    outcome = solve(question)
    return question, outcome, llm


@pytest.mark.parametrize("question_id", ["q-dist", "q-count", "q-mcq", "q-plain"])
def test_gold_programs_score_right_through_the_sandbox(bench: BenchDataset, question_id: str) -> None:
    question, outcome, llm = answer(bench, question_id)
    assert outcome.error is None, outcome.error
    result = to_result(question, outcome, method="static-api")
    assert result.correct, (result.answer, result.gold)
    system = llm.requests[0]["messages"][0]["content"]
    if question.regions:
        names = ", ".join(r.name for r in question.regions)
        assert f"# Regions of this question: {names}" in system
        assert "def pick_region(image: Image, regions: list[Region], which: str) -> int:" in system
    else:
        assert "Regions of this question" not in system and "def region(" not in system


def test_distance_is_scored_by_acc10(bench: BenchDataset) -> None:
    question, outcome, _ = answer(bench, "q-dist")
    assert question.question == "What is the distance between the pallet <pallet_0> and the pallet <pallet_1>?"
    assert float(outcome.answer) == pytest.approx(GOLD_DISTANCE)  # 5% under the gold: Acc@10 right
    assert to_result(question, outcome, method="static-api").score == 1.0
    assert [c.name for c in outcome.calls] == ["region", "region", "distance"]


def test_request_without_regions_is_unchanged(bench: BenchDataset) -> None:
    question, _, llm = answer(bench, "q-plain")
    assert question.regions == () and with_regions("API", ()) == "API"
    assert llm.requests[0]["messages"] == opening_messages(question.question, render_api())


def test_tool_agent_sees_the_region_tools(bench: BenchDataset) -> None:
    question = next(q for q in bench.questions("test") if q.question_id == "q-mcq")
    llm = ScriptedLLM(["<answer>0</answer>"] * 3)
    solve = build_answerer("tool-agent", LibrarySnapshot(), llm=llm, executor=run, config=VadarConfig(),
                           dataset=bench, modules=annotations3d_oracle_modules(bench.scene), backends={})
    solve(question)
    assert "# Regions of this question: <pallet_0>, <pallet_1>, <box_0>" in llm.requests[0]["messages"][0]["content"]


def test_report_draws_the_regions(bench: BenchDataset) -> None:
    import io

    from PIL import Image as PILImage
    from PIL import ImageColor

    from vadar.report.colors import PALETTE
    from vadar.report.data_lookup import DataLookup
    from vadar.report.questions import question_view

    question, outcome, _ = answer(bench, "q-dist")
    result = to_result(question, outcome, method="static-api")
    from vadar.runs.results import ResultsFile

    results = ResultsFile(bench.root / "results.jsonl")
    results.append(result)
    row = results.rows()[0]
    pictures: dict[str, bytes] = {}

    def sink(name: str, payload: bytes) -> str:
        pictures[name] = payload
        return name

    view = question_view(row, DataLookup(bench.root, {question.question_id: question}), sink)
    assert view.boxes == 2  # region(k) returned the regions' boxes: one mark each, named
    assert [c.name for c in view.calls] == ["region", "region", "distance"]
    picture = PILImage.open(io.BytesIO(pictures[view.anchor])).convert("RGB")
    tints = [tuple(180 + (v - 180) * 0.45 for v in ImageColor.getrgb(c)) for c in PALETTE]
    for region in question.regions:
        x0, _, _, y1 = region.box
        pixel = picture.getpixel((int((x0 + 4) * 3), int((y1 - 3) * 3)))  # inside the mask, below labels
        assert any(max(abs(a - b) for a, b in zip(pixel, tint)) < 12 for tint in tints), pixel
    empty = DataLookup(bench.root, {})
    assert question_view(row, empty, sink).boxes == 2 and empty.regions(question.question_id) == ()


def test_admission_evidence_programs_see_the_region_tools(bench: BenchDataset) -> None:
    from api_store import ApiStore
    from vadar.agents.program import ProgramAgent
    from vadar.library.admission import Admission, AdmissionReport

    question = next(q for q in bench.questions("test") if q.question_id == "q-dist")
    llm = ScriptedLLM([f"```python\n{PROGRAMS['q-dist']}\n```"] * 2)
    admission = Admission(ApiStore(":memory:"), ProgramAgent(llm, run), run)
    modules = annotations3d_oracle_modules(bench.scene)
    item = admission._question(question, bench, modules, [], [], AdmissionReport())
    assert item.with_.error is None and item.score(item.with_) == 1.0
    assert item.without is None  # no candidate called: nothing to compare
    assert all("# Regions of this question: <pallet_0>, <pallet_1>" in r["messages"][0]["content"]
               for r in llm.requests)
