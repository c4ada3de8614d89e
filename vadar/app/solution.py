"""What `Vadar.solve` returns: the answer and how it was reached, as plain typed records.

A `Solution` prints as one short line, and in a notebook shows the page `vadar solve --html`
writes (the picture or frames with the boxes of every module call, the program, the calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api_store import FunctionRecord
from base_modules.types import Image, Region
from omni3d_bench.types import Question
from vadar.app.display import framed
from vadar.programs.outcome import ProgramOutcome
from vadar.programs.records import TechniqueRecords
from vadar.report.calls import is_box
from vadar.text import one_line, rounded

if TYPE_CHECKING:
    from vadar.agents.techniques.vote import VoteRecord

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Tokens:
    """LLM tokens one answer took; `cached_prompt` of the prompt tokens came from the prefix cache."""

    prompt: int = 0
    completion: int = 0
    cached_prompt: int = 0

    @property
    def total(self) -> int:
        return self.prompt + self.completion


@dataclass(frozen=True)
class Call:
    """One module call the program made, with the boxes it returned or measured and the frames
    (positions in `Solution.images`) it looked at."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    result: Any
    error: str | None
    seconds: float
    boxes: tuple[Box, ...]
    frames: tuple[int, ...]
    multi_view: bool = field(default=False, repr=False)
    """Whether the question had several frames (the calls then name theirs)."""
    _arg_frames: tuple[int | None, ...] = field(default=(), repr=False)

    def __str__(self) -> str:
        """`loc('red cube') -> [[...]]`, values rounded; the one image of a single-image question
        is left out, frames of several are named (`views[2]`)."""
        if self.multi_view:
            frames = self._arg_frames + (None,) * (len(self.args) - len(self._arg_frames))
            shown = [f"views[{k}]" if k is not None else "views" if _is_frames(a) else repr(rounded(a))
                     for a, k in zip(self.args, frames)]
        else:
            shown = [repr(rounded(a)) for a in self.args[1:]]
        result = self.error if self.error else rounded(self.result)
        return f"{self.name}({', '.join(shown)}) -> {result!r}"


def _is_frames(value: Any) -> bool:
    """`views` as a call recorded it: a list of frames, or its summary when long."""
    if isinstance(value, (list, tuple)):
        return bool(value) and all(isinstance(v, Image) for v in value)
    return isinstance(value, str) and value.startswith("<list of ") and "Image(" in value


def _boxes(value: Any) -> list[Box]:
    if is_box(value):
        return [tuple(float(v) for v in value)]  # type: ignore[list-item]
    if isinstance(value, (list, tuple)):
        return [tuple(float(v) for v in item) for item in value if is_box(item)]  # type: ignore[misc]
    return []


def make_calls(recorded: Sequence[Any], frame_ids: Sequence[str]) -> tuple[Call, ...]:
    """The sandbox's call records as `Call`s; `frame_ids` (in order) say which frame each image is."""
    position = {frame_id: k for k, frame_id in enumerate(frame_ids)}
    calls = []
    for record in recorded:
        values = [*record.args, *record.kwargs.values()]
        frames = tuple(dict.fromkeys(position.get(v.image_id, 0) for v in values if isinstance(v, Image)))
        boxes = ([] if record.error else _boxes(record.result)) + [b for v in values for b in _boxes(v) if is_box(v)]
        arg_frames = tuple(position.get(a.image_id, 0) if isinstance(a, Image) else None for a in record.args)
        calls.append(Call(record.name, tuple(record.args), dict(record.kwargs), record.result, record.error,
                          float(getattr(record, "seconds", 0.0)), tuple(dict.fromkeys(boxes)), frames,
                          len(frame_ids) > 1, arg_frames))
    return tuple(calls)


@dataclass(frozen=True, repr=False)
class Solution:
    """One question answered: the answer, the program that gave it, its module calls, what went
    wrong along the way (`errors`, as the LLM was told), and what it cost."""

    question: str
    answer: Any
    program: str | None
    error: str | None
    calls: tuple[Call, ...]
    errors: tuple[str, ...]
    tokens: Tokens
    seconds: float
    attempts: int
    images: tuple[Path, ...]
    regions: tuple[Region, ...] = ()
    techniques: TechniqueRecords = field(default_factory=TechniqueRecords)
    """What the reasoning techniques recorded (a vote, revisions, ...), read by type."""
    outcome: ProgramOutcome = field(default_factory=ProgramOutcome)
    """The agent's own record, as the run machinery keeps it."""
    functions: tuple[FunctionRecord, ...] = ()
    """The library functions the program could call."""
    frame_ids: tuple[str, ...] = ()

    @classmethod
    def of(cls, question: Question, text: str, outcome: ProgramOutcome,
           functions: Sequence[FunctionRecord] = ()) -> Solution:
        frames = tuple(question.view_paths) if question.multi_view else (Path(question.image_path),)
        cost = outcome.cost
        return cls(text, outcome.answer, outcome.program, outcome.error,
                   make_calls(outcome.calls, question.view_ids), tuple(outcome.errors),
                   Tokens(cost.prompt_tokens, cost.completion_tokens, cost.cached_prompt_tokens),
                   outcome.seconds, outcome.attempts, frames, tuple(question.regions), outcome.techniques,
                   outcome, tuple(functions), tuple(question.view_ids))

    @property
    def vote(self) -> VoteRecord | None:
        """The plurality vote over sampled programs (`reasoning.samples` above 1), if one was taken."""
        from vadar.agents.techniques.vote import VoteRecord

        return self.techniques.get(VoteRecord)

    @property
    def ok(self) -> bool:
        """Whether a working program gave the answer."""
        return self.error is None

    def html(self) -> str:
        """The page `vadar solve --html` writes, as one self-contained HTML text."""
        from vadar.report.question_page import question_page

        return question_page(question=self.question, image=self.images[0], outcome=self.outcome,
                             functions=self.functions, frames=self._frames(), regions=self.regions)

    def save_html(self, path: str | Path) -> Path:
        """Write `html()` to `path`; returns it."""
        from vadar.report.question_page import write_question_page

        return write_question_page(Path(path), question=self.question, image=self.images[0], outcome=self.outcome,
                                   functions=self.functions, frames=self._frames(), regions=self.regions)

    def _frames(self) -> list[tuple[str, Path]]:
        return list(zip(self.frame_ids, self.images)) if len(self.frame_ids) > 1 else []

    def _repr_html_(self) -> str:
        return framed(self.html(), height=640 if len(self.images) == 1 else 980, title=f"vadar: {self.question}")

    def __repr__(self) -> str:
        outcome = f"answer={rounded(self.answer, 4)!r}" if self.ok else f"error={one_line(self.error or '', 80)!r}"
        replies = f"{self.attempts} LLM repl{'y' if self.attempts == 1 else 'ies'}"
        frames = f", {len(self.images)} frames" if len(self.images) > 1 else ""
        return (f"Solution({outcome}, {len(self.calls)} module calls{frames}, {replies}, "
                f"{self.tokens.total} tokens, {self.seconds:.1f} s)")
