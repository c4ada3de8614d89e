"""The persistent, versioned library of generated API functions (SQLite via sqlite-utils).

The three agents grow a library of `_`-prefixed helpers batch after batch, run after run.
This package keeps that library, and the provenance of how it grew, in one SQLite file:

    from api_store import ApiStore

    with ApiStore(path) as store:                      # or ApiStore.memory() in tests
        run = store.start_run("eval", model="m", config={...})
        batch = store.start_batch(run.id, ["q1", "q2"])
        store.propose("_left_of", "_left_of(a, b) -> bool", "True if a is left of b.",
                      run_id=run.id, batch_id=batch.id, model="m")
        store.record_attempt("_left_of", 1, code=..., error="...", passed=False)
        store.implement("_left_of", code, dependencies=["_center"], run_id=run.id)  # a candidate
        store.mark_admitted("_left_of")                 # the admission gate's verdict
        store.library()                                 # what prompts show, creation order
        store.record_program(run.id, "q1", code=..., answer=True, prompt_tokens=812)
        store.answered_question_ids(run.id)             # resume: skip these
        store.finish_run(run.id)

Public API of `ApiStore` (records are frozen dataclasses from `api_store.records`):

- runs:      `start_run(kind, *, model, config) -> RunRecord`, `finish_run(run_id, status)`,
             `run(run_id)`, `runs(kind=None)`
- batches:   `start_batch(run_id, question_ids, *, index=None) -> BatchRecord`, `batches(run_id)`
- functions: `propose(name, signature, docstring, *, run_id, batch_id, model) -> FunctionRecord`,
             `implement(name, code, *, signature, docstring, dependencies, run_id, batch_id,
             model)`, `mark_admitted(name)`, `mark_retired(name, reason)`,
             `mark_failed(name, reason)`, `current(name)`, `name in store`,
             `library(*, with_candidates=False)`, `candidates()`,
             `functions(status=None, *, include_failed=False)`, `history(name)`,
             `find_by_normalized_name(name)`, `set_dependencies(name, deps)`,
             `dependencies(name)`, `dependents(name)`
- attempts:  `record_attempt(name, attempt, *, code, error, test_call, test_result, passed,
             prompt_hash, run_id, batch_id, model) -> AttemptRecord`, `attempts(name)`
- programs:  `record_program(run_id, question_id, *, code, answer, error, attempts,
             prompt_tokens, completion_tokens, latency_s, correct, batch_id) -> ProgramRecord`,
             `program(run_id, question_id)`, `programs(run_id)`,
             `answered_question_ids(run_id, *, include_errors=True)`
- groups:    `record_group_attempt(*, batch_id, frame, question_ids, name, reason)`,
             `group_attempts() -> list[GroupAttempt]` (refused group helper requests)
- whole:     `export(*, include_programs=False) -> dict`, `migrations()`, `transaction()`,
             `close()`

Rules the store guarantees:

- A helper's life is its current version's status (`FunctionStatus`): proposed -> candidate
  (`implement`) -> admitted (`mark_admitted`) -> retired (`mark_retired`), or failed
  (`mark_failed`); a version no longer current is superseded. The library is `library()`.
- Versions are append-only (enforced by triggers). `propose` and `implement` add a version and
  move the function's current pointer; the `mark_*` methods only set status and `last_error` of
  the current version. `functions()` hides failed and retired functions unless asked.
- Names are unique after `normalize_name` (lower-case, underscores dropped): proposing a
  trivial rename raises `DuplicateFunctionError`. A failed or retired function may be re-proposed.
- Every write runs in one transaction (`BEGIN IMMEDIATE`); `store.transaction()` groups several
  calls. File databases use WAL. Problems opening a file raise `StoreError` naming the path.
- The schema evolves only by appending to `migrations.MIGRATIONS`.
"""

from api_store.answers import decode_answer, encode_answer
from api_store.errors import DuplicateFunctionError, StoreError, UnknownFunctionError
from api_store.migrate import apply_migrations
from api_store.migrations import MIGRATIONS
from api_store.group_attempts import GroupAttempt
from api_store.names import content_hash, normalize_name, prompt_hash
from api_store.records import (
    AttemptRecord,
    BatchRecord,
    FunctionRecord,
    FunctionStatus,
    ProgramRecord,
    RunRecord,
    RunStatus,
)
from api_store.store import ApiStore

__all__ = [
    "MIGRATIONS",
    "ApiStore",
    "AttemptRecord",
    "BatchRecord",
    "DuplicateFunctionError",
    "FunctionRecord",
    "FunctionStatus",
    "GroupAttempt",
    "ProgramRecord",
    "RunRecord",
    "RunStatus",
    "StoreError",
    "UnknownFunctionError",
    "apply_migrations",
    "content_hash",
    "decode_answer",
    "encode_answer",
    "normalize_name",
    "prompt_hash",
]
