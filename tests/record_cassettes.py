"""Record real-model responses for the replay tests: `python tests/record_cassettes.py`.

Runs the build-api and eval jobs on the first questions of the built-in sample against the
embedded model (or `VADAR_LLM_BASE_URL`) with the response cache off, and writes every exchange
to `tests/cassettes/sample_run.jsonl`. The replay tests then run the same jobs offline.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from vadar.config import load_config
from vadar.llm.client import build_chat_model
from vadar.llm.doubles import RecordingLLM
from vadar.llm.embedded import open_endpoint
from vadar.runs.pipeline import build_api, evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

CASSETTE = Path(__file__).parent / "cassettes" / "sample_run.jsonl"
PARTIAL = CASSETTE.with_suffix(".partial")  # renamed over CASSETTE only when the recording finished
QUESTIONS = 3
BATCH_SIZE = 3


def main() -> int:
    config = load_config()
    config.llm.cache = False
    # the settings of the replay tests (tests/agents/test_replay_real_model.py), so they send these requests
    config.library.distill = False
    config.library.admit_min_uses = 1
    config.library.admission = "off"
    config.library.validation = False
    with tempfile.TemporaryDirectory() as home:
        config.paths.home = Path(home)
        config.paths.model_cache_dir = load_config().paths.model_cache
        PARTIAL.unlink(missing_ok=True)
        data = DataSelection(limit=QUESTIONS).prepare()
        with open_endpoint(config) as base_url:
            client = build_chat_model(config, base_url=base_url)
            recorder = RecordingLLM(client, PARTIAL)
            with open_session(config, llm=recorder) as session:
                build_api(session, data, Path(home) / "run", batch_size=BATCH_SIZE)
                summary = evaluate(session, data, Path(home) / "run", show_progress=False, scope="build")
    PARTIAL.replace(CASSETTE)
    print(summary.to_markdown())
    print(f"recorded {sum(1 for _ in CASSETTE.open())} exchanges in {CASSETTE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
