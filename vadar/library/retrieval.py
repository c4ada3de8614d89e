"""Show each question the few library functions and worked examples most relevant to it.

A prompt that lists the whole library grows with it; a small model then reads 200 stubs to use
two. BM25 (the `bm25s` package) over each function's name (split at underscores), signature and
docstring keeps the prompt flat: the top `k` functions, in library order so the prompt stays
stable.

Worked examples are retrieved by the question's shape first (`programs.question_shape`: the answer
kind, the relation, what it is about, the spatial relations), and by BM25 over the text of the
questions they answered only inside that shape. Shared words alone once showed a counting loop
("How many objects are taller than the box?") for "How many times taller is the bin than the box?",
and programs copied it. The tiers (`SHAPE_TIERS`): examples of the exact shape; where there are
none, those of its family (the same shape with other spatial relations); where there are none, no
example (the prompt keeps its fixed one). A wider fallback (the same answer kind and relation, or
answer kind alone) showed examples of another kind of question far more often than of the same:
benchmarks/example_shapes.py measures the tiers, docs/library.md has the figures. At every tier an
example also answers by the same library helper as the question (`shape_helpers.answered_by`, or
by none): a chain of relations and one relation are one shape, and with `_objects_along` admitted,
its right build programs were shown for one-relation questions, whose programs then called it.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Collection, Hashable, Sequence
from functools import lru_cache
from typing import TypeVar

import bm25s

from api_store import FunctionRecord
from api_store.evidence import VerifiedProgram
from vadar import prompts
from vadar.library.claims import claim_of
from vadar.library.composed_examples import fallback_example
from vadar.library.shape_helpers import (answered_by, catalogue_example, helpers_for, is_catalogue_helper,
                                         shape_helpers_first)
from vadar.programs.api_text import ExampleCall
from vadar.programs.calls import called_names
from vadar.programs.question_shape import QuestionShape, shape_of
from vadar.programs.stubs import StubFormatError

T = TypeVar("T")
RELATIVE_FLOOR = 0.5  # a match scoring under half the best one is left out

ShapeTier = Callable[[QuestionShape], Hashable]
"""What two questions must share for one's program to be shown for the other, at one tier."""


def exact_shape(shape: QuestionShape) -> Hashable:
    return shape


def shape_family(shape: QuestionShape) -> Hashable:
    return shape.family


SHAPE_TIERS: tuple[ShapeTier, ...] = (exact_shape, shape_family)  # named functions: a retriever pickles
"""The exact shape, then its family (other spatial relations); after that, no example."""


def _text(record: FunctionRecord) -> str:
    return f"{record.name.replace('_', ' ')} {record.signature} {record.docstring}"


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))


class LexicalIndex:
    """BM25 over short texts; `top(query, k)` returns the positions of the best `k` matches."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.size = len(texts)
        self._bm25: bm25s.BM25 | None = None
        corpus = bm25s.tokenize([" ".join(_words(t)) for t in texts], stopwords="en", show_progress=False)
        if texts and corpus.vocab:  # texts of stop words alone leave nothing to rank by
            self._bm25 = bm25s.BM25()
            self._bm25.index(corpus, show_progress=False)

    def top(self, query: str, k: int) -> list[int]:
        k = min(k, self.size)
        if k <= 0:
            return []
        if self._bm25 is None:
            return list(range(k))
        words = bm25s.tokenize([" ".join(_words(query))], stopwords="en", return_ids=False, show_progress=False)
        if not words[0]:
            return list(range(k))
        positions, scores = self._bm25.retrieve(words, k=k, show_progress=False)
        best = float(scores[0][0]) if len(scores[0]) else 0.0
        # Weak matches (a shared common word) only lengthen the prompt: keep those near the best.
        kept = [int(p) for p, s in zip(positions[0], scores[0], strict=True) if s > 0 and s >= RELATIVE_FLOOR * best]
        return kept or list(range(k))


class LibraryRetriever:
    """The top-k library functions for a question (all of them when the library is small)."""

    def __init__(self, library: Sequence[FunctionRecord], k: int) -> None:
        self.library = list(library)
        self.k = k
        self.index = LexicalIndex([_text(f) for f in self.library]) if 0 < k < len(self.library) else None

    def select(self, question: str) -> list[FunctionRecord]:
        """The top-k functions and what they call; the question's shape helpers always, and first; the
        step helpers named for a relation or attribute the question names always; question-shape
        helpers of other shapes never by words alone.

        With 18 helpers, "How many tiny matte cylinders are behind the tiny red shiny thing?" was
        shown `_objects_along` and `_count_either` (their long docstrings share its words) and not
        `_objects_behind`, whose score fell under half the best: the program called `_count_either`
        on the cylinder and the thing. Listed beside `_compare_counts`, `_count_either` drew 4 of 5
        count-comparison programs of a CLEVR build to a union count (`shape_helpers_first`)."""
        if self.index is None:
            return shape_helpers_first(self.library, question)
        own = {helper.name for helper in helpers_for(question)}
        named = named_steps(self.library, shape_of(question))
        picked = {i for i in self.index.top(question, self.k)
                  if self.library[i].name in own or not is_catalogue_helper(self.library[i])}
        chosen = picked | {i for i, f in enumerate(self.library) if f.name in own or f.name in named}
        chosen |= self._dependencies(chosen)
        return shape_helpers_first([f for i, f in enumerate(self.library) if i in chosen], question)

    def _dependencies(self, chosen: set[int]) -> set[int]:
        """Functions the chosen ones call: a program may need to know what they return."""
        position = {f.name: i for i, f in enumerate(self.library)}
        return {position[d] for i in chosen for d in self.library[i].dependencies if d in position}


def named_steps(library: Sequence[FunctionRecord], shape: QuestionShape) -> set[str]:
    """The step helpers whose names claim a relation the question names (`_objects_behind` for
    "behind") or the attribute it asks or shares (`_color_of_object`, `_same_color` for "What color",
    "the same color"): the call a program for it needs, whatever other helpers' words score."""
    names = set()
    for function in library:
        claim = None if is_catalogue_helper(function) else claim_of(function)
        if claim is None:
            continue
        relation = claim.kind in ("relation", "relation_test") and claim.value in shape.spatial
        shared = shape.relation == "shared"
        attribute = claim.value == shape.subject and (claim.kind == "same" and shared or
                                                      claim.kind == "attribute" and (shared or shape.answer == "attribute"))
        if relation or attribute:
            names.add(function.name)
    return names


@lru_cache(maxsize=4096)  # the same verified programs are read again by every retriever built
def looks_at_the_scene(code: str) -> bool:
    """Whether a program calls anything but Python builtins (a module, a helper, `region`...).

    A program that calls nothing answers the same for every image: when it is right, it is right
    by chance (a constant "left" on a three-way direction question), and shown as a worked example
    it teaches the model to answer without looking.
    """
    try:
        return bool(called_names(code) - set(dir(builtins)))
    except StubFormatError:
        return False


GUESSABLE_ANSWERS = frozenset({"yes", "no", "true", "false", "0"})
"""Answers a wrong program gives often enough to be right by chance: a yes/no or a count of none."""


def right_by_chance_risk(program: VerifiedProgram) -> bool:
    """Whether a right program's rightness says little: it calls no library helper and its gold
    answer is a guessable one. Of the 29 right programs a 16-question CLEVR build recorded, 20
    were such, and most were wrong in logic (sizes compared for shapes, a relation never tested);
    shown as worked examples they were copied and lost questions static-api got right."""
    return not program.uses and str(program.gold).strip().lower() in GUESSABLE_ANSWERS


@lru_cache(maxsize=4096)
def reads_one_frame(code: str) -> bool:
    """Whether a program never reads `views` but through `views[0]`: of several frames of one
    scene it looked at the first (`image`) alone.

    On a 30-question multi-view build, `len(loc(image, "mug"))` was right for "How many mugs are
    there in the room?" because the one mug stood in the first frame; shown as the worked example,
    it was copied by every held-out count program, and counts fell from 0.78 (static-api, counting
    `objects_3d(views, ...)`) to 0.56.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return True
    first = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Subscript)
             and isinstance(node.slice, ast.Constant) and node.slice.value == 0}
    return not any(isinstance(node, ast.Name) and node.id == "views" and id(node) not in first
                   for node in ast.walk(tree))


def usable_example(program: VerifiedProgram, allowed: Collection[str]) -> bool:
    """Whether a right build program may be shown as a worked example: not withdrawn, looking at the
    scene, not right by a guess, and calling no helper outside `allowed` (a refused candidate's
    programs teach nothing). What a build counts towards its programs per shape family, too."""
    return bool(program.code and program.correct and program.withdrawn is None and set(program.uses) <= set(allowed)
                and looks_at_the_scene(program.code) and not right_by_chance_risk(program))


class ExampleRetriever:
    """Worked examples: correct programs from build questions of the question's shape, most
    similar question first; within a shape, programs that call a library helper first."""

    def __init__(self, programs: Sequence[VerifiedProgram], k: int, allowed: set[str],
                 tiers: Sequence[ShapeTier] = SHAPE_TIERS, functions: Sequence[FunctionRecord] = ()) -> None:
        usable = [p for p in programs if usable_example(p, allowed)]  # those calling a helper first
        usable.sort(key=lambda p: not p.uses)
        self.programs = _unique_questions(usable)
        self.allowed = allowed
        self.functions = [f for f in functions if f.name in allowed]  # what a fallback example may call
        self.k = k
        self.tiers = tuple(tiers)
        self.shapes = [shape_of(p.question) for p in self.programs]
        self.answering = [answered_by(p.question, allowed) for p in self.programs]  # the helper, or None
        self._groups: dict[tuple[int, Hashable, bool, str | None], tuple[list[int], LexicalIndex]] = {}

    def select(self, question: str, views: bool = False) -> list[VerifiedProgram]:
        """The worked examples shown for `question`: those of its shape at the first tier that has
        any, most similar first (none: the fixed example). For a question about several frames
        (`views`), a program calling no helper that read the first frame alone is not shown."""
        if self.k <= 0 or not self.programs:
            return []
        shape, whole = shape_of(question), answered_by(question, self.allowed)
        for tier, key_of in enumerate(self.tiers):
            members, index = self._group(tier, key_of(shape), views, whole)
            if members:
                return [self.programs[members[i]] for i in index.top(question, self.k)]
        return []

    def _group(self, tier: int, key: Hashable, views: bool, whole: str | None) -> tuple[list[int], LexicalIndex]:
        """The programs whose shape has `key` at `tier` and whose question the library helper `whole`
        answers (None: no helper does), with a BM25 index over their questions."""
        if (tier, key, views, whole) not in self._groups:
            members = [i for i, shape in enumerate(self.shapes)
                       if self.tiers[tier](shape) == key and self.answering[i] == whole]
            if views:
                members = [i for i in members if self.programs[i].uses or not reads_one_frame(self.programs[i].code)]
            calling = [i for i in members if self.programs[i].uses]
            members = calling or members  # a shape whose programs call a helper is shown those calls
            self._groups[tier, key, views, whole] = members, LexicalIndex([self.programs[i].question for i in members])
        return self._groups[tier, key, views, whole]

    def render(self, question: str, views: bool = False) -> str | None:
        """The examples block for the prompt: the right programs of its shape; with none yet, the
        catalogue's program where a library helper answers its shape in one call, or one composed
        of the library's relation helpers (`composed_examples.fallback_example`), also first where
        none of the shape's right programs calls a helper; else None, to keep the fixed example.
        `views`: the question is about several frames (`select`)."""
        chosen = self.select(question, views)
        whole = answered_by(question, self.allowed)
        if whole is not None and not any(whole in program.uses for program in chosen):
            # the shape's right programs compose the steps the helper answering it does in one call: shown
            # them alone, or after the catalogue's program, the programs for 2 chained CLEVR questions
            # composed the relation helpers as the build's program did and never called `_objects_along`
            return worked_examples([catalogue_example(question, self.allowed)])
        if any(program.uses for program in chosen):
            return worked_examples(chosen)
        # Right programs that call no helper (a depth loop, right on its scene) come after an example
        # calling the library's helpers, not instead of it: programs copy the first example.
        fallback = fallback_example(question, self.allowed, self.functions)
        return worked_examples([fallback, *chosen][:max(self.k, 1)] if fallback else chosen)


def worked_examples(examples: Sequence[VerifiedProgram | ExampleCall | None]) -> str | None:
    """The worked-examples block of a program prompt (`program_examples.j2`), None when there is none."""
    shown = [example for example in examples if example is not None]
    return prompts.render("program_examples", examples=shown) if shown else None


def _unique_questions(programs: Sequence[VerifiedProgram]) -> list[VerifiedProgram]:
    seen: set[str] = set()
    kept = []
    for program in programs:
        if program.question not in seen:
            seen.add(program.question)
            kept.append(program)
    return kept


def example_calls(programs: Sequence[VerifiedProgram], names: Sequence[str]) -> dict[str, ExampleCall]:
    """For each of `names`, a call of it from a right program (rewritten programs first), with the
    lines that set its arguments, so the example shows which object goes where."""
    found: dict[str, ExampleCall] = {}
    wanted = set(names)
    for program in sorted(programs, key=lambda p: p.variant != "rewritten"):
        if not program.correct or not program.code:
            continue
        lines = program.code.splitlines()
        for index, line in enumerate(lines):
            for name in wanted - set(found):
                if re.search(rf"\b{re.escape(name)}\(", line) and len(line) <= 120:
                    shown = [*_argument_lines(lines[:index], line, name), line.strip()]
                    found[name] = ExampleCall(program.question, "\n".join(shown))
    return found


def _argument_lines(before: Sequence[str], line: str, name: str, most: int = 3) -> list[str]:
    """The top-level one-line assignments, before `line`, of the variables passed to `name`."""
    try:
        call = next(n for n in ast.walk(ast.parse(line.strip())) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Name) and n.func.id == name)
    except (SyntaxError, StopIteration):
        return []
    arguments = [a.id for a in call.args if isinstance(a, ast.Name) and a.id != "image"]
    kept: set[int] = set()
    for variable in arguments[:most]:
        setting = next((i for i in reversed(range(len(before))) if len(before[i]) <= 120
                        and re.match(rf"{re.escape(variable)}\s*=[^=]", before[i])), None)
        if setting is not None:
            kept.add(setting)
    return [before[i].strip() for i in sorted(kept)]
