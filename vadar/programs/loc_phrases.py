"""A `loc` phrase that names nothing the question names, caught before the program runs.

A small model copies its prompt's example objects: for "Is there a big green object made of the
same material as the tiny gray thing?" a held-out CLEVR program asked `loc(image, "red cube")` and
`loc(image, "small sphere")`, the objects of the fixed example, and answered a count. Replayed over
the 6,291 programs recorded in the project's results pages (`benchmarks/check_replay.py`), a `loc`
phrase sharing no word with its question was in 101 wrong CLEVR programs and 19 right ones (on the
other data sets 22 and 0), the right ones right by chance (most answer "no" or a count of none). The check speaks only when no word
of the phrase, by meaning ("big" is "large", "ball" is "sphere" in CLEVR's vocabulary), in the
singular or as a longer form of a question's word ("metallic", "metal"), is in the question; a
phrase of generic words alone ("object", "things") or one not written as a literal is left alone.
"""

from __future__ import annotations

import ast
import re

from base_modules.oracle.clevr_vocab import WORDS
from vadar.programs.program_facts import LOC, CallProblem, ProgramFacts
from vadar.text import clip

_WORD = re.compile(r"[a-z]+")
_PLURAL = re.compile(r"(?<=x|s|h)es$|s$")
_SHORTEST_STEM = 4  # "metal" and "metallic" share a stem; "red" and "reddish" are not compared
_FILLER = frozenset({"the", "a", "an", "of", "object", "objects", "thing", "things", "item", "items", "other",
                     "another", "any", "all", "that", "is", "are", "and", "or", "in", "on", "with", "it", "its"})


def word_meaning(word: str) -> tuple[str, str] | str:
    """What a word says: (attribute, value) for CLEVR's words, else the word in the singular."""
    singular = _PLURAL.sub("", word) if len(word) > 3 else word
    return WORDS.get(word) or WORDS.get(singular) or singular


def _content(text: str) -> set[tuple[str, str] | str]:
    return {word_meaning(word) for word in _WORD.findall(text.lower()) if word not in _FILLER}


def _shared(said: tuple[str, str] | str, asked: set[tuple[str, str] | str]) -> bool:
    if said in asked:
        return True
    return isinstance(said, str) and len(said) >= _SHORTEST_STEM and any(
        isinstance(word, str) and len(word) >= _SHORTEST_STEM and (word.startswith(said) or said.startswith(word))
        for word in asked)


def phrases_from_question(facts: ProgramFacts) -> list[CallProblem]:
    """`loc` asked for an object the question never names."""
    if not facts.question or LOC in facts.defined:
        return []
    asked = _content(facts.question)
    problems = []
    for call in facts.calls():
        if not isinstance(call.func, ast.Name) or call.func.id != LOC:
            continue
        for prompt in [k.value for k in call.keywords if k.arg == "object_prompt"] + call.args[1:2]:
            if not (isinstance(prompt, ast.Constant) and isinstance(prompt.value, str)):
                continue
            said = _content(prompt.value)
            if said and not any(_shared(word, asked) for word in said):
                problems.append(CallProblem(
                    call.lineno, "phrases_from_question",
                    f"line {call.lineno}: `loc(image, {clip(repr(prompt.value), 60)})` looks for an object this "
                    "question never names; find the objects the question names, with its own words "
                    f"(\"{clip(facts.question, 120)}\")."))
    return problems
