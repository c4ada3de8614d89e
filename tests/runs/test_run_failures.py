"""A bad program is one question's error and the run goes on; run directories and stores fail
with one line that names the cause."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from api_store import ApiStore, StoreError
from api_store.connection import unusable_reason
from vadar.config import VadarConfig
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session
from vadar.runs.results import MAX_LINE_BYTES, QuestionResult, ResultsFile
from vadar.runs.manifest import RunLockedError, lock_run_dir, release_run_dir

BAD_PROGRAMS = [
    "final_result = 'cube' + chr(0xD800)",  # unencodable answer
    "t = ()\nfor i in range(10**6):\n    t = (t,)\nfinal_result = hash(t)",  # crashes the worker
    "a = [0] * 1000\nb = [a] * 1000\nfinal_result = [b] * 1000",  # small value, enormous JSON
    "s = 'x' * (3 * 2**20)\nfor i in range(20):\n    try:\n        loc(image, s)\n    except Exception:\n        pass\n"
    "final_result = 1",  # large host arguments
    "a = [0] * 1000\nb = [a] * 1000\nraise ValueError([b] * 1000)",  # small argument, enormous text
    "raise ValueError('bad ' + chr(0xD800))",  # unencodable error text
]


@pytest.fixture
def config(run_config: VadarConfig) -> VadarConfig:
    run_config.sandbox.memory_mb = 256
    return run_config


def test_bad_programs_are_recorded_as_errors_and_the_run_goes_on(config: VadarConfig, tmp_path: Path) -> None:
    replies = [f"```python\n{code}\n```" for code in BAD_PROGRAMS] + ["```python\nfinal_result = 2\n```"]
    data = DataSelection(limit=len(replies)).prepare()
    out = tmp_path / "run"
    with open_session(config, llm=ScriptedLLM(replies)) as session:
        summary = evaluate(session, data, out, method="static-api", show_progress=False)
    lines = (out / "results.jsonl").read_bytes().splitlines()
    assert len(lines) == len(replies) and summary.questions == len(replies)
    assert all(len(line) <= MAX_LINE_BYTES for line in lines)
    results = [json.loads(line) for line in lines]
    errors = [r["error"] for r in results]
    assert "not valid Unicode" in errors[0]
    assert "SandboxCrash" in errors[1]
    assert "too large to send" in errors[2]
    assert errors[3] is None and len(results[3]["module_calls"]) == 20
    assert results[3]["module_calls"][0]["args"][1].startswith("<str of 3145728 characters")
    assert errors[4].startswith("line 3: raise ValueError([b] * 1000)") and len(errors[4]) < 5000
    assert errors[5].endswith("ValueError: bad \\ud800")
    assert results[-1]["answer"] == 2 and results[-1]["error"] is None


def test_a_results_line_is_bounded_and_always_utf8(tmp_path: Path) -> None:
    record = QuestionResult(
        question_id="q1", question="?", answer_type="count", gold=1, answer=["a" + chr(0xD800)] * 10,
        score=0.0, correct=False, program="x = 1\n" * 500_000, error="e" * 3_000_000, attempts=1,
        prompt_tokens=0, completion_tokens=0, cached_prompt_tokens=0, seconds=0.0, image_id="i",
        module_calls=[{"name": "loc", "args": ["y" * 100_000]}] * 100, step_errors=["s" * 1_000_000] * 3,
    )
    results = ResultsFile(tmp_path / "results.jsonl")
    results.append(record)
    line = (tmp_path / "results.jsonl").read_bytes()
    assert len(line) <= MAX_LINE_BYTES
    back = results.read()[0]
    assert back.answer == ["a" + chr(0xD800)] * 10 and back.error.endswith("more characters]")
    assert back.module_calls[-1] == "... 50 more calls not kept"


HOLD = "import sys, time; sys.path.insert(0, {root!r}); from pathlib import Path; " \
       "from vadar.runs.manifest import lock_run_dir; lock_run_dir(Path({out!r})); print('held', flush=True); time.sleep(30)"


def test_a_second_run_on_the_same_directory_gets_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    root = str(Path(__file__).resolve().parents[2])
    holder = subprocess.Popen([sys.executable, "-c", HOLD.format(root=root, out=str(out))], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLockedError, match="another vadar run is writing to .*run; wait for it"):
            lock_run_dir(out)
    finally:
        holder.kill()
        holder.wait()
    lock_run_dir(out)  # the lock died with its process: nothing to clean up
    lock_run_dir(out)  # and this process may take it again
    release_run_dir(out)


def test_an_empty_database_file_is_named_not_taken_for_an_empty_library(tmp_path: Path) -> None:
    path = tmp_path / "vadar.sqlite"
    path.write_bytes(b"")
    with pytest.raises(StoreError, match=r"is empty \(0 bytes\), so it holds no library"):
        ApiStore(path)
    with pytest.raises(StoreError, match="is empty"):
        ApiStore(path, create=False)


def test_a_new_database_opened_by_two_processes_at_once_works(tmp_path: Path) -> None:
    path = tmp_path / "home" / "vadar.sqlite"
    root = str(Path(__file__).resolve().parents[2])
    code = f"import sys; sys.path.insert(0, {root!r}); from api_store import ApiStore; ApiStore({str(path)!r}).close()"
    procs = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True) for _ in range(4)]
    errors = [p.communicate(timeout=60)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    with ApiStore(path) as store:
        assert store.migrations()


def test_a_read_only_directory_is_named_as_the_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "vadar.sqlite"
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p) != tmp_path)
    reason = unusable_reason(path, RuntimeError("unable to open database file"))
    assert f"the directory {tmp_path} is read-only" in reason and "VADAR_HOME" in reason
    path.write_bytes(b"")
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p) != path)
    assert unusable_reason(path, RuntimeError("attempt to write a readonly database")).startswith(
        "the file is read-only")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_read_only_home_says_so(tmp_path: Path) -> None:
    path = tmp_path / "vadar.sqlite"
    ApiStore(path).close()
    for extra in tmp_path.glob("vadar.sqlite-*"):
        extra.unlink()
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(StoreError, match="read-only"):
            ApiStore(path)
    finally:
        tmp_path.chmod(0o700)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("```python\ndef _f(x: " + " | ".join(["int"] * 400) + ") -> int:\n    \"\"\"Doc.\"\"\"\n```",
         "nested more than 100 levels deep"),
        ("```python\ndef _f(x) -> " + "[" * 150 + "int" + "]" * 150 + ":\n    \"\"\"Doc.\"\"\"\n```",
         "nested more than 100 levels deep|too many nested"),
        ("def _f(x):\n    return " + "+".join(["x"] * 30_000) + "\n", "cannot be read|nested more than"),
        ("x = 1\n" * 50_000, "characters long"),
    ],
    ids=["annotation-400-terms", "annotation-150-deep", "expression-30000-terms", "huge-reply"],
)
def test_pathological_llm_text_is_a_parse_error(reply: str, message: str) -> None:
    from vadar.programs.stubs import StubFormatError, parse_implementation, parse_stubs

    with pytest.raises(StubFormatError, match=message):
        parse_stubs(reply)
    with pytest.raises(StubFormatError, match=message):
        parse_implementation(reply, "_f")
