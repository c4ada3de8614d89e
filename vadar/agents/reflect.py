"""Reflect before answering: does the evidence the program gathered answer the question? (ViSRA)

Cheap checks come first and need no LLM: measurements have a plausible range, and an answer must be
of the constraint's type (the kind the question's own wording fixes, "Is there ...?" yes or no, is
checked for every program by the writer: `vadar.programs.answer_kinds`); with size priors
(`reasoning.size_priors`), a metric size far outside what the measured object usually measures is
caught too (`size_check`). Only when those pass and a task constraint exists does
one short LLM request compare the program with the constraint (frame, objects, quantity). A reason
found is sent back once as a revision request (`vadar.agents.techniques.revise`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from base_modules.size_priors import SizePrior

from vadar import prompts
from vadar.agents.formalize import Constraint, type_issue
from vadar.programs.question_form import QuestionForm
from vadar.programs.sampling import Sampling
from vadar.agents.size_check import size_issue
from vadar.programs.step_loop import LLMCost, Reply, StepLoop, Verdict
from vadar.agents.voting import is_number
from vadar.programs.answers import as_float
from vadar.llm.chat import ChatModel, Role

REFLECT = Sampling(max_tokens=80, retry_temperature_step=0.0)

def plausibility_issue(answer: Any) -> str | None:
    """A value no question about a scene has as its answer."""
    if isinstance(answer, list):
        return f"`final_result` is a list ({answer!r:.120}); the answer must be one value"
    number = as_float(answer)  # None for an int no float holds (10**400)
    if is_number(answer) and (number is None or not math.isfinite(number)) or answer == "nan":
        return f"`final_result` is {answer!r}, which is not a finite number"
    if is_number(answer) and answer < 0:
        return f"`final_result` is {answer!r}; counts, distances and sizes are never negative"
    return None


BLIND = ("the program called no module (loc, depth, vqa, ...), so its answer does not come from the image; "
         "find the objects the question names and measure them")


def deterministic_issue(question: QuestionForm, answer: Any, constraint: Constraint | None = None,
                        priors: Sequence[SizePrior] = (), looked: bool = True) -> str | None:
    """What the answer's type or range contradicts (the constraint, the size priors of the question's
    nouns when given), or None. A program that made no module call
    (`looked` False) answers the same for every image: the size-priors measurement found programs
    that wrote a prior's numbers down as the answer, so that comes first."""
    if not looked:
        return BLIND
    issue = plausibility_issue(answer)
    if issue is None and constraint is not None:
        issue = type_issue(answer, constraint.answer_type)
    if issue is None and priors:
        issue = size_issue(question, answer, priors)
    return issue


class Reflector:
    """Deterministic checks, then (with a constraint) one LLM check of program against constraint."""

    def __init__(self, llm: ChatModel) -> None:
        self.loop = StepLoop(llm, REFLECT, max_steps=1, role=Role.REFLECT)

    def review(self, question: QuestionForm, program: str, answer: Any, constraint: Constraint | None = None,
               cost: LLMCost | None = None, priors: Sequence[SizePrior] = (), looked: bool = True) -> str | None:
        """Why the answer should be revised, or None to give it (`looked`: the program made a module call)."""
        issue = deterministic_issue(question, answer, constraint, priors, looked)
        if issue is not None or constraint is None:
            return issue
        messages = [{"role": "system", "content": prompts.render("reflect_system")},
                    {"role": "user", "content": prompts.render("reflect_request", question=question.text,
                                                               constraint=constraint, program=program,
                                                               answer=answer)}]
        found: list[str] = []

        def judge(reply: Reply) -> Verdict:
            match = re.search(r"REVISE:?\s*(.*)", reply.text, re.IGNORECASE | re.DOTALL)
            if match and not reply.cut_off:
                found.append(match.group(1).strip().splitlines()[0] if match.group(1).strip() else
                             "the program does not compute what the task constraint says")
            return Verdict.accept()

        self.loop.run(messages, judge, cost)
        return found[0] if found else None
