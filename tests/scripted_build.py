"""A scripted build: the Signature agent proposes two helpers, the API agent's first implementation
fails and the second works; the router can interrupt the build at a chosen request."""

from vadar.llm.chat import Role

STUBS = '''```python
def _count(image: Image, object_prompt: str) -> int:
    """Count the objects matching object_prompt."""

def _exists(image: Image, object_prompt: str) -> bool:
    """Whether any object matches object_prompt."""
```'''
BROKEN = "```python\ndef _count(image, object_prompt):\n    return undefined_helper(image)\n```"
EXISTS = "```python\ndef _exists(image, object_prompt):\n    return len(loc(image, object_prompt)) > 0\n```"


def implementing(messages):
    return "def _count(" if "def _count(" in messages[1]["content"] else "def _exists("


class Router:
    """Scripted replies by role; raises `interrupt_with` on the `interrupt_at`-th request (1-based)."""

    def __init__(self, interrupt_at=None, interrupt_with=KeyboardInterrupt):
        self.calls, self.interrupt_at, self.interrupt_with = 0, interrupt_at, interrupt_with

    def answer(self, role, messages):
        self.calls += 1
        if self.calls == self.interrupt_at:
            raise self.interrupt_with()
        if role == Role.SIGNATURE:
            return STUBS
        if implementing(messages) == "def _exists(":
            return EXISTS
        # each attempt broken in its own way: a copy of a failed reply would end the conversation
        tries = sum(m["role"] == "assistant" for m in messages)
        return BROKEN.replace("undefined_helper(", f"undefined_helper{'_' * tries}(")
