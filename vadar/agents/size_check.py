"""Does a measured size fit what such an object usually measures? A reflect check with size priors.

A question like "How tall is the mug?" names the object it measures; its size prior (the knowledge
file in `base_modules/knowledge/size_priors.json`) gives a typical range. An answer far outside that
range (a 7-metre mug) is almost always a unit or scale mistake of the program, so the reflect step
sends it back once, naming the prior. The question's form (`vadar.programs.question_form`) says
which size it asks for, if any.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from base_modules.size_priors import Range, SizePrior
from vadar.agents.voting import is_number
from vadar.programs.answers import as_float
from vadar.programs.question_form import QuestionForm

FAR_OFF = 3.0  # below low/3 or above high*3: see `size_issue`


def typical_range(prior: SizePrior, dimension: str) -> tuple[str, Range] | None:
    """The prior's range for `dimension`, else (or for "size") the span of all its lengths."""
    lengths = prior.linear()
    if dimension in lengths:
        return dimension, lengths[dimension]
    envelope = prior.envelope()
    return ("size", envelope) if envelope is not None else None


def size_issue(question: QuestionForm, answer: Any, priors: Sequence[SizePrior]) -> str | None:
    """Why a metric size answer does not fit the prior of the object the question measures, or None.

    The object is the first one the question names with a prior ("How tall is the chair next to the
    table?" measures the chair). Priors are typical values: real objects vary (a bar stool, a toy
    chair, a large TV) and sources disagree on what they measure, so only an answer below a third
    of the range's low end or above three times its high end is flagged: that catches unit and
    scale mistakes (centimetres read as metres, a depth read as a height) and leaves real variation
    alone. Questions in other units, comparisons and distances are never checked.
    """
    dimension = question.asked_dimension
    if dimension is None or not priors or not is_number(answer) or isinstance(answer, bool):
        return None
    prior = priors[0]
    found = typical_range(prior, dimension)
    if found is None:
        return None
    name, rng = found
    value = as_float(answer)
    if value is None:  # an int no float holds: the plausibility check names it
        return None
    if rng.low / FAR_OFF <= value <= rng.high * FAR_OFF:
        return None
    source = prior.sources[0].short_title
    return (f"`final_result` is {value:g} m, but a {prior.name}'s {name} is typically {rng.text()} "
            f"(size prior: {source}); check that the program measured the {prior.name} and answers in metres")
