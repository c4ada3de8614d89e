"""Execution-based selection: several programs run, and the answer most of them agree on wins.

Sampled programs make different mistakes but tend to agree when right (MBR-exec), so the
plurality of the working programs' answers beats any one of them. Numbers within a relative
tolerance are one answer (2.0 and 2.00001 come from the same computation done two ways); a tie
goes to the answer of the earliest program, the greedy one. Once the programs still to come
cannot change that answer (`decided`), they need not be written: the answer is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vadar.programs.answers import is_number, same_answer  # the one comparison rule; it never raises

__all__ = ["Vote", "decided", "is_number", "plurality", "same_answer"]


@dataclass(frozen=True)
class Vote:
    """The chosen answer, the program that gave it first, and how many working programs agree."""

    answer: Any
    winner: int | None  # index of the first program with the chosen answer; None: no program worked
    agreeing: int
    working: int

    @property
    def agreement(self) -> float:
        """Share of the working programs that gave the chosen answer (0 when none worked)."""
        return self.agreeing / self.working if self.working else 0.0


def _groups(answers: Sequence[Any], working: Sequence[bool], rel_tol: float) -> list[tuple[int, int]]:
    """(first program index, count) of each answer the working programs gave, in order of first appearance."""
    groups: list[tuple[int, int]] = []
    for index, (answer, ok) in enumerate(zip(answers, working, strict=True)):
        if not ok:
            continue
        for position, (first, count) in enumerate(groups):
            if same_answer(answers[first], answer, rel_tol):
                groups[position] = (first, count + 1)
                break
        else:
            groups.append((index, 1))
    return groups


def _leader(groups: list[tuple[int, int]]) -> tuple[int, int]:
    return max(groups, key=lambda group: (group[1], -group[0]))


def decided(answers: Sequence[Any], working: Sequence[bool], remaining: int, rel_tol: float) -> bool:
    """True when no `remaining` further programs can change the plurality's answer: no other answer
    can overtake the leader (or tie it from an earlier program), nor can a new one (it comes later,
    so it must outnumber the leader)."""
    groups = _groups(answers, working, rel_tol)
    if not groups:
        return remaining == 0
    first, count = _leader(groups)
    rivals = ((f, c) for f, c in groups if f != first)
    if any(c + remaining > count or (c + remaining == count and f < first) for f, c in rivals):
        return False
    return remaining <= count


def plurality(answers: Sequence[Any], working: Sequence[bool], rel_tol: float) -> Vote:
    """The answer most working programs agree on; among equals, the one of the earliest program."""
    groups = _groups(answers, working, rel_tol)
    if not groups:
        return Vote(answer=None, winner=None, agreeing=0, working=0)
    first, count = _leader(groups)
    return Vote(answer=answers[first], winner=first, agreeing=count, working=sum(1 for ok in working if ok))
