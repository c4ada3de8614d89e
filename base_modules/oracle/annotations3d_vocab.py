"""Words the 3D-annotation oracle understands: categories, colours, materials, and their parsing.

The vocabulary comes from the scene itself: its optional "vocabulary" entry (the built-in
benchmark writes its whole catalogue there, synonyms included) merged with the categories,
colours and materials of its objects. A word outside it is an error naming the word and listing
the vocabulary, never a guess, so a program (or the LLM reading the error) can rephrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from base_modules.module import ModuleError

ATTRIBUTES = ("color", "material", "category")
GENERIC_NOUNS = frozenset({"object", "objects", "thing", "things", "item", "items"})
FILLER = frozenset({"the", "a", "an", "all", "that", "are", "is", "which", "any", "every", "each",
                    "there", "in", "image", "scene", "of", "colored", "coloured", "made", "one",
                    "ones", "visible"})


def plurals(word: str) -> set[str]:
    """Plural spellings of a (possibly multi-word) noun: chairs, boxes, benches, shelves."""
    head, _, last = word.rpartition(" ")
    prefix = f"{head} " if head else ""
    forms = {last + "es"} if last.endswith(("s", "x", "z", "ch", "sh")) else {last + "s"}
    if last.endswith("y") and last[-2:-1] not in "aeiou":
        forms.add(last[:-1] + "ies")
    if last.endswith("f"):
        forms.add(last[:-1] + "ves")
    return {prefix + f for f in forms}


def _canonical(value: Any) -> str:
    return str(value).strip().lower()


def object_attributes(obj: dict[str, Any]) -> dict[str, str]:
    """The attributes an annotated object has, under the oracle's attribute names."""
    out = {}
    category = next((obj[k] for k in ("category_name", "category", "name", "label") if k in obj),
                    None)
    if category is not None:
        out["category"] = _canonical(category)
    for attribute in ("color", "material"):
        if obj.get(attribute) is not None:
            out[attribute] = _canonical(obj[attribute])
    return out


@dataclass(frozen=True)
class Vocabulary:
    """Surface word or phrase -> (attribute, canonical value)."""

    words: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def for_scene(cls, scene: dict[str, Any]) -> Vocabulary:
        words: dict[str, tuple[str, str]] = {}
        declared = scene.get("vocabulary") or {}
        for attribute in ATTRIBUTES:
            entries = dict(declared.get(attribute, {}) or {})
            for obj in scene.get("objects", []):
                value = object_attributes(obj).get(attribute)
                if value is not None:
                    entries.setdefault(value, [])
            for value, synonyms in entries.items():
                for word in (value, *synonyms):
                    forms = {word} | (plurals(word) if attribute == "category" else set())
                    for form in forms:
                        words.setdefault(_canonical(form), (attribute, _canonical(value)))
        return cls(words)

    def text(self) -> str:
        """The understood words per attribute, for error messages."""
        parts = []
        for attribute in ATTRIBUTES:
            values = sorted({w for w, (a, _) in self.words.items() if a == attribute})
            if values:
                parts.append(f"{attribute}: {', '.join(values)}")
        parts.append("any object: " + ", ".join(sorted(GENERIC_NOUNS)))
        return "; ".join(parts)

    def collect(self, text: str, filler: frozenset[str]) -> dict[str, str]:
        """Attribute constraints named in `text`; unknown words and contradictions raise."""
        remaining = " " + " ".join(re.findall(r"[a-z]+", text.lower())) + " "
        found: dict[str, str] = {}
        for phrase in sorted((w for w in self.words if " " in w), key=len, reverse=True):
            if f" {phrase} " in remaining:
                remaining = remaining.replace(f" {phrase} ", " ")
                self._add(found, *self.words[phrase], text)
        for word in remaining.split():
            if word in filler or word in GENERIC_NOUNS:
                continue
            if word not in self.words:
                raise ModuleError(
                    f"cannot interpret {word!r} in {text!r}: objects in this scene are described "
                    f"only by {self.text()}. Pass one noun phrase, and compute relations "
                    "(left of, closer, taller) in code"
                )
            self._add(found, *self.words[word], text)
        return found

    @staticmethod
    def _add(found: dict[str, str], attribute: str, value: str, text: str) -> None:
        if found.get(attribute, value) != value:
            raise ModuleError(f"{text!r} names two different {attribute}s ({found[attribute]!r} "
                              f"and {value!r}); an object has one {attribute}")
        found[attribute] = value


def matches(obj: dict[str, Any], query: dict[str, str]) -> bool:
    attrs = object_attributes(obj)
    return all(attrs.get(a) == v for a, v in query.items())


_QUESTIONS = (
    (r"\bcolou?r\b", "color"),
    (r"\bmaterial\b|\bmade\s+(of|from)\b", "material"),
    (r"\b(what|which)\s+(kind|type|category|class|sort)\b|\bwhat\s+is\s+(this|it|that|the)\b"
     r"(\s+object|\s+thing)?\s*\??$|\bwhat\s+object\b|\bcategory\b|\bname\s+of\b", "category"),
)

SUPPORTED = (
    "the 3D-annotation oracle answers only questions about the object in the box: 'What color "
    "is this object?', 'What material is it made of?', 'What is this object?' (its category), "
    "or yes/no questions such as 'Is it red?', 'Is it a chair?', 'Is it metal?'"
)
QUESTION_FILLER = FILLER | frozenset({"it", "this", "does", "do", "have", "has", "look", "looks",
                                      "like", "to", "be", "what", "kind", "type"})


def parse_question(question: str, vocabulary: Vocabulary) -> tuple[str | None, dict[str, str]]:
    """(asked attribute, {}) for "what ...?" questions, or (None, expected) for yes/no ones."""
    text = question.strip().lower()
    words = re.findall(r"[a-z]+", text)
    if words and words[0] in {"is", "does", "are"}:
        try:
            expected = vocabulary.collect(text, QUESTION_FILLER)
        except ModuleError as exc:
            raise ModuleError(f"{exc}. {SUPPORTED}") from None
        if expected:
            return None, expected
    asked = [a for pattern, a in _QUESTIONS if re.search(pattern, text)]
    if len(asked) == 1:
        return asked[0], {}
    if len(asked) > 1:
        raise ModuleError(f"{question!r} asks about several attributes ({', '.join(asked)}); "
                          "ask one question per attribute")
    raise ModuleError(f"cannot answer {question!r} from annotations: {SUPPORTED}")
