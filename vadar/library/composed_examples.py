"""Worked examples composed of the library's relation helpers, for spatial questions no helper
answers whole.

"What color is the cube behind the sphere that is left of the cylinder?" needs two relations and an
attribute. Where the build admitted `_objects_behind` and `_objects_left_of` but no question-shape
helper for the shape, the Program agent used to be shown the fixed example (a loop comparing
depths) and copied it: on 40 held-out CLEVR questions a 20-question build's library lost 3 of 6
one-hop questions static-api had right, every lost program a depth loop calling no helper. The
composition is known from the question's form alone (its answer kind and the relations it names,
in the order it names them), so the example is written here, with made-up objects, as calls of the
admitted helpers with their own signatures: the model fills in its noun phrases.

Only helpers whose name claims a relation and whose signature takes the reference and the
candidates to choose from (`claims.claim_of`: `_objects_left_of(image, bbox, candidates)`) are
composed, those the ground-truth check admits, and for "Is the X the same color as the Y?", "Is
there another X of the same color as the Y?" and "...the same color as the Y; what shape is it?"
the helper whose name claims that shared attribute of two boxes (`_same_color(image, bbox1, bbox2)`);
a question naming a step no such helper covers gets no example from here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from vadar.library.claims import claimed_helpers
from vadar.library.measure_examples import measure_example
from vadar.library.shape_helpers import catalogue_example
from vadar.programs.api_text import ExampleCall
from vadar.programs.question_form import parse_question
from vadar.programs.question_shape import shape_of


class _Function(Protocol):
    name: str
    signature: str


_MENTIONS = re.compile(r"\b(left)\b|\b(right)\b|\b(in front)\b|\b(behind)\b", re.IGNORECASE)
_AND = re.compile(r"\band\b", re.IGNORECASE)
_RELATION_OF_GROUP = ("left", "right", "front", "behind")
_SAID = {"left": "left of", "right": "right of", "front": "in front of", "behind": "behind"}
_NOUNS = ("cylinder", "sphere", "cube")  # made-up objects of a chain, outer last
_ANCHOR = ("red ball", "ball")  # the object a chain starts from: its description and variable
_MOST_RELATIONS = 3  # CLEVR's longest chains (three_hop)


def relations_in_order(question: str) -> list[str]:
    """The spatial relations `question` names, in the order it names them ("the cube behind the
    sphere that is left of ..." is behind, then left): the first is the answer's own relation."""
    return [_RELATION_OF_GROUP[next(i for i, g in enumerate(m.groups()) if g)] for m in _MENTIONS.finditer(question)]


def both_relations(question: str) -> bool:
    """Whether the question names two relations of one object, joined by "and" ("the cube that is
    both left of the ball and behind the cylinder"), not a chain: each has its own reference."""
    mentions = list(_MENTIONS.finditer(question))
    return len(mentions) == 2 and bool(_AND.search(question, mentions[0].end(), mentions[1].start()))


def relation_helpers(functions: Iterable[_Function]) -> dict[str, str]:
    """For each relation, the helper returning the objects in it among the candidates it is given."""
    return claimed_helpers(functions, "relation", ("box", "candidates"))


def same_helpers(functions: Iterable[_Function]) -> dict[str, str]:
    """For each attribute, the helper telling whether two boxed objects share it (`_same_color`)."""
    return claimed_helpers(functions, "same", ("box", "box"))


def composed_example(question: str, functions: Iterable[_Function]) -> ExampleCall | None:
    """A worked program for a spatial count, existence or attribute question of the same chain as
    `question`, or a yes/no question whether two objects share an attribute, as calls of the
    library's relation and same-attribute helpers; None where a step it names has no helper."""
    functions = list(functions)
    shape = shape_of(question)
    relations = relations_in_order(question)
    helpers = relation_helpers(functions)
    if len(relations) > _MOST_RELATIONS or any(relation not in helpers for relation in relations):
        return None
    if shape.answer == "yes/no" and shape.relation == "shared" and shape.subject is not None:
        same = same_helpers(functions).get(shape.subject)
        return _compared(shape.subject, same, relations[:2], helpers) if same is not None else None
    if shape.relation == "shared" and shape.answer in ("exists", "attribute") and not relations:
        return _sharing(shape.answer, shape.subject, question, same_helpers(functions))
    if shape.relation != "spatial" or not relations or shape.answer not in ("count", "exists", "attribute"):
        return None
    attribute = shape.subject if shape.answer == "attribute" and shape.subject else "color"
    if both_relations(question):
        return _both(shape.answer, attribute, relations, helpers)
    return _written(shape.answer, attribute, relations, helpers)


def _written(answer: str, attribute: str, relations: Sequence[str],
             helpers: dict[str, str]) -> ExampleCall:
    """The example question and its program: from the anchor outward, one helper call per relation
    (the last relation the question names is the one nearest the anchor)."""
    nouns = _NOUNS[-len(relations):]  # inner to outer; the answer's object is the last
    described, reference = _ANCHOR
    lines = [f'{reference} = loc(image, "{described}")[0]']
    phrase = f"the {described}"
    for position, (noun, relation) in enumerate(zip(nouns, reversed(relations), strict=True)):
        lines.append(f'{noun}s = {helpers[relation]}(image, {reference}, loc(image, "{noun}"))')
        if position < len(nouns) - 1:
            lines.append(f"{noun} = {noun}s[0]")
            phrase = f"the {noun} that is {_SAID[relation]} {phrase}"
        else:
            phrase = f"{_SAID[relation]} {phrase}"
        reference = noun
    return _finished(answer, attribute, nouns[-1], phrase, lines)


def _both(answer: str, attribute: str, relations: Sequence[str], helpers: dict[str, str]) -> ExampleCall:
    """The example of an object in two relations to two references: the second filters the first's."""
    first, second = relations
    lines = ['ball = loc(image, "red ball")[0]', 'cylinder = loc(image, "cylinder")[0]',
             f'cubes = {helpers[first]}(image, ball, loc(image, "cube"))',
             f"cubes = {helpers[second]}(image, cylinder, cubes)"]
    return _finished(answer, attribute, "cube", f"both {_SAID[first]} the red ball and {_SAID[second]} the cylinder",
                     lines)


def _compared(attribute: str, same: str, relations: Sequence[str], helpers: dict[str, str]) -> ExampleCall:
    """Whether two objects share an attribute, each found by `loc` or, where the question names a
    relation, by the relation helper from an anchor: the first object's first, the second's next."""
    lines, described = [], []
    for (noun, anchor), relation in zip((("cube", "ball"), ("sphere", "cylinder")),
                                        [*relations, None, None], strict=False):
        if relation is None:
            lines.append(f'{noun} = loc(image, "{noun}")[0]')
            described.append(f"the {noun}")
            continue
        lines += [f'{anchor} = loc(image, "{anchor}")[0]',
                  f'{noun} = {helpers[relation]}(image, {anchor}, loc(image, "{noun}"))[0]']
        described.append(f"the {noun} {_SAID[relation]} the {anchor}")
    lines.append(f'final_result = "yes" if {same}(image, cube, sphere) else "no"')
    return ExampleCall(f"Is {described[0]} the same {attribute} as {described[1]}?", "\n".join(lines))


def _sharing(answer: str, subject: str | None, question: str, same: dict[str, str]) -> ExampleCall | None:
    """Whether another object shares an attribute with a reference, or what another attribute of
    the one that does is ("...the same material as the brown ball; what shape is it?"): the others
    filtered by the shared attribute's `_same_` helper. A 40-question library answered 6 of 33
    held-out questions of the second kind, its programs calling the `_same_` helper and dropping it."""
    shared = parse_question(question).shared_attribute
    if shared is None or shared not in same:
        return None
    lines = ['ball = loc(image, "red ball")[0]',
             f'cubes = [box for box in loc(image, "cube") if not same_object(image, box, ball) '
             f'and {same[shared]}(image, box, ball)]']
    if answer == "exists":
        lines.append('final_result = "yes" if len(cubes) > 0 else "no"')
        return ExampleCall(f"Is there another cube that has the same {shared} as the red ball?", "\n".join(lines))
    asked = subject if subject not in (None, shared) else next(a for a in ("shape", "color") if a != shared)
    lines.append(f'final_result = vqa(image, "What {asked} is this object?", cubes[0])')
    return ExampleCall(f"There is another cube that has the same {shared} as the red ball; what {asked} is it?",
                       "\n".join(lines))


def _finished(answer: str, attribute: str, outer: str, phrase: str, lines: list[str]) -> ExampleCall:
    """The question and the last line, by the answer kind, over the objects found (`{outer}s`)."""
    if answer == "count":
        asked = f"How many {outer}s are {phrase}?"
        lines.append(f"final_result = len({outer}s)")
    elif answer == "exists":
        asked = f"Are there any {outer}s {phrase}?"
        lines.append(f'final_result = "yes" if len({outer}s) > 0 else "no"')
    else:
        asked = f"What {attribute} is the {outer} {phrase}?"
        lines.append(f'final_result = vqa(image, "What {attribute} is this object?", {outer}s[0])')
    return ExampleCall(asked, "\n".join(lines))


def fallback_example(question: str, names: Iterable[str], functions: Sequence[_Function]) -> ExampleCall | None:
    """The worked example where the build has no right program of the question's shape: the
    catalogue's where a library helper (of `names`) answers the shape in one call, else one composed
    of the relation helpers among `functions` (`composed_example`) or of their measure helpers
    (`measure_examples`), else None (the fixed example)."""
    return (catalogue_example(question, names) or composed_example(question, functions)
            or measure_example(question, functions))
