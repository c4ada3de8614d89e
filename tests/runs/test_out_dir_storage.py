"""Storage failures under --out are one line naming the path and the cause; results.jsonl only
ever holds whole lines."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import filelock
import pytest
import typer
from rich.console import Console

from vadar.cli.errors import user_errors
from vadar.runs.evaluation import summarize_results, write_summary
from vadar.runs.manifest import claim_run_dir, release_run_dir
from vadar.runs.results import QuestionResult, ResultsFile
from vadar.runs.storage import StorageError


def result(qid: str, program: str = "final_result = 1") -> QuestionResult:
    return QuestionResult(question_id=qid, question="How many?", answer_type="int", gold=1, answer=1,
                          score=1.0, correct=True, program=program, error=None, attempts=1, prompt_tokens=0,
                          completion_tokens=0, cached_prompt_tokens=0, seconds=0.1, image_id="i")


def fail_with(code: int):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))
    return fail


@pytest.mark.parametrize("code, cause", [(errno.EROFS, "Read-only file system"), (errno.EACCES, "Permission denied")])
def test_a_run_dir_that_cannot_be_locked_is_named(tmp_path: Path, monkeypatch, code: int, cause: str) -> None:
    monkeypatch.setattr(filelock.FileLock, "acquire", fail_with(code))
    out = tmp_path / "run"
    with pytest.raises(StorageError) as info:
        claim_run_dir(out, {"method": "vadar"})
    assert str(info.value) == f"cannot lock {out / '.run.lock'}: {cause}; choose a writable --out (or VADAR_HOME)"


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_a_manifest_that_cannot_be_written_leaves_no_temporary_file(tmp_path: Path, monkeypatch, code: int) -> None:
    out = tmp_path / "run"
    real = Path.write_text

    def write_text(self, *args, **kwargs):
        real(self, "", encoding="utf-8")  # the file is created, then the disk is full
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(Path, "write_text", write_text)
    with pytest.raises(StorageError, match=rf"cannot write {out / 'run.json'}: {os.strerror(code)}"):
        claim_run_dir(out, {"method": "vadar"})
    release_run_dir(out)
    assert not (out / "run.json.tmp").exists() and not (out / "run.json").exists()


def test_a_summary_that_cannot_be_written_is_named(tmp_path: Path, monkeypatch) -> None:
    summary = summarize_results([result("1")], {})
    monkeypatch.setattr(os, "replace", fail_with(errno.ENOSPC))
    with pytest.raises(StorageError, match="summary.json: No space left on device; free some space"):
        write_summary(summary, tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["fsync", "write"])
def test_a_line_that_cannot_be_written_whole_is_cut_back(tmp_path: Path, monkeypatch, where: str) -> None:
    results = ResultsFile(tmp_path / "results.jsonl")
    results.append(result("1"))
    before = results.path.read_bytes()
    if where == "fsync":
        monkeypatch.setattr(os, "fsync", fail_with(errno.ENOSPC))
    else:
        real_open = Path.open

        class HalfWriter:  # the disk fills up halfway through the line
            def __init__(self, handle):
                self.handle = handle

            def __getattr__(self, name):
                return getattr(self.handle, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.handle.close()

            def write(self, data):
                self.handle.write(bytes(data)[: len(data) // 2])
                self.handle.flush()
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(Path, "open", lambda self, *a, **k: HalfWriter(real_open(self, *a, **k)))
    with pytest.raises(StorageError, match="results.jsonl: No space left on device"):
        results.append(result("2", "x = 1\n" * 1000))
    monkeypatch.undo()
    assert results.path.read_bytes() == before
    results.append(result("2"))
    assert [json.loads(line)["question_id"] for line in results.path.read_text().splitlines()] == ["1", "2"]


@pytest.mark.parametrize("torn", [b'{"question_id": "2", "quest', b"x" * 200_000])
def test_a_torn_last_line_is_removed_on_resume(tmp_path: Path, torn: bytes) -> None:
    results = ResultsFile(tmp_path / "results.jsonl")
    results.append(result("1"))
    with results.path.open("ab") as handle:
        handle.write(torn)  # a kill mid-write
    assert results.answered_ids() == {"1"}
    results.append(result("2"))
    lines = results.path.read_bytes().splitlines()
    assert [json.loads(line)["question_id"] for line in lines] == ["1", "2"]


def test_the_cli_shows_a_storage_error_in_one_line() -> None:
    console = Console(stderr=False, record=True, width=300)
    with pytest.raises(typer.Exit) as info, user_errors(console):
        raise StorageError("cannot write /x/results.jsonl: No space left on device")
    assert info.value.exit_code == 1
    assert console.export_text().strip() == "Error: cannot write /x/results.jsonl: No space left on device"
