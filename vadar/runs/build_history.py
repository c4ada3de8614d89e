"""Which questions of a data set this library's builds were shown, across all of its build runs.

An evaluation leaves them out and says whether its scenes are shared with them; a later build
counts them as support for a question-shape helper, so a library grown in a second run still sees
the questions of the first (`vadar.library.shape_route`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from api_store import ApiStore
from omni3d_bench.scene_split import scenes_of
from omni3d_bench.types import Dataset, Question


def build_questions(store: ApiStore, root: Path, split: str) -> set[str]:
    """The questions of the data set in `root` a build of this library was shown. A build records
    its data set as it was given; one given as `../data/clevr` from another folder, or on another
    machine, is the same data set: a stored path naming this folder (resolved) or ending in its name
    counts, so a leak across spellings is still seen (a data set of the same folder name elsewhere
    counts too: an error toward saying the scenes are shared)."""
    here = root.resolve()
    sources = {source for source in store.build_data_sources()
               if Path(source).resolve() == here or Path(source).name == here.name}
    return store.build_question_ids(data=sources, split=split) if sources else set()


def earlier_build_questions(store: ApiStore, dataset: Dataset, split: str,
                            exclude: Collection[str] = ()) -> tuple[Question, ...]:
    """The questions earlier build runs of this library were shown, other than `exclude` (this
    run's own), in the data set's order; none when no build used this data set."""
    ids = build_questions(store, dataset.root, split) - set(exclude)
    if not ids:
        return ()
    return tuple(q for q in dataset.questions(split) if q.question_id in ids)


def shared_scenes(dataset: Dataset, split: str, built_from: set[str], questions: Sequence[Question]) -> set[str]:
    """The scenes of `questions` that a build question of this library (of the same data and split)
    is about: its objects were seen by the build, in ground-truth cases and worked examples."""
    if not built_from:
        return set()
    build_scenes = scenes_of(q for q in dataset.questions(split) if q.question_id in built_from)
    return scenes_of(questions) & build_scenes
