"""Record real-model responses for the replay tests: `python tests/record_cassettes.py`.

Runs the build-api and eval jobs on the first questions of the built-in sample against the
embedded model (or `VADAR_LLM_BASE_URL`) with the response cache off, and writes every exchange
to `tests/cassettes/sample_run.jsonl`; then the `tool-agent` and `direct` methods on the first
sample questions to `tests/cassettes/sample_methods.jsonl`. The replay tests run the same jobs
offline. `python tests/record_cassettes.py methods` records only the second cassette.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from vadar.config import load_config
from vadar.llm.client import build_chat_model
from vadar.llm.doubles import RecordingLLM
from vadar.llm.embedded import open_endpoint
from vadar.pipeline import DataSelection, Session, build_api, evaluate, open_session

CASSETTES = Path(__file__).parent / "cassettes"
CASSETTE = CASSETTES / "sample_run.jsonl"
METHODS_CASSETTE = CASSETTES / "sample_methods.jsonl"
QUESTIONS = 3
BATCH_SIZE = 3
METHOD_QUESTIONS = 6
RECORDED_METHODS = ("tool-agent", "direct")


def _record(cassette: Path, job: Callable[[Session, Path], None]) -> None:
    """Run `job` against the real endpoint with the cache off, writing every exchange to `cassette`."""
    config = load_config()
    config.llm.cache = False
    with tempfile.TemporaryDirectory() as home:
        config.paths.home = Path(home)
        config.paths.model_cache_dir = load_config().paths.model_cache
        cassette.unlink(missing_ok=True)
        with open_endpoint(config) as base_url:
            recorder = RecordingLLM(build_chat_model(config, base_url=base_url), cassette)
            with open_session(config, llm=recorder) as session:
                job(session, Path(home))
    print(f"recorded {sum(1 for _ in cassette.open())} exchanges in {cassette}")


def record_pipeline(session: Session, home: Path) -> None:
    data = DataSelection(limit=QUESTIONS).prepare()
    build_api(session, data, home / "run", batch_size=BATCH_SIZE)
    print(evaluate(session, data, home / "run", show_progress=False).to_markdown())


def record_methods(session: Session, home: Path) -> None:
    data = DataSelection(limit=METHOD_QUESTIONS).prepare()
    for method in RECORDED_METHODS:
        print(evaluate(session, data, home / method, method=method, show_progress=False).to_markdown())


def main(argv: list[str]) -> int:
    if "methods" not in argv:
        _record(CASSETTE, record_pipeline)
    _record(METHODS_CASSETTE, record_methods)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
