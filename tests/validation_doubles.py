"""A scripted build for the validation gate: a right helper, a wrong one, and a static-api that is
wrong exactly where the right helper helps (tests/runs/test_validation_gate.py and its neighbours)."""

from __future__ import annotations

from pathlib import Path

from vadar.config import VadarConfig
from vadar.llm.doubles import ScriptedLLM

GOOD_HELPER = '''
def _good(image: Image, answer: str) -> str:
    """The answer it is given, after looking at the image."""
    loc(image, "objects")
    return answer
'''
BAD_HELPER = '''
def _bad(image: Image) -> str:
    """A wrong answer, after looking at the image."""
    loc(image, "objects")
    return "wrong"
'''
GOOD = {"How many large things are there?", "How many things are in front of the cyan sphere?"}
BAD = {"What material is the yellow cylinder?", "Are there any rubber cylinders?",
       "What color is the cylinder that is right of the blue cube?", "Are there fewer cylinders than cubes?"}


def scripted(golds: dict[str, str], good: set[str] = GOOD, bad: set[str] = BAD) -> ScriptedLLM:
    """static-api: wrong on `good`, right elsewhere; vadar: `_good` (right) on `good`, `_bad` on `bad`
    while its prompt offers them."""
    def reply(messages):
        system, asked = messages[0]["content"], messages[1]["content"]
        question = next(q for q in golds if q in asked)
        if question in good:
            if "def _good(" in system:
                return f"```python\nfinal_result = _good(image, {golds[question]!r})\n```"
            return "```python\nloc(image, 'objects')\nfinal_result = 'nope'\n```"
        if question in bad and "def _bad(" in system:
            return "```python\nfinal_result = _bad(image)\n```"
        return f"```python\nloc(image, 'objects')\nfinal_result = {golds[question]!r}\n```"

    return ScriptedLLM([reply] * 600)


def gate_config(tmp_path: Path) -> VadarConfig:
    """A home under `tmp_path`, the hand-written library only: no proposals, no distillation."""
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s = 10
    config.library.propose = config.library.distill = False
    return config
