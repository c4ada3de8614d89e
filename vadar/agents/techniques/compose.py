"""The one place the reasoning configuration becomes a program writer.

Outermost first, as a question meets them:

1. formalize: the task constraint is asked first (`Formalize`);
2. unit tests: the question's test scenes are written (`UnitTests`);
3. size priors: the priors of the objects the question names are looked up (`SizePriors`), and the
   objects of its relation chains put in the order to find them (`FindOrder`);
4. the programs: with `accept` (a labelled build), one by one until one is right (`BuildTries`);
   else, with `samples` > 1, a vote over them (`Vote`);
5. each program counted on the test scenes (`CountPassed`),
6. reviewed and revised once (`Revise`: the reflect checks, else the constraint's answer type, then
   the first failing test scene),
7. written, run and repaired by the plain writer (`PlainWriter`).

A technique that is off is not in the chain, so with every option off the plain writer alone
answers, and every request is the one it always was.
"""

from __future__ import annotations

from collections.abc import Callable

from vadar.agents.formalize import Formalizer
from vadar.agents.reflect import Reflector
from vadar.agents.techniques.build_tries import BuildTries
from vadar.agents.techniques.constraint import ConstraintFit, Formalize
from vadar.agents.techniques.find_order import FindOrder
from vadar.agents.techniques.priors import SizePriors
from vadar.agents.techniques.revise import Reflection, Review, Revise
from vadar.agents.techniques.scene_tests import CountPassed, SceneCheck, UnitTests
from vadar.agents.techniques.task import ProgramWriter
from vadar.agents.techniques.vote import Vote
from vadar.agents.techniques.writer import PlainWriter
from vadar.agents.unit_tests import TestWriter
from vadar.config import ReasoningConfig
from vadar.programs.outcome import ProgramOutcome


def compose(reasoning: ReasoningConfig, plain: PlainWriter, *,
            accept: Callable[[ProgramOutcome], bool] | None = None, tries: int = 1) -> ProgramWriter:
    """The plain writer inside the techniques `reasoning` turns on, in the order above."""
    llm = plain.llm
    reviews: list[Review] = []
    if reasoning.reflect:
        reviews.append(Reflection(Reflector(llm)))
    elif reasoning.formalize:
        reviews.append(ConstraintFit())
    if reasoning.tests:
        reviews.append(SceneCheck())
    writer: ProgramWriter = Revise(plain, reviews) if reviews else plain
    if reasoning.tests:
        writer = CountPassed(writer)
    if accept is not None:
        writer = BuildTries(writer, accept, tries)
    elif reasoning.samples > 1:
        writer = Vote(writer, reasoning.samples, reasoning.vote_tolerance, reasoning.vote_until_decided)
    if reasoning.size_priors:
        writer = SizePriors(writer, shown=reasoning.size_priors_shown)
    if reasoning.find_order:
        writer = FindOrder(writer)
    if reasoning.tests:
        writer = UnitTests(writer, TestWriter(llm), plain.executor, reasoning.vote_tolerance)
    if reasoning.formalize:
        writer = Formalize(writer, Formalizer(llm))
    return writer


def layers(writer: ProgramWriter) -> list[str]:
    """The names of the writers in a chain, outermost first (`["Vote", "PlainWriter"]`)."""
    names = []
    current: object | None = writer
    while current is not None:
        names.append(type(current).__name__)
        current = getattr(current, "inner", None)
    return names
