"""A question's shape: what kind of answer it wants and which relation leads there.

Two questions of one shape are answered by one program with other noun phrases ("How many times
taller is the bin than the box?" and "... the lamp than the mug?"); two questions that share words
but not their shape are not ("How many objects are taller than the box?" counts). Worked examples
are retrieved inside a shape (`library.retrieval`), so a program is never shown one that answers
another kind of question.

The shape is read off the parsed form (`question_form`): the answer kind, the relation family, what
the answer or relation is about (an attribute, a dimension) and the spatial relations named. A
shape's `family` sets the spatial relations aside: "How many cubes are left of the ball?" and "...
behind the ball?" differ in one word of their programs, "What color ..." and "What shape ..." in
which attribute they read, and a small model copies that word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from vadar.programs.question_form import QuestionForm, parse_question
from vadar.programs.relation_chain import ChainExtent, chain_extent

ANSWERS = ("count", "yes/no", "exists", "attribute", "measure", "choice", "other")
"""Answer kinds: a whole number, yes or no about named objects, yes or no whether any object is so,
an attribute's value, a number in metres or a ratio, one of the options the question lists, or none
the wording fixes."""

RELATION_FAMILIES = ("ratio", "difference", "count comparison", "shared", "either", "superlative",
                     "nearest", "comparison", "distance", "spatial")
"""Relation families, checked in this order; the first that holds names the question's relation."""

ATTRIBUTES = ("color", "shape", "material", "size")

_ANSWER_OF_FORM = {"count": "count", "yes/no": "yes/no", "text": "attribute", "number": "measure"}
_AS_TALL_AS = re.compile(r"\bas (?:tall|high|wide|long|big|large) as\b|\bstack", re.IGNORECASE)
_HOW_MUCH = re.compile(r"\bhow much (?:\w+er)\b", re.IGNORECASE)
_COUNT_COMPARISON = re.compile(r"\bnumber of\b|\b(?:more|fewer)\b[^?]*\bthan\b", re.IGNORECASE)
_EXISTS = re.compile(r"\b(?:is|are) (?:there|any)\b", re.IGNORECASE)
_COUNT_ORDER = (("more", re.compile(r"\bmore\b|\bgreater\b", re.IGNORECASE)),
                ("fewer", re.compile(r"\bfewer\b|\bless\b", re.IGNORECASE)),
                ("equal", re.compile(r"\bequal\b|\bsame\b", re.IGNORECASE)))
_SAME = re.compile(r"\bsame\b", re.IGNORECASE)
_EITHER = re.compile(r"\bor\b", re.IGNORECASE)
_NEAREST = re.compile(r"\b(?:closest|nearest) to (?!(?:the )?camera\b)", re.IGNORECASE)
_SUPERLATIVE = re.compile(r"\b(?:tallest|shortest|largest|biggest|smallest|closest|nearest|farthest|furthest|"
                          r"highest|lowest|widest|narrowest|longest)\b", re.IGNORECASE)
_CHOICE = re.compile(r"(?:^|[,;:]\s*)which\b", re.IGNORECASE)
_ATTRIBUTE_WORD = re.compile(r"\b(colou?r|shape|material|size)\b", re.IGNORECASE)
_ASKED_ATTRIBUTE = (  # where a question asks an attribute's value, in the order tried
    re.compile(r"\bwhat (?:is (?:its|the) )?(colou?r|shape|material|size)\b", re.IGNORECASE),
    re.compile(r"\b(?:has|is|are) what (colou?r|shape|material|size)\b", re.IGNORECASE),
    re.compile(r"\b(made of)\b[^;]*\?\s*$|\bwhat is (?:it|that|this|the [\w ]+?) (made of)\b", re.IGNORECASE),
    re.compile(r"\bhow (big)\b", re.IGNORECASE),
)
_DIMENSIONS = (  # the first dimension a question names is what it measures or compares
    ("depth", re.compile(r"\bcamera\b|\bin front\b|\bbehind\b|\bdepth\b|\bdeep", re.IGNORECASE)),
    ("distance", re.compile(r"\bdistance\b|\bfar\b|\bclose(?:r|st)? to\b|\bnearest\b", re.IGNORECASE)),
    ("height", re.compile(r"\btall|\bheight\b|\bhigh|\bshort", re.IGNORECASE)),
    ("width", re.compile(r"\bwid(?:e|th|er|est)\b", re.IGNORECASE)),
    ("length", re.compile(r"\blong|\blength\b", re.IGNORECASE)),
    ("size", re.compile(r"\blarge|\bbig|\bsmall|\bvolume\b|\bsize\b", re.IGNORECASE)),
)


@dataclass(frozen=True)
class QuestionShape:
    """What a program for the question has to do, whatever the objects are called."""

    answer: str  # one of ANSWERS
    relation: str | None  # one of RELATION_FAMILIES, None for a question about objects alone
    subject: str | None = None  # the attribute asked or shared, the dimension measured or compared,
    # or for two counts compared "more", "fewer" or "equal"
    spatial: tuple[str, ...] = ()  # the spatial relations named (`question_form.SPATIAL_RELATIONS`)
    # how far its relations chain: which helper answers it in one call (`_objects_along` a chain of two
    # or more), not which worked examples fit it, so two shapes equal but for it are one shape
    chain: ChainExtent = field(default=ChainExtent(), compare=False)

    @property
    def label(self) -> str:
        """The answer kind and relation family as one word a user types (`vadar eval --shape`):
        'attribute:spatial', 'count:either'; the answer kind alone for a question about objects alone."""
        return self.answer if self.relation is None else f"{self.answer}:{self.relation}"

    @property
    def family(self) -> tuple[str, str | None, str | None]:
        """The shape with its spatial relations aside: the fallback when no example has the exact shape."""
        return self.answer, self.relation, self.subject


@lru_cache(maxsize=8192)
def shape_of(question: str) -> QuestionShape:
    """The shape of `question`, from its parsed form (cached: every retriever built over the same
    verified programs asks again)."""
    return shape_of_form(parse_question(question))


def shape_of_form(form: QuestionForm) -> QuestionShape:
    """The shape of a question already parsed."""
    answer = _answer(form)
    relation = _relation(form, answer)
    if answer == "yes/no" and relation != "count comparison" and _EXISTS.search(form.text):
        answer = "exists"  # "Is there a cube left of the ball?" looks for one; "Is the cube left of ...?" tests one
    chain = chain_extent(form.text) if relation == "spatial" else ChainExtent()
    return QuestionShape(answer, relation, _subject(form, answer, relation), form.spatial, chain)


def _answer(form: QuestionForm) -> str:
    if form.answer_type == "yes/no" and _EITHER.search(form.text) and not _EXISTS.search(form.text):
        return "choice"  # "Is the box to the left or the right of the bin?" is answered "left"
    if form.answer_type in _ANSWER_OF_FORM:
        return _ANSWER_OF_FORM[form.answer_type]
    if _CHOICE.search(form.text):
        return "choice"
    if any(pattern.search(form.text) for pattern in _ASKED_ATTRIBUTE):
        return "attribute"  # "The cube is what color?", "How big is the ball?" (CLEVR sizes are words)
    return "other"


def _relation(form: QuestionForm, answer: str) -> str | None:
    text = form.text
    if form.relation == "ratio" or _AS_TALL_AS.search(text):
        return "ratio"  # "how many times taller", "how many ... as tall as ... could be stacked"
    if _HOW_MUCH.search(text):
        return "difference"
    if answer == "yes/no" and _COUNT_COMPARISON.search(text):
        return "count comparison"
    if form.shared_attribute or (_SAME.search(text) and _ATTRIBUTE_WORD.search(text)):
        return "shared"
    if answer == "count" and _EITHER.search(text):
        return "either"
    if _NEAREST.search(text):
        return "nearest"
    if _SUPERLATIVE.search(text):
        return "superlative"
    if form.relation in ("comparison", "distance"):
        # "closer to the camera than" compares depths; "closer to the mug than to the box", distances
        return "comparison" if "camera" in text.lower() or form.relation == "comparison" else "distance"
    return "spatial" if form.spatial else None


def _subject(form: QuestionForm, answer: str, relation: str | None) -> str | None:
    if relation == "count comparison":
        return next((order for order, pattern in _COUNT_ORDER if pattern.search(form.text)), None)
    if answer == "attribute":
        return _asked_attribute(form.text)
    if relation == "shared":
        return form.shared_attribute or _first_attribute(form.text)
    if answer != "measure" and relation in (None, "spatial", "either"):
        return None  # what is counted, tested or chosen is a noun phrase, not a measure
    return next((name for name, pattern in _DIMENSIONS if pattern.search(form.text)), None)


def _asked_attribute(text: str) -> str | None:
    for pattern in _ASKED_ATTRIBUTE:
        match = pattern.search(text)
        if match:
            word = next(group for group in match.groups() if group).lower()
            return {"colour": "color", "made of": "material", "big": "size"}.get(word, word)
    return None


def _first_attribute(text: str) -> str | None:
    match = _ATTRIBUTE_WORD.search(text)
    return match.group(1).lower().replace("colour", "color") if match else None
