"""An interrupted build resumes exactly: same proposals, attempts counted across, run status kept."""

import pytest

from api_store import FunctionStatus, RunStatus
from vadar.config import VadarConfig
from vadar.llm.chat import Role
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.pipeline import build_api
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session

from scripted_build import BROKEN, EXISTS, STUBS, Router, implementing  # noqa: F401

@pytest.fixture
def config(tmp_path):
    config = VadarConfig()
    config.library.distill = False  # these tests follow the top-down proposals alone
    config.library.admit_min_uses = 1  # their batches have one question that uses the helper
    config.paths.home = tmp_path / "home"
    config.library.admission = "off"  # these tests count the build agents' replies; admission has its own
    config.library.validation = False  # and so has the validation gate (tests/runs/test_validation_gate.py)
    config.sandbox.timeout_s = 10
    config.sandbox.memory_mb = 512
    config.agents.implementation_attempts = 3
    config.agents.max_new_functions = 2
    return config


def test_an_interrupted_build_resumes_without_reproposing_and_keeps_the_limits(config, tmp_path):
    data = DataSelection(limit=2).prepare()
    out = tmp_path / "run"
    # request 1: signatures; 2: _count attempt 1 (broken); 3: _count attempt 2 -> Ctrl-C
    first = ScriptedLLM([Router(interrupt_at=3)] * 10)
    with open_session(config, llm=first) as session, pytest.raises(KeyboardInterrupt):
        build_api(session, data, out, batch_size=2)
    with open_session(config, llm=ScriptedLLM([])) as session:
        [run] = session.store.runs("build-api")
        assert run.status == RunStatus.INTERRUPTED and run.finished_at is not None
        assert [a.attempt for a in session.store.attempts("_count")] == [1]

    second = ScriptedLLM([Router()] * 10)
    with open_session(config, llm=second) as session:
        [report] = build_api(session, data, out, batch_size=2)
        store = session.store
        assert Role.SIGNATURE not in second.roles  # the stored proposals
        assert report.proposed == ["_count", "_exists"]
        assert [f.name for f in store.functions(include_failed=True)] == ["_count", "_exists"]
        # attempts 2 and 3 only: the limit of 3 counts the attempt made before the interruption
        assert [a.attempt for a in store.attempts("_count")] == [1, 2, 3]
        # attempt 2 sees attempt 1's code and its error, as it would have without the interruption
        resumed = next(call for call in second.calls if implementing(call) == "def _count(")
        assert [m["role"] for m in resumed] == ["system", "user", "assistant", "user", "assistant"]  # the stub last
        assert "undefined_helper" in resumed[2]["content"]
        assert store.attempts("_count")[0].error.split("\n")[0] in resumed[3]["content"]
        assert store.current("_count").status == FunctionStatus.FAILED
        assert "after 3 attempts" in report.failed["_count"]
        assert report.implemented == ["_exists"]
        [run] = store.runs("build-api")  # the same run, reopened and finished
        assert run.status == RunStatus.FINISHED
        assert len(store.batches(run.id)) == 1


def test_attempts_used_up_before_an_interruption_fail_without_asking(config, tmp_path):
    data = DataSelection(limit=2).prepare()
    out = tmp_path / "run"
    # signatures, three broken _count attempts (it ends failed), then Ctrl-C on _exists
    first = ScriptedLLM([Router(interrupt_at=5)] * 10)
    with open_session(config, llm=first) as session, pytest.raises(KeyboardInterrupt):
        build_api(session, data, out, batch_size=2)
    second = ScriptedLLM([Router()] * 10)
    with open_session(config, llm=second) as session:
        [report] = build_api(session, data, out, batch_size=2)
    assert [implementing(c) for c in second.calls] == ["def _exists("]
    assert report.implemented == ["_exists"]


def test_a_failing_build_ends_failed_and_a_finished_one_starts_afresh(config, tmp_path):
    data = DataSelection(limit=2).prepare()
    out = tmp_path / "run"
    broken = ScriptedLLM([Router(interrupt_at=1, interrupt_with=RuntimeError)])
    with open_session(config, llm=broken) as session, pytest.raises(RuntimeError):
        build_api(session, data, out, batch_size=2)
    with open_session(config, llm=ScriptedLLM([Router()] * 10)) as session:
        build_api(session, data, out, batch_size=2)
        build_api(session, data, out, batch_size=2)  # nothing left: a new run, all batches skipped
        runs = session.store.runs("build-api")
    assert [r.status for r in runs] == [RunStatus.FINISHED, RunStatus.FINISHED]
    assert runs[0].id != runs[1].id
