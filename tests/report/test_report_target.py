"""`vadar report` on a full or read-only target is one line naming the file and the cause."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from report_helpers import make_data, recorded_run
from vadar.cli import app


@pytest.mark.parametrize("code, where", [(errno.ENOSPC, "index.html"), (errno.EROFS, "images"),
                                         (errno.EACCES, "index.html")])
def test_a_report_that_cannot_be_written_is_one_line(tmp_path: Path, monkeypatch, code: int, where: str) -> None:
    run_dir = recorded_run(tmp_path, data=make_data(tmp_path / "clevr"))
    out = tmp_path / "html"
    target = out / where
    real_write_text, real_mkdir = Path.write_text, Path.mkdir

    def write_text(self, *args, **kwargs):
        if self == target:
            raise OSError(code, os.strerror(code), str(self))
        return real_write_text(self, *args, **kwargs)

    def mkdir(self, *args, **kwargs):
        if self == target:
            raise OSError(code, os.strerror(code), str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write_text)
    monkeypatch.setattr(Path, "mkdir", mkdir)
    result = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(out)])
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"Error: cannot write {target}: {os.strerror(code)}")
