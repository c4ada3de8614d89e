"""What a question's wording alone says about its answer: "How many ...?" wants a whole number,
"Is there ...?" yes or no, "What color ...?" a word, "How far ...?" a number.

Shared by the reflect step (an answer of the wrong form is sent back) and formalize (a constraint
whose answer type contradicts the question is corrected before it can mislead the program).
"""

from __future__ import annotations

import re

_COUNT = re.compile(r"\bhow many\b(?!\s+times)|\bwhat number of\b", re.IGNORECASE)  # "how many times": a ratio
_TEXT = re.compile(r"\bwhat (?:is (?:its|the|that|this) )?(?:color|colour|shape|material|size)\b"
                   r"|\bwhat is (?:it|that|this|the [\w ]+?) made of\b|\bwhat (?:color|colour|shape|material|size) is\b",
                   re.IGNORECASE)
_YES_NO = re.compile(r"(?:^|[;,.?]\s*)(?:is|are|does|do|did|was|were|can|could|has|have)\b", re.IGNORECASE)
_MEASURE = re.compile(r"\bhow many times\b|\bhow (?:far|tall|high|wide|long|deep|much (?:taller|wider|longer|higher|bigger|larger|"
                      r"farther|closer|shorter|smaller))\b|\bwhat is the (?:distance|height|width|length|depth)\b",
                      re.IGNORECASE)


def expected_answer_type(question: str) -> str | None:
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
