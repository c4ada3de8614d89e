"""Ground-truth cases for question-shape helpers: every value of every parameter, not only those the
build questions took.

A question-shape helper is searched and admitted by the outcomes of its shape's build questions, and
those cannot see a branch no question took: a CLEVR build admitted a `_count_same_attribute` that
compared materials when asked for color and sizes when asked for shape, and an
`_exists_same_attribute` with no 'size' branch, on 4 and 7 questions. Where the scenes carry ground
truth, each catalogue helper whose parameters pick a relation or an attribute is also run on cases
built from the build scenes, each value of those parameters in turn, and its answer compared with
the truth (`vadar.library.truth_checks` runs them, beside the checks of named claims).

A description argument is "objects", and the truth is computed over what `loc` finds for it, so a
case checks the helper's own logic, not the detector's reading of a phrase; a single object's
description is its unique phrase, one `loc` resolves to exactly that object. A reference box is
given as another `loc` call reads it, a pixel off (`_reference`). The case record and its judge are
in `truth_case`, the measures' cases in `measure_truth`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import permutations

from omni3d_bench.relations import ATTRIBUTES, RELATIONS, related_objects, relation_holds
from vadar.library.measure_truth import MEASURE_CASES
from vadar.library.truth_case import ANY, CaseMaker, SceneView, ShapeCase


def _is_related(view: SceneView) -> Iterator[ShapeCase]:
    for relation in RELATIONS:
        verdicts = {(a, b): relation_holds(view.scene, a, b, relation) for a, b in permutations(range(len(view.boxes)), 2)}
        true = [p for p, holds in verdicts.items() if holds is True]
        false = [p for p, holds in verdicts.items() if holds is False]
        for (a, b), holds in [(p, h) for pair in zip(true, false) for p, h in zip(pair, (True, False))]:
            (box, shown), (reference, named) = view.box(a), view.box(b)
            yield ShapeCase((box, relation, reference), (shown, repr(relation), named), holds)


def _related_counts(view: SceneView, exists: bool) -> Iterator[ShapeCase]:
    for relation in RELATIONS:
        for reference in range(len(view.boxes)):
            related = related_objects(view.scene, reference, relation)
            if related is None:
                continue
            count = len((related & view.everything) - {reference})
            box, shown = view.box(reference)
            yield ShapeCase((ANY, relation, box), (repr(ANY), repr(relation), shown), count > 0 if exists else count)


def _attribute_of_related(view: SceneView) -> Iterator[ShapeCase]:
    for relation, attribute in zip(RELATIONS, [*ATTRIBUTES, *ATTRIBUTES]):
        for reference in range(len(view.boxes)):
            related = sorted((related_objects(view.scene, reference, relation) or set()) & set(view.phrases))
            target = next((t for t in related if attribute in view.known(t)), None)
            if target is None:
                continue
            box, shown = view.box(reference)
            phrase = view.phrases[target]
            yield ShapeCase((attribute, phrase, relation, box), (repr(attribute), repr(phrase), repr(relation), shown),
                            str(view.attribute(target, attribute)))


def _objects_along(view: SceneView) -> Iterator[ShapeCase]:
    """Chains of two relations, every relation in each place: `["objects", first, B, second, C]` picks the
    objects `first` of B when B is `second` of C, and none when it is not (a walk that skips the inner
    relation, or takes the relations in the question's order from the wrong end, counts others)."""
    for first, second in zip(RELATIONS, RELATIONS[1:] + RELATIONS[:1]):
        for link, end in permutations(sorted(view.phrases), 2):
            holds = relation_holds(view.scene, link, end, second)
            related = related_objects(view.scene, link, first)
            if holds is None or related is None:
                continue
            count = len((related & view.everything) - {link}) if holds else 0
            chain = [ANY, first, view.phrases[link], second, view.phrases[end]]
            yield ShapeCase((chain,), (repr(chain),), count, counted=True)


def _attribute_of(view: SceneView) -> Iterator[ShapeCase]:
    for attribute in ATTRIBUTES:
        for index in range(len(view.boxes)):
            if view.attribute(index, attribute) is not None:
                box, shown = view.box(index)
                yield ShapeCase((attribute, box), (repr(attribute), shown), str(view.attribute(index, attribute)))


def _same_attribute(view: SceneView) -> Iterator[ShapeCase]:
    count = len(view.boxes)
    for attribute in ATTRIBUTES:
        pairs = [(a, b) for a in range(count) for b in range(a + 1, count) if attribute in view.known(a, b)]
        alike = [p for p in pairs if view.attribute(p[0], attribute) == view.attribute(p[1], attribute)]
        unlike = [p for p in pairs if p not in alike]
        for a, b in [p for pair in zip(alike, unlike) for p in pair]:
            (first, one), (second, other) = view.box(a), view.box(b)
            yield ShapeCase((attribute, first, second), (repr(attribute), one, other), (a, b) in alike)


def _same_counts(view: SceneView, exists: bool) -> Iterator[ShapeCase]:
    for attribute in ATTRIBUTES:
        for reference in range(len(view.boxes)):
            if attribute not in view.known(reference):
                continue
            value = view.attribute(reference, attribute)
            count = sum(1 for i in view.everything - {reference} if view.attribute(i, attribute) == value)
            box, shown = _reference(view, reference)
            yield ShapeCase((attribute, ANY, box), (repr(attribute), repr(ANY), shown), count > 0 if exists else count)


def _attribute_of_same(view: SceneView) -> Iterator[ShapeCase]:
    for shared in ATTRIBUTES:
        for reference in range(len(view.boxes)):
            if shared not in view.known(reference):
                continue
            value = view.attribute(reference, shared)
            same = [i for i in view.everything - {reference} if view.attribute(i, shared) == value]
            if len(same) != 1:
                continue
            asked = next((a for a in view.known(same[0]) if a != shared), None)
            if asked is None:
                continue
            box, shown = _reference(view, reference)
            yield ShapeCase((asked, ANY, shared, box), (repr(asked), repr(ANY), repr(shared), shown),
                            str(view.attribute(same[0], asked)))


def _lists(view: SceneView) -> list[tuple[list[int], list[int]]]:
    """Pairs of object lists of different sizes, overlapping, as loc or a relation helper returns them."""
    count = len(view.boxes)
    return [(list(range(0, k)), list(range(k - 1 if k > 1 else 0, count))) for k in range(1, count)][:3]


def _compare_counts(view: SceneView) -> Iterator[ShapeCase]:
    for (first, second), order in zip(_lists(view), ("more", "fewer", "equal")):
        truth = {"more": len(first) > len(second), "fewer": len(first) < len(second),
                 "equal": len(first) == len(second)}[order]
        yield ShapeCase(([view.boxes[i] for i in first], [view.boxes[i] for i in second], order),
                        (f"{len(first)} boxes", f"{len(second)} boxes", repr(order)), truth)


def _reread(box: Sequence[float]) -> list[float]:
    """The same object's box as another `loc` call reads it: a pixel off. Two detector readings of one
    object are never the same four numbers, so a body that tells objects apart by list equality (a
    CLEVR build admitted `_count_either` with `box in second`) counts an object in both lists twice.
    A box under `REREAD_LEAST` pixels a side is kept: a pixel would move it off its object (IoU < 0.5)."""
    if min(box[2] - box[0], box[3] - box[1]) < REREAD_LEAST:
        return list(box)
    return [coordinate + 1.0 for coordinate in box]


REREAD_LEAST = 8


def _reference(view: SceneView, index: int) -> tuple[list[float], str]:
    """A reference object's box as the program's own `loc` call read it, a pixel off the box `loc(image,
    "objects")` gives the helper: a body that skips the reference by `box != reference` (a 30-question
    CLEVR build admitted such a `_count_same_attribute`) counts it among the others, as it would with
    a detector; one that asks `same_object` does not."""
    box, shown = view.box(index)
    return _reread(box), shown


def _count_either(view: SceneView) -> Iterator[ShapeCase]:
    for first, second in _lists(view):
        yield ShapeCase(([view.boxes[i] for i in first], [_reread(view.boxes[i]) if i in first else view.boxes[i]
                                                          for i in second]),
                        (f"{len(first)} boxes", f"{len(second)} boxes, {len(set(first) & set(second))} of them "
                         "also in the first"), len(set(first) | set(second)))


CASES: dict[str, CaseMaker] = {
    "_is_related": _is_related,
    "_count_related": lambda view: _related_counts(view, exists=False),
    "_exists_related": lambda view: _related_counts(view, exists=True),
    "_attribute_of_related": _attribute_of_related,
    "_objects_along": _objects_along,
    "_attribute_of": _attribute_of,
    "_same_attribute": _same_attribute,
    "_count_same_attribute": lambda view: _same_counts(view, exists=False),
    "_exists_same_attribute": lambda view: _same_counts(view, exists=True),
    "_attribute_of_same": _attribute_of_same,
    "_compare_counts": _compare_counts,
    "_count_either": _count_either,
    **MEASURE_CASES,
}
"""The catalogue helpers ground truth checks, by name; each case maker covers every value of the
helper's relation or attribute parameter the scene can show."""

def shape_cases(name: str, views: Sequence[SceneView], limit: int) -> list[tuple[int, ShapeCase]]:
    """At most `limit` cases for the helper `name` over the scenes, each with the position of its scene
    in `views`, one value of its parameters after another in turn (every relation or attribute shows
    before any shows twice); none for a helper ground truth cannot check."""
    maker = CASES.get(name)
    if maker is None:
        return []
    by_value: dict[str, list[tuple[int, ShapeCase]]] = {}
    for index, view in enumerate(views):
        for case in maker(view):
            by_value.setdefault(case.value, []).append((index, case))
    turns = [iter(cases) for cases in by_value.values()]
    cases: list[tuple[int, ShapeCase]] = []
    while turns and len(cases) < limit:
        for turn in list(turns):
            case = next(turn, None)
            if case is None:
                turns.remove(turn)
            elif len(cases) < limit:
                cases.append(case)
    return cases
