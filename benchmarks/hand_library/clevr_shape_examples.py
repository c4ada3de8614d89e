"""Worked examples for the hand-written question-shape helpers: one right program per CLEVR question
shape, on dev questions 0 to 103 (never a scene of questions 104 and on), recorded in a library's
store as verified programs, as a build records its right programs.

  python benchmarks/hand_library/clevr_shape_examples.py VADAR_HOME/vadar.sqlite ../shared/data/clevr

Each program is run first with the oracle modules; only a right one is recorded.
"""

from __future__ import annotations

import sys
from pathlib import Path

from api_store import ApiStore
from omni3d_bench.datasets.clevr import ClevrDataset
from omni3d_bench.metrics import score_answer
from vadar.programs.calls import helpers_called
from vadar.programs.namespace import program_namespace
from vadar.programs.outcome import run_program
from vadar.runs.prepare import oracle_modules
from vadar.sandbox import execute

EXAMPLES = {
    "0": """small_yellow = loc(image, "small yellow rubber thing")[0]
ball = _find_related(image, "tiny rubber ball", "behind", small_yellow)
block = _find_related(image, "big green metal block", "front", ball)
final_result = _count_related(image, "large purple matte things", "behind", block)""",
    "41": """block = loc(image, "small purple matte block")[0]
final_result = "yes" if _exists_related(image, "purple rubber objects", "right", block) else "no\"""",
    "2": """blue = loc(image, "blue object")[0]
metal = _find_related(image, "metal object", "right", blue)
final_result = _attribute_of_related(image, "size", "matte cube", "front",
                                     _find_related(image, "yellow object", "left", metal))""",
    "12": """ball = loc(image, "blue rubber ball")[0]
final_result = "yes" if _exists_same_attribute(image, "size", "thing", ball) else "no\"""",
    "18": """ball = loc(image, "blue ball")[0]
final_result = _count_same_attribute(image, "material", "things", ball)""",
    "28": """reference = loc(image, "yellow rubber thing")[0]
final_result = _attribute_of_same(image, "color", "rubber cylinder", "size", reference)""",
    "50": """cylinder = loc(image, "small cylinder")[0]
final_result = _attribute_of(image, "color", cylinder)""",
    "52": """cube = loc(image, "blue metallic cube")[0]
other = loc(image, "yellow matte object")[0]
final_result = "yes" if _same_attribute(image, "size", cube, other) else "no\"""",
    "68": """final_result = _count_either(image, "big gray matte cylinders", "small cyan matte things")""",
    "78": """final_result = "yes" if _compare_counts(image, "brown cylinders", "purple cubes", "more") else "no\"""",
}


def main(db: Path, data: Path) -> None:
    dataset = ClevrDataset(data)
    modules = oracle_modules(dataset)
    questions = {q.question_id: q for q in dataset.questions("dev")}
    with ApiStore(db) as store:
        library = store.library()
        names = {f.name for f in library}
        for question_id, code in EXAMPLES.items():
            question = questions[question_id]
            namespace = program_namespace(dataset.image(question), modules, library)
            run = run_program(lambda c, ns: execute(c, dict(ns), timeout_s=30), code, namespace)
            right = run.error is None and score_answer(run.answer, str(question.answer), question.answer_type,
                                                       question.metric) >= 1.0
            print(f"{question_id}: {run.answer!r} (gold {question.answer!r}) {'recorded' if right else run.error}")
            if right:
                store.record_verified_program(batch_id=None, question_id=question_id, question=question.question,
                                              variant="hand", code=code, answer=run.answer, gold=str(question.answer),
                                              error=None, correct=True, uses=helpers_called(code, names))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
