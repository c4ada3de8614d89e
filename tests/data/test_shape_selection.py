"""`--shape`: choosing questions by their shape (answer kind and relation family), after --skip
and --family and before --limit, so a question-shape helper is judged on held-out questions of its
own shape."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from omni3d_bench import DatasetError
from vadar.cli import app
from vadar.programs.question_shape import shape_of
from vadar.runs.prepare import DataSelection


def _ids(selection: DataSelection) -> list[str]:
    return [q.question_id for q in selection.prepare(load=False).questions]


def test_a_shape_label_is_the_answer_kind_and_relation_family():
    assert shape_of("What color is the cylinder that is behind the red cylinder?").label == "attribute:spatial"
    assert shape_of("Are there more spheres than cylinders?").label == "yes/no:count comparison"
    assert shape_of("How many cylinders are there?").label == "count"  # objects alone


def test_shape_keeps_only_its_questions_in_order_after_skip_and_before_limit():
    assert _ids(DataSelection(shapes=("attribute:spatial",))) == ["4", "10"]
    assert _ids(DataSelection(shapes=("attribute:spatial", "count"))) == ["0", "4", "6", "10"]
    assert _ids(DataSelection(skip=5, shapes=("attribute:spatial",))) == ["10"]
    assert _ids(DataSelection(limit=1, shapes=("count:spatial",))) == ["1"]
    # with a family too, both hold
    assert _ids(DataSelection(families=("sample_count", "sample_relate_count", "sample_query"),
                              shapes=("count",))) == ["0", "6"]


def test_an_unknown_shape_names_the_shapes_the_questions_have():
    with pytest.raises(DatasetError) as error:
        _ids(DataSelection(shapes=("attribute:spatial", "attribute:spatail")))
    message = str(error.value)
    assert "no questions of shape 'attribute:spatail'" in message
    assert "attribute:spatial" in message.split("their shapes")[1] and "count:spatial" in message


def test_eval_cli_refuses_an_unknown_shape_before_any_llm_starts():
    result = CliRunner().invoke(app, ["eval", "--method", "direct", "--shape", "nope"])
    assert result.exit_code != 0
    assert "no questions of shape 'nope'" in result.output
