"""Questions split by scene: a library built on some scenes is scored on others.

Several questions ask about one scene (about ten per CLEVR image, up to six per generated scene).
A split inside one scene's questions lets a build see the objects its scored questions are about:
ground-truth cases quote them, and worked examples answer about them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from omni3d_bench.types import Question


def scenes_of(questions: Iterable[Question]) -> set[str]:
    """The scenes `questions` are about."""
    return {q.scene_key for q in questions}


def split_by_scene(questions: Sequence[Question], at_most: int) -> tuple[list[Question], list[Question]]:
    """The questions of the first whole scenes (in order of first appearance) that together stay
    within `at_most` questions, and the questions of every other scene. The first part is empty
    when the first scene alone has more than `at_most` questions."""
    by_scene: dict[str, list[Question]] = {}
    for question in questions:
        by_scene.setdefault(question.scene_key, []).append(question)
    chosen: set[str] = set()
    count = 0
    for scene, asked in by_scene.items():
        if count + len(asked) > at_most:
            break
        chosen.add(scene)
        count += len(asked)
    return [q for q in questions if q.scene_key in chosen], [q for q in questions if q.scene_key not in chosen]
