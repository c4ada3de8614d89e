"""The page a library build shows in a notebook: what each batch proposed, implemented and lost.

A build writes no run directory of questions (its questions only feed the agents), so its page is
made from the batch reports `vadar build-api` prints and the validation gate's rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vadar.library.coverage import Coverage
from vadar.report.render import render
from vadar.runs.pipeline import BatchReport
from vadar.runs.validation import ValidationReport


def build_page(*, out_dir: Path, batches: Sequence[BatchReport], functions: int,
               database: Path | None = None, validation: ValidationReport | None = None,
               coverage: Coverage | None = None) -> str:
    """One library build as a self-contained HTML page: a row per batch, then the validation gate;
    `coverage` at the build's end, when it was recorded."""
    built = [batch for batch in batches if not batch.skipped]
    return render("build.html.j2", out_dir=out_dir, batches=list(batches), built=len(built),
                  implemented=sum(len(batch.implemented) for batch in batches), functions=functions,
                  database=database, validation=validation, coverage=coverage)
