"""The validation gate: a library is withdrawn only on evidence that it makes a data set worse.

Every build question is judged, never scored, at every build size. Each batch's questions are
answered by static-api (predefined modules, the fixed example) and by vadar with the library
*without what that batch added* (its helpers, every helper calling one, and the worked examples
of its questions): leave-one-batch-out, so a helper is judged only on questions it was not
proposed, searched or admitted on. A one-batch build leaves nothing out: its questions are
answered with the whole library (in-sample), which can show a library worse than static-api on
its own questions, never better. Both answers are scored against a reference: the gold answer, or
in an unlabelled build the answer two static-api programs agree on (a question where they
disagree gives no evidence).

The burden of evidence falls on withdrawing. A question where the two differ is a coin flip when
the library changes nothing but the prompt's wording (a greedy program flips on it), so a rule
acting on the totals withdrew whole libraries on one question in 30. Here the exact one-sided
sign test decides, at `withdraw_p` (0.2 by default): a helper or worked example goes when the
questions it touched lost significantly more than they won (at 0.2, at least 3 lost and none
won); when vadar as a whole lost significantly more questions than it won, every helper and
example that lost more than it won goes too, and when nothing did, the whole library and its
examples: vadar's prompts are then static-api's, and so are its answers. Where no question lost
called a helper, the examples go and the helpers stay (and the other way round): on a warehouse
build, each round withdrew the counting examples shown, retrieval put the next ones in their place,
they lost the same three questions, and the last round took three helpers no lost question had
called. A library one or two questions behind stays, and the round says so, with the questions it
rests on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from api_store import ApiStore, FunctionRecord
from vadar.library.retirement import callers_of, retire_helpers

LEAVE_ONE_BATCH_OUT = "leave-one-batch-out"
WITHDRAW_P = 0.2  # the one-sided sign test's level below which losses count as evidence
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
    won: int = 0  # questions it touched where vadar scored more than static-api
    lost: int = 0

    @property
    def net(self) -> float:
        return self.wins - self.losses

    def behind(self, level: float) -> bool:
        """Its questions lost significantly more than they won (one-sided sign test at `level`)."""
        return behind_p(self.won, self.lost) <= level

    def to_dict(self) -> dict[str, Any]:
        return {"wins": round(self.wins, 4), "losses": round(self.losses, 4), "won": self.won, "lost": self.lost,
                "questions": self.questions}


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
    spared: str = ""  # "helpers" or "examples": kept when all else went, as no question lost used them
    level: float = WITHDRAW_P  # the one-sided sign test's level at which losses are evidence
    assumed: int = 0  # questions vadar got right where static-api was not asked, scored a tie: `static`
    # is then at most what it says and `won` at least (`runs.validation`; a decision is the same either way)

    differing: list[Answered] = field(default_factory=list)  # the questions won or lost, in build order

    @property
    def won(self) -> int:
        """Questions where vadar scored more than static-api."""
        return sum(a.vadar > a.static for a in self.differing)

    @property
    def lost(self) -> int:
        return sum(a.vadar < a.static for a in self.differing)

    @property
    def behind_p(self) -> float:
        """The one-sided sign test's p-value that vadar loses more questions than it wins."""
        return behind_p(self.won, self.lost)

    @property
    def passed(self) -> bool:
        """vadar is not significantly behind static-api (a question or two behind passes)."""
        return self.behind_p > self.level

    @property
    def p_value(self) -> float:
        """The exact two-sided sign test of the questions won against those lost (ties say nothing)."""
        return sign_test(self.won, self.lost)

    def to_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "vadar": round(self.vadar, 4), "static": round(self.static, 4),
                "won": self.won, "lost": self.lost, "sign_test_p": round(self.p_value, 4),
                "behind_p": round(self.behind_p, 4), "level": self.level, "passed": self.passed,
                "assumed_ties": self.assumed, "retired": self.retired, "withdrawn": self.withdrawn,
                "everything": self.everything, "spared": self.spared or None,
                "differing": [{"question": a.question_id, "vadar": round(a.vadar, 4), "static": round(a.static, 4),
                               "helpers": sorted(a.helpers), "examples": sorted(a.examples)} for a in self.differing],
                "helpers": {name: t.to_dict() for name, t in sorted(self.helpers.items())}}

    def differing_text(self) -> str:
        """The questions won and lost, for the build's printout: which ones a decision rests on."""
        return ", ".join(f"{a.question_id} {a.vadar:.2g} vs {a.static:.2g}"
                         + (f" ({', '.join(sorted(a.helpers))})" if a.helpers else "") for a in self.differing)


def judge(answered: Sequence[Answered], level: float = WITHDRAW_P, *, assumed: int = 0) -> ValidationRound:
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
                tally.won += 1
            elif difference < 0:
                tally.losses -= difference
                tally.lost += 1
    return ValidationRound(len(answered), sum(a.vadar for a in answered), sum(a.static for a in answered),
                           helpers, examples, differing=[a for a in answered if a.vadar != a.static], level=level,
                           assumed=assumed)


def sign_test(won: int, lost: int) -> float:
    """Two-sided exact binomial test of `won` against `lost` at even odds (1.0 when none differ):
    twice the one-sided tail of the side that did worse."""
    return min(1.0, 2 * behind_p(min(won, lost), max(won, lost)))


def behind_p(won: int, lost: int) -> float:
    """One-sided exact binomial test that losing is likelier than winning: P(at most `won` wins of
    `won + lost` at even odds); 1.0 when none differ, 1/8 for 0 won and 3 lost."""
    n = won + lost
    if n == 0:
        return 1.0
    return min(1.0, sum(math.comb(n, i) for i in range(won + 1)) / 2 ** n)


def left_out(library: Sequence[FunctionRecord], added: Iterable[str]) -> list[FunctionRecord]:
    """The library without the helpers `added` and every helper that calls one of them, directly or
    through another: what the library would be had the batch that added them never run."""
    gone = set(added)
    gone.update(callers_of(library, gone))
    return [record for record in library if record.name not in gone]


def withdraw(round_: ValidationRound, helpers: Sequence[str], examples: Sequence[int], *,
             everything: bool = False, whole: bool = False) -> bool:
    """What the round withdraws; True when anything. A helper or example whose own questions lost
    significantly goes whatever the totals. When vadar is significantly behind as a whole, so does
    every one that lost more than it won; when none did, or with `everything` (the last round of
    withdrawing), all of them (`helpers` and `examples` are all the library has), except a kind that
    no lost question used; with `whole`, that kind too."""
    level = round_.level
    retired = {name for name, tally in round_.helpers.items() if tally.behind(level)}
    withdrawn = {i for i, tally in round_.examples.items() if tally.behind(level)}
    if not round_.passed:
        retired.update(name for name, tally in round_.helpers.items() if tally.net < 0)
        withdrawn.update(i for i, tally in round_.examples.items() if tally.net < 0)
        if everything or whole or (not retired and not withdrawn):
            lost = [a for a in round_.differing if a.vadar < a.static]
            helpers_lost, examples_lost = any(a.helpers for a in lost), any(a.examples for a in lost)
            if whole or helpers_lost == examples_lost or not (helpers if examples_lost else examples):
                retired, withdrawn, round_.everything = set(helpers), set(examples), True
            elif examples_lost:
                withdrawn, round_.spared = set(examples), "helpers"
            else:
                retired, round_.spared = set(helpers), "examples"
    round_.retired, round_.withdrawn = sorted(retired), sorted(withdrawn)
    return bool(retired or withdrawn)


def apply_round(store: ApiStore, round_: ValidationRound) -> None:
    """Retire the round's helpers (with every helper that calls one) and withdraw its examples, each
    with its figures."""
    behind = "vadar lost significantly more build questions than it won against static-api"
    why = f"{behind} and nothing lost on its own" if round_.everything else f"{behind}; its questions lost more than they won"
    own = "the questions it touched lost significantly more than they won against static-api"

    def reason(tally: Tally | None) -> str:
        return f"validation: {own if tally is not None and tally.behind(round_.level) else why}"

    reasons = {name: reason(round_.helpers.get(name)) for name in round_.retired}
    evidence = {name: {"validation": round_.helpers[name].to_dict()} for name in round_.retired
                if name in round_.helpers}
    retire_helpers(store, reasons, mode="validation", evidence=evidence)
    for example in round_.withdrawn:
        store.withdraw_programs([example], reason(round_.examples.get(example)))


def record_validated(store: ApiStore, last: ValidationRound, helpers: Sequence[str]) -> None:
    """Each helper still in the library (`helpers`) gets a `validated` decision with the last round's figures."""
    for name in helpers:
        tally = last.helpers.get(name)
        store.record_decision(name, "validated", mode="validation", evidence={
            "questions": last.questions, "vadar": last.vadar, "static": last.static,
            "won": last.won, "lost": last.lost, "assumed_ties": last.assumed,
            **({"tally": tally.to_dict()} if tally is not None else {"tally": None})})
