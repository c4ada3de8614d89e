"""Question-shape helpers, one level up: one call answers a question of a common shape.

A 1.5B model fills in a call well and composes four steps badly. Step helpers (a relation, a shared
attribute, a count) leave the composition to the program; a question-shape helper carries it: "How
many purple things are behind the red cube?" is `_count_related(image, "purple things", "behind",
loc(image, "red cube")[0])`, whatever the objects are called. The build proposes these once the
build questions show enough of a shape (`vadar.library.shape_route`); the API agent implements
them over the modules and the step helpers, and each is searched and admitted by outcome on the
build questions of its shape; where the scenes carry ground truth, it is also checked on every
value of its relation or attribute parameter (`vadar.library.shape_truth`), which those questions
may never take.

The catalogue below names each helper's signature and docstring; which question shapes it answers
comes from `programs.question_shape` (the answer kind and the relation family). Its helpers take
the question's noun phrases as strings and the objects a chain of relations resolved as boxes, so
a chained question ("the cube left of the sphere behind the cylinder") is a few calls of
`_find_related`, then one of its shape's helper.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from vadar.library.claims import named_relations
from vadar.programs.api_text import ExampleCall
from vadar.programs.question_shape import QuestionShape, shape_of

ShapeKey = tuple[str, str | None]
"""A shape as the catalogue keys it: the answer kind and the relation family (`QuestionShape`)."""

RELATION_VALUES = "'left', 'right', 'front' or 'behind'"
ATTRIBUTE_VALUES = "'color', 'shape', 'material' or 'size'"
RELATION_HOW = (" 'front' and 'behind' compare depth() (smaller is closer to the camera), 'left' and 'right' the "
                "boxes' horizontal centres.")
SAME_HOW = (" Count every box of `first`, then each box of `second` that is none of them: `not any(same_object(image, "
            "box, other) for other in first)`.")
"""Told only "two boxes are one object when same_object(image, box, other) says so", 3 of the 5 replies of
a 100-question CLEVR build's `_count_either` passed a whole list to `same_object`, and the other 2 counted
only the boxes that are the other list's first box."""
ATTRIBUTE_HOW = " An attribute is what vqa(image, f'What {attribute} is this object?', box) answers about a box."
ASKED_HOW = " Read the `asked` attribute of the object found with vqa(image, f'What {asked} is this object?', box)."
HEIGHT_HOW = " An object's height in metres is (box[3] - box[1]) * depth(image, box) / image.focal_length."
CENTRE_HOW = (" Nearness is the distance between 3D centres: a box's centre is x = ((box[0] + box[2]) / 2 - image.width / 2) "
              "* d / image.focal_length, y = ((box[1] + box[3]) / 2 - image.height / 2) * d / image.focal_length, z = d, "
              "with d = depth(image, box).")
WALK = "Walk it from the end"
"""How every written walk of a chain begins (`CHAIN_WALK`, `shape_proposal.chain_walk`): what follows it in
a docstring is for the helper's implementer, not for the programs that call it (`for_programs`)."""
CHAIN_WALK = (
    WALK + ": `found = loc(image, chain[-1])[0]`, then for each `i` in `range(len(chain) - 2, 0, -2)`: "
    "`boxes = [box for box in loc(image, chain[i - 1]) if not same_object(image, box, found) and (('left' in chain[i] "
    "and box[0] + box[2] < found[0] + found[2]) or ('right' in chain[i] and box[0] + box[2] > found[0] + found[2]) or "
    "('front' in chain[i] and depth(image, box) < depth(image, found)) or ('behind' in chain[i] and depth(image, box) "
    "> depth(image, found)))]`; return [] when `boxes` is empty, else `found = boxes[0]`; after the walk, return "
    "`boxes` (every box, not one).")
"""How `_objects_along` walks its chain, each relation told by the word it holds (programs copy the question's
'to the left of'). Told the comprehension with `and ...` for the relation, all 4 samples of a CLEVR build's
search left the relation out or compared one coordinate; `shape_proposal.chain_walk` writes it with the
library's relation helpers where they do all four."""
# The generated benchmark's size-ratio programs subtracted two right heights in 12 of 20 questions
# (+ the metric-height helper): a ratio, a fit count and a depth difference each carry their arithmetic.
# A CLEVR build's 13 samples of `_attribute_of_same` shown only the attribute hint found the object
# sharing `shared` with the `_same_` helpers, then returned the word `asked` itself ("color").
# The modules a body builds on, said once per helper: asked for `_attribute_of` without it, the model
# returned constants or read `image.bbox_colors` in all 13 samples.


@dataclass(frozen=True)
class ShapeHelper:
    """One question-shape helper the build may propose, and the shapes of the questions it answers."""

    name: str
    signature: str
    docstring: str
    shapes: tuple[ShapeKey, ...]  # the shapes whose programs it serves (proposal support, shown first)
    links: tuple[ShapeKey, ...] = ()  # of those, the shapes it serves as one step, not the whole answer
    subjects: tuple[str, ...] = ()  # the measures its shapes must be about ('height'); empty: any
    steps: tuple[str, ...] = ()  # step labels (`coverage.Step`) it composes beyond its parameters' ('measure:height')
    chained: bool = False  # answers only a chain of two relations or more, one relation per object

    @property
    def what(self) -> str:
        """The docstring without the hints of how the modules do its steps: what every version the
        route proposes begins with (`shape_proposal.proposed_docstring` drops a hint a step helper replaces)."""
        text = self.docstring
        for hint in (RELATION_HOW, ATTRIBUTE_HOW, ASKED_HOW, HEIGHT_HOW, CENTRE_HOW, CHAIN_WALK):
            text = text.replace(hint, "")
        return text

    def answers(self, shape: QuestionShape) -> bool:
        return ((shape.answer, shape.relation) in self.shapes and (not self.subjects or shape.subject in self.subjects)
                and (not self.chained or (shape.chain.hops >= 2 and not shape.chain.branched)))

    def answers_whole(self, shape: QuestionShape) -> bool:
        """Whether one call of it (with boxes found for the question's objects) answers the question."""
        return self.answers(shape) and (shape.answer, shape.relation) not in self.links


_SPATIAL: tuple[ShapeKey, ...] = (("count", "spatial"), ("exists", "spatial"), ("attribute", "spatial"),
                                  ("yes/no", "spatial"))
_CHAINS: tuple[ShapeKey, ...] = (("count", "spatial"), ("exists", "spatial"), ("attribute", "spatial"))
"""The shapes whose chained questions one call of `_objects_along` answers, with `len`, a test or `vqa` around it:
the relation helpers one level up take one relation, and 10 of the 12 programs a CLEVR build wrote with
`_attribute_of_related` for chained questions called it once and dropped the other relations."""

CATALOGUE: tuple[ShapeHelper, ...] = (
    ShapeHelper(
        "_find_related", "(image: Image, description: str, relation: str, reference: BBox) -> BBox",
        f"The box of the object matching `description` that is `relation` ({RELATION_VALUES}, as seen from the "
        "camera) of the object in `reference`; never the reference itself. A link of a chain: \"the cube left "
        "of the sphere\" is _find_related(image, 'cube', 'left', sphere_box)." + RELATION_HOW, _SPATIAL, links=_SPATIAL),
    ShapeHelper(
        "_objects_along", "(image: Image, chain: list[str]) -> list[BBox]",
        "The boxes of the objects a chain of relations picks, `chain` written in the question's order: a noun "
        f"phrase, a relation ({RELATION_VALUES}, as seen from the camera), a noun phrase, ..., a noun phrase. "
        "\"the cubes left of the sphere that is behind the red cylinder\" is ['cubes', 'left', 'sphere', 'behind', "
        "'red cylinder']. " + CHAIN_WALK, _CHAINS, chained=True),
    ShapeHelper(
        "_is_related", "(image: Image, box: BBox, relation: str, reference: BBox) -> bool",
        f"Whether the object in `box` is `relation` ({RELATION_VALUES}, as seen from the camera) of the "
        "object in `reference`." + RELATION_HOW, (("yes/no", "spatial"),)),
    ShapeHelper(
        "_count_related", "(image: Image, description: str, relation: str, reference: BBox) -> int",
        f"How many objects matching `description` are `relation` ({RELATION_VALUES}) of the object in "
        "`reference`; the reference itself is never counted." + RELATION_HOW, (("count", "spatial"),)),
    ShapeHelper(
        "_exists_related", "(image: Image, description: str, relation: str, reference: BBox) -> bool",
        f"Whether any object matching `description` is `relation` ({RELATION_VALUES}) of the object in "
        "`reference` (the reference itself never counts)." + RELATION_HOW, (("exists", "spatial"),)),
    ShapeHelper(
        "_attribute_of_related",
        "(image: Image, attribute: str, description: str, relation: str, reference: BBox) -> str",
        f"The `attribute` ({ATTRIBUTE_VALUES}) of the object matching `description` that is `relation` "
        f"({RELATION_VALUES}) of the object in `reference`." + RELATION_HOW + ATTRIBUTE_HOW, (("attribute", "spatial"),)),
    ShapeHelper(
        "_attribute_of", "(image: Image, attribute: str, box: BBox) -> str",
        f"The `attribute` ({ATTRIBUTE_VALUES}) of the object in `box`, as one word." + ATTRIBUTE_HOW,
        (("attribute", None), ("attribute", "spatial"), ("attribute", "shared")),
        links=(("attribute", "spatial"), ("attribute", "shared"))),
    ShapeHelper(
        "_same_attribute", "(image: Image, attribute: str, first: BBox, second: BBox) -> bool",
        f"Whether the objects in `first` and `second` have the same `attribute` ({ATTRIBUTE_VALUES})." + ATTRIBUTE_HOW,
        (("yes/no", "shared"),)),
    ShapeHelper(
        "_count_same_attribute", "(image: Image, attribute: str, description: str, reference: BBox) -> int",
        f"How many objects matching `description`, other than the one in `reference`, have the same "
        f"`attribute` ({ATTRIBUTE_VALUES}) as the object in `reference`." + ATTRIBUTE_HOW, (("count", "shared"),)),
    ShapeHelper(
        "_exists_same_attribute", "(image: Image, attribute: str, description: str, reference: BBox) -> bool",
        f"Whether any object matching `description`, other than the one in `reference`, has the same "
        f"`attribute` ({ATTRIBUTE_VALUES}) as the object in `reference`." + ATTRIBUTE_HOW, (("exists", "shared"),)),
    ShapeHelper(
        "_attribute_of_same",
        "(image: Image, asked: str, description: str, shared: str, reference: BBox) -> str",
        f"The `asked` attribute ({ATTRIBUTE_VALUES}) of the object matching `description`, other than the "
        "one in `reference`, that has the same `shared` attribute as the object in `reference`." + ASKED_HOW,
        (("attribute", "shared"),)),
    ShapeHelper(
        "_count_either", "(image: Image, first: list[BBox], second: list[BBox]) -> int",
        "How many objects are in `first` or `second` (or both), an object in both lists counted once. Each "
        "list is what loc or a relation helper returns, so either side may name a relation: \"cubes or "
        "spheres left of the ball\" is _count_either(image, loc(image, 'cubes'), spheres_left_of_ball). A "
        "description before 'either' belongs to both sides: \"large things that are either cubes or red "
        "spheres\" is _count_either(image, loc(image, 'large cubes'), loc(image, 'large red spheres'))." + SAME_HOW,
        (("count", "either"),)),
    ShapeHelper(
        "_compare_counts", "(image: Image, first: list[BBox], second: list[BBox], order: str) -> bool",
        "Whether `first` holds more, fewer or as many objects as `second`, as `order` ('more', 'fewer' or "
        "'equal') says. Each list is what loc or a relation helper returns, so either side may name a relation.",
        (("yes/no", "count comparison"),)),
    ShapeHelper(
        "_height_ratio", "(image: Image, first: BBox, second: BBox) -> float",
        "How many times taller the object in `first` is than the object in `second`: the first's height divided "
        "by the second's (a ratio, never a difference)." + HEIGHT_HOW,
        (("measure", "ratio"),), subjects=("height",), steps=("measure:height",)),
    ShapeHelper(
        "_stack_count", "(image: Image, unit: BBox, whole: BBox) -> int",
        "How many objects as tall as the one in `unit`, stacked on top of each other, fit within the height of "
        "the one in `whole`: math.floor of the whole's height divided by the unit's." + HEIGHT_HOW,
        (("count", "ratio"),), subjects=("height",), steps=("measure:height",)),
    ShapeHelper(
        "_depth_difference", "(image: Image, first: BBox, second: BBox) -> float",
        "How much farther from the camera the object in `first` is than the object in `second`, in metres: "
        "depth(image, first) - depth(image, second).", (("measure", "difference"),), subjects=("depth",)),
    ShapeHelper(
        "_height_of_neighbour", "(image: Image, side: str, reference: BBox) -> float",
        "The height in metres of the object immediately `side` ('left' or 'right') of the object in `reference` "
        "in the image: of the objects whose box centre is on that side, the one whose centre is nearest in x; "
        "never the reference itself." + HEIGHT_HOW,
        (("measure", "spatial"),), subjects=("height",), steps=("measure:height",)),
    ShapeHelper(
        "_attribute_of_nearest", "(image: Image, attribute: str, description: str, reference: BBox) -> str",
        f"The `attribute` ({ATTRIBUTE_VALUES}) of the object matching `description` ('object' for any) that is "
        "nearest to the object in `reference`; never the reference itself." + CENTRE_HOW + ATTRIBUTE_HOW,
        (("attribute", "nearest"),)),
    ShapeHelper(
        "_is_closer_to", "(image: Image, box: BBox, first: BBox, second: BBox) -> bool",
        "Whether the object in `box` is closer to the object in `first` than to the object in `second`."
        + CENTRE_HOW, (("yes/no", "distance"),)),
)
"""Every question-shape helper, in the order the build proposes them when their support ties."""

_BY_NAME = {helper.name: helper for helper in CATALOGUE}

_CALLS: dict[str, ExampleCall] = {name: ExampleCall(question, code) for name, question, code in (
    ("_find_related", "What color is the cube that is left of the sphere?",
     'sphere = loc(image, "sphere")[0]\ncube = _find_related(image, "cube", "left", sphere)'),
    ("_objects_along", "What color is the cube that is left of the sphere behind the red cylinder?",
     'cube = _objects_along(image, ["cube", "left", "sphere", "behind", "red cylinder"])[0]\n'
     'final_result = vqa(image, "What color is this object?", cube)'),
    ("_is_related", "Is the red cube behind the small ball?",
     'cube = loc(image, "red cube")[0]\nball = loc(image, "small ball")[0]\n'
     'final_result = "yes" if _is_related(image, cube, "behind", ball) else "no"'),
    ("_count_related", "How many green things are in front of the large cylinder?",
     'cylinder = loc(image, "large cylinder")[0]\nfinal_result = _count_related(image, "green things", "front", cylinder)'),
    ("_exists_related", "Are there any metal spheres right of the blue cube?",
     'cube = loc(image, "blue cube")[0]\n'
     'final_result = "yes" if _exists_related(image, "metal spheres", "right", cube) else "no"'),
    ("_attribute_of_related", "What material is the big thing behind the red ball?",
     'ball = loc(image, "red ball")[0]\n'
     'final_result = _attribute_of_related(image, "material", "big thing", "behind", ball)'),
    ("_attribute_of", "What shape is the small yellow thing?",
     'thing = loc(image, "small yellow thing")[0]\nfinal_result = _attribute_of(image, "shape", thing)'),
    ("_same_attribute", "Is the cube the same color as the sphere?",
     'cube = loc(image, "cube")[0]\nsphere = loc(image, "sphere")[0]\n'
     'final_result = "yes" if _same_attribute(image, "color", cube, sphere) else "no"'),
    ("_count_same_attribute", "How many other things are the same size as the gray cylinder?",
     'cylinder = loc(image, "gray cylinder")[0]\n'
     'final_result = _count_same_attribute(image, "size", "things", cylinder)'),
    ("_exists_same_attribute", "Is there another ball of the same material as the cube?",
     'cube = loc(image, "cube")[0]\n'
     'final_result = "yes" if _exists_same_attribute(image, "material", "ball", cube) else "no"'),
    ("_attribute_of_same", "What color is the other cylinder that is the same size as the red cube?",
     'cube = loc(image, "red cube")[0]\n'
     'final_result = _attribute_of_same(image, "color", "cylinder", "size", cube)'),
    ("_count_either", "How many large things are either red cubes or spheres?",
     'final_result = _count_either(image, loc(image, "large red cubes"), loc(image, "large spheres"))'),
    ("_compare_counts", "Are there more cylinders than cubes?",
     'final_result = "yes" if _compare_counts(image, loc(image, "cylinders"), loc(image, "cubes"), "more") else "no"'),
    ("_height_ratio", "How many times taller is the lamp than the red mug?",
     'lamp = loc(image, "lamp")[0]\nmug = loc(image, "red mug")[0]\nfinal_result = _height_ratio(image, lamp, mug)'),
    ("_stack_count", "How many books as tall as the book could be stacked within the height of the shelf?",
     'book = loc(image, "book")[0]\nshelf = loc(image, "shelf")[0]\nfinal_result = _stack_count(image, book, shelf)'),
    ("_depth_difference", "How much farther from the camera is the sofa than the green chair, in meters?",
     'sofa = loc(image, "sofa")[0]\nchair = loc(image, "green chair")[0]\n'
     'final_result = _depth_difference(image, sofa, chair)'),
    ("_height_of_neighbour", "How tall, in meters, is the object immediately to the left of the desk?",
     'desk = loc(image, "desk")[0]\nfinal_result = _height_of_neighbour(image, "left", desk)'),
    ("_attribute_of_nearest", "What color is the object closest to the sofa?",
     'sofa = loc(image, "sofa")[0]\nfinal_result = _attribute_of_nearest(image, "color", "object", sofa)'),
    ("_is_closer_to", "Is the lamp closer to the desk than to the blue chair?",
     'lamp = loc(image, "lamp")[0]\ndesk = loc(image, "desk")[0]\nchair = loc(image, "blue chair")[0]\n'
     'final_result = "yes" if _is_closer_to(image, lamp, desk, chair) else "no"'),
)}
"""A call of each catalogue helper for a question of its shape, with made-up objects: shown with the
helper in the API text until a right program of the build calls it (`catalogue_calls`)."""


_CHAIN_CALLS: dict[str, ExampleCall] = {
    "attribute": _CALLS["_objects_along"],
    "count": ExampleCall("How many spheres are in front of the large cube that is right of the gray cylinder?",
                         'final_result = len(_objects_along(image, ["spheres", "front", "large cube", "right", '
                         '"gray cylinder"]))'),
    "exists": ExampleCall("Are there any metal things behind the small ball that is left of the blue cube?",
                          'things = _objects_along(image, ["metal things", "behind", "small ball", "left", "blue cube"])\n'
                          'final_result = "yes" if things else "no"'),
}
"""`_objects_along`'s worked example by the question's answer kind: what goes around the call differs."""


def catalogue_calls(names: Iterable[str], found: Mapping[str, ExampleCall] | None = None) -> dict[str, ExampleCall]:
    """The example call of each of `names` to show: a right program's (`found`) where there is one,
    else the catalogue's own for a question-shape helper. Shown no call, programs for 9 of 10
    questions of its shape did not call an admitted `_find_related`; a small model copies a call."""
    found = dict(found or {})
    return {**{name: _CALLS[name] for name in names if name in _CALLS and name not in found}, **found}


def shape_helper(name: str) -> ShapeHelper | None:
    """The catalogue entry of a library function named `name`, None for any other helper."""
    return _BY_NAME.get(name)


def helpers_for(question: str) -> tuple[ShapeHelper, ...]:
    """The question-shape helpers that answer `question`'s shape, in catalogue order."""
    shape = shape_of(question)
    return tuple(helper for helper in CATALOGUE if helper.answers(shape))


class _Named(Protocol):
    name: str
    signature: str


F = TypeVar("F", bound=_Named)


def proposed_by_shape_route(name: str, docstring: str) -> bool:
    """Whether a stored proposal is the question-shape route's (a catalogue name and docstring), so
    a resumed build leaves it to that route, judged on its shape's questions."""
    helper = shape_helper(name)
    return helper is not None and docstring.startswith(helper.what)


def answered_by(question: str, names: Iterable[str]) -> str | None:
    """The first of `names` (library helpers) whose one call answers `question`'s shape, if any."""
    shape, present = shape_of(question), set(names)
    return next((h.name for h in CATALOGUE if h.name in present and h.answers_whole(shape)), None)


def catalogue_example(question: str, names: Iterable[str]) -> ExampleCall | None:
    """The catalogue's worked example for `question`: a whole program calling the library helper that
    answers its shape in one call (`answered_by`), shown where the build has no right program of
    the shape yet, instead of the fixed example (a depth loop, which programs copied)."""
    name = answered_by(question, names)
    if name == "_objects_along":
        return _CHAIN_CALLS[shape_of(question).answer]
    return _CALLS[name] if name is not None else None


def untried(store: Container[str]) -> list[str]:
    """The catalogue helpers a store has never held: the shape route may still try them."""
    return [helper.name for helper in CATALOGUE if helper.name not in store]


def is_catalogue_helper(helper: _Named) -> bool:
    """Whether a library function is a question-shape helper: the catalogue's name and signature (a
    Signature-agent helper named alike with its own signature is a step helper)."""
    entry = _BY_NAME.get(helper.name)
    return entry is not None and entry.signature == helper.signature


def for_programs(function: F) -> F:
    """`function` as a program's API text shows it: a chain helper's docstring without the walk it was
    proposed with. Shown the walk (`pick = {...}`, `found = loc(image, chain[-1])[0]`, ...), programs
    for the 22 one-relation and "both" held-out CLEVR spatial questions, which the helper does not
    answer, were right on 13; with the same library and the walk left out, on 16, as without the helper."""
    docstring = getattr(function, "docstring", "")
    cut = docstring.find(WALK) if isinstance(docstring, str) else -1
    if cut <= 0:
        return function
    return dataclasses.replace(function, docstring=docstring[:cut].rstrip())  # type: ignore[type-var]


def shape_helpers_first(functions: Iterable[F], question: str) -> list[F]:
    """`functions` with the question's shape helpers first (the order otherwise kept): the Program
    agent reads the one call that answers its question before the steps it could compose. Where one
    of them answers the question whole, the question-shape helpers of other shapes are left out (and
    for a chain, the one-relation step helpers, `_relation_step`), each as programs read it (`for_programs`):
    listed beside `_compare_counts`, `_count_either` drew 4 of 5 count-comparison programs of a
    CLEVR build to a union count compared with a number."""
    functions = list(functions)
    own = {helper.name for helper in helpers_for(question)}
    answering = answered_by(question, (f.name for f in functions))
    whole = answering is not None
    chain = whole and _BY_NAME[answering].chained
    others = [f for f in functions if f.name not in own and not (whole and is_catalogue_helper(f))
              and not (chain and _relation_step(f))]
    return [for_programs(f) for f in [*(f for f in functions if f.name in own), *others]]


def _relation_step(helper: _Named) -> bool:
    """A step helper of one relation (`_objects_left_of`): left out where `_objects_along` answers the
    question. Listed with it, each with a chained build question's call as its example, the programs
    for 2 chained CLEVR questions composed them (wrongly) in 2 of 2 and never called the chain helper,
    with its worked example shown first or alone."""
    return not is_catalogue_helper(helper) and bool(named_relations(helper.name))


def supported(questions: Sequence[str]) -> list[tuple[ShapeHelper, list[int]]]:
    """Each catalogue helper with the positions of the `questions` one call of it answers, the most
    supported first (catalogue order between equals); helpers no question needs are left out. A link
    (`_find_related`) answers no question whole, so it is never here: tried first on 10 CLEVR build
    questions, mostly counts, no program called it; in six CLEVR builds no link-only use ever admitted
    one (`_find_related` refused in each, `_attribute_of` refused or retired)."""
    found = [(helper, [i for i, q in enumerate(questions) if helper.answers_whole(shape_of(q))])
             for helper in CATALOGUE]
    return sorted((pair for pair in found if pair[1]), key=lambda pair: -len(pair[1]))
