"""The two jobs users run, in one place to import them from: build the API (`vadar.runs.build`),
then answer questions with it (`vadar.runs.evaluate`)."""

from __future__ import annotations

from vadar.runs.build import BatchReport, build_api
from vadar.runs.evaluate import SCOPES, evaluate, select_questions

__all__ = ["SCOPES", "BatchReport", "build_api", "evaluate", "select_questions"]
