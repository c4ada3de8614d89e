"""Question executors: where the questions of an evaluation are answered.

`local` answers them in this process (one at a time, or `jobs` threads); `ray` turns each into a
task on a Ray cluster (the `ray` extra). Either way the caller, `vadar.runs.evaluation.run_questions`,
is the only writer of results. Not to be confused with the sandbox executor that runs one
program (`vadar.programs.outcome.Executor`).
"""

from vadar.runs.executors.base import QuestionExecutor
from vadar.runs.executors.local import LocalExecutor

__all__ = ["LocalExecutor", "QuestionExecutor"]
