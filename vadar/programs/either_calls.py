"""A union count's object phrases compared with the question's outer words before the program runs.

"How many big objects are either gray metal things or cylinders?" counts big gray metal things and
big cylinders: "big" belongs to both sides. Programs drop it: on the 16 held-out CLEVR "either"
counts of the chain library's run, 8 programs called `_count_either(image, loc(image, "big gray
metal things"), loc(image, "cylinders"))` or the like, leaving the outer words out of one side or
both, and all 8 were wrong. The question says those words once, before "are", so where a program
counts a `loc` phrase that lacks one of them the phrase with them is told and nothing runs.

A phrase is blamed only where it is counted: passed to a library helper (directly or through a name
assigned from `loc`) or to `len`; a phrase found to be filtered in code (`loc(image, "objects")`,
then tested one box at a time) is left alone, and so are questions whose sides name relations
("... cubes behind the small yellow thing or ..."), where some phrases are references. Words are
compared by what they mean in CLEVR's vocabulary ("big" is "large", "block" is "cube"); other
words as written.
"""

from __future__ import annotations

import ast
import re
from typing import TypeGuard

from base_modules.oracle.clevr_vocab import ATTRIBUTES, GENERIC_NOUNS
from vadar.programs.loc_phrases import word_meaning
from vadar.programs.program_facts import LOC, CallProblem, ProgramFacts
from vadar.programs.relation_chain import find_order

_UNION = re.compile(r"^\s*(?:how many|what number of)\s+(?P<outer>[a-z ]+?)\s+are\s+(?:either\s+)?"
                    r"(?P<sides>.+\sor\s.+?)\s*\?\s*$", re.IGNORECASE)
_WORD = re.compile(r"[a-z]+")
LEN = "len"


def outer_phrase(question: str) -> str:
    """A union count's outer phrase ("big objects" in "How many big objects are either ... or ...?");
    empty where the question is no union count or its sides name relations."""
    matched = _UNION.match(question)
    return "" if matched is None or find_order(question) else matched["outer"].lower()


def outer_words(question: str) -> list[str]:
    """The words of the outer phrase that every side must keep ("big"); none for "things"."""
    return _kept_words(outer_phrase(question))


def _kept_words(outer: str) -> list[str]:
    return [word for word in _WORD.findall(outer) if word not in GENERIC_NOUNS]


def missing_words(phrase: str, outer: list[str]) -> list[str]:
    """The outer words that `phrase` does not say, by meaning; none where the phrase names another
    value of the same attribute (the side counts no object then, and the words would contradict)."""
    said = {word_meaning(word) for word in _WORD.findall(phrase.lower())}
    attributes = {meaning[0]: meaning for meaning in said if isinstance(meaning, tuple)}
    missing = []
    for word in outer:
        meaning = word_meaning(word)
        if meaning in said:
            continue
        if isinstance(meaning, tuple) and meaning[0] in attributes:
            return []
        missing.append(word)
    return missing


def _counted_loc_calls(facts: ProgramFacts) -> list[ast.Call]:
    """`loc` calls whose boxes are counted whole: an argument of a library helper or of `len`,
    directly or through a name whose one binding is `name = loc(...)` (no loop, no `+=`)."""
    counted: list[ast.Call] = []
    for call in facts.calls():
        counting = (isinstance(call.func, ast.Name) and call.func.id == LEN) or (
            (signature := facts.signature(call)) is not None and signature.helper)
        if not counting:
            continue
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            if _is_loc(argument):
                counted.append(argument)
            elif (isinstance(argument, ast.Name) and argument.id in facts.values
                  and len(bound := facts.assignments[argument.id]) == 1 and _is_loc(bound[0])):
                counted.append(bound[0])
    return counted


def _is_loc(node: ast.expr) -> TypeGuard[ast.Call]:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == LOC
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))


def union_phrases(facts: ProgramFacts) -> list[CallProblem]:
    """A counted `loc` phrase of a union count that leaves out the question's outer words."""
    phrase_outer = outer_phrase(facts.question) if facts.question else ""
    outer = _kept_words(phrase_outer)
    if not outer:
        return []
    problems, seen = [], set()
    for call in _counted_loc_calls(facts):
        phrase = call.args[1].value
        missing = missing_words(phrase, outer)
        if not missing or id(call) in seen:
            continue
        seen.add(id(call))
        problems.append(CallProblem(call.lineno, "union_phrases", (
            f"line {call.lineno}: `loc(image, {phrase!r})` leaves out {', '.join(repr(w) for w in missing)}: the "
            f"question counts only {phrase_outer} on each side of its \"or\"; find them with "
            f"`loc(image, {with_words(phrase, missing)!r})`.")))
    return problems


def with_words(phrase: str, missing: list[str]) -> str:
    """`phrase` saying the missing outer words too: a noun ("blocks") in place of a generic one
    ("things"), or after the phrase; the other words before it."""
    adjectives = [w for w in missing if isinstance(m := word_meaning(w), tuple) and m[0] != "shape"]
    nouns = [w for w in missing if w not in adjectives]
    words = phrase.split()
    if nouns:
        if words and words[-1].lower() in GENERIC_NOUNS:
            words[-1:] = nouns
        else:
            words += nouns
    words = [*adjectives, *words]
    if all(isinstance(word_meaning(w.lower()), tuple) or w.lower() in GENERIC_NOUNS for w in words):
        words.sort(key=_clevr_order)  # CLEVR says size, colour, material, shape: "big yellow rubber balls"
    return " ".join(words)


def _clevr_order(word: str) -> int:
    meaning = word_meaning(word.lower())
    return ATTRIBUTES.index(meaning[0]) if isinstance(meaning, tuple) else len(ATTRIBUTES)
