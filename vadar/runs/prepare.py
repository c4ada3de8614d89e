"""Everything before the LLM starts: choose questions, check their data, build the modules.

Bad input (a missing image, a scene the oracle modules need, a misspelt module) fails here, in
seconds, instead of after a server has started. `vadar solve` goes through the same path with a
one-question data set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from base_modules.module import ModuleSet
from base_modules.real.config import RealModulesConfig
from base_modules.types import Region
from base_modules.view_modules import ViewModuleSet
from base_modules.oracle.annotations3d import annotations3d_oracle_modules
from base_modules.oracle.clevr import clevr_oracle_modules
from omni3d_bench import DatasetError, sample_path
from omni3d_bench.datasets import load_dataset
from omni3d_bench.datasets.single import single_question_dataset
from omni3d_bench.sample import SAMPLE_SPLIT
from omni3d_bench.types import Dataset, Question
from vadar.config import VadarConfig
from vadar.programs.question_shape import shape_of


@dataclass(frozen=True)
class PreparedData:
    """Checked questions with their data set and the modules that will serve them."""

    dataset: Dataset
    split: str
    questions: list[Question]
    modules: ModuleSet
    backends: dict[str, str] = field(default_factory=dict)  # slot -> backend, lower-case
    view_modules: ViewModuleSet | None = None  # only when some question has several frames


@dataclass(frozen=True)
class DataSelection:
    """Which questions: a data set directory (None: the built-in sample), split, `limit`
    questions after skipping the first `skip` and keeping only those of `families` and of `shapes`
    (`QuestionShape.label`, e.g. 'attribute:spatial'; all when empty).

    Skipping comes first, so `skip` keeps its meaning (the first questions of the data set, e.g.
    those a library was built from) whatever families are chosen. With `spread_over`, the `limit`
    questions are picked across the question shapes of the first `spread_over` questions
    (`spread_over_shapes`) instead of being the first `limit`."""

    data: Path | None = None
    split: str | None = None
    limit: int | None = None
    skip: int = 0
    families: tuple[str, ...] = ()
    spread_over: int | None = None
    shapes: tuple[str, ...] = ()

    def prepare(self, config: VadarConfig | None = None, *,
                overrides: Mapping[str, str] | None = None, load: bool = True) -> PreparedData:
        """Load and check everything the questions need, before any LLM or server starts.

        `config.modules` (with per-slot `overrides`) picks oracle, real or plugin modules;
        `load=False` leaves their models unloaded (they are served elsewhere, e.g. Ray actors).
        """
        root = self.data if self.data is not None else sample_path()
        dataset = load_dataset(root)
        split = self.split or (SAMPLE_SPLIT if self.data is None else _only_split(dataset))
        if split not in dataset.splits():  # `--split ../../x` would read, and name a run directory, elsewhere
            raise DatasetError(f"unknown split {split!r} in {root}; available: {', '.join(dataset.splits()) or 'none'}")
        questions = of_shapes(of_families(dataset.questions(split)[max(self.skip, 0):], self.families, root),
                              self.shapes, root)
        if self.spread_over is not None:
            support = (config or VadarConfig()).library.outcome_min_support
            questions = spread_over_shapes(questions[: max(self.spread_over, 0)], self.limit, support)
        elif self.limit is not None:
            questions = questions[: max(self.limit, 0)]
        return prepare_questions(dataset, split, questions, config or VadarConfig(), overrides, load=load)


def spread_over_shapes(questions: Sequence[Question], count: int | None, per_shape: int = 3) -> list[Question]:
    """`count` of `questions` (all: None) taken shape by shape, the most common shape first, `per_shape`
    of each in turn, each shape's in their order (`programs.question_shape`: the answer kind and
    relation family).

    A data set's first questions can be few shapes: CLEVR lists a scene's questions together, and its
    first 30 dev questions are 6 shapes of the 12 its first 104 hold, with no either/or count and
    no count comparison, so a 30-question build never proposed their helpers. `per_shape` is the
    support a question-shape helper needs (`library.outcome_min_support`): taken that many at a
    time, 30 of those 104 give ten shapes three questions each, and a shape's helper is due in the
    batch that completes its three, a few shapes a batch, not all in the last one (the route tries
    `library.shape_helpers_per_batch` a batch)."""
    groups: dict[tuple[str, str | None], list[Question]] = {}
    for question in questions:
        shape = shape_of(question.question)
        groups.setdefault((shape.answer, shape.relation), []).append(question)
    ordered = sorted(groups.values(), key=len, reverse=True)  # stable: ties keep their first appearance
    step = max(per_shape, 1)
    rounds = range(0, max(map(len, ordered), default=0), step)
    picked = [q for start in rounds for group in ordered for q in group[start:start + step]]
    return picked if count is None else picked[: max(count, 0)]


def of_families(questions: list[Question], families: Sequence[str], root: Path) -> list[Question]:
    """The questions of `families` (all of them when none is named); an unknown family is an error
    that lists the data set's families."""
    if not families:
        return questions
    known = sorted({q.family for q in questions if q.family is not None})
    unknown = [name for name in families if name not in known]
    if unknown:
        listed = ", ".join(known) if known else "none: its questions record no family"
        raise DatasetError(f"no questions of family {', '.join(map(repr, unknown))} in {root} "
                           f"(after --skip); its families: {listed}")
    return [q for q in questions if q.family in families]


def of_shapes(questions: list[Question], shapes: Sequence[str], root: Path) -> list[Question]:
    """The questions of `shapes` (all of them when none is named): a question-shape helper is judged
    on held-out questions of its own shape, which no CLEVR template keeps apart (one_hop holds counts,
    yes/no and attribute questions). A shape none of the questions has is an error that lists theirs."""
    if not shapes:
        return questions
    labels = [shape_of(q.question).label for q in questions]
    unknown = [shape for shape in shapes if shape not in labels]
    if unknown:
        listed = ", ".join(sorted(set(labels))) or "none"
        raise DatasetError(f"no questions of shape {', '.join(map(repr, unknown))} in {root} "
                           f"(after --skip and --family); their shapes: {listed}")
    return [q for q, label in zip(questions, labels) if label in shapes]


def prepare_single(image: Path | list[Path], question: str, scene: Path | None,
                   config: VadarConfig, overrides: Mapping[str, str] | None = None,
                   regions: Sequence[str | Path | Region] = ()) -> PreparedData:
    """One question about one image file, or the ordered frames of one scene (scene annotations
    optional, for one image; frames of a generated benchmark bring their own), checked like a data
    set; `regions` (`--region` arguments or `Region`s) stand for the question's `<mask>` tokens, in
    order."""
    dataset = single_question_dataset(image, question, scene, regions)
    return prepare_questions(dataset, dataset.splits()[0], dataset.questions(dataset.splits()[0]),
                             config, overrides)


def prepare_questions(dataset: Dataset, split: str, questions: list[Question], config: VadarConfig,
                      overrides: Mapping[str, str] | None = None, *, load: bool = True) -> PreparedData:
    backends = config.modules.resolved(overrides)
    preflight(dataset, questions, needs_scenes="oracle" in backends.values())
    modules = build_modules(config, backends, oracle=lambda: oracle_modules(dataset), load=load)
    views = None
    if any(q.view_ids for q in questions):
        views = view_modules(dataset, backends, config.vision)
        for module in views if load and views is not None else ():
            module.load()
    return PreparedData(dataset, split, questions, modules, backends, views)


def view_modules(dataset: Dataset, backends: Mapping[str, str],
                 vision: RealModulesConfig | None = None) -> ViewModuleSet | None:
    """The multi-view modules for questions about several frames: their oracle twins, reading
    the scene graph, when every slot is an oracle and the data set has world annotations; their
    model-backed twins (from `vision`) when every slot is `real`; None otherwise (programs then
    get the frames and the per-frame modules only)."""
    chosen = set(backends.values())
    if chosen == {"real"} and vision is not None:
        from base_modules.real.scene_graph import real_view_modules

        return real_view_modules(vision)
    world = getattr(dataset, "world", None)
    if world is None or chosen != {"oracle"}:
        return None
    from base_modules.oracle.scene_graph import scene_graph_oracle_modules

    return scene_graph_oracle_modules(dataset.scene, world)


def _only_split(dataset: Dataset) -> str:
    splits = dataset.splits()
    if len(splits) != 1:
        raise DatasetError(f"{dataset.root}: choose a split with --split (available: {', '.join(splits)})")
    return splits[0]


def oracle_modules(dataset: Dataset) -> ModuleSet:
    """Oracle modules reading the data set's own scene annotations (3D boxes, or CLEVR scenes)."""
    if getattr(dataset, "oracle_kind", None) == "annotations3d":
        return annotations3d_oracle_modules(dataset.scene)
    return clevr_oracle_modules(dataset.scene)


def build_modules(config: VadarConfig, backends: Mapping[str, str], *,
                  oracle: Callable[[], ModuleSet], load: bool = True) -> ModuleSet:
    """The module set `backends` asks for, loaded now so missing weights stop the run early.

    `oracle` builds the oracle modules for the data at hand; `real` builds the model-backed ones
    from `config.vision`; any other name is an entry-point plugin.
    """
    from base_modules.registry import build_module_set

    def real() -> ModuleSet:
        from base_modules.real import real_modules

        return real_modules(config.vision)

    modules = build_module_set(backends, builtins={"oracle": oracle, "real": real})
    for module in modules if load else ():
        module.load()  # inside a program a weights error would only make the LLM retry
    return modules


def preflight(dataset: Dataset, questions: Sequence[Question], *, needs_scenes: bool = True) -> None:
    """Fail before any LLM work if an image, or a scene oracle modules need, is missing."""
    for question in questions:
        dataset.image(question)
        if needs_scenes and question.multi_view and dataset.scene(question.image_id) is None:
            raise DatasetError(
                f"no annotation for frame {question.image_path.name}: oracle modules read the ground truth of a generated "
                "benchmark (vadar bench generate --views K); keep its frames in its images/ folder, or pass "
                "--scene BENCH/scenes/<scene_id>.json for copies under the same names (or use --modules real)")
        if needs_scenes and dataset.scene(question.image_id) is None:
            raise DatasetError(
                f"question {question.question_id}: no scene annotation for image {question.image_id}; "
                "oracle modules need one (pass --scene or add it to the scenes file, or use --modules real)"
            )
