"""A literal argument outside the values its parameter's docstring lists, caught before the program runs.

Question-shape helpers take a word that selects what they do: a relation ('left', 'right', 'front' or
'behind'), an attribute, a comparison ('more', 'fewer' or 'equal'). Programs copy the question's own
word instead: of the nine count comparisons a 100-question CLEVR build searched `_compare_counts` on,
two programs passed "less" and "greater", which all four of its bodies took for 'equal' (the `else` after
testing 'more' and 'fewer'). The docstring's list (`call_signatures.documented_choices`) is what the
program's writer was shown, so a value outside it is certain to be off the contract; the message names
the listed value the word means where one is clear.
"""

from __future__ import annotations

import ast
import difflib
import re

from vadar.programs.program_facts import CallProblem, ProgramFacts, arguments

SAME_MEANING: tuple[frozenset[str], ...] = (
    frozenset({"fewer", "less", "smaller", "lower"}),
    frozenset({"more", "greater", "larger", "bigger", "higher"}),
    frozenset({"equal", "same", "equally"}),
    frozenset({"color", "colour"}),
)
"""Words a question uses for a listed value of a comparison, and one spelling. A relation's phrase holds
its value ("in front of", "to the left of") and needs none."""


def meant_value(word: str, choices: tuple[str, ...]) -> str | None:
    """The one listed value `word` stands for: written in another case, contained in it as a word
    ("in front of" holds 'front'), a word of the same meaning ("less" for 'fewer') or a close spelling;
    None where no one value is clear."""
    lowered = word.strip().lower()
    for choice in choices:
        if choice.lower() == lowered:
            return choice
    words = set(re.findall(r"[a-z]+", lowered))
    for matches in (
        [c for c in choices if c.lower() in words],
        [c for c in choices if any(c.lower() in group and words & group for group in SAME_MEANING)],
        difflib.get_close_matches(lowered, choices, n=2, cutoff=0.75),
    ):
        if len(set(matches)) == 1:
            return matches[0]
    return None


def _listed(choices: tuple[str, ...]) -> str:
    quoted = [repr(choice) for choice in choices]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def choices_given(facts: ProgramFacts) -> list[CallProblem]:
    """A string literal passed for a parameter whose docstring lists its values, none of them that string."""
    problems = []
    for call in facts.calls():
        signature = facts.signature(call)
        if signature is None or not signature.choices:
            continue
        for parameter, argument in arguments(call, signature):
            choices = signature.choices_of(parameter)
            if not (choices and isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
                continue
            if argument.value in choices:
                continue
            message = (f"line {call.lineno}: `{signature.name}({parameter}={argument.value!r})`: `{parameter}` "
                       f"is one of {_listed(choices)}, and {argument.value!r} is none of them")
            meant = meant_value(argument.value, choices)
            message += f"; write {meant!r}" if meant is not None else "; write the one that means what the question asks"
            problems.append(CallProblem(call.lineno, "choices_given", message + "."))
    return problems
