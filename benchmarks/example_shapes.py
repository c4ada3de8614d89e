"""How often a retrieved worked example answers another kind of question: by words, and by shape.

No LLM: every question of a dataset is asked in turn, and the questions about other scenes are its
pool of worked examples (each pretended verified, its program one that looks at the scene). The
dataset's own label of a question's kind is the truth of its shape: the generator's `family` on the
generated benchmark; on CLEVR the template file with the program's last function ("one_hop/count"),
and also the template's `question_family_index` and the last function alone. Retrieval strategies
are the tiers of `vadar.library.retrieval.ExampleRetriever`: words alone (one tier, everything),
the exact shape alone, the exact shape then its family (the default), and wider fallbacks.

The second table asks which fallback is right: each question's exact shape is taken out of its
pool, so only a fallback tier can answer, and it shows how often that tier's examples are of the
question's own kind. Columns: the share of examples shown that are of another kind than the
question (of how many shown), the share of questions given any whose first is, and the share of
questions given none (their prompt keeps the fixed example).

    PYTHONPATH=. .venv/bin/vadar bench generate --scenes 40 --seed 7 --out /tmp/shape-bench
    PYTHONPATH=. .venv/bin/python benchmarks/example_shapes.py /tmp/shape-bench ../shared/data/clevr
"""

from __future__ import annotations

import argparse
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from api_store.evidence import VerifiedProgram
from omni3d_bench.datasets import load_dataset
from omni3d_bench.types import Question
from vadar.library.retrieval import SHAPE_TIERS, ExampleRetriever, ShapeTier
from vadar.programs.question_shape import QuestionShape, shape_of

LOOKING = 'final_result = len(loc(image, "objects"))\n'  # any program that looks at the scene


@dataclass(frozen=True)
class Asked:
    """One question with its scene and its kinds by the dataset's labels (grain name -> label)."""

    text: str
    scene: str
    kinds: tuple[tuple[str, str], ...]

    def kind(self, grain: str) -> str:
        return dict(self.kinds)[grain]


@dataclass(frozen=True)
class Strategy:
    name: str
    tiers: tuple[ShapeTier, ...]


def _everything(shape: QuestionShape) -> None:
    return None


def _answer(shape: QuestionShape) -> str:
    return shape.answer


def _relation(shape: QuestionShape) -> tuple[str, str | None]:
    """The answer kind and relation family, whatever the attribute or dimension."""
    return shape.answer, shape.relation


STRATEGIES = (
    Strategy("words alone (before)", (_everything,)),
    Strategy("exact shape only", SHAPE_TIERS[:1]),
    Strategy("exact, then family (default)", SHAPE_TIERS),
    Strategy("exact, family, answer+relation", (*SHAPE_TIERS, _relation)),
    Strategy("exact, family, a+r, answer kind", (*SHAPE_TIERS, _relation, _answer)),
    Strategy("exact, family, then anything", (*SHAPE_TIERS, _everything)),
)
DEFAULT = STRATEGIES[2].name
FALLBACKS = (
    Strategy("family (other spatial relations)", SHAPE_TIERS[1:]),
    Strategy("answer kind and relation", (_relation,)),
    Strategy("answer kind", (_answer,)),
    Strategy("anything (words)", (_everything,)),
)


def generated_questions(root: Path) -> list[Asked]:
    dataset = load_dataset(root)
    return [Asked(q.question, q.image_id, (("family", str(q.metadata["family"])),))
            for split in dataset.splits() for q in dataset.questions(split)]


def clevr_questions(root: Path) -> list[Asked]:
    dataset = load_dataset(root)
    return [_clevr_asked(q) for split in dataset.splits() for q in dataset.questions(split)]


def _clevr_asked(question: Question) -> Asked:
    template = str(question.metadata["template_filename"]).removesuffix(".json")
    operator = question.gold_program[-1]["function"] if question.gold_program else "?"
    kinds = (("template/operator", f"{template}/{operator}"), ("operator", operator),
             ("template#family", f"{template}#{question.metadata['question_family_index']}"))
    return Asked(question.question, question.image_id, kinds)


def _programs(pool: Sequence[Asked]) -> list[VerifiedProgram]:
    return [VerifiedProgram(i, 1, f"q{i}", a.text, "without", LOOKING, "x", "x", None, True, ())
            for i, a in enumerate(pool)]


@dataclass
class Tally:
    shown: int = 0
    shown_other: int = 0
    asked: int = 0
    first_other: int = 0
    none: int = 0
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(self, asked: Asked, chosen: Sequence[Asked], grain: str) -> None:
        self.asked += 1
        if not chosen:
            self.none += 1
            return
        other = [c.kind(grain) != asked.kind(grain) for c in chosen]
        self.shown += len(chosen)
        self.shown_other += sum(other)
        self.first_other += other[0]
        self.confusions.update((asked.kind(grain), c.kind(grain)) for c in chosen if c.kind(grain) != asked.kind(grain))

    def row(self, name: str) -> str:
        def share(part: int, whole: int) -> str:
            return f"{100 * part / whole:5.1f}%" if whole else "    -"
        return (f"  {name:34s} {share(self.shown_other, self.shown)} of {self.shown:5d} examples   "
                f"first {share(self.first_other, self.asked - self.none)}   none {share(self.none, self.asked)}")


Case = tuple[list[Asked], list[Asked]]
"""Questions asked, and the pool of worked examples they are asked against."""


def leave_scene_out(questions: Sequence[Asked]) -> list[Case]:
    """Each scene's questions against every other scene's."""
    scenes: dict[str, list[Asked]] = defaultdict(list)
    for asked in questions:
        scenes[asked.scene].append(asked)
    return [(members, [c for c in questions if c.scene != scene]) for scene, members in scenes.items()]


def build_draws(questions: Sequence[Asked], size: int, draws: int) -> list[Case]:
    """A build of whole scenes with at least `size` questions as the pool, the other scenes asked;
    `draws` builds, each drawn with its own seed."""
    scenes = sorted({a.scene for a in questions})
    cases = []
    for seed in range(draws):
        random.Random(seed).shuffle(scenes)
        built: set[str] = set()
        for scene in scenes:
            if sum(a.scene in built for a in questions) >= size:
                break
            built.add(scene)
        cases.append(([a for a in questions if a.scene not in built], [a for a in questions if a.scene in built]))
    return cases


def retrieve(cases: Sequence[Case], strategy: Strategy, k: int,
             without_own_shape: bool) -> list[tuple[Asked, list[Asked]]]:
    """Each question with the examples `strategy` shows for it from its case's pool (less the
    examples of the question's exact shape, `without_own_shape`)."""
    out = []
    for members, whole_pool in cases:
        groups: dict[QuestionShape | None, list[Asked]] = defaultdict(list)
        for asked in members:
            groups[shape_of(asked.text) if without_own_shape else None].append(asked)
        for shape, asked_here in groups.items():
            pool = [c for c in whole_pool if shape is None or shape_of(c.text) != shape]
            retriever = ExampleRetriever(_programs(pool), k, set(), strategy.tiers)
            for asked in asked_here:
                out.append((asked, [pool[p.id] for p in retriever.select(asked.text)]))
    return out


def report(label: str, questions: Sequence[Asked], k: int, build_size: int, draws: int) -> None:
    grains = [grain for grain, _ in questions[0].kinds]
    print(f"\n== {label}: {len(questions)} questions, {len({a.scene for a in questions})} scenes, k = {k}; "
          f"{len({shape_of(a.text) for a in questions})} shapes, "
          f"{len({shape_of(a.text).family for a in questions})} families of shapes")
    pools = (("pool: every other scene", leave_scene_out(questions)),
             (f"pool: a {build_size}-question build of other scenes, {draws} draws",
              build_draws(questions, build_size, draws)))
    for pool_name, cases in pools:
        tables = (("Examples of another kind", STRATEGIES, False),
                  ("Fallback alone (the question's exact shape taken out of the pool)", FALLBACKS, True))
        for title, strategies, without_own_shape in tables:
            results = {s.name: retrieve(cases, s, k, without_own_shape) for s in strategies}
            for grain in grains:
                print(f"{title}; {pool_name}; kind = {grain}")
                for name, pairs in results.items():
                    tally = Tally()
                    for asked, chosen in pairs:
                        tally.add(asked, chosen, grain)
                    print(tally.row(name))
                    if name == DEFAULT and tally.confusions:
                        print("      most shown of another kind: " + "; ".join(
                            f"{a} <- {b} ({n})" for (a, b), n in tally.confusions.most_common(3)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("generated", type=Path, help="a benchmark from `vadar bench generate`")
    parser.add_argument("clevr", type=Path, nargs="?", help="a CLEVR-layout folder with templates")
    parser.add_argument("--k", type=int, default=2, help="examples shown per question ([library] examples_k)")
    parser.add_argument("--build", type=int, default=30, help="questions in a drawn build (the small pool)")
    parser.add_argument("--draws", type=int, default=5, help="builds drawn")
    args = parser.parse_args()
    report(f"generated ({args.generated})", generated_questions(args.generated), args.k, args.build, args.draws)
    if args.clevr:
        report(f"CLEVR ({args.clevr})", clevr_questions(args.clevr), args.k, args.build, args.draws)


if __name__ == "__main__":
    main()
