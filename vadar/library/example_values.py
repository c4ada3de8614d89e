"""Names and docstrings made of one use's values.

A distilled helper's parameters are the literals that differed between its uses ("book", "chair").
A name or docstring built from one of those values (`_tiny_matte_object_color`, "the depth of the
book") tells every later program the helper is about that value, so such a reply is sent back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vadar.library.fragments import Pattern


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
