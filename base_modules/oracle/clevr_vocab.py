"""CLEVR's attribute vocabulary and the parsing of object prompts and attribute questions.

The oracle must never guess: a word outside the vocabulary is an error that names the word and
lists what is understood, so a program (or the LLM reading the error) can rephrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from base_modules.module import ModuleError

ATTRIBUTES = ("size", "color", "material", "shape")
"""CLEVR's four object attributes, in the order CLEVR phrases them ("large red metal cube")."""

SYNONYMS: dict[str, dict[str, str]] = {
    "color": {c: c for c in ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow")}
    | {"grey": "gray"},
    "size": {"large": "large", "big": "large", "small": "small", "tiny": "small"},
    "material": {"metal": "metal", "metallic": "metal", "shiny": "metal",
                 "rubber": "rubber", "matte": "rubber"},
    "shape": {"cube": "cube", "block": "cube", "sphere": "sphere", "ball": "sphere",
              "cylinder": "cylinder"},
}
"""Surface word -> canonical CLEVR value, per attribute (singular forms; plurals derived)."""

GENERIC_NOUNS = frozenset({"thing", "things", "object", "objects"})
PROMPT_FILLER = frozenset({"the", "a", "an", "all", "that", "are", "is", "which", "any", "every",
                           "each", "there", "in", "image", "scene", "of", "colored", "coloured",
                           "made", "sized"})

RELATION_WORDS = frozenset({"left", "right", "front", "behind", "than", "next", "near", "closer",
                            "farther", "above", "below", "same", "other", "between"})

_PLURALS = {"sphere": "spheres", "ball": "balls", "cube": "cubes", "block": "blocks",
            "cylinder": "cylinders"}


def _word_table() -> dict[str, tuple[str, str]]:
    table: dict[str, tuple[str, str]] = {}
    for attribute, words in SYNONYMS.items():
        for word, value in words.items():
            table[word] = (attribute, value)
            if word in _PLURALS:
                table[_PLURALS[word]] = (attribute, value)
    return table


WORDS = _word_table()
"""Every understood attribute word (including plurals) -> (attribute, canonical value)."""


def vocabulary_text() -> str:
    """The understood words, for error messages."""
    parts = [f"{a}: {', '.join(sorted(SYNONYMS[a]))}" for a in ATTRIBUTES]
    parts.append("any object: " + ", ".join(sorted(GENERIC_NOUNS)))
    return "; ".join(parts)


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


@dataclass(frozen=True)
class ObjectQuery:
    """Attribute constraints of an object prompt; None means unconstrained."""

    size: str | None = None
    color: str | None = None
    material: str | None = None
    shape: str | None = None

    def matches(self, obj: dict) -> bool:
        return all(
            getattr(self, a) is None or obj.get(a) == getattr(self, a) for a in ATTRIBUTES
        )


def _collect(words: list[str], text: str, filler: frozenset[str]) -> dict[str, str]:
    """Map attribute words to values; reject unknown words and contradictions."""
    found: dict[str, str] = {}
    for word in words:
        if word in filler or word in GENERIC_NOUNS:
            continue
        if word not in WORDS:
            if word in RELATION_WORDS:
                raise ModuleError(
                    f"{text!r} describes a relation; loc takes only a noun phrase such as 'red "
                    "cube'. Call loc for each object, then compare boxes in code: image x (box "
                    "centre) for left/right, depth() for in front of/behind"
                )
            raise ModuleError(
                f"cannot interpret {word!r} in {text!r}: this CLEVR scene only has objects "
                f"described by {vocabulary_text()}"
            )
        attribute, value = WORDS[word]
        if found.get(attribute, value) != value:
            raise ModuleError(
                f"{text!r} asks for two different {attribute}s ({found[attribute]!r} and "
                f"{value!r}); an object has one {attribute}"
            )
        found[attribute] = value
    return found


def parse_object_prompt(prompt: str) -> ObjectQuery:
    """Parse a noun phrase such as "small red metal cubes" or "objects" into constraints."""
    words = _tokens(prompt)
    if not words:
        raise ModuleError(
            f"empty object prompt {prompt!r}; use a noun phrase such as 'red cube' or 'objects'"
        )
    return ObjectQuery(**_collect(words, prompt, PROMPT_FILLER))


QUESTION_FILLER = PROMPT_FILLER | frozenset({"it", "this", "does", "do", "have", "has", "look",
                                             "looks", "like", "to", "be", "object"})

_ATTRIBUTE_QUESTIONS: tuple[tuple[str, str], ...] = (
    (r"\b(what|which)\s+(colou?r)\b|\bcolou?r\s+is\b|\bthe\s+colou?r\b", "color"),
    (r"\b(what|which)\s+shape\b|\bshape\s+is\b|\bthe\s+shape\b", "shape"),
    (r"\b(what|which)\s+material\b|\bmaterial\s+is\b|\bthe\s+material\b|\bmade\s+(of|from)\b",
     "material"),
    (r"\b(what|which)\s+size\b|\bsize\s+is\b|\bthe\s+size\b|\bhow\s+(big|large)\b", "size"),
)


@dataclass(frozen=True)
class AttributeQuestion:
    """Either "what <attribute>?" (expected empty) or a yes/no check of expected values."""

    attribute: str | None
    expected: dict[str, str]


SUPPORTED_QUESTIONS = (
    "the CLEVR oracle answers only attribute questions about the object in the box: "
    "'What color/shape/material/size is this object?', 'What is it made of?', or yes/no "
    "questions such as 'Is it red?', 'Is this a cube?', 'Is it metal?', 'Is it large?'"
)


def parse_attribute_question(question: str) -> AttributeQuestion:
    """Classify a vqa question; anything not about the four attributes is a ModuleError."""
    text = question.lower()
    asked = [a for pattern, a in _ATTRIBUTE_QUESTIONS if re.search(pattern, text)]
    if len(asked) == 1:
        return AttributeQuestion(asked[0], {})
    if len(asked) > 1:
        raise ModuleError(f"{question!r} asks about several attributes ({', '.join(asked)}); "
                          "ask one question per attribute")
    words = _tokens(text)
    if words and words[0] in {"is", "does", "are"}:
        try:
            expected = _collect(words, question, QUESTION_FILLER)
        except ModuleError as exc:
            raise ModuleError(f"{exc}. {SUPPORTED_QUESTIONS}") from None
        if expected:
            return AttributeQuestion(None, expected)
    raise ModuleError(f"cannot answer {question!r} from annotations: {SUPPORTED_QUESTIONS}")
