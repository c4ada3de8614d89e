"""The one agent step loop: ask the LLM, let the agent judge the reply, feed back, repeat.

Every agent (Signature, API, Program, tool-agent, direct) is this loop configured with a role's
sampling policy, a step limit and a `judge` that parses and executes one reply. The loop owns what
they all share: the request with the role's token limit and retry temperature, token accounting,
the conversation turns, recognising a reply cut off at the token limit, and when to stop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vadar.programs.sampling import Sampling
from vadar.llm.chat import ChatModel, ChatRequest, ChatResponse, Message, Role, reply_limit
from vadar.llm.repetition import REPETITION
from vadar.text import clip

_UNFINISHED = frozenset({"length", REPETITION})


@dataclass
class LLMCost:
    """What the LLM replies of one task cost (cache hits counted with their original tokens)."""

    replies: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0

    def add(self, reply: ChatResponse) -> None:
        self.replies += 1
        self.prompt_tokens += reply.prompt_tokens or 0
        self.completion_tokens += reply.completion_tokens or 0
        self.cached_prompt_tokens += reply.cached_prompt_tokens or 0

    def include(self, other: LLMCost) -> None:
        """Add what another part of the same task cost (e.g. another sampled program)."""
        self.replies += other.replies
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_prompt_tokens += other.cached_prompt_tokens


@dataclass(frozen=True)
class Reply:
    """One LLM reply as a judge sees it."""

    text: str
    attempt: int
    cut_off: bool  # the reply hit the token limit; it is unfinished and may loop
    cut_off_error: str  # what to tell the LLM about a cut-off reply


@dataclass(frozen=True)
class Verdict:
    """The judge's decision: the task is done, must stop, or goes on with `feedback`."""

    done: bool = False
    stop: bool = False  # give up now (e.g. a recursive helper): no retry can help
    feedback: str | None = None

    @classmethod
    def accept(cls) -> Verdict:
        return cls(done=True)

    @classmethod
    def retry(cls, feedback: str) -> Verdict:
        return cls(feedback=feedback)

    @classmethod
    def give_up(cls) -> Verdict:
        return cls(stop=True)


Judge = Callable[[Reply], Verdict]


@dataclass(frozen=True)
class LoopEnd:
    """How the loop ended: accepted, or out of steps or stopped, after `steps` replies."""

    done: bool
    steps: int


@dataclass
class StepLoop:
    """Ask → judge → feed back, at most `max_steps` times, with the role's `sampling`.

    Every request carries `role`, which agent and step asks (scripted doubles answer by it).
    """

    llm: ChatModel
    sampling: Sampling
    max_steps: int
    seed: int | None = None  # None: the configured one; another seed draws another sample
    response_format: dict[str, Any] | None = None  # structured output, e.g. a JSON schema
    role: Role = field(kw_only=True)
    # the start of every reply, sent as a final assistant message the model continues (`continued`)
    prefill: str | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError("max_steps must be at least 1")

    @property
    def token_limit(self) -> int:
        """The role's limit within the model's reply cap: what a reply is sent with and cut off at."""
        return reply_limit(self.llm, self.sampling.max_tokens)

    def cut_off_error(self, response: ChatResponse | None = None) -> str:
        """What to tell the LLM about a reply that did not end on its own."""
        if response is not None and response.finish_reason == REPETITION:
            lines = [line.strip() for line in response.text.splitlines() if line.strip()]
            repeated = clip(lines[-1], 120) if lines else ""
            return (f"the reply was stopped because it kept repeating the same lines (such as "
                    f"`{repeated}`). Write it once, shorter, without repeating lines.")
        return (f"the reply was cut off at {self.token_limit} tokens: it is too long or repeats "
                "itself. Write a shorter reply without repeating lines.")

    def run(self, messages: list[Message], judge: Judge, cost: LLMCost | None = None,
            on_step: Callable[[int], None] | None = None, first_step: int = 1) -> LoopEnd:
        """Run the conversation in `messages` (extended in place) until the judge accepts or stops.

        `first_step > 1` continues a task interrupted after `first_step - 1` steps: the limit
        counts the steps taken before, and the temperature schedule goes on where it was.
        """
        for attempt in range(first_step, self.max_steps + 1):
            if on_step is not None:
                on_step(attempt)
            asked = messages if self.prefill is None else [*messages, {"role": "assistant", "content": self.prefill}]
            response = self.llm.complete(ChatRequest(asked, max_tokens=self.sampling.max_tokens,
                                                     temperature=self.sampling.temperature(attempt),
                                                     seed=self.seed, response_format=self.response_format,
                                                     role=self.role))
            if cost is not None:
                cost.add(response)
            text = response.text if self.prefill is None else continued(self.prefill, response.text)
            messages.append({"role": "assistant", "content": text})
            verdict = judge(Reply(text, attempt, response.finish_reason in _UNFINISHED,
                                  self.cut_off_error(response)))
            if verdict.done or verdict.stop:
                return LoopEnd(done=verdict.done, steps=attempt)
            if attempt < self.max_steps and verdict.feedback is not None:
                messages.append({"role": "user", "content": verdict.feedback})
        return LoopEnd(done=False, steps=self.max_steps)


def continued(prefill: str, text: str) -> str:
    """A reply to a request ending in `prefill`, whole. llama.cpp's server continues a final assistant
    message and returns it with its continuation; an endpoint that only continues returns the rest
    (prefill added here); one that cannot continue writes a whole reply of its own, fenced or a `def`."""
    head = text.lstrip("\n")  # a body's indentation stays: a nested `def` is a continuation
    if head.startswith(("```py", "def ")):
        return text
    return prefill + text
