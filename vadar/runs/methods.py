"""The methods one evaluation harness can run on the same questions with the same model.

- `vadar`: the Program agent over predefined modules plus the learned library (dynamic API).
- `static-api`: the Program agent over the predefined modules only (ViperGPT/VisProg-like).
- `tool-agent`: a multi-turn tool-calling agent over the predefined modules.
- `direct`: the LLM answers in one turn, from the scene annotations as text when every module is
  an oracle (perfect perception), otherwise from the image (needs a vision-language endpoint).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from api_store import ApiStore, FunctionRecord
from api_store.evidence import VerifiedProgram
from base_modules.module import ModuleSet
from base_modules.view_modules import ViewModuleSet
from omni3d_bench.types import Dataset, Question
from vadar.agents.direct import DirectAnswerer
from vadar.agents.techniques.fallback import with_fallback
from vadar.programs.outcome import Executor, ProgramOutcome
from vadar.agents.program import ProgramAgent
from vadar.programs.sampling import PROGRAM, Sampling
from vadar.agents.tool_agent import ToolAgent
from vadar.programs.api_text import ExampleCall, render_api, with_regions
from vadar.programs.helper_rules import fit_library
from vadar.agents.unit_tests import BENCH_SCENES, CLEVR_SCENES, TestScenes
from vadar.config import ReasoningConfig, VadarConfig
from vadar.library.retrieval import ExampleRetriever, LibraryRetriever, example_calls
from vadar.library.shape_helpers import catalogue_calls
from vadar.llm.chat import ChatModel
from vadar.programs.namespace import sketch_scene_namespace, unit_scene_namespace
from vadar.programs.question_context import QuestionContext
from vadar.runs.prepare import PreparedData
from vadar.runs.session import Session

METHODS: tuple[str, ...] = ("vadar", "static-api", "tool-agent", "direct")
PROGRAM_METHODS: tuple[str, ...] = ("vadar", "static-api")
"""The methods whose answers are Program-agent programs: the ones reasoning techniques apply to."""

Answerer = Callable[[Question], ProgramOutcome]
Acceptance = Callable[[Question, ProgramOutcome], bool]
"""Whether a program's outcome for a question is good enough to stop writing more (a labelled build)."""


@dataclass(frozen=True)
class LibrarySnapshot:
    """What a method may use of the library, read once: plain records that can be shipped."""

    functions: list[FunctionRecord] = field(default_factory=list)
    examples: list[VerifiedProgram] = field(default_factory=list)


def read_library(store: ApiStore, method: str) -> LibrarySnapshot:
    """The implemented functions and correct build programs `method` may use (none but for vadar).

    Helpers that break the helper rules, or come after the library's size bounds are full, are left
    out with a warning (`helper_rules.fit_library`), so the API text and the namespace show the same ones.
    """
    if method != "vadar":
        return LibrarySnapshot()
    examples = [p for p in store.verified_programs(correct_only=True) if p.withdrawn is None]
    return LibrarySnapshot(fit_library(store.library()), examples)


def example_retriever(snapshot: LibrarySnapshot, config: VadarConfig) -> ExampleRetriever:
    """The worked examples a vadar program is shown: right build programs whose helpers are in the library."""
    return ExampleRetriever(snapshot.examples, config.library.examples_k, {f.name for f in snapshot.functions},
                            functions=snapshot.functions)


def make_answerer(method: str, session: Session, data: PreparedData,
                  accept: Acceptance | None = None, tries: int = 1) -> tuple[Answerer, list[FunctionRecord]]:
    """The per-question solver of `method`, and the library functions it may use (with `accept`, a
    program method writes up to `tries` programs per question until one is accepted)."""
    library = read_library(session.store, method)
    answer = build_answerer(method, library, llm=session.llm, executor=session.executor,
                            config=session.config, dataset=data.dataset, modules=data.modules,
                            backends=data.backends, view_modules=data.view_modules, accept=accept, tries=tries)
    return answer, library.functions


def program_agent_for(config: VadarConfig, llm: ChatModel, executor: Executor,
                      sampling: Sampling = PROGRAM, *, techniques: bool = False) -> ProgramAgent:
    """A Program agent with the configured attempt limits; with `techniques`,
    also the configured reasoning techniques (`[reasoning]`: samples, formalize, reflect, tests).
    Without, the find order alone where it is on: it asks nothing, and the build's programs, which
    judge its helpers, are then written as the evaluation's are."""
    limits = config.agents
    reasoning = (config.reasoning if techniques
                 else ReasoningConfig(find_order=True) if config.reasoning.find_order else None)
    return ProgramAgent(llm, executor, max_attempts=limits.program_attempts, sampling=sampling,
                        same_error_limit=limits.program_same_error_limit, reasoning=reasoning,
                        check_answers=limits.answer_kind_check)


def _test_scenes(config: VadarConfig, dataset: Dataset, library: list[FunctionRecord]) -> TestScenes | None:
    """With `reasoning.tests`: the kind of test scene the model writes for this data set (CLEVR scenes, or
    the generated benchmark's 3D annotations) and how one becomes oracle modules."""
    if not config.reasoning.tests:
        return None
    if getattr(dataset, "oracle_kind", None) == "annotations3d":
        return TestScenes(BENCH_SCENES, sketch_scene_namespace(library))
    return TestScenes(CLEVR_SCENES, unit_scene_namespace(library))


def build_answerer(method: str, snapshot: LibrarySnapshot, *, llm: ChatModel, executor: Executor,
                   config: VadarConfig, dataset: Dataset, modules: ModuleSet,
                   backends: Mapping[str, str],
                   view_modules: ViewModuleSet | None = None,
                   accept: Acceptance | None = None, tries: int = 1) -> Answerer:
    """The solver of `method` from its parts; no store or session, so a remote worker can build it."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    limits = config.agents
    library = snapshot.functions
    context = QuestionContext(dataset, modules, view_modules)  # a multi-view question's frames and modules

    if method in PROGRAM_METHODS:
        program_agent = program_agent_for(config, llm, executor, techniques=True)
        settings = config.library
        retriever = LibraryRetriever(library, settings.retrieve_k)
        examples = example_retriever(snapshot, config) if method == "vadar" else None
        names = [f.name for f in library]
        calls = catalogue_calls(names, example_calls(snapshot.examples, names))
        scenes = _test_scenes(config, dataset, library)

        def write(question: Question, functions: list[FunctionRecord], shown: list[FunctionRecord],
                  shown_calls: Mapping[str, ExampleCall], worked_examples: ExampleRetriever | None,
                  until: Callable[[ProgramOutcome], bool] | None = None, writes: int = 1) -> ProgramOutcome:
            """A program with `functions` in its namespace, `shown` (and their example calls) in its API
            text and the worked examples retrieved for the question (none: the built-in one)."""
            text = with_regions(render_api(shown, examples=shown_calls, **context.api_options(question)),
                                question.regions)
            worked = (worked_examples.render(question.question, question.multi_view)
                      if worked_examples is not None else None)
            if worked is None:  # the built-in example reads one frame: several get one reading them all
                worked = context.fixed_example(question)
            testable = not question.multi_view and not question.regions  # test scenes have one frame, no regions
            return program_agent.solve(question.question, text, context.namespace(question, functions), worked,
                                       scenes if testable else None,
                                       accept=until, tries=writes)

        def solve_with_program(question: Question) -> ProgramOutcome:
            until = (lambda outcome: accept(question, outcome)) if accept is not None else None
            outcome = write(question, library, retriever.select(question.question), calls, examples, until, tries)
            if method != "vadar" or not settings.fallback or accept is not None:
                return outcome
            # static-api's request: no library function, the built-in worked example
            return with_fallback(outcome, lambda: write(question, [], [], {}, None))

        return solve_with_program

    if method == "tool-agent":
        tool_agent = ToolAgent(llm, executor, budget=limits.tool_budget)
        def solve_with_tools(question: Question) -> ProgramOutcome:
            api = render_api(library, **context.api_options(question))
            return tool_agent.solve(question.question, with_regions(api, question.regions), context.namespace(question))

        return solve_with_tools

    direct = DirectAnswerer(llm)
    oracle_perception = all(backend == "oracle" for backend in backends.values())

    def solve_directly(question: Question) -> ProgramOutcome:
        scene = dataset.scene(question.image_id) if oracle_perception else None
        world = multi_view_world(dataset, question) if oracle_perception else None
        return direct.solve(question.question, scene=scene, world=world, regions=question.regions,
                            image_path=None if scene or world else question.image_path)

    return solve_directly


def multi_view_world(dataset: Dataset, question: Question) -> dict | None:
    """The world annotation of a multi-view question's scene, where the data set has one."""
    world = getattr(dataset, "world", None)
    if question.scene_id is None or not question.multi_view or world is None:
        return None
    return world(question.scene_id)
