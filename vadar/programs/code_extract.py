"""Pull the Python program out of an LLM reply (fenced or bare)."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*(?:(?:python|py|python3)[ \t]*)?\n(.*?)(?:```|\Z)", re.DOTALL | re.IGNORECASE)
"""An opening fence, an optional language, the code up to the closing fence or the end. The blanks
before and after the language are one run when it is absent: two adjacent `[ \t]*` would try
every split of a long run of blanks (quadratic: 17 s for a fence followed by 99,000 spaces)."""


MAX_REPLY_CHARS = 100_000
"""Longer replies are refused unread: no program or helper needs that much text, and the
regular expression and the parser should never see megabytes of it."""


class NoCodeError(ValueError):
    """The reply holds no program; the message is fed back to the LLM."""


def extract_code(reply: str) -> str:
    """Return the code of the reply: the fenced blocks joined, else the whole reply.

    Small models often add prose around a fenced block, or forget to close the fence; both are
    handled. A reply with no code at all raises `NoCodeError`.
    """
    if len(reply) > MAX_REPLY_CHARS:
        raise NoCodeError(f"the reply is {len(reply)} characters long, more than any program needs; "
                          "answer with one short ```python block")
    blocks = [b.strip("\n") for b in _FENCE.findall(reply) if b.strip()]
    if blocks:
        code = "\n\n".join(blocks)
    else:
        code = "" if "```" in reply else reply.strip()
    if not code.strip():
        raise NoCodeError("the reply contained no code; answer with one ```python block")
    return code.rstrip() + "\n"
