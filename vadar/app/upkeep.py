"""Keeping a library honest after it was built: distil helpers from right programs, check every
helper against ground truth, run the right build programs on other build scenes, and judge each
helper by an evaluation against a baseline.

`Vadar.distill`, `Vadar.check_library`, `Library.check_programs` and `Library.track` call these;
`vadar library distill`, `check`, `check-programs` and `track` call those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api_store import ApiStore
from vadar.library.scene_check import SceneChecker, build_scenes, check_right_programs
from vadar.library.tracking import track_evaluation
from vadar.library.truth_checks import TruthChecks, TruthResult, recheck_library
from vadar.library.sources import DistillReport
from vadar.runs.build_history import build_questions
from vadar.programs.outcome import Executor
from vadar.runs.distillation import distill_helpers
from vadar.runs.prepare import PreparedData
from vadar.runs.results import ResultsFile
from vadar.runs.session import Session, sandbox_executor, sandbox_pool

if TYPE_CHECKING:
    from vadar.config import VadarConfig


@dataclass(frozen=True)
class LibraryCheck:
    """Every helper's ground-truth check, and the helpers retired for failing it."""

    results: dict[str, TruthResult] = field(default_factory=dict)
    retired: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ProgramCheck:
    """Right build programs run on other build scenes: how many were checked, and right by chance."""

    build_questions: int
    checked: int
    chance: int
    with_program: int = 0  # build questions whose answer on another scene is known (a functional program)


@dataclass(frozen=True)
class LibraryTracking:
    """Each helper's figures in one evaluation (the evidence of its `evaluated` decision), and the
    helpers retired because their programs did worse than the baseline's."""

    evaluated: dict[str, dict[str, Any]] = field(default_factory=dict)
    retired: dict[str, str] = field(default_factory=dict)


def distill(session: Session, prepared: PreparedData, on_event: Callable[[str], None] | None = None) -> DistillReport:
    """Both distillation routes over the right build programs of `prepared`'s questions."""
    return distill_helpers(session, prepared, prepared.questions, on_event=on_event)


@contextmanager
def _sandboxes(config: VadarConfig, session: Session | None) -> Iterator[Executor]:
    """The session's sandboxes, or sandboxes of the same limits for this check alone when no session
    runs (no LLM is needed)."""
    if session is not None:
        yield session.executor
        return
    with closing(sandbox_pool(config.sandbox)) as pool:
        yield sandbox_executor(pool, config.sandbox)


def check_library(store: ApiStore, config: VadarConfig, prepared: PreparedData, session: Session | None, *,
                  retire: bool) -> LibraryCheck:
    """Every implemented helper against the ground truth its name claims (`_sandboxes`)."""
    with _sandboxes(config, session) as executor:
        results = recheck_library(store, TruthChecks(executor), prepared.dataset, prepared.modules,
                                  prepared.questions, retire=retire)
    retired = {d.name for d in store.decisions() if d.decision == "retired" and d.mode == "truth-check"}
    return LibraryCheck(results, frozenset(retired & set(results)) if retire else frozenset())


def check_programs(store: ApiStore, config: VadarConfig, prepared: PreparedData, session: Session | None,
                   on_event: Callable[[str], None] | None = None) -> ProgramCheck:
    """Every right, unchecked program of the library's build questions in `prepared`, run on other
    scenes of those build questions (never another question's scene)."""
    ids = build_questions(store, prepared.dataset.root, prepared.split)
    build = [q for q in prepared.questions if q.question_id in ids]
    with _sandboxes(config, session) as executor:
        checker = SceneChecker(executor, prepared.dataset, prepared.modules, build_scenes(build),
                               config.library.scene_checks)
        checked, chance = check_right_programs(store, checker, build, on_event)
    return ProgramCheck(len(build), checked, chance, sum(1 for q in build if q.gold_program))


def track(store: ApiStore, run: Path, baseline: Path, *, min_uses: int) -> LibraryTracking:
    """Compare each helper's programs in `run` with `baseline`'s on the same questions; retire the
    helpers whose programs did worse (at least `min_uses` uses)."""
    results = ResultsFile(run / "results.jsonl").read()
    paired = {r.question_id: r for r in ResultsFile(baseline / "results.jsonl").read()}
    retired = track_evaluation(store, results, run=str(run), baseline=paired, min_uses=min_uses)
    evaluated = {d.name: d.evidence for d in store.decisions()
                 if d.decision == "evaluated" and d.evidence.get("run") == str(run)}
    return LibraryTracking(evaluated, retired)
