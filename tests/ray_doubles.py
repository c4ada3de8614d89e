"""Stand-ins that Ray workers import by name: a scripted LLM factory and a module plugin.

Workers find this file through the test cluster's PYTHONPATH; nothing here starts Ray.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from base_modules.module import Loc, Module
from base_modules.oracle import clevr_oracle_modules
from omni3d_bench import sample_path
from omni3d_bench.datasets import load_dataset
from vadar.llm.doubles import ScriptedLLM

HELPER = "def _count(image, object_prompt):\n    return len(loc(image, object_prompt))\n"
DIE_ONCE = "die-once"  # a question whose text contains a file name under home/die kills its worker once
OUTAGE = "outage"  # home/outage holds `kind question-text`: that question's LLM call fails with `kind`


def outage(kind: str) -> Exception:
    """The failure an endpoint (or the sandbox) gives after every retry, by name."""
    from vadar.programs.outcome import InfrastructureFailure
    from vadar.llm.errors import LLMBadResponseError, LLMSilentError, LLMUnavailableError

    return {"http-500": LLMUnavailableError("LLM endpoint x kept failing with HTTP 500 after 5 attempt(s)"),
            "not-json": LLMBadResponseError("LLM endpoint x answered with a body that is not a chat completion"),
            "hung": LLMSilentError("LLM endpoint x sent nothing for 30 s"),
            "sandbox": InfrastructureFailure("sandbox worker failed: it died")}[kind]


def program_for(question: str) -> str:
    """One fixed program per question text: the same on every worker, in any order."""
    if "How many cylinders" in question:
        return "final_result = _count(image, 'cylinder')"
    if "How many" in question:
        return "final_result = len(loc(image, 'objects'))"
    if "Are there" in question:  # yes or no: a program answers in the kind its question asks
        return "final_result = 'yes' if loc(image, 'objects') else 'no'"
    asked = next((word for word in ("shape", "material", "size") if f"What {word}" in question), "color")
    return f"boxes = loc(image, 'objects')\nfinal_result = vqa(image, 'What {asked} is this object?', boxes[0])"


def scripted_llm(config, base_url):
    """Each worker's LLM: replies by question text; logs every call under `home/calls`; may sleep or die."""
    home = Path(config.paths.home)
    delay = float(os.environ.get("VADAR_TEST_LLM_DELAY", "0"))

    def reply(messages):
        question = str(messages[1]["content"])  # the question, also on a retry after a failed program
        calls = home / "calls"
        calls.mkdir(parents=True, exist_ok=True)
        (calls / f"{uuid.uuid4().hex}.txt").write_text(question.splitlines()[0])  # "Question: ..."
        marker = home / "die-once"
        if marker.exists() and marker.read_text() in question:
            marker.unlink()  # the retry finds no marker and answers
            os.kill(os.getpid(), 9)
        down = home / OUTAGE
        if down.exists():
            kind, _, text = down.read_text().partition(" ")
            if text in question:
                raise outage(kind)
        always = home / "die-always"
        if always.exists() and always.read_text() in question:
            os.kill(os.getpid(), 9)
        time.sleep(delay)
        return f"```python\n{program_for(question)}\n```"

    return ScriptedLLM([reply] * 100)


class HalfBlindLoc(Loc):
    """A 'model' detector that misses every other object, and notes each load in a log file."""

    def __init__(self, inner):
        super().__init__(device="cpu")
        self.inner = inner

    def _load(self):
        log = os.environ.get("VADAR_TEST_LOAD_LOG")
        if log:
            with open(log, "a") as handle:
                handle.write(f"{os.getpid()}\n")

    def forward(self, image, object_prompt):
        return self.inner(image, object_prompt)[::2]


def half_blind(slot: str) -> Module:
    """Module plugin `halfblind`: the sample's oracles, with a detector that misses half the objects."""
    oracle = clevr_oracle_modules(load_dataset(sample_path()).scene)
    module = getattr(oracle, slot)
    return HalfBlindLoc(module) if slot == "loc" else module


def write_plugin_metadata(folder: Path) -> Path:
    """A dist-info folder declaring `halfblind` in the module plugin entry-point group."""
    info = folder / "vadar_test_plugins-0.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vadar-test-plugins\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text("[vadar.modules]\nhalfblind = ray_doubles:half_blind\n")
    return folder
