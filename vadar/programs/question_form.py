"""A question parsed once: what its wording alone says about the answer and what it asks about.

"How many ...?" wants a whole number, "Is there ...?" yes or no, "What color ...?" a word, "How far
...?" a number; "How tall is the mug?" asks one metric size (a height) of an object the question
names; "How much taller ...?" relates two objects instead. Every reasoning technique reads this one
form: the reflect step (an answer of the wrong form, a size far off the object's prior), formalize
(a constraint whose answer type or relation the question contradicts, targets made of the
question's words) and the size priors (the objects the question names).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from base_modules.size_priors import SizePrior, priors_in_text

_COUNT = re.compile(r"\bhow many\b(?!\s+times)|\bwhat number of\b", re.IGNORECASE)  # "how many times": a ratio
_TEXT = re.compile(r"\bwhat (?:is (?:its|the|that|this) )?(?:color|colour|shape|material|size)\b"
                   r"|\bwhat is (?:it|that|this|the [\w ]+?) made of\b|\bwhat (?:color|colour|shape|material|size) is\b",
                   re.IGNORECASE)
_YES_NO = re.compile(r"(?:^|[;,.?]\s*)(?:is|are|does|do|did|was|were|can|could|has|have)\b", re.IGNORECASE)
_MEASURE = re.compile(r"\bhow many times\b|\bhow (?:far|tall|high|wide|long|deep|much (?:taller|wider|longer|higher|bigger|larger|"
                      r"farther|closer|shorter|smaller))\b|\bwhat is the (?:distance|height|width|length|depth)\b",
                      re.IGNORECASE)

_RELATIONS = (  # checked in this order; the first that matches names the relation
    ("ratio", re.compile(r"\bhow many times\b|\bratio\b", re.IGNORECASE)),
    ("comparison", re.compile(r"\b(?:taller|shorter|wider|longer|higher|bigger|larger|smaller|deeper)\b",
                              re.IGNORECASE)),
    ("distance", re.compile(r"\bfarther|\bcloser\b|\bdistance\b|\bfrom\b", re.IGNORECASE)),
)
RELATIONS = tuple(name for name, _ in _RELATIONS)
"""The relations between objects a question can state that make it more than one object's measure."""

_SIZE_QUESTION = re.compile(
    r"\bhow (?P<adj>tall|high|wide|long|deep|big|large)\b"
    r"|\bwhat is the (?P<noun>height|width|length|depth|size)\b", re.IGNORECASE)
_OTHER_UNIT = re.compile(r"\b(?:centimet(?:er|re)s?|millimet(?:er|re)s?|cm|mm|inch(?:es)?|feet|foot|ft|yards?|"
                         r"square|area|volume)\b", re.IGNORECASE)
_DIMENSION = {"tall": "height", "high": "height", "height": "height", "wide": "width", "width": "width",
              "long": "length", "length": "length", "deep": "depth", "depth": "depth"}
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
_SPATIAL = (("left", re.compile(r"\bleft\b", re.IGNORECASE)), ("right", re.compile(r"\bright\b", re.IGNORECASE)),
            ("front", re.compile(r"\bin front\b|\bcloser to the camera\b", re.IGNORECASE)),
            ("behind", re.compile(r"\bbehind\b|\bfarther from the camera\b", re.IGNORECASE)))
SPATIAL_RELATIONS = tuple(name for name, _ in _SPATIAL)
"""Where one object is relative to another, from the camera's view."""
_SHARED = re.compile(r"\bsame (color|colour|shape|material|size)\b", re.IGNORECASE)


def words_of(text: str) -> list[str]:
    """Lower-case words and numbers ("0.5" stays one word): how phrases are compared with a question."""
    return _WORD.findall(text.casefold())


@dataclass(frozen=True)
class QuestionForm:
    """One question as the techniques read it, parsed once by `parse_question`."""

    text: str
    words: frozenset[str]  # its words (`words_of`): a constraint's targets and relation must come from them
    answer_type: str | None  # "yes/no", "count", "number" or "text" where the form fixes it, else None
    relation: str | None  # one of RELATIONS where the question states one, else None
    asked_dimension: str | None  # "height", "width", "length", "depth" or "size" for one size in metres
    named_objects: tuple[SizePrior, ...]  # the objects it names that have a size prior, first mention first
    spatial: tuple[str, ...] = ()  # the SPATIAL_RELATIONS it names ("left of the cube", "behind it")
    shared_attribute: str | None = None  # "color", "shape", "material" or "size" in "the same color as"


def parse_question(text: str) -> QuestionForm:
    """The question's form, for every technique to read."""
    relation = next((name for name, pattern in _RELATIONS if pattern.search(text)), None)
    shared = _SHARED.search(text)
    return QuestionForm(text=text, words=frozenset(words_of(text)), answer_type=_answer_type(text),
                        relation=relation, asked_dimension=_asked_dimension(text, relation),
                        named_objects=tuple(priors_in_text(text)),
                        spatial=tuple(name for name, pattern in _SPATIAL if pattern.search(text)),
                        shared_attribute=shared.group(1).lower().replace("colour", "color") if shared else None)


def _answer_type(question: str) -> str | None:
    """The answer type the question's form asks for, or None where the form does not say."""
    if _COUNT.search(question):
        return "count"
    if _TEXT.search(question):
        return "text"
    if _MEASURE.search(question):
        return "number"
    if _YES_NO.search(question.strip()):
        return "yes/no"
    return None


def _asked_dimension(question: str, relation: str | None) -> str | None:
    """"height", "width", "length" or "depth" for a question asking one metric size in metres, "size"
    for "how big", None for anything else (counts, comparisons, ratios, distances, other units)."""
    match = _SIZE_QUESTION.search(question)
    if match is None or relation is not None or _OTHER_UNIT.search(question):
        return None
    word = (match.group("adj") or match.group("noun")).lower()
    return _DIMENSION.get(word, "size")
