"""`--family`: choosing questions by family, after --skip and before --limit."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from omni3d_bench import DatasetError
from omni3d_bench.types import Question
from vadar.cli import app
from vadar.report.data_lookup import DataLookup
from vadar.runs.prepare import DataSelection


def _families(selection: DataSelection) -> list[str | None]:
    return [q.family for q in selection.prepare(load=False).questions]


def test_family_keeps_only_its_questions_in_data_set_order():
    everything = DataSelection().prepare(load=False).questions
    chosen = DataSelection(families=("sample_count", "sample_exist")).prepare(load=False).questions
    assert [q.question_id for q in chosen] == [q.question_id for q in everything
                                               if q.family in ("sample_count", "sample_exist")]
    assert len(chosen) == 4


def test_skip_counts_the_data_set_and_limit_counts_the_chosen_questions():
    everything = DataSelection().prepare(load=False).questions
    kept_after_skip = [q for q in everything[3:] if q.family == "sample_count"]
    assert [q.question_id for q in DataSelection(skip=3, families=("sample_count",)).prepare(load=False).questions] \
        == [q.question_id for q in kept_after_skip]
    assert len(DataSelection(limit=1, families=("sample_count",)).prepare(load=False).questions) == 1


def test_unknown_family_names_the_data_sets_families():
    with pytest.raises(DatasetError) as error:
        _families(DataSelection(families=("sample_count", "metric_hieght")))
    message = str(error.value)
    assert "'metric_hieght'" in message and "sample_count" in message and "sample_query" in message
    assert "'sample_count'" not in message.split("its families")[0]


def test_family_of_generated_clevr_and_unrecorded_questions(tmp_path):
    def question(**metadata) -> Question:
        return Question("q", "How many?", "1", "int", "img", tmp_path / "img.png", "test", "x", metadata=metadata)

    assert question(family="metric_height").family == "metric_height"
    assert question(template_filename="compare_integer.json", question_family_index=3).family == "compare_integer"
    assert question(question_family_index=7).family == "family 7"
    assert question().family is None
    lookup = DataLookup(None, {"q": question(family="yes_no")})
    assert lookup.family("q") == "yes_no" and lookup.family("other") is None


def test_eval_cli_refuses_an_unknown_family_before_any_llm_starts():
    result = CliRunner().invoke(app, ["eval", "--method", "direct", "--family", "nope"])
    assert result.exit_code != 0
    assert "no questions of family 'nope'" in result.output
