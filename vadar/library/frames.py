"""Question frames: a question's words with the phrases its program passed to the API masked.

Similar questions ("How many cylinders are there?", "How many large things are there?") share a
frame (`how many _ are there`) although their programs may differ in shape; groups of right
programs by frame are what `vadar.library.clusters` writes one helper for.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from api_store.evidence import VerifiedProgram
from omni3d_bench.types import Question

MASK = "_"
_WORD = re.compile(r"[a-z0-9]+")
_IGNORED = {MASK, "the", "a", "an", "is", "are", "there", "of", "it", "its", "to", "does", "do"}


def question_frame(question: str, code: str) -> tuple[str, ...]:
    """The question's words with the phrases the program took from it masked, runs of masks merged.

    A string literal of the program is a phrase of the question when every word of it occurs in
    the question (`loc(image, "small cylinder")`); other literals (a `vqa` prompt) mask nothing.
    """
    words = _WORD.findall(question.lower())
    masked: set[str] = set()
    try:
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                phrase = set(_WORD.findall(node.value.lower()))
                if phrase and phrase <= set(words):
                    masked |= phrase
    except SyntaxError:
        pass
    frame: list[str] = []
    for word in words:
        token = MASK if word in masked else word
        if not (token == MASK and frame and frame[-1] == MASK):
            frame.append(token)
    return tuple(frame)


def frame_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """Jaccard similarity of the frames' words, masks and the most common function words aside."""
    words_a, words_b = set(a) - _IGNORED, set(b) - _IGNORED
    if not words_a or not words_b:
        return 1.0 if tuple(a) == tuple(b) else 0.0
    return len(words_a & words_b) / len(words_a | words_b)


def group_programs(programs: Sequence[VerifiedProgram], threshold: float = 0.5) -> list[list[VerifiedProgram]]:
    """Groups of programs whose questions share a frame, largest first (each joins the first group it fits)."""
    groups: list[tuple[tuple[str, ...], list[VerifiedProgram]]] = []
    for program in programs:
        frame = question_frame(program.question, program.code or "")
        for anchor, members in groups:
            if frame_similarity(frame, anchor) >= threshold:
                members.append(program)
                break
        else:
            groups.append((frame, [program]))
    return sorted((members for _, members in groups), key=len, reverse=True)


def frame_questions(anchor: Sequence[str], candidates: Sequence[Question], codes: dict[str, str],
                    threshold: float = 0.5) -> list[Question]:
    """The `candidates` whose frame (masked by their own program's phrases, from `codes`) fits `anchor`."""
    return [q for q in candidates
            if q.answer is not None and frame_similarity(question_frame(q.question, codes.get(q.question_id, "")),
                                                         anchor) >= threshold]
