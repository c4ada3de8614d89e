"""Completion limits per agent role, and how retries sample.

Small code models sometimes loop, repeating lines until the token limit; at temperature 0 a
retry then reproduces the same loop. So each role gets a limit sized to its answers, a reply cut
off at the limit is an error fed back (never executed), and retries sample at a rising
temperature. With a fixed seed the whole schedule stays reproducible and cacheable.
"""

from __future__ import annotations

from dataclasses import dataclass

from vadar.llm.chat import ChatResponse


@dataclass(frozen=True)
class Sampling:
    max_tokens: int
    retry_temperature_step: float = 0.3
    max_temperature: float = 0.9

    def temperature(self, attempt: int) -> float | None:
        """None (the configured temperature) on the first attempt, then rising per retry."""
        if attempt <= 1:
            return None
        return min(self.max_temperature, self.retry_temperature_step * (attempt - 1))


PROGRAM = Sampling(max_tokens=400)
IMPLEMENTATION = Sampling(max_tokens=400)
SIGNATURES = Sampling(max_tokens=600)
TOOL_STEP = Sampling(max_tokens=300)
DIRECT = Sampling(max_tokens=64)


def cut_off(reply: ChatResponse) -> bool:
    return reply.finish_reason == "length"


def cut_off_error(sampling: Sampling) -> str:
    return (f"the reply was cut off at {sampling.max_tokens} tokens: it is too long or repeats itself. "
            "Write a shorter reply without repeating lines.")
