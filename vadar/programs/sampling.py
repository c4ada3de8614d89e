"""Completion limits per agent role, and how retries sample.

Small code models sometimes loop, repeating lines until the token limit; at temperature 0 a
retry then reproduces the same loop. So each role gets a limit sized to its answers, a reply cut
off at the limit is an error fed back (never executed), and retries sample at a rising
temperature. With a fixed seed the whole schedule stays reproducible and cacheable.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Sampling:
    max_tokens: int
    retry_temperature_step: float = 0.3  # 0: every reply at the configured temperature
    max_temperature: float = 0.9
    first_temperature: float | None = None  # None: the configured one; set to draw varied samples

    def temperature(self, attempt: int) -> float | None:
        """`first_temperature` on the first attempt, then rising per retry."""
        if attempt <= 1 or self.retry_temperature_step <= 0:
            return self.first_temperature if attempt <= 1 else None
        return min(self.max_temperature, self.retry_temperature_step * (attempt - 1))


PROGRAM = Sampling(max_tokens=400)
IMPLEMENTATION = Sampling(max_tokens=400)
SIGNATURES = Sampling(max_tokens=600)
TOOL_STEP = Sampling(max_tokens=300, retry_temperature_step=0.0)  # turns of one task, not retries
DIRECT = Sampling(max_tokens=64)
PROGRAM_SAMPLE = Sampling(max_tokens=400, first_temperature=0.7)  # a second opinion, for majorities


def implementation_sampling(docstring: str) -> Sampling:
    """The API agent's limit for one helper: a reply repeats the stub's docstring (the prompt's
    example reply does), so a docstring past 400 characters adds its length at 4 characters a token.
    A question-shape helper's docstring, built on eight step helpers and two dicts, is about 1,000
    characters: 9 of the 21 replies for a CLEVR build's `_attribute_of_related` were cut off at 400
    tokens, most of them the docstring and a few lines of body. With the stub sent as the reply's
    start (`agents.implementation_prefill`) the model no longer writes the docstring, and the room
    stays: a cap, not a target (a tighter one would have to be measured first)."""
    extra = max(0, len(docstring) - 400) // 4
    return dataclasses.replace(IMPLEMENTATION, max_tokens=IMPLEMENTATION.max_tokens + extra)
