"""benchmarks/shape_search_paired.py: one shape helper's search repeated on copies of one library, one per seed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from api_store import ApiStore, FunctionStatus
from shape_samples import CALLS, NAME, RIGHT, WRONG, program_writer
from vadar.config import VadarConfig
from vadar.llm.chat import Role
from vadar.llm.doubles import ByRole, ScriptedLLM
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import shape_search_paired  # noqa: E402

CLEVR_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "clevr"
pytestmark = pytest.mark.skipif(not CLEVR_DIR.is_dir(), reason="shared CLEVR data not present")


def built_library(path: Path) -> Path:
    """A library whose build was shown CLEVR dev questions 14 to 19 (four of them of the helper's shape),
    where the helper failed before."""
    with ApiStore(path) as store:
        run = store.start_run("build-api", model="test", config={"data": str(CLEVR_DIR), "split": "dev"})
        store.start_batch(run.id, [str(n) for n in range(14, 20)], index=0)
        store.propose(NAME, "(image, attribute, description, reference)", "Counted before.")
        store.mark_failed(NAME, "no sample passed")
    return path


def test_each_seed_searches_its_own_copy_with_its_own_sample_seeds(tmp_path):
    library = built_library(tmp_path / "vadar.sqlite")
    data = DataSelection(data=CLEVR_DIR, split="dev", limit=30).prepare()
    questions = [q for q in data.questions if q.question_id in CALLS]
    drawn = iter([WRONG, WRONG, WRONG, RIGHT])  # seed 0 draws two wrong samples, seed 100 a right second one
    llm = ScriptedLLM([ByRole({Role.API_IMPLEMENT: lambda messages: next(drawn),
                               Role.PROGRAM: program_writer(questions)})] * 400)
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    events: list[str] = []
    with open_session(config, llm=llm) as session:
        outcomes = shape_search_paired.repeat_search(session, library, NAME, data, [0, 100], tmp_path,
                                                     samples=2, on_event=events.append)

    assert [(o.seed, o.admitted, o.support, o.questions) for o in outcomes] == [(0, False, 0, 4), (100, True, 4, 4)]
    assert outcomes[1].kept_sample == 2 and outcomes[0].kept_sample is None  # 1-based: the second sample
    seeds = [r.get("seed") for r, role in zip(llm.requests, llm.roles, strict=True) if role == Role.API_IMPLEMENT]
    assert seeds[1] == 1 and seeds[3] == 101  # sample k of seed s is drawn with s + k; the first is greedy
    with ApiStore(library) as store:  # the library itself is never written
        assert store.current(NAME).status is FunctionStatus.FAILED and not store.current(NAME).code
    assert shape_search_paired.summary(outcomes).startswith("admitted with 1 of 2 seeds (100)")
    assert any(line.startswith("seed 100: admitted (support 4 of 4, sample kept 2") for line in events)
