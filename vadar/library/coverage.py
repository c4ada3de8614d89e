"""Which steps of the build's questions the library covers: what to ask the Signature agent for, and
the build's coverage figure.

A question is parsed once (`programs.question_form`, read as a shape by `programs.question_shape`,
the reading worked examples are retrieved by) into the steps a program must take beyond
finding objects: a relation ("left of the red sphere"), a shared attribute ("the same color as"),
an attribute asked for ("What material is ..."), a count, a comparison ("more spheres than
cylinders", "taller"), a measure (a height, a distance). A helper covers a step when its checkable
claim says so (`claims.named_claim`: `_objects_left_of` claims `relation:left`), or its name does
(`_count_objects` counts, `_object_color` asks a color, `_object_length` measures a length). A
build question is covered when every one of its steps has an admitted helper, or when a
question-shape helper answers its shape in one call (`vadar.library.shape_helpers`); one whose form
names no step needs only the modules and counts as covered. A question-shape helper covers the
questions of its shapes and no step by the words of its name: `_count_either` counts a union, not
the objects of a plain count. The Signature agent is asked only for the uncovered steps: a build that asks
again for what it has proposes the same names again and nothing else.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from vadar.library.claims import ATTRIBUTE_WORDS, name_words, named_claim, named_relations
from vadar.library.shape_helpers import answered_by, is_catalogue_helper
from vadar.programs.question_form import QuestionForm, parse_question
from vadar.programs.question_shape import shape_of_form

COVERAGE_FILE = "coverage.json"
"""Where a build directory keeps its coverage at the end (`Coverage.to_dict`)."""


@dataclass(frozen=True, order=True)
class Step:
    """One step a question needs: `kind` is relation, same, attribute, count, comparison or measure."""

    kind: str
    value: str

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.value}"

    @property
    def says(self) -> str:
        """The step in words, as the Signature agent reads it."""
        if self.kind == "relation":
            where = {"front": "in front of", "behind": "behind"}.get(self.value, f"{self.value} of")
            return f"the objects {where} another object"
        return {"same": f"whether two objects have the same {self.value}",
                "attribute": f"the {self.value} of an object",
                "count": "counting the objects that match a description",
                "measure": f"an object's {self.value} in metres" if self.value != "distance"
                else "a distance in metres (between two objects, or from the camera)",
                }.get(self.kind) or _COMPARISONS.get(self.value, f"a comparison ({self.value})")


_COMPARISONS = {"count": "comparing two counts (more, fewer, as many)",
                "size": "which of two objects is taller or larger",
                "ratio": "how many times taller or larger one object is"}

_COUNT_WORDS = {"count", "counts", "number", "numbers", "many"}
_COMPARE_COUNT_WORDS = {"more", "fewer", "less", "greater", "equal", "compare"}
_SIZE_COMPARISON_WORDS = {"taller", "shorter", "larger", "bigger", "smaller", "wider", "compare"}
_RATIO_WORDS = {"ratio", "times"}
_DIMENSION_WORDS = {"height": "height", "tall": "height", "length": "length", "long": "length",  # measures by name
                    "width": "width", "wide": "width"}


def steps_of(form: QuestionForm) -> tuple[Step, ...]:
    """The steps a parsed question needs, in a fixed order. "How much closer to the camera is the
    chair than the table?" names no relation to find objects by: it asks a distance."""
    measures_distance = form.relation == "distance" and form.answer_type == "number"
    shape = shape_of_form(form)  # the one reading of what the question asks, as retrieval has it
    steps = [] if measures_distance else [Step("relation", name) for name in form.spatial]
    if form.shared_attribute:
        steps.append(Step("same", form.shared_attribute))
    if shape.answer == "attribute" and shape.subject is not None:
        steps.append(Step("attribute", shape.subject))
    if form.answer_type == "count":
        steps.append(Step("count", "objects"))
    if shape.relation == "count comparison":
        steps.append(Step("comparison", "count"))
    if form.relation in ("comparison", "ratio"):
        steps.append(Step("comparison", "size" if form.relation == "comparison" else "ratio"))
    # "What is the size of the cube?" asks CLEVR's size word (attribute:size), not a size in metres
    if form.asked_dimension and Step("attribute", form.asked_dimension) not in steps:
        steps.append(Step("measure", form.asked_dimension))
    if measures_distance:
        steps.append(Step("measure", "distance"))
    return tuple(dict.fromkeys(steps))


class Helper(Protocol):
    name: str
    signature: str


def helper_steps(name: str, signature: str) -> frozenset[Step]:
    """The steps a helper covers, by its checkable claim and by the words of its name."""
    steps: set[Step] = set()
    claim = named_claim(name, signature)
    if claim is not None:
        if claim.kind in ("relation", "relation_test"):
            steps.add(Step("relation", claim.value))
        elif claim.kind in ("same", "attribute"):
            steps.add(Step(claim.kind, claim.value))
        elif claim.kind == "measure":
            steps.add(Step("measure", "height" if claim.value == "height" else "distance"))
        elif claim.kind == "distance":
            steps.add(Step("measure", "distance"))
    words = set(name_words(name))
    steps.update(Step("relation", relation) for relation in named_relations(name))
    attributes = {ATTRIBUTE_WORDS[w] for w in words if w in ATTRIBUTE_WORDS}
    steps.update(Step("same" if "same" in words else "attribute", a) for a in attributes)
    counts = bool(words & _COUNT_WORDS)
    if counts:
        steps.add(Step("count", "objects"))
    if counts and words & _COMPARE_COUNT_WORDS:
        steps.add(Step("comparison", "count"))
    if words & _SIZE_COMPARISON_WORDS and not counts:
        steps.add(Step("comparison", "size"))
    if words & _RATIO_WORDS:
        steps.add(Step("comparison", "ratio"))
    steps.update(Step("measure", dimension) for word, dimension in _DIMENSION_WORDS.items() if word in words)
    if "distance" in words:
        steps.add(Step("measure", "distance"))
    return frozenset(steps)


def covering(helpers: Iterable[Helper]) -> dict[Step, list[str]]:
    """Every step the helpers cover, with the names that cover it, in library order."""
    found: dict[Step, list[str]] = {}
    for helper in helpers:
        for step in sorted(helper_steps(helper.name, helper.signature)):
            found.setdefault(step, []).append(helper.name)
    return found


@dataclass(frozen=True)
class Coverage:
    """How many build questions have every step covered by an admitted helper, and what is missing."""

    questions: int
    covered: int
    without_steps: int  # questions whose form names no step (covered: the modules suffice)
    uncovered: tuple[tuple[str, int], ...] = ()  # (step label, questions needing it), most needed first

    @property
    def share(self) -> float | None:
        return round(self.covered / self.questions, 4) if self.questions else None

    def to_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "covered": self.covered, "share": self.share,
                "without_steps": self.without_steps, "uncovered": dict(self.uncovered)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Coverage:
        return cls(int(data["questions"]), int(data["covered"]), int(data["without_steps"]),
                   tuple((str(label), int(n)) for label, n in dict(data.get("uncovered", {})).items()))

    def line(self) -> str:
        """One line for the build's printout."""
        share = f"{self.share:.0%}" if self.share is not None else "-"
        missing = ", ".join(f"{label} ({n})" for label, n in self.uncovered[:6])
        return (f"coverage {self.covered} of {self.questions} build questions ({share})"
                + (f"; not covered: {missing}" if missing else ""))


def _step_helpers(helpers: Iterable[Helper]) -> list[Helper]:
    """The helpers that cover steps: not the question-shape helpers, which cover only the questions
    they answer whole (`shape_helpers.answered_by`)."""
    return [h for h in helpers if not is_catalogue_helper(h)]


CARRIED = frozenset({"count", "comparison"})
"""The step kinds a question-shape helper does itself; the others (relations, shared and asked
attributes, measures) it is built on, from the library's step helpers."""


def _needed(question: str, names: set[str], awaited: Collection[str] = ()) -> tuple[Step, ...]:
    """The steps `question` still needs: none when a question-shape helper answers it in one call;
    not the counts and comparisons when one the shape route may still try would."""
    if answered_by(question, names):
        return ()
    steps = steps_of(parse_question(question))
    if awaited and answered_by(question, awaited):
        return tuple(step for step in steps if step.kind not in CARRIED)
    return steps


def uncovered_steps(questions: Sequence[str], helpers: Iterable[Helper],
                    awaited: Collection[str] = ()) -> Counter[Step]:
    """The steps of `questions` no helper covers, with how many questions need each. The counts and
    comparisons of a question that a question-shape helper in `awaited` (not yet tried by the shape
    route) answers whole are left to it: asked for comparing counts, a 100-question CLEVR build's
    Signature agent proposed `_count_more`, `_count_less`, `_count_as_many` and `_count_more_than`,
    13 implementation replies, and no program called any of them."""
    helpers = list(helpers)
    covered, names = set(covering(_step_helpers(helpers))), {h.name for h in helpers}
    return Counter(step for text in questions for step in _needed(text, names, awaited) if step not in covered)


def coverage_of(questions: Sequence[str], helpers: Iterable[Helper]) -> Coverage:
    """The coverage of `questions` (their texts) by `helpers` (the admitted library); a question a
    question-shape helper answers in one call (`shape_helpers.answered_by`) is covered."""
    helpers = list(helpers)
    covered, names = set(covering(_step_helpers(helpers))), {h.name for h in helpers}
    shaped = [bool(answered_by(text, names)) for text in questions]
    steps = [steps_of(parse_question(text)) for text in questions]
    missing = Counter(step.label for needed, whole in zip(steps, shaped, strict=True) if not whole
                      for step in needed if step not in covered)
    return Coverage(len(questions), sum(whole or all(s in covered for s in needed)
                                        for needed, whole in zip(steps, shaped, strict=True)),
                    sum(not needed and not whole for needed, whole in zip(steps, shaped, strict=True)),
                    tuple(missing.most_common()))
