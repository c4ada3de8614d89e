"""`--jobs N`: questions answered at once, each written exactly once, resumable after a kill."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from scripted_jobs import looking_program_of_its_kind
from vadar.config import VadarConfig
from vadar.runs.evaluation import run_questions
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.results import ResultsFile
from vadar.runs.session import open_session

ROOT = Path(__file__).resolve().parents[2]


def config_for(home: Path, jobs: int) -> VadarConfig:
    config = VadarConfig()
    config.paths.home = home
    config.sandbox.timeout_s = 10
    config.sandbox.memory_mb = 512
    config.eval.jobs = jobs
    return config


class SlowProgram:
    """Replies after `delay_s`, counting requests and the most that were in flight at once."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s, self.calls, self.active, self.peak = delay_s, 0, 0, 0
        self.lock = threading.Lock()

    def __call__(self, messages):
        with self.lock:
            self.calls += 1
            self.active += 1
            self.peak = max(self.peak, self.active)
        time.sleep(self.delay_s)
        with self.lock:
            self.active -= 1
        return looking_program_of_its_kind(messages)


def lines_of(path: Path) -> list[dict]:
    """Every complete line (a kill mid-write may leave one torn line, which resume redoes)."""
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def test_parallel_answers_overlap_and_write_each_question_once_in_readable_order(tmp_path):
    data = DataSelection().prepare()
    slow = SlowProgram(0.2)
    with open_session(config_for(tmp_path / "home", jobs=4), llm=ScriptedLLM([slow] * 12)) as session:
        summary = evaluate(session, data, tmp_path / "run", method="static-api", show_progress=False)
        assert 1 < session.sandboxes.size <= 8  # programs ran side by side, on their own workers
    assert slow.peak == 4 and slow.calls == 12
    written = [r["question_id"] for r in lines_of(tmp_path / "run" / "results.jsonl")]
    assert sorted(written) == sorted(q.question_id for q in data.questions)  # each exactly once
    assert summary.questions == 12
    ordered = run_questions(data.questions, lambda q: 1 / 0, ResultsFile(tmp_path / "run" / "results.jsonl"))
    assert [r.question_id for r in ordered] == [q.question_id for q in data.questions]


def test_a_failing_question_stops_a_parallel_run_with_its_error(tmp_path):
    data = DataSelection().prepare()

    def solver(question):
        if question.question_id == data.questions[2].question_id:
            raise RuntimeError("endpoint gone")
        time.sleep(0.05)
        from vadar.programs.outcome import ProgramOutcome
        return ProgramOutcome(answer=1, program="final_result = 1")

    results = ResultsFile(tmp_path / "results.jsonl")
    try:
        run_questions(data.questions, solver, results, jobs=3)
    except RuntimeError as exc:
        assert "endpoint gone" in str(exc)
    else:
        raise AssertionError("the solver's error was swallowed")
    assert len(results.read()) < 12


CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {root!r})
    sys.path.insert(0, {root!r} + "/tests")
    sys.path.insert(0, {tests!r})
    from test_parallel_eval import SlowProgram, config_for
    from vadar.llm.doubles import ScriptedLLM
    from vadar.runs.pipeline import evaluate
    from vadar.runs.prepare import DataSelection
    from vadar.runs.session import open_session

    with open_session(config_for(Path({home!r}), jobs=3), llm=ScriptedLLM([SlowProgram(0.4)] * 100)) as session:
        evaluate(session, DataSelection().prepare(), Path({out!r}), method="static-api", show_progress=False)
""")


def test_a_parallel_run_killed_midway_resumes_answering_only_the_rest(tmp_path):
    out, home = tmp_path / "run", tmp_path / "home"
    code = CHILD.format(root=str(ROOT), tests=str(Path(__file__).parent), home=str(home), out=str(out))
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stderr=subprocess.PIPE)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not results.exists() or len(lines_of(results)) < 4):
        assert child.poll() is None, child.stderr.read().decode()
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stderr.close()
    before = {r.question_id for r in ResultsFile(results).read()}
    assert 4 <= len(before) < 12

    data = DataSelection().prepare()
    resumed = SlowProgram(0.0)
    with open_session(config_for(home, jobs=3), llm=ScriptedLLM([resumed] * 12)) as session:
        summary = evaluate(session, data, out, method="static-api", show_progress=False)
    assert resumed.calls == 12 - len(before)  # nothing answered before the kill is asked again
    ids = [r["question_id"] for r in lines_of(results)]
    assert len(ids) == len(set(ids)) == 12  # every question exactly once
    assert summary.questions == 12
