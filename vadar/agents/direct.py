"""The `direct` baseline: the LLM answers without writing a program.

In oracle mode it reads the scene annotations as text (the upper bound of reasoning over perfect
perception with no tools); otherwise it gets the image, which needs a vision-language endpoint.
"""

from __future__ import annotations

import base64
import json
import mimetypes
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from base_modules.types import Region
from vadar import prompts
from vadar.programs.outcome import ProgramOutcome
from vadar.programs.sampling import DIRECT
from vadar.programs.step_loop import Reply, StepLoop, Verdict
from vadar.programs.answers import ERROR_ANSWER
from vadar.llm.chat import ChatModel, Role

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_BULKY = 12  # lists longer than this (masks, polygons) are left out of the text
_DERIVED = frozenset({"bbox3D_world", "bbox3D_cam", "R_cam", "bbox2D_proj", "mask_value", "visible_pixels"})
"""Fields of the generated benchmark's annotations that others determine (box corners and rotation
from centre, size and yaw) or that only the renderer needs: a warehouse scene's description was
6,900 prompt tokens with them."""


def describe_scene(scene: dict[str, Any]) -> str:
    """One compact JSON line per annotated object, numbers rounded, bulky and derived fields dropped."""
    lines = []
    for index, obj in enumerate(scene.get("objects", [])):
        fields = {k: _rounded(v) for k, v in obj.items() if not _bulky(v) and k not in _DERIVED}
        lines.append(f"object {index}: {json.dumps(fields, separators=(', ', ': '))}")
    return "\n".join(lines) if lines else "(no objects)"


def describe_world(world: dict[str, Any]) -> str:
    """A multi-view scene's world-frame annotation as text: the room, then one line per object.

    The frames' cameras and each object's eight box corners are left out: the centre, size, yaw,
    the frames an object shows in and its first frame carry what the question families ask.
    """
    room = {k: _rounded(v) for k, v in world.get("room", {}).items()}
    objects = [{k: v for k, v in obj.items() if k != "bbox3D_world"} for obj in world.get("objects", [])]
    header = (f"world frame: {world.get('convention', 'z up, metres')}; {len(world.get('frames', []))} frames\n"
              f"room: {json.dumps(room, separators=(', ', ': '))}\n")
    return header + describe_scene({"objects": objects})


def describe_regions(regions: Sequence[Region], annotated: bool) -> str | None:
    """One line per region the question names: with annotations, the object it shows (by the `id` of
    the annotation's objects) where known; otherwise its box in pixels. None without regions."""
    lines = []
    for region in regions:
        box = "[" + ", ".join(f"{v:.0f}" for v in region.box) + "]"
        shows = (f"the object with id {region.object_id}" if annotated and region.object_id is not None
                 else f"the object in the box {box} (x0, y0, x1, y1 in pixels)")
        lines.append(f"{region.name}: {shows}")
    return "\n".join(lines) or None


def _bulky(value: Any) -> bool:
    return isinstance(value, dict | list) and len(json.dumps(value)) > 40 * _BULKY


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def parse_answer(reply: str) -> str | None:
    """The text inside <answer> tags; a bare one-line reply is accepted as the answer too."""
    match = _ANSWER.search(reply)
    if match:
        return match.group(1).strip() or None
    text = reply.strip()
    return text if text and "\n" not in text and len(text) <= 40 else None


def image_part(path: Path) -> dict[str, Any]:
    """An OpenAI-style image content part carrying the file as a data URL."""
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}


class DirectAnswerer:
    """Asks the LLM for the answer in one turn (one retry if the format is off)."""

    def __init__(self, llm: ChatModel, *, max_attempts: int = 2) -> None:
        self.loop = StepLoop(llm, DIRECT, max_attempts, role=Role.DIRECT)

    def solve(self, question: str, *, scene: dict[str, Any] | None = None,
              image_path: Path | None = None, world: dict[str, Any] | None = None,
              regions: Sequence[Region] = ()) -> ProgramOutcome:
        """`world`: a multi-view scene's world annotation, described instead of one frame's `scene`;
        `regions`: what the question's identifiers (`<pallet_0>`) point at."""
        started = time.perf_counter()
        scene_text = describe_world(world) if world is not None else (
            describe_scene(scene) if scene is not None else None)
        if scene_text is None and image_path is None:
            raise ValueError("the direct method needs scene annotations or an image")
        user: Any = prompts.render("question", question=question).rstrip()
        if scene_text is None:
            user = [{"type": "text", "text": user}, image_part(image_path)]  # type: ignore[arg-type]
        messages = [
            {"role": "system", "content": prompts.render("direct_system", scene=scene_text,
                                                          regions=describe_regions(regions, scene_text is not None))},
            {"role": "user", "content": user},
        ]
        outcome = ProgramOutcome()

        def judge(reply: Reply) -> Verdict:
            answer = parse_answer(reply.text)
            if answer is not None:
                outcome.answer, outcome.error = answer, None
                return Verdict.accept()
            outcome.error = "the reply held no <answer>"
            return Verdict.retry(prompts.render("direct_retry").rstrip())

        self.loop.run(messages, judge, outcome.cost)
        outcome.seconds = time.perf_counter() - started
        if outcome.error:
            outcome.answer = ERROR_ANSWER
        return outcome
