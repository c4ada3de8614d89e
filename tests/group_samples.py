"""Right programs for the sample dataset's questions, stored as build evidence, and scripted group replies."""

from __future__ import annotations

import pytest

from api_store import ApiStore
from omni3d_bench import sample_path
from omni3d_bench.datasets import load_dataset
from omni3d_bench.metrics import score_answer
from vadar.library.clusters import GroupWriter
from vadar.library.truth_checks import TruthChecks
from vadar.programs.answers import normalize_answer
from vadar.programs.namespace import program_namespace
from vadar.runs.prepare import oracle_modules
from vadar.sandbox import execute

# Right programs for sample questions: two counting questions of one form, two existence questions of another.
PROGRAMS = {
    "How many cylinders are there?": 'cylinders = loc(image, "cylinders")\nfinal_result = len(cylinders)\n',
    "How many large things are there?": 'things = loc(image, "large things")\ncount = len(things)\n'
                                        'final_result = count\n',
    "Are there any metal cubes?": 'cubes = loc(image, "metal cubes")\n'
                                  'final_result = "yes" if len(cubes) > 0 else "no"\n',
    "What shape is the cyan object?": 'obj = loc(image, "cyan object")[0]\n'
                                      'final_result = vqa(image, "What shape is this object?", obj)\n',
}
COUNT = ('```python\ndef _count_matching(image, object_prompt: str) -> int:\n'
         '    """The number of objects that match object_prompt."""\n'
         '    return len(loc(image, object_prompt))\n\n'
         'final_result = _count_matching(image, "cylinders")\n'
         'final_result = _count_matching(image, "large things")\n```')
LOOKUP = ('```python\ndef _count_matching(image, object_prompt: str) -> int:\n'
          '    """The number of objects that match object_prompt."""\n'
          '    if object_prompt == "cylinders":\n        return 2\n'
          '    return len(loc(image, object_prompt))\n\n'
          'final_result = _count_matching(image, "cylinders")\n'
          'final_result = _count_matching(image, "large things")\n```')
OFF_BY_ONE = COUNT.replace("return len(loc(image, object_prompt))", "return len(loc(image, object_prompt)) + 1")


def run(code, namespace):
    return execute(code, namespace, timeout_s=10)


@pytest.fixture(name="sample")
def sample_fixture(tmp_path):
    """(store with the right programs of PROGRAMS, dataset, oracle modules, the sample questions)."""
    dataset = load_dataset(sample_path())
    modules = oracle_modules(dataset)
    store = ApiStore(tmp_path / "lib.sqlite")
    questions = {q.question: q for q in dataset.questions("sample")}
    for text, code in PROGRAMS.items():
        question = questions[text]
        result = run(code, program_namespace(dataset.image(question), modules))
        answer = normalize_answer(result.value)
        assert result.error is None and score_answer(answer, question.answer, question.answer_type) == 1.0, text
        store.record_verified_program(batch_id=None, question_id=question.question_id, question=text,
                                      variant="without", code=code, answer=answer, gold=question.answer,
                                      error=None, correct=True, uses=[])
    yield store, dataset, modules, list(questions.values())
    store.close()


def writer(store, llm):
    return GroupWriter(store, llm, run, min_uses=2, truth=TruthChecks(run))
