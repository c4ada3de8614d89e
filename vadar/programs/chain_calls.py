"""A chain of relations passed as a list, compared with the question's own chain before it runs.

`_objects_along(image, ["cube", "left", "sphere", "behind", "red cylinder"])` answers a chained
question in one call when the list is the question's chain. With the hand-written helper, 19
programs for 24 chained CLEVR questions called it and 7 were wrong; 4 of those 7 lists dropped a
relation (the outermost one, or the "There is a X ...; ... it" clause that names the reference) and
1 copied the worked example's chain. The question's chain as `relation_chain.find_order` reads it,
walked by that helper on the true scenes, gives the gold answer on 143 of the 144 chained CLEVR dev
questions, so where a program's list walks other relations than the question's, in another order, or
leaves one out, the list the question spells is told and nothing runs. Noun phrases are not
compared: programs write "metal" for "metallic", and `loc` reads either. The check `chain_lists`
is one of `call_checks.CALL_CHECKS`.

A chained question answered without the chain helper, where the library has one, is refused too
(`chain_unwalked`): on the held-out CLEVR questions of two relations or more answered with libraries
that had `_objects_along`, programs calling it were right on 78 of 94, the others on 5 of 33 (one
composed the relation helpers right; four were right by chance: depths compared for "left", the
example's red cubes counted). The message gives the call with the question's chain.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from omni3d_bench.relations import RELATIONS
from vadar.programs.program_facts import CallProblem, ProgramFacts, arguments
from vadar.programs.relation_chain import find_order

RELATION_WORDS = {"left of": "left", "right of": "right", "in front of": "front", "behind": "behind"}
"""Each relation `find_order` reads, as a chain list writes it (the word the chain helper tells it by)."""

_WORD = re.compile(r"[a-z]+")


def question_chain(question: str) -> list[str] | None:
    """The question's one chain of relations as a chain list, outermost object first: a noun phrase,
    a relation word, a noun phrase, ...; None where the question has no relation, several chains, or
    an object picked by two relations at once ("both left of X and behind Y": no single list)."""
    order = find_order(question)
    references = {id(other) for found in order for _, other in found.relations}
    heads = [found for found in order if id(found) not in references]
    if len(heads) != 1:
        return None
    found, chain = heads[0], [heads[0].phrase]
    while found.relations:
        if len(found.relations) != 1:
            return None
        relation, found = found.relations[0]
        chain += [RELATION_WORDS[relation], found.phrase]
    return chain


def _relation(item: str) -> str | None:
    """The relation a list item names, told by the word it holds as the helper tells it."""
    words = set(_WORD.findall(item.lower()))
    return next((word for word in RELATIONS if word in words), None)


def chain_misfit(name: str, chain: ast.expr, question: str) -> CallProblem | None:
    """What is wrong with the list literal `chain` passed to the function `name` for `question`, or
    None: a list that is not written out as strings, or a question without one plain chain, is never
    blamed."""
    if not isinstance(chain, ast.List | ast.Tuple):
        return None
    items = [e.value for e in chain.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    expected = question_chain(question)
    if expected is None or len(items) != len(chain.elts):
        return None
    relations = [_relation(item) for item in items[1::2]]
    wanted = expected[1::2]
    if relations == wanted and len(items) % 2 == 1:
        return None
    walked = ", ".join(repr(r) for r in relations if r) or "no relation"
    why = f"it walks {walked}, but the question's chain walks {', '.join(repr(r) for r in wanted)}"
    return CallProblem(chain.lineno, "chain_lists", (
        f"line {chain.lineno}: the chain passed to `{name}` is not the question's: {why}. Write the whole "
        f"chain in the question's order, each object's noun phrase and each relation (a \"There is ...;\" "
        f"clause names the object \"it\" stands for): `{name}(image, {expected!r})`."))


def chain_parameters(parameters: Iterable[tuple[str, str | None]]) -> list[str]:
    """The parameters of a signature that take a chain list: `chain: list[str]`."""
    return [name for name, annotation in parameters
            if name == "chain" and (annotation or "").replace(" ", "") in ("list[str]", "List[str]")]


def chain_lists(facts: ProgramFacts) -> list[CallProblem]:
    """A chain list (`_objects_along(image, [...])`) that is not the question's chain."""
    problems = []
    for call in facts.calls() if facts.question else ():
        signature = facts.signature(call)
        if signature is None:
            continue
        chains = chain_parameters(zip(signature.parameters, signature.annotations))
        for parameter, argument in arguments(call, signature):
            if parameter in chains and (problem := chain_misfit(signature.name, argument, facts.question)):
                problems.append(problem)
    return problems


def chain_unwalked(facts: ProgramFacts) -> list[CallProblem]:
    """A question with one plain chain of two relations or more whose program calls no helper of the
    library that takes a chain list."""
    chain = question_chain(facts.question) if facts.question else None
    if chain is None or len(chain) < 5:  # "cube", "left", "sphere", "behind", "cylinder": two relations
        return []
    walkers = [signature for signature in facts.api.signatures.values()
               if signature.helper and chain_parameters(zip(signature.parameters, signature.annotations))]
    called = {call.func.id for call in facts.calls() if isinstance(call.func, ast.Name)}
    if not walkers or any(walker.name in called for walker in walkers) or called & facts.defined:
        return []
    name = walkers[0].name
    relations = ", ".join(repr(word) for word in chain[1::2])
    return [CallProblem(1, "chain_unwalked", (
        f"line 1: this question chains {len(chain) // 2} relations ({relations}), and the program does not "
        f"call `{name}`, which walks such a chain in one call. Call `{name}(image, {chain!r})` and use what it "
        "returns: its first box for the object, `len(...)` for a count, whether it is empty for an existence."))]

