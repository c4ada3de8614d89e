"""The same question asked of other scenes, with the gold answer each scene gives it.

A program that answers a yes/no question right may be right by chance; a count may match by
coincidence. Where a question carries a CLEVR functional program (`Question.gold_program`), its
answer on any annotated scene is known, so the program can be run on other scenes as well. A scene
where the question does not apply (`unique` finds no object or several) is skipped: the question
would not be asked there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from pathlib import Path

from omni3d_bench.datasets.clevr_programs import ProgramError, answer
from omni3d_bench.types import Dataset, Question


def on_other_scenes(dataset: Dataset, question: Question, image_ids: Iterable[str],
                    limit: int | None = None) -> Iterator[Question]:
    """`question` asked of each of `image_ids` (its own image left out) where it applies, with the
    gold answer its functional program gives there; at most `limit` of them. None without a program."""
    if not question.gold_program or question.multi_view:
        return
    given = 0
    for image_id in dict.fromkeys(image_ids):
        if limit is not None and given >= limit:
            return
        if image_id == question.image_id:
            continue
        scene = dataset.scene(image_id)
        if scene is None:
            continue
        try:
            gold = answer(question.gold_program, scene)
        except (ProgramError, KeyError, IndexError, TypeError):  # not asked there, or a scene it cannot read
            continue
        given += 1
        yield dataclasses.replace(question, question_id=f"{question.question_id}@{image_id}", answer=gold,
                                  image_id=image_id, image_path=Path(dataset.image(image_id).path), regions=())
