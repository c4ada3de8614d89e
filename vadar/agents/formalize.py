"""Formalize first: a task constraint the program is then bound by (GCA).

Most wrong answers come from what a program computes, not from perception: the wrong frame
("left of" seen from the camera or from the object), the wrong objects, the wrong quantity. So
one request first fixes those in a small JSON object, decoded under a JSON schema by the
endpoint (structured output), checked here, and asked again once with the reason when refused.
The Program agent then sees it in its question and its answer is checked against the constraint's
answer type.

Targets are object descriptions a program passes to `loc` ("large red cube"): the first measurement
(docs/results/techniques.md) found phrases such as "other objects" or "the cube behind the red
sphere" passed to `loc` as they were, which `loc` refuses. So every target's words must come from
the question, articles are dropped, and a target with a relation word is refused: the relation
belongs in "relation", and the program computes it from boxes, depth and vqa.

The second measurement found the rest of the constraint misleading in the same way: an answer type
the question's form contradicts ("What is the brown cube made of?" as a count) and a relation the
question never states ("same color as"), which programs then passed to `vqa`. Both are corrected
here without another request: the answer type to the one the question's form fixes, a relation
whose words are not the question's to "none"; each correction is recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vadar import prompts
from vadar.programs.question_form import QuestionForm, words_of
from vadar.programs.sampling import Sampling
from vadar.programs.step_loop import LLMCost, StepLoop
from vadar.programs.structured import ask_structured, json_object, response_format
from vadar.agents.voting import is_number
from vadar.llm.chat import ChatModel, Role

FRAMES = ("camera", "object", "world")
ANSWER_TYPES = ("yes/no", "count", "number", "text")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reference_frame": {"type": "string", "enum": list(FRAMES)},
        "targets": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4},
        "relation": {"type": "string"},
        "quantity": {"type": "string"},
        "unit": {"type": "string"},
        "answer_type": {"type": "string", "enum": list(ANSWER_TYPES)},
    },
    "required": ["reference_frame", "targets", "relation", "quantity", "unit", "answer_type"],
    "additionalProperties": False,
}

RESPONSE_FORMAT = response_format("task_constraint", SCHEMA)

FORMALIZE = Sampling(max_tokens=200, retry_temperature_step=0.0)  # a short JSON object; re-asked as is


class ConstraintError(ValueError):
    """A constraint that cannot bind the program: the message says why, for the model to fix."""


@dataclass(frozen=True)
class Constraint:
    """The task as the model formalized it before writing the program."""

    reference_frame: str
    targets: list[str]
    relation: str
    quantity: str
    unit: str
    answer_type: str
    corrected: tuple[str, ...] = ()
    """What was corrected in the model's constraint before it was shown (`corrected_constraint`)."""

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SCHEMA["properties"]}


ARTICLES = frozenset({"the", "a", "an"})
RELATION_WORDS = frozenset({
    "left", "right", "front", "behind", "above", "below", "under", "over", "beside", "next", "near",
    "nearest", "closest", "closer", "farther", "further", "farthest", "furthest", "between", "than",
    "same", "other", "others", "another", "that", "which", "who", "as", "to",
    "leftmost", "rightmost", "taller", "tallest", "shorter", "shortest", "larger", "largest", "bigger",
    "biggest", "smaller", "smallest", "higher", "highest", "lower", "lowest", "wider", "longer",
})
"""Words that make a phrase a relation, a comparison or a relative clause rather than one object's
description; `loc` understands none of them (size words such as "large" or "small" are attributes)."""


def object_description(phrase: str, question: QuestionForm) -> str:
    """`phrase` as a `loc` description (lower case, no articles), or ConstraintError saying why it is not one."""
    words = [word for word in words_of(phrase) if word not in ARTICLES]
    missing = [word for word in words if word not in question.words]
    if not words or missing:
        raise ConstraintError(f"the target {phrase!r} is not made of the question's words"
                              + (f" (not in it: {', '.join(repr(w) for w in missing)})" if missing else "")
                              + "; describe each object with the question's own words")
    relation = [word for word in words if word in RELATION_WORDS]
    if relation:
        raise ConstraintError(
            f"the target {phrase!r} has the relation word {relation[0]!r}; a target is one object's description "
            "for loc (attributes and a noun, e.g. 'large red cube' or 'objects'), so put the relation "
            "('left of', 'behind', 'same color as', 'other') in \"relation\" and only the objects in \"targets\"")
    return " ".join(words)


RELATION_FILLERS = frozenset({"none", "count", "of", "as", "than", "to", "is", "are", "with", "and"} | ARTICLES)
"""Words a relation may add to the question's own ("left of" for "to the left"; "none", "count")."""


def relation_in_question(relation: str, question: QuestionForm) -> bool:
    """Whether the relation's words are the question's (a stated relation), not the model's invention."""
    return all(word in question.words or word in RELATION_FILLERS for word in words_of(relation))


def corrected_constraint(data: dict[str, Any], question: QuestionForm) -> tuple[str, ...]:
    """Correct, in `data`, what the question itself contradicts; returns what was corrected."""
    corrections = []
    form = question.answer_type
    if form is not None and data["answer_type"] != form:
        corrections.append(f"answer_type {data['answer_type']!r} -> {form!r} (the question's form)")
        data["answer_type"] = form
    if not relation_in_question(data["relation"], question):
        corrections.append(f"relation {data['relation']!r} -> 'none' (not stated in the question)")
        data["relation"] = "none"
    return tuple(corrections)


def parse_constraint(text: str, question: QuestionForm) -> Constraint:
    """The constraint in `text` (corrected where the question contradicts it), or ConstraintError
    naming the first thing wrong with it."""
    try:
        data = json_object(text, SCHEMA)
    except ValueError as exc:
        raise ConstraintError(str(exc)) from None
    data["targets"] = [object_description(phrase, question) for phrase in data["targets"]]
    corrections = corrected_constraint(data, question)
    return Constraint(**data, corrected=corrections)


@dataclass
class FormalizeRecord:
    """What formalizing one question gave: the constraint (None if refused twice), the refusals and
    what was corrected in it; stored under "formalize" in results.jsonl."""

    key: ClassVar[str] = "formalize"

    constraint: Constraint | None = None
    refused: list[str] = field(default_factory=list)
    corrected: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, constraint: Constraint | None, refused: list[str]) -> FormalizeRecord:
        return cls(constraint, refused, list(constraint.corrected) if constraint else [])

    def to_json(self) -> dict[str, Any]:
        return {"constraint": self.constraint.to_dict() if self.constraint else None, "refused": list(self.refused),
                "corrected": list(self.corrected)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FormalizeRecord:
        return cls.of(_constraint(data.get("constraint"), data.get("corrected")), list(data.get("refused") or []))

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> FormalizeRecord | None:
        """The record in a results line written before the records (`constraint`, `constraint_refused`,
        `constraint_corrected` among the per-question fields)."""
        if not {"constraint", "constraint_refused", "constraint_corrected"} & set(extra):
            return None
        corrected = list(extra.get("constraint_corrected") or [])
        return cls(_constraint(extra.get("constraint"), corrected), list(extra.get("constraint_refused") or []),
                   corrected)


def _constraint(fields: Any, corrected: Any) -> Constraint | None:
    if not isinstance(fields, Mapping):
        return None
    return Constraint(**{name: fields[name] for name in SCHEMA["properties"]}, corrected=tuple(corrected or ()))


class Formalizer:
    """Asks for the constraint under the JSON schema; a refused one is asked again once."""

    def __init__(self, llm: ChatModel) -> None:
        self.loop = StepLoop(llm, FORMALIZE, max_steps=2, response_format=RESPONSE_FORMAT, role=Role.FORMALIZE)

    def formalize(self, question: QuestionForm, cost: LLMCost | None = None) -> FormalizeRecord:
        messages = [{"role": "system", "content": prompts.render("formalize_system", frames=FRAMES,
                                                                  answer_types=ANSWER_TYPES)},
                    {"role": "user", "content": prompts.render("question", question=question.text)}]
        constraint, refused = ask_structured(self.loop, messages, lambda text: parse_constraint(text, question), cost)
        return FormalizeRecord.of(constraint, refused)


def type_issue(answer: Any, answer_type: str) -> str | None:
    """Why `answer` is not of `answer_type` (a yes/no question answered with a number...), or None."""
    if answer_type == "yes/no":
        ok = isinstance(answer, str) and answer.casefold() in ("yes", "no")
    elif answer_type == "count":
        ok = is_number(answer) and (isinstance(answer, int) or float(answer).is_integer()) and answer >= 0
    elif answer_type == "number":
        ok = is_number(answer)
    else:
        ok = isinstance(answer, str) and answer.casefold() not in ("yes", "no") and not _numeric(answer)
    if ok:
        return None
    expected = {"yes/no": '"yes" or "no"', "count": "a whole number (an int)", "number": "a number (a float)",
                "text": "a word such as a color, shape, material or size"}[answer_type]
    return f"`final_result` is {answer!r}, but the answer must be {expected}"


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
