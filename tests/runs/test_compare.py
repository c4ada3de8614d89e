import json

from typer.testing import CliRunner

from vadar.cli import app


def write_run(path, method, total, per_type, **extra):
    path.mkdir()
    (path / "summary.json").write_text(json.dumps({**extra,
        "method": method, "questions": sum(c for c, _ in per_type.values()),
        "accuracy": {"per_type": {t: {"count": c, "mean": m} for t, (c, m) in per_type.items()},
                     "total": total, "mean_over_types": 0.5},
        "failed_questions": ["7"], "mean_seconds_per_question": 12.34,
        "mean_prompt_tokens_per_question": 900.0, "mean_completion_tokens_per_question": 60.0,
        "library_functions": 3, "library_functions_used": 1,
    }))


def test_compare_prints_runs_side_by_side(tmp_path):
    write_run(tmp_path / "a", "vadar", 0.6, {"int": (2, 0.5), "str": (3, 0.667)}, mean_llm_replies_per_question=1.5)
    write_run(tmp_path / "b", "direct", 0.4, {"str": (5, 0.4)})
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b"),
                                      "--output", str(tmp_path / "t.md")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "| | vadar (a) | direct (b) |"
    assert "| int | 0.500 (n=2) |  |" in lines
    assert "| **total (weighted)** | 0.600 | 0.400 |" in lines
    assert "| seconds / question | 12.3 | 12.3 |" in lines
    assert "| LLM replies / question | 1.50 |  |" in lines  # older summaries lack the figure
    assert (tmp_path / "t.md").read_text().startswith("| | vadar (a)")


def test_runs_with_reasoning_techniques_are_labelled_with_them(tmp_path):
    write_run(tmp_path / "greedy", "vadar", 0.4, {"int": (2, 0.4)}, techniques="none")
    write_run(tmp_path / "voted", "vadar", 0.6, {"int": (2, 0.6)}, techniques="samples=3+formalize")
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "greedy"), str(tmp_path / "voted")])
    assert result.output.splitlines()[0] == "| | vadar (greedy) | vadar, samples=3+formalize (voted) |"


def test_compare_missing_summary_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(app, ["compare", str(tmp_path)])
    assert result.exit_code == 2 and "no summary.json or results.jsonl" in result.output
