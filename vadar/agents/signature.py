"""The Signature agent: reads a batch of questions and the API, proposes new helper stubs.

Output is parsed strictly (`stubs.parse_stubs`); a malformed reply is sent back with the parse
error, up to `max_attempts` times, instead of crashing the run. Well-formed stubs that break the
naming rules are rejected one by one with a reason, so one bad proposal never sinks the batch.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from base_modules.module import PREDEFINED_MODULES
from vadar import prompts
from vadar.programs.helper_rules import name_problem, text_problem
from vadar.programs.sampling import SIGNATURES
from vadar.programs.step_loop import LLMCost, Reply, StepLoop, Verdict
from vadar.programs.stubs import Stub, StubFormatError, normalized_name, parse_stubs
from vadar.llm.chat import ChatModel, Role

NO_NEW_FUNCTIONS = "no new functions"

MAX_TRIED_SHOWN = 20
"""Most helpers tried before that one Signature request lists: every one is still screened out of
the reply, but 2,000 of them made a 120 KB request against an 8,192-token model."""

MAX_TRIED_CHARS = 3_000
"""Most characters of those lines (names and reasons, about 750 tokens), so that long names and
reasons cannot outgrow the request either."""


@dataclass
class Proposals:
    """What one batch produced: accepted stubs, rejected ones with reasons, and LLM cost."""

    accepted: list[Stub] = field(default_factory=list)
    rejected: list[tuple[Stub, str]] = field(default_factory=list)
    queued: list[Stub] = field(default_factory=list)  # past the cap: they wait for the next batch
    errors: list[str] = field(default_factory=list)
    cost: LLMCost = field(default_factory=LLMCost)

    @property
    def attempts(self) -> int:
        return self.cost.replies


@dataclass(frozen=True)
class ProposalAims:
    """What to point the proposals at: the steps of the batch's questions no helper covers yet, kinds
    of question no build program answered right yet, stubs whose names ground truth can check, and
    what the library already has (`vadar.library.aims`)."""

    asks: list[str] = field(default_factory=list)
    unsolved: list[str] = field(default_factory=list)
    checkable: list[tuple[str, str]] = field(default_factory=list)  # (stub, what it claims)
    has: list[str] = field(default_factory=list)  # the library's helpers: name, claim, steps covered


Screen = Callable[[Stub], "str | None"]
"""A caller's own screen of one stub: why it may not join, or None."""

_FILLER_WORDS = frozenset({"get", "find", "compute", "return", "the", "a", "an", "all", "of", "is"})


def name_words(name: str) -> frozenset[str]:
    """The content words of a helper name: `_get_objects_left_of` -> {objects, left}."""
    return frozenset(w for w in name.lower().strip("_").split("_") if w and w not in _FILLER_WORDS)


def rejection_reason(stub: Stub, taken: set[str], similar: dict[frozenset[str], str] | None = None,
                     tried: Mapping[str, str] | None = None) -> str | None:
    """Why `stub` may not join the library, or None if it may.

    `similar` maps the content words of existing names to those names: `_left_of_objects` is a
    near-duplicate of `_objects_left_of` and would only split the programs between the two.
    `tried` maps helpers tried before and not admitted to why: proposing one again, under its
    name or the same words, would only repeat its failure.
    """
    name = stub.name
    for before, why in (tried or {}).items():
        if normalized_name(name) == normalized_name(before) or (name_words(name) and name_words(name) == name_words(before)):
            return f"`{name}` repeats `{before}`, tried before and not admitted ({why})"
    problem = name_problem(name) or text_problem(name, stub.signature, stub.docstring)  # the helper rules
    if problem is not None:
        return problem
    predefined = {normalized_name(spec.name) for spec in PREDEFINED_MODULES}
    if normalized_name(name) in predefined:
        return f"`{name}` duplicates the predefined module of the same name"
    if normalized_name(name) in taken:
        return f"`{name}` duplicates an existing function (names differ only in case or underscores)"
    twin = (similar or {}).get(name_words(name))
    if twin is not None and name_words(name):
        return f"`{name}` is a near-duplicate of `{twin}` (the same words); use `{twin}`"
    return None


def shown_tried(tried: Mapping[str, str], questions: Sequence[str]) -> list[tuple[str, str]]:
    """The helpers tried before that a request lists, sorted by name: those whose name words the
    batch's questions use most, the most recent first among equals (`tried` is oldest first, the
    order the library grew in), up to `MAX_TRIED_SHOWN` of them and `MAX_TRIED_CHARS` characters."""
    words = {w for q in questions for w in re.findall(r"[a-z0-9]+", q.lower())}
    order = list(tried)
    ranked = sorted(range(len(order)), key=lambda i: (-len(name_words(order[i]) & words), -i))
    shown: list[tuple[str, str]] = []
    chars = 0
    for i in ranked[:MAX_TRIED_SHOWN]:
        line = (order[i], tried[order[i]])
        chars += len(line[0]) + len(line[1])
        if chars > MAX_TRIED_CHARS:
            break
        shown.append(line)
    return sorted(shown)


class SignatureAgent:
    """Proposes new `_`-prefixed helper functions for a batch of questions."""

    def __init__(self, llm: ChatModel, *, max_attempts: int = 3, max_functions: int = 5) -> None:
        self.loop = StepLoop(llm, SIGNATURES, max_attempts, role=Role.SIGNATURE)
        self.max_functions = max_functions

    def propose(self, questions: Sequence[str], api_text: str, existing: Iterable[str],
                tried: Mapping[str, str] | None = None, aims: ProposalAims | None = None,
                screen: Screen | None = None) -> Proposals:
        """Stubs for `questions`; `tried` (helpers tried before and not admitted, with why) is shown
        to the LLM and screened out of its reply; `aims` say what to aim the proposals at; `screen`
        refuses what the caller knows to be a duplicate (a claim the library makes already).
        Stubs past `max_functions` are not lost: they are `queued` for the next batch."""
        tried = dict(tried or {})
        aims = aims or ProposalAims()
        messages = [
            {"role": "system", "content": prompts.render(
                "signature_system", api=api_text.strip(), max_functions=self.max_functions,
                example=example_stub(questions).strip())},
            {"role": "user", "content": prompts.render("signature_batch", questions=list(questions),
                                                       tried=shown_tried(tried, questions), aims=aims)},
        ]
        result = Proposals()
        existing = list(existing)
        taken = {normalized_name(n) for n in existing}
        similar = {name_words(n): n for n in existing}

        def judge(reply: Reply) -> Verdict:
            if NO_NEW_FUNCTIONS in reply.text.lower() and "def " not in reply.text:
                return Verdict.accept()
            text = _complete_stubs(reply.text) if reply.cut_off else reply.text
            try:
                stubs = parse_stubs(text)
            except StubFormatError as exc:
                result.errors.append(str(exc))
                return Verdict.retry(prompts.render("signature_retry", error=str(exc)))
            self._screen(stubs, taken, similar, result, tried, screen)
            return Verdict.accept()

        self.loop.run(messages, judge, result.cost)
        return result

    def _screen(self, stubs: list[Stub], taken: set[str], similar: dict[frozenset[str], str],
                result: Proposals, tried: Mapping[str, str], screen: Screen | None) -> None:
        """Duplicates are refused before the cap counts them, so none takes a new helper's place."""
        for stub in stubs:
            reason = rejection_reason(stub, taken, similar, tried) or (screen(stub) if screen else None)
            if reason:
                result.rejected.append((stub, reason))
                continue
            (result.accepted if len(result.accepted) < self.max_functions else result.queued).append(stub)
            taken.add(normalized_name(stub.name))
            similar.setdefault(name_words(stub.name), stub.name)


EXAMPLES = ("signature_example_1", "signature_example_2", "signature_example_3")
_STOPWORDS = {"of", "the", "a", "an", "in", "to", "is", "are", "by", "m"}


def example_stub(questions: Sequence[str]) -> str:
    """The worked example least related to the batch, so a small model cannot copy it as a helper.

    Examples are ranked by how many words of their function name the questions contain (the
    first example wins ties); copying `_objects_in_front_of` into a batch about "front" once
    gave a helper that compared the wrong axis.
    """
    words = {w for q in questions for w in re.findall(r"[a-z]+", q.lower())}

    def overlap(template: str) -> int:
        stub = prompts.render(template)
        name = re.search(r"def _(\w+)", stub)
        return len({w for w in (name.group(1) if name else "").split("_") if w not in _STOPWORDS} & words)

    return prompts.render(min(EXAMPLES, key=overlap))


def _complete_stubs(text: str) -> str:
    """A reply cut off at the token limit keeps its complete stubs (the last one is partial)."""
    cut = text.rfind("\ndef ")
    return text[:cut] if cut > 0 else text
