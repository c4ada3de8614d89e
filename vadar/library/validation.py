"""The validation gate: a library may never make a data set worse.

Every build question is judged, never scored, at every build size. Each batch's questions are
answered by static-api (predefined modules, the fixed example) and by vadar with the library
*without what that batch added* (its helpers, every helper calling one, and the worked examples
of its questions): leave-one-batch-out, so a helper is judged only on questions it was not
proposed, searched or admitted on. A one-batch build leaves nothing out: its questions are
answered with the whole library (in-sample), which can show a library worse than static-api on
its own questions, never better. Both answers are scored against a reference: the gold answer, or
in an unlabelled build the answer two static-api programs agree on (a question where they
disagree gives no evidence). Where vadar is behind in total, every helper and worked example
whose questions lost more than they won is withdrawn, and the questions are answered again, round
after round. If vadar is still behind when nothing loses on its own, the whole library and its
examples are withdrawn: vadar's prompts are then static-api's, and so are its answers.

The rule acts on the totals, not on a significance test: with 6 to 30 questions, of which a
handful differ, no paired test reaches 5% (the exact sign test needs 6 of 6 differing questions
to go one way), so a test would decide nothing at the sizes builds run at. Each round records the
questions won and lost and the sign test's p-value, so a reader sees how little a small build shows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from api_store import ApiStore, FunctionRecord
from vadar.library.retirement import callers_of, retire_helpers

LEAVE_ONE_BATCH_OUT = "leave-one-batch-out"
IN_SAMPLE = "in-sample"


@dataclass(frozen=True)
class Answered:
    """One judged build question: both methods' scores, what the vadar program used and was shown."""

    question_id: str
    vadar: float
    static: float
    helpers: frozenset[str] = frozenset()
    examples: frozenset[int] = frozenset()  # ids of the worked examples in its prompt


@dataclass
class Tally:
    """The judged questions one helper or example touched: how many vadar won and lost there."""

    wins: float = 0.0
    losses: float = 0.0
    questions: list[str] = field(default_factory=list)

    @property
    def net(self) -> float:
        return self.wins - self.losses

    def to_dict(self) -> dict[str, Any]:
        return {"wins": round(self.wins, 4), "losses": round(self.losses, 4), "questions": self.questions}


@dataclass
class ValidationRound:
    """One pass over the build questions, and what it withdrew."""

    questions: int
    vadar: float
    static: float
    helpers: dict[str, Tally]
    examples: dict[int, Tally]
    retired: list[str] = field(default_factory=list)
    withdrawn: list[int] = field(default_factory=list)
    everything: bool = False  # nothing lost on its own: the whole library was withdrawn

    differing: list[Answered] = field(default_factory=list)  # the questions won or lost, in build order

    @property
    def won(self) -> int:
        """Questions where vadar scored more than static-api."""
        return sum(a.vadar > a.static for a in self.differing)

    @property
    def lost(self) -> int:
        return sum(a.vadar < a.static for a in self.differing)

    @property
    def passed(self) -> bool:
        return self.vadar >= self.static

    @property
    def p_value(self) -> float:
        """The exact two-sided sign test of the questions won against those lost (ties say nothing)."""
        return sign_test(self.won, self.lost)

    def to_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "vadar": round(self.vadar, 4), "static": round(self.static, 4),
                "won": self.won, "lost": self.lost, "sign_test_p": round(self.p_value, 4),
                "passed": self.passed, "retired": self.retired, "withdrawn": self.withdrawn,
                "everything": self.everything,
                "differing": [{"question": a.question_id, "vadar": round(a.vadar, 4), "static": round(a.static, 4),
                               "helpers": sorted(a.helpers), "examples": sorted(a.examples)} for a in self.differing],
                "helpers": {name: t.to_dict() for name, t in sorted(self.helpers.items())}}

    def differing_text(self) -> str:
        """The questions won and lost, for the build's printout: which ones a decision rests on."""
        return ", ".join(f"{a.question_id} {a.vadar:.2g} vs {a.static:.2g}"
                         + (f" ({', '.join(sorted(a.helpers))})" if a.helpers else "") for a in self.differing)


def judge(answered: Sequence[Answered]) -> ValidationRound:
    """Totals of both methods, and each helper's and example's wins and losses against static-api."""
    helpers: dict[str, Tally] = {}
    examples: dict[int, Tally] = {}
    for item in answered:
        difference = item.vadar - item.static
        touched: Iterable[Tally] = [*(helpers.setdefault(h, Tally()) for h in item.helpers),
                                    *(examples.setdefault(e, Tally()) for e in item.examples)]
        for tally in touched:
            tally.questions.append(item.question_id)
            if difference > 0:
                tally.wins += difference
            elif difference < 0:
                tally.losses -= difference
    return ValidationRound(len(answered), sum(a.vadar for a in answered), sum(a.static for a in answered),
                           helpers, examples, differing=[a for a in answered if a.vadar != a.static])


def sign_test(won: int, lost: int) -> float:
    """Two-sided exact binomial test of `won` against `lost` at even odds (1.0 when none differ)."""
    n, k = won + lost, min(won, lost)
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)


def left_out(library: Sequence[FunctionRecord], added: Iterable[str]) -> list[FunctionRecord]:
    """The library without the helpers `added` and every helper that calls one of them, directly or
    through another: what the library would be had the batch that added them never run."""
    gone = set(added)
    gone.update(callers_of(library, gone))
    return [record for record in library if record.name not in gone]


def withdraw(round_: ValidationRound, helpers: Sequence[str], examples: Sequence[int], *,
             everything: bool = False) -> None:
    """What a round that did not pass withdraws: every helper and example that lost more than it
    won; when none did, or with `everything`, all of them (`helpers` and `examples` are all the
    library has)."""
    round_.retired = sorted(name for name, tally in round_.helpers.items() if tally.net < 0)
    round_.withdrawn = sorted(i for i, tally in round_.examples.items() if tally.net < 0)
    if everything or (not round_.retired and not round_.withdrawn):
        round_.retired, round_.withdrawn, round_.everything = sorted(helpers), sorted(examples), True


def apply_round(store: ApiStore, round_: ValidationRound) -> None:
    """Retire the round's helpers (with every helper that calls one) and withdraw its examples, each
    with its figures."""
    why = ("vadar was behind static-api on the build questions and nothing lost on its own"
           if round_.everything else "questions it touched lost more than they won against static-api")
    reasons = {name: f"validation: {why}" for name in round_.retired}
    evidence = {name: {"validation": round_.helpers[name].to_dict()} for name in round_.retired
                if name in round_.helpers}
    retire_helpers(store, reasons, mode="validation", evidence=evidence)
    store.withdraw_programs(round_.withdrawn, f"validation: {why}")


def record_validated(store: ApiStore, last: ValidationRound, helpers: Sequence[str]) -> None:
    """Each helper still in the library (`helpers`) gets a `validated` decision with the last round's figures."""
    for name in helpers:
        tally = last.helpers.get(name)
        store.record_decision(name, "validated", mode="validation", evidence={
            "questions": last.questions, "vadar": last.vadar, "static": last.static,
            "won": last.won, "lost": last.lost,
            **({"tally": tally.to_dict()} if tally is not None else {"tally": None})})
