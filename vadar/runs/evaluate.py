"""The evaluation job: the selected questions answered by one method, results and summary written.

An evaluation's one record is its run directory: `run.json` (the settings it was started with),
`results.jsonl` (one durable line per answered question: resume, summaries, `vadar compare` and
reports all read it) and `summary.json`/`summary.md` derived from those two. After a vadar
evaluation the library keeps each helper's figures (`vadar.library.tracking`).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omni3d_bench.types import Question
from vadar.agents.techniques.vote import VoteRecord
from vadar.library.tracking import track_evaluation
from vadar.programs.calls import helpers_called
from vadar.runs.build_history import build_questions, shared_scenes
from vadar.runs.evaluation import EvalSummary, run_questions, summarize_results, write_summary
from vadar.runs.executors import QuestionExecutor
from vadar.runs.executors.job import QuestionJob
from vadar.runs.manifest import claim_run_dir
from vadar.runs.methods import PROGRAM_METHODS, Answerer, make_answerer, read_library
from vadar.runs.prepare import PreparedData
from vadar.runs.results import ResultsFile
from vadar.runs.session import Session

if TYPE_CHECKING:
    from vadar.runs.executors.ray_cluster import RayCluster


def evaluate(
    session: Session,
    data: PreparedData,
    out_dir: Path,
    *,
    method: str = "vadar",
    show_progress: bool = True,
    scope: str = "held-out",
    jobs: int | None = None,
    cluster: RayCluster | None = None,
) -> EvalSummary:
    """Answer the selected questions with `method` (resuming from `out_dir`), write results and summary.

    `jobs` questions are answered at once on this machine (default: `eval.jobs`), or, with a
    `cluster`, each question is a task on that Ray cluster; `show_progress=False` keeps this
    evaluation off the session's progress display.
    """
    dataset, split, questions = data.dataset, data.split, data.questions
    built_from = build_questions(session.store, dataset.root, split)
    questions = select_questions(questions, built_from, scope)
    shared = shared_scenes(dataset, split, built_from, questions)
    if shared and scope != "build":  # scoring build questions shares their scenes by design
        session.progress.announce(
            f"warning: {sum(q.scene_key in shared for q in questions)} of the {len(questions)} questions are about a "
            f"scene a build question of this library was about ({len(shared)} scene{'' if len(shared) == 1 else 's'}; "
            "scene_disjoint: false): split build and test by scene")
    reasoning = dataclasses.asdict(session.config.reasoning) if method in PROGRAM_METHODS else {}
    claim_run_dir(out_dir, {"data": str(dataset.root), "split": split, "method": method,
                            "modules": data.backends, "model": session.model_name, "reasoning": reasoning,
                            "scene_disjoint": not shared})  # known before the first answer: a stopped run says it too
    limits = dataclasses.asdict(session.config.agents)
    jobs = session.config.eval.jobs if jobs is None else jobs
    answer: Answerer | None = None
    executor: QuestionExecutor | None = None
    if cluster is None:
        answer, library = make_answerer(method, session, data)
        if jobs > 1 and method != "direct":  # start the workers while the first requests are out
            threading.Thread(target=session.sandboxes.warm, args=(min(jobs, len(questions)),),
                             name="vadar-warm-sandboxes", daemon=True).start()
    else:  # the library is read once here and shipped; workers never open the store
        snapshot = read_library(session.store, method)
        library = snapshot.functions
        job = QuestionJob(method, session.config, snapshot, dataset, dict(data.backends),
                          base_url=getattr(session.llm, "base_url", None), llm_factory=cluster.llm_factory)
        executor = cluster.executor(job, usage=session.usage)
    results = run_questions(questions, answer, ResultsFile(out_dir / "results.jsonl"), method=method,
                            jobs=jobs, progress=session.progress if show_progress else None, executor=executor,
                            keep_going=session.config.eval.keep_going)
    used = _library_functions_used(results, [f.name for f in library])
    header = {
        "name": out_dir.name, "data": str(dataset.root), "split": split, "method": method,
        "model": session.model_name, "library_functions": len(library),
        "library_functions_used": len(used), "agent_limits": limits,
        "questions_scope": scope, "build_questions": len(built_from), "scene_disjoint": not shared,
        "library_settings": dataclasses.asdict(session.config.library),
        "techniques": session.config.reasoning.label() if reasoning else "none", "reasoning": reasoning,
        "llm_usage_this_session": session.usage.totals().as_dict(),
    }
    votes = [vote for r in results if (vote := r.techniques.get(VoteRecord)) is not None]
    agreements = [vote.agreement for vote in votes]
    if agreements:  # with several programs per question: how often they agreed with the chosen answer
        header["mean_agreement"] = round(sum(agreements) / len(agreements), 4)
    summary = summarize_results(results, header)
    write_summary(summary, out_dir)
    if method == "vadar" and library:  # the library keeps its figures from every evaluation
        track_evaluation(session.store, results, run=str(out_dir))
    return summary


SCOPES = ("held-out", "build", "all")


def select_questions(questions: Sequence[Question], built_from: set[str], scope: str) -> list[Question]:
    """`held-out`: never a question the library was built from (the default, and the only honest
    score); `build`: only those (admission should keep vadar at least as good there); `all`."""
    if scope not in SCOPES:
        raise ValueError(f"unknown question scope {scope!r}; choose one of: {', '.join(SCOPES)}")
    if scope == "held-out":
        return [q for q in questions if q.question_id not in built_from]
    if scope == "build":
        return [q for q in questions if q.question_id in built_from]
    return list(questions)


def _library_functions_used(results: Sequence[Any], names: Sequence[str]) -> set[str]:
    return {n for r in results for n in helpers_called(r.program, names)}
