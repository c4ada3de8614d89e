"""The checks every data set loader makes once, up front, on the questions it read.

A data set fault found half-way through a run stops it at the same place on every rerun, and one
found never gives wrong numbers: two questions with one id are both answered but the results keep
one (the summary counts one twice and loses the other); a float question whose gold is "far" cannot
be scored; a mask of another size than its image is decoded at its own size (a 10000 x 10000 mask
on a 480 x 320 image took 1.76 GB). So a loader refuses the data set at once, in one line naming
the file, the question and the problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from omni3d_bench.images import name_problem
from omni3d_bench.metrics import METRICS, parse_number
from omni3d_bench.types import DatasetError, Question

NUMERIC_METRICS = frozenset({"acc@10", "mra"})
"""Metrics that read the gold answer as a number (`exact` takes numbers and words alike)."""


def check_questions(questions: Sequence[Question], where: str | Path) -> list[Question]:
    """`questions` unchanged, or `DatasetError` naming the first problem: an id used twice, an image
    file name that is not valid UTF-8, a gold answer that is not of the question's type, or a region
    mask of another size than its image."""
    seen: dict[str, int] = {}
    sizes: dict[Path, tuple[int, int] | None] = {}
    for pos, question in enumerate(questions):
        named = f"{where}: question {question.question_id!r} (#{pos})"
        if question.question_id in seen:
            raise DatasetError(f"{named} repeats the id of question #{seen[question.question_id]}; "
                               "ids must be unique.")
        seen[question.question_id] = pos
        problem = next(filter(None, map(name_problem, (question.image_path, *question.view_paths))), None) \
            or gold_problem(question) or mask_problem(question, sizes)
        if problem is not None:
            raise DatasetError(f"{named}: {problem}.")
    return list(questions)


def gold_problem(question: Question) -> str | None:
    """Why the gold answer cannot be scored as the question declares, or None (no gold: test split)."""
    gold, metric = question.answer, question.metric
    if gold is None:
        return None
    if metric is not None and metric not in METRICS:
        return f"unknown metric {metric!r}; expected one of {sorted(METRICS)}"
    numeric = metric in NUMERIC_METRICS or (metric is None and question.answer_type in ("int", "float"))
    if not numeric:
        return None
    number = parse_number(gold)
    need = f"metric {metric}" if metric is not None else f"answer type {question.answer_type}"
    if number is None:
        return f"its gold answer {_short(gold)} is not a number, as its {need} needs"
    if metric is None and question.answer_type == "int" and not number.is_integer():
        return f"its gold answer {_short(gold)} is not a whole number, as its answer type int needs"
    return None


def mask_problem(question: Question, sizes: dict[Path, tuple[int, int] | None]) -> str | None:
    """Why a region mask does not fit the question's image, or None. The image's size is read from
    its header (once per file, in `sizes`); an image that cannot be read is reported when it is used."""
    masks = [r for r in question.regions if r.mask_size is not None]
    if not masks:
        return None
    shapes = {tuple(r.mask_size) for r in masks}  # type: ignore[arg-type]
    if len(shapes) > 1:
        return f"its region masks have different sizes ({', '.join(f'{w}x{h}' for h, w in sorted(shapes))})"
    path = Path(question.image_path)
    if path not in sizes:
        sizes[path] = _image_size(path)
    size = sizes[path]
    if size is None:
        return None
    width, height = size
    for region in masks:
        if tuple(region.mask_size) != (height, width):  # type: ignore[arg-type]
            h, w = region.mask_size  # type: ignore[misc]
            return f"the mask of {region.name} is {w}x{h} pixels but the image {path.name} is {width}x{height}"
    return None


def _image_size(path: Path) -> tuple[int, int] | None:
    """(width, height) from the image file's header, without decoding it; None if unreadable."""
    from PIL import Image as PILImage

    try:
        with PILImage.open(path) as picture:
            return int(picture.width), int(picture.height)
    except Exception:  # noqa: BLE001 - a missing or broken image is reported where it is opened
        return None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
