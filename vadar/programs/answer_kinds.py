"""An answer that cannot answer its question, whatever the scene: caught after the program runs.

The question's wording fixes what kind of answer it wants (`question_shape`: a count, yes or no, an
attribute's value, a measure). A small model's program often runs without an error and answers
something else: a box's width and height for "What size is the cube?" (`get_2D_object_size`), "No
metal object found" for "What material is ...?", a list of boxes for "How many ...?". No gold answer
can score such an answer, so the program goes back to the model with the kind asked, like an error,
instead of being accepted. Replayed over the 6,291 programs recorded in the project's results pages
(`benchmarks/check_replay.py --answers`), 441 of the 1,297 wrong CLEVR answers were of another kind
(380 of them to attribute questions) and 103 of the 1,266 wrong answers on the other data sets (72
measures); no right answer was. The `reflect` option's one revision on such answers changed no
score on 220 CLEVR questions (docs/results/techniques.md): the message here names the call that
reads the value, and the repair loop goes on as after an error.

The kinds are read as the scorer reads answers (`omni3d_bench.metrics`): yes or no also as true,
false, 1 or 0; a count or a measure as any number, written out or not; an attribute as a short text
that is no number and no yes or no. Questions of other kinds (a choice, or none the wording fixes)
are not checked.
"""

from __future__ import annotations

import re
from typing import Any

from omni3d_bench.metrics import NO_WORDS, YES_WORDS, parse_number, text_of, unwrap
from vadar.programs.question_shape import shape_of
from vadar.text import clip

MOST_ATTRIBUTE_WORDS = 3
"""An attribute's value is a word or a few ("dark brown"); a sentence is a message, not a value."""

_NOT_FOUND = re.compile(r"\b(?:not? (?:\w+ )*found|found no|none found|no such|cannot|could not|unknown)\b")


def _shown(answer: Any) -> str:
    return clip(repr(answer), 80)


def answer_problem(question: str, answer: Any) -> str | None:
    """Why `answer` cannot answer `question` on any scene, for the program's writer (None: it can)."""
    shape = shape_of(question)
    value = unwrap(answer)
    text = text_of(value)
    if shape.answer == "count":
        number = parse_number(value)
        if number is None or number < 0 or not number.is_integer():
            return (f"The question asks how many; the program answered {_shown(answer)}, which is no count. "
                    "Set `final_result` to a whole number, such as `len(...)` of the boxes that match.")
    elif shape.answer in ("yes/no", "exists"):
        if text not in YES_WORDS | NO_WORDS:
            return (f"The question asks yes or no; the program answered {_shown(answer)}. "
                    "Set `final_result` to \"yes\" or \"no\".")
    elif shape.answer == "attribute":
        if _NOT_FOUND.search(text or ""):
            return (f"The question asks for a {shape.subject or 'value'}; the program answered {_shown(answer)}. "
                    "The objects the question names are in the image: a program that finds none looked for "
                    "them with the wrong words or relation. Find them, then answer with the value itself.")
        if (not isinstance(value, str) or text is None or text in YES_WORDS | NO_WORDS
                or parse_number(value) is not None or len(text.split()) > MOST_ATTRIBUTE_WORDS):
            asked = shape.subject or "value"
            how = (f", such as `vqa(image, \"What {asked} is this object?\", box)` returns"
                   if shape.subject else "")
            return (f"The question asks for a {asked}, a word{how}; the program answered {_shown(answer)}, "
                    f"which is no {asked}. Set `final_result` to the {asked} itself.")
    elif shape.answer == "measure" and parse_number(value) is None:
        return (f"The question asks for a number; the program answered {_shown(answer)}. "
                "Set `final_result` to the number itself (no unit, no list).")
    return None
