"""Repeat one question-shape helper's search on one library under several sample seeds: how often it
passes, not whether one draw did.

Usage:
  python benchmarks/shape_search_paired.py HOME NAME --data DIR [--split dev] [--limit 100]
      [--seeds 0 100 200 300] [--samples 4] [--keep DIR]

HOME is a build's VADAR_HOME. Its store is copied once per seed and its response cache once (HOME is
never written). NAME is a catalogue helper (`vadar.library.shape_helpers`). For each seed, on its
own copy of the store, NAME is proposed as the build's question-shape route would propose it now
(its docstring naming the admitted step helpers), `--samples` implementations are drawn with
`library.search_seed` = seed, and they are judged by outcome on every labelled build question of its
shape, then at the gate: `vadar.library.shape_route.try_shape_helper`, as in a build. Prints, per
seed, admitted or why not, the support, the sample kept and the completion tokens, then how many
seeds admitted it. The seeds share the store, the prompts and the programs' requests; only the
samples' seeds differ, so two stub forms or sample counts compared over the same seeds (the same
command at two commits, or with `--samples`) are a paired measurement.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sqlite3
import tempfile
from contextlib import nullcontext
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from api_store import ApiStore
from omni3d_bench.types import Question
from vadar.config import VadarConfig, load_config
from vadar.library.batch import BuildBatch
from vadar.library.shape_helpers import shape_helper, supported
from vadar.library.shape_route import ShapeReport, try_shape_helper
from vadar.runs.build_history import build_questions
from vadar.runs.methods import program_agent_for
from vadar.runs.prepare import DataSelection, PreparedData
from vadar.runs.session import Session, open_session


@dataclass(frozen=True)
class SeedOutcome:
    """One repetition of the search: what the route decided with this seed's samples."""

    seed: int
    admitted: bool
    reason: str
    support: int  # build questions whose programs called it
    questions: int  # build questions of its shape
    kept_sample: int | None  # the sample the search by outcome kept, if any
    completion_tokens: int

    def line(self) -> str:
        verdict = "admitted" if self.admitted else f"not admitted: {self.reason}"
        kept = "none" if self.kept_sample is None else str(self.kept_sample)
        return (f"seed {self.seed}: {verdict} (support {self.support} of {self.questions}, sample kept {kept}, "
                f"{self.completion_tokens} completion tokens)")


def copy_store(source: Path, target: Path) -> Path:
    """A consistent copy of a store, even while a build writes it (SQLite's backup)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    return target


def shape_questions(store: ApiStore, data: PreparedData, name: str) -> tuple[list[Question], list[Question]]:
    """The build questions of this library in `data`, and the labelled ones whose shape one call of
    `name` answers (the search's judges; ground-truth cases come from every build question's scene)."""
    built = build_questions(store, data.dataset.root, data.split)
    shown = [q for q in data.questions if q.question_id in built]
    labelled = [q for q in shown if q.answer is not None]
    positions = next((p for helper, p in supported([q.question for q in labelled]) if helper.name == name), [])
    return shown, [labelled[i] for i in positions]


def repeat_search(session: Session, store_path: Path, name: str, data: PreparedData, seeds: Sequence[int],
                  scratch: Path, *, samples: int | None = None,
                  on_event: Callable[[str], None] = print) -> list[SeedOutcome]:
    """The route's search of `name`, once per seed, each on its own copy of the store at `store_path`."""
    helper = shape_helper(name)
    if helper is None:
        raise SystemExit(f"{name} is not a catalogue question-shape helper (vadar.library.shape_helpers)")
    outcomes = []
    for seed in seeds:
        store = ApiStore(copy_store(store_path, scratch / f"seed-{seed}.sqlite"))
        shown, questions = shape_questions(store, data, name)
        if not questions:
            raise SystemExit(f"no build question of this library in {data.dataset.root} has the shape of {name}")
        settings = dataclasses.replace(session.config.library, search_seed=seed,
                                       shape_search_samples=samples or session.config.library.shape_search_samples)
        run = store.start_run("shape-search", model=session.model_name, config={"name": name, "seed": seed})
        record = store.start_batch(run.id, [q.question_id for q in questions], index=0)
        config = session.config

        def writer(sampling, config: VadarConfig = config):
            return program_agent_for(config, session.llm, session.executor, sampling)

        batch = BuildBatch(store, session.llm, session.executor, data.dataset, data.modules, tuple(questions),
                           tuple(shown), tuple(shown), 0, run.id, record.id, session.model_name, settings,
                           session.config.agents, writer, on_event, (), data.view_modules)
        before = session.usage.totals().completion_tokens
        report = ShapeReport()
        try_shape_helper(batch, helper, questions, report)
        outcomes.append(_outcome(store, name, seed, report, session.usage.totals().completion_tokens - before))
        on_event(outcomes[-1].line())
        store.close()
    return outcomes


def _outcome(store: ApiStore, name: str, seed: int, report: ShapeReport, tokens: int) -> SeedOutcome:
    searched = [d for d in store.decisions(name) if d.decision == "searched"]
    kept = searched[-1].evidence.get("kept") if searched and searched[-1].evidence.get("outcome") else None
    reason = report.failed.get(name) or report.not_admitted.get(name) or ""
    return SeedOutcome(seed, name in report.admitted, reason, report.support.get(name, 0),
                       report.questions.get(name, 0), kept if name in report.admitted else None, tokens)


def summary(outcomes: Sequence[SeedOutcome]) -> str:
    admitted = [o.seed for o in outcomes if o.admitted]
    tokens = sum(o.completion_tokens for o in outcomes)
    return (f"admitted with {len(admitted)} of {len(outcomes)} seeds ({', '.join(map(str, admitted)) or 'none'}); "
            f"{tokens} completion tokens in all")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path, help="the build's VADAR_HOME (read only)")
    parser.add_argument("name", help="a catalogue question-shape helper, e.g. _count_same_attribute")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--split", default=None)
    parser.add_argument("--limit", type=int, default=None, help="as the build's --limit")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 100, 200, 300])
    parser.add_argument("--samples", type=int, default=None, help="library.shape_search_samples (default: configured)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep each seed's store and the response cache in this new folder, to read the samples "
                             "after (`vadar library show NAME --db KEEP/seed-0.sqlite`); default: a temporary one")
    args = parser.parse_args()
    config = load_config()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=False)  # never mixed with an earlier run's stores
    with (nullcontext(str(args.keep)) if args.keep is not None
          else tempfile.TemporaryDirectory(prefix="shape-search-")) as tmp:
        scratch = Path(tmp)
        config.paths.db_path = copy_store(args.home / "vadar.sqlite", scratch / "session.sqlite")
        if (args.home / "llm_cache.sqlite").exists():  # replayed where a request repeats one of the build's
            config.paths.llm_cache_path = Path(shutil.copy(args.home / "llm_cache.sqlite", scratch / "llm_cache.sqlite"))
        data = DataSelection(data=args.data, split=args.split, limit=args.limit).prepare(config)
        with open_session(config) as session:
            outcomes = repeat_search(session, args.home / "vadar.sqlite", args.name, data, args.seeds, scratch,
                                     samples=args.samples)
    print(summary(outcomes))
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
