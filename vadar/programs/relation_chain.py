"""The objects a question names through spatial relations, in the order a program finds them.

"What color is the big rubber cube left of the metal object that is behind the matte thing?" is
read from the outside in, and found from the inside out: the matte thing first, then the metal
object behind it, then the cube left of that. A small model's programs keep one relation: with a
`_attribute_of_related` right on every ground-truth case in the library, 10 of the 12 CLEVR build
questions its programs were written for chain two or three relations, and each of those 10
programs called it once with one relation and dropped the others.
`find_order` parses the chains of a question (a noun phrase, a relation, a noun phrase, ...; "both
left of X and behind Y"; "There is a X; ... left of it") and `plan_text` lists the objects to
find, the innermost first, each as its noun phrase's `loc` call and the relations to earlier ones
that keep its boxes. The noun phrases are the question's own; nothing is resolved here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_RELATION = re.compile(r"\b(?:to the |on the )?(left|right)(?: side)? of\b|\b(in front of|behind)\b", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z]+|[;?,.]")
_GLUE = {"that", "which", "is", "are"}  # between an object and its relation: "the cube that is left of"
_BOUNDARY = {"the", "a", "an", "any", "many", "of", "there", "is", "are", "both", "than", "more", "fewer", "equal",
             "number", "what", "how", "does", "do", "did", "have", "has", "and", "or", "it", "its", "that", "which",
             "as", "same", "made", "size", "color", "colour", "shape", "material", "other", "less", "greater"}
_DETERMINERS = {"the", "a", "an"}
_THERE_IS = re.compile(r"\s*there (?:is|are) (.+?);(.*)$", re.IGNORECASE)
_CANONICAL = {"left": "left of", "right": "right of", "in front of": "in front of", "behind": "behind"}


@dataclass
class Found:
    """One object to find: its noun phrase and the relations to other objects that pick it."""

    phrase: str
    relations: list[tuple[str, Found]] = field(default_factory=list)


def find_order(question: str) -> list[Found]:
    """The objects of the question's relation chains, each after the objects it is found relative
    to; empty when the question names no spatial relation between two noun phrases."""
    first, rest = _there_is(question)
    order: list[Found] = []
    antecedent = None
    if first is not None:
        tokens = _tokens(first)
        heads = _chains(tokens, None)
        antecedent = heads[0] if heads else Found(" ".join(w for w in tokens if w.lower() not in _DETERMINERS
                                                              and w not in ";?,."))
        for head in heads:
            _visit(head, order)
    for head in _chains(_tokens(rest), antecedent):
        _visit(head, order)
    return order if any(found.relations for found in order) else []


@dataclass(frozen=True)
class ChainExtent:
    """How far a question's relations reach: the most relations one chain walks through ("the cube
    left of the sphere behind the cylinder": 2) and whether an object is picked by two relations at
    once ("both left of X and behind Y"), which a single chain does not say."""

    hops: int = 0
    branched: bool = False


def chain_extent(question: str) -> ChainExtent:
    """The extent of `question`'s relation chains; zero hops when it names no relation between objects."""
    order = find_order(question)
    depth: dict[int, int] = {}
    for found in order:  # innermost first: every reference's depth is known before it is used
        depth[id(found)] = max((1 + depth.get(id(other), 0) for _, other in found.relations), default=0)
    return ChainExtent(max(depth.values(), default=0), any(len(found.relations) > 1 for found in order))


def plan_text(question: str) -> str | None:
    """The objects to find, numbered innermost first, each as the `loc` call of its noun phrase and
    the relations that pick among its boxes; None when the question has no chain. Shown the
    relation in the same phrase ("3. the tiny thing behind (1) and left of (2)"), static-api
    programs asked `loc` for a relation in 8 of 14 CLEVR questions (0 without it)."""
    order = find_order(question)
    if not order:
        return None
    number = {id(found): index for index, found in enumerate(order, 1)}
    references = {id(other) for found in order for _, other in found.relations}
    lines = []
    for index, found in enumerate(order, 1):
        call = f'loc(image, "{found.phrase}")'
        picked = " and ".join(f"{relation} object {number[id(other)]}" for relation, other in found.relations)
        if not picked:
            lines.append(f"{index}. {call}[0]")
        elif id(found) in references:  # a link of the chain: one object, found from the last
            lines.append(f"{index}. the first box of {call} that is {picked}")
        else:  # what the question asks about: every box that qualifies (a count keeps them all)
            lines.append(f"{index}. the boxes of {call} that are {picked}")
    return "\n".join(lines)


def _there_is(question: str) -> tuple[str | None, str]:
    """'There is a X ...; what color is it?': the clause that introduces `it`, and the rest."""
    match = _THERE_IS.match(question)
    return (match.group(1), match.group(2)) if match else (None, question)


def _tokens(text: str) -> list[str]:
    """Words and punctuation, each relation phrase one token ('@left of')."""
    tokens: list[str] = []
    position = 0
    for match in _RELATION.finditer(text):
        tokens += _TOKEN.findall(text[position:match.start()])
        word = (match.group(1) or match.group(2)).lower()
        tokens.append("@" + _CANONICAL[word])
        position = match.end()
    return tokens + _TOKEN.findall(text[position:])


def _chains(tokens: list[str], antecedent: Found | None) -> list[Found]:
    """The outermost object of each chain in `tokens` (`antecedent` stands for 'it')."""
    heads: list[Found] = []
    index = 0
    while index < len(tokens):
        if not tokens[index].startswith("@"):
            index += 1
            continue
        subject = _phrase_before(tokens, index)
        if subject is None:
            index += 1
            continue
        head = Found(subject)
        index = _relations(tokens, index, head, antecedent)
        heads.append(head)
    return heads


def _relations(tokens: list[str], index: int, subject: Found, antecedent: Found | None) -> int:
    """Read `subject`'s relations from the relation token at `index`: a chain goes on through each
    object's own relation ('the X left of the Y behind the Z'), and 'and' adds another relation of
    the same subject ('both left of X and behind Y'). Returns the index after the chain."""
    while index < len(tokens) and tokens[index].startswith("@"):
        relation = tokens[index][1:]
        other, index = _phrase_after(tokens, index + 1, antecedent)
        if other is None:
            return index
        subject.relations.append((relation, other))
        after = _skip(tokens, index, _GLUE)
        if after < len(tokens) and tokens[after].startswith("@"):
            index = _relations(tokens, after, other, antecedent)  # the object's own relation
            after = _skip(tokens, index, _GLUE)
        if after + 1 < len(tokens) and tokens[after].lower() == "and" and tokens[after + 1].startswith("@"):
            index = after + 1  # another relation of the same subject
            continue
        return index
    return index


def _phrase_before(tokens: list[str], index: int) -> str | None:
    start = index
    while start > 0 and tokens[start - 1].lower() in _GLUE | {"both"}:
        start -= 1
    words: list[str] = []
    while start > 0 and tokens[start - 1].isalpha() and tokens[start - 1].lower() not in _BOUNDARY:
        start -= 1
        words.insert(0, tokens[start])
    return " ".join(words) if words else None


def _phrase_after(tokens: list[str], index: int, antecedent: Found | None) -> tuple[Found | None, int]:
    if index < len(tokens) and tokens[index].lower() == "it" and antecedent is not None:
        return antecedent, index + 1
    index = _skip(tokens, index, _DETERMINERS)
    words: list[str] = []
    while index < len(tokens) and tokens[index].isalpha() and tokens[index].lower() not in _BOUNDARY:
        words.append(tokens[index])
        index += 1
    return (Found(" ".join(words)), index) if words else (None, index)


def _skip(tokens: list[str], index: int, words: set[str]) -> int:
    while index < len(tokens) and tokens[index].lower() in words:
        index += 1
    return index


def _visit(found: Found, order: list[Found]) -> None:
    """Post-order: the objects `found` is found relative to come first; each object once."""
    if any(found is seen for seen in order):
        return
    for _, other in found.relations:
        _visit(other, order)
    order.append(found)
