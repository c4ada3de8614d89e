"""One question end to end through the embedded model (run with `pytest -m live`)."""

import pytest

from vadar.config import load_config
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

pytestmark = pytest.mark.live


def test_one_sample_question_through_the_embedded_model(tmp_path):
    config = load_config()
    config.llm.base_url = None
    config.llm.cache = False
    model_cache = config.paths.model_cache
    config.paths.home = tmp_path / "home"
    config.paths.model_cache_dir = model_cache  # reuse the assembled model
    with open_session(config) as session:
        summary = evaluate(session, DataSelection(limit=1).prepare(), tmp_path / "run", show_progress=False)
    assert summary.questions == 1
    assert summary.mean_prompt_tokens > 0 and summary.mean_completion_tokens > 0
    assert (tmp_path / "run" / "results.jsonl").exists()
