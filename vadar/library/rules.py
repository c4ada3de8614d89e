"""The rules a helper's name and docstring must keep: the one place they are written.

The Program agent reads only a helper's name and docstring, so both are checked before a helper
can be admitted, whatever route it came by (proposed, distilled, written for a group): a name is
one underscore and lower-case words, new in the library, and not made of one use's values
("_tiny_matte_object_color"); a docstring says what the helper returns in terms of every
parameter, and names no one use's object ("the depth of the book"). A body that never reads a
parameter breaks the promise of its signature. Each rule returns the text to send back to the
LLM, or None.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence

from vadar.library.fragments import Pattern
from vadar.programs.formula import return_formula
from vadar.programs.helper_rules import name_problem as stored_name_problem

HELPER_NAME = re.compile(r"^_[a-z][a-z0-9_]{2,40}$")
"""A helper's name: one underscore, then lower-case words joined by underscores."""


def name_problem(name: str, taken: Iterable[str]) -> str | None:
    """Why `name` cannot name a new helper: it is not of the helper form, it breaks the rules every
    stored helper keeps (no module, built-in, sandbox or namespace name), or it is taken."""
    if not HELPER_NAME.match(name):
        return f"`{name}` is not a valid name: use one leading underscore, lower case words and underscores"
    broken = stored_name_problem(name)
    if broken is not None:
        return broken
    if name in set(taken):
        return f"`{name}` is already taken; choose another name"
    return None


# words of a literal that say nothing of its value ("the", "object") and may describe any helper
COMMON = {"object", "objects", "thing", "things", "image", "what", "which", "how", "many", "this", "that", "it",
          "is", "are", "be", "there", "the", "a", "an", "of", "in", "on", "at", "to", "for", "with", "by", "from",
          "as", "than", "and", "or"}


def example_words(pattern: Pattern) -> set[str]:
    """Words of the literals that become parameters, and of inputs each use names after its own
    object: the examples' values, not what the helper does."""
    words: set[str] = set()
    for k in pattern.varying_holes():
        for instance in pattern.instances:
            value = instance.holes[k]
            if isinstance(value, str):
                words.update(re.findall(r"[a-z]+", value.lower()))
    for k in pattern.instances[0].inputs:  # an input each use names after its object: green_stool, ball
        spellings = [set(re.findall(r"[a-z]+", i.variables[k].lower())) for i in pattern.instances]
        words.update(set().union(*spellings) - set.intersection(*spellings))
    return words - COMMON


def names_an_example(name: str, examples: set[str]) -> str | None:
    """A name built from one use's values (`_tiny_matte_object_color`) misleads every later program."""
    used = sorted(set(name.strip("_").split("_")) & examples)
    if used:
        return (f"`{name}` names the value of one use ({', '.join(used)}); those are parameters: name what the "
                "helper computes for any value")
    return None


def documents_an_example(docstring: str, examples: set[str]) -> str | None:
    """A docstring that speaks of one use's object ("the depth of the book") tells later programs
    the helper is about books."""
    generic = re.sub(r"bounding box(es)?", " ", docstring.lower())  # a use's "box" is not every box
    used = sorted(set(re.findall(r"[a-z]+", generic)) & examples)
    if used:
        return (f"the docstring names the value of one use ({', '.join(used)}); those are parameters: describe "
                "what the helper computes for any value, by its parameters' names")
    return None


def parameter_words(names: Sequence[str]) -> set[str]:
    """The words of parameter names (`object_prompt`): a docstring may say them."""
    return {w for name in names for w in name.lower().split("_") if w}


_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth"}


def silent_parameter(parameters: Sequence[str], docstring: str) -> str | None:
    """Why a docstring misdescribes its helper: it says nothing of one of the parameters.

    A helper of two objects documented as "the distance of `object1_prompt` from the camera" (it
    returned how much farther the first was than the second) invites its use for other questions;
    the Program agent reads only the name and the docstring. A parameter counts as mentioned by its
    name or by its name without `_prompt` (`reference_prompt` as "reference"); `bbox` counts as "box",
    and a numbered one by its ordinal (`bbox2` as "second box", `object1_prompt` as "first object").
    """
    text = docstring.lower().replace("_", " ").replace("bbox", "box")
    for parameter in parameters:
        if parameter == "image":
            continue
        words = parameter.lower().replace("_", " ").replace("bbox", "box")
        base = words.removesuffix(" prompt").removesuffix(" description").strip()
        numbered = re.fullmatch(r"([a-z ]*?)\s*([1-4])", base)
        ordinal = f"{_ORDINALS[int(numbered[2])]} {numbered[1].strip()}" if numbered else None
        if words not in text and base not in text and (ordinal is None or ordinal not in text):
            return (f"the docstring says nothing of `{parameter}`: say in one sentence what the helper returns "
                    "in terms of every parameter")
    return None


def unread_parameter(code: str) -> str | None:
    """Why a helper misleads: its body never reads one of its parameters, or None.

    `_count_objects_by_side(image, object_prompt, side)` returning `len(loc(image, object_prompt))`
    reproduces "How many black objects are there?" with any `side`, and its name promises a count
    on one side; a program that trusts the name answers every left/right count wrong.
    A parameter read only into a variable nothing reads is not read either: the distilled
    `_find_second_match(image, object_prompt, object_prompt2)` set `match = loc(image,
    object_prompt)[0]` and returned `loc(image, object_prompt2)[0]`.
    """
    try:
        node = next(n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef))
    except (SyntaxError, StopIteration):
        return None
    loaded = _loaded(node, frozenset())
    stored = {t.id for n in ast.walk(node) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    read = _loaded(node, frozenset(stored - loaded))
    for parameter in [a.arg for a in node.args.args + node.args.kwonlyargs]:
        if parameter != "image" and parameter not in read:
            unused = "" if parameter not in loaded else " (only into a variable nothing reads)"
            return (f"the body never reads `{parameter}`{unused}, so the helper does not do what its signature "
                    f"promises: compute with `{parameter}`, or drop it")
    return None


def _loaded(node: ast.AST, dead: frozenset[str]) -> set[str]:
    """The names read in `node`, leaving out the assignments to `dead` variables (never read)."""
    names, pending = set(), [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Assign) and all(isinstance(t, ast.Name) and t.id in dead for t in current.targets):
            continue
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
            names.add(current.id)
        pending.extend(ast.iter_child_nodes(current))
    return names


def with_formula(docstring: str, parameters: Sequence[str], body: str) -> str:
    """The namer's sentence, completed by the body's return formula where it leaves a parameter out.

    A 1.5B namer writes "the depth difference between two bounding boxes" for
    `depth(image, bbox) - depth(image, bbox2)`; the formula says which box is subtracted from which.
    """
    if not docstring or silent_parameter(parameters, docstring) is None:
        return docstring
    formula = return_formula(body)
    return f"{docstring.rstrip()} Returns `{formula}`." if formula else docstring
