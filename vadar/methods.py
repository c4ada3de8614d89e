"""The methods one evaluation harness can run on the same questions with the same model.

- `vadar`: the Program agent over predefined modules plus the learned library (dynamic API).
- `static-api`: the Program agent over the predefined modules only (ViperGPT/VisProg-like).
- `tool-agent`: a multi-turn tool-calling agent over the predefined modules.
- `direct`: the LLM answers in one turn, from the scene annotations as text when every module is
  an oracle (perfect perception), otherwise from the image (needs a vision-language endpoint).
"""

from __future__ import annotations

from collections.abc import Callable

from api_store import FunctionRecord, FunctionStatus
from omni3d_bench.types import Question
from vadar.agents.direct import DirectAnswerer
from vadar.agents.outcome import ProgramOutcome
from vadar.agents.program import ProgramAgent
from vadar.agents.tool_agent import ToolAgent
from vadar.api_text import render_api
from vadar.library.retrieval import ExampleRetriever, LibraryRetriever
from vadar.namespace import program_namespace
from vadar.prepare import PreparedData
from vadar.session import Session

METHODS: tuple[str, ...] = ("vadar", "static-api", "tool-agent", "direct")

Answerer = Callable[[Question], ProgramOutcome]


def make_answerer(method: str, session: Session, data: PreparedData) -> tuple[Answerer, list[FunctionRecord]]:
    """The per-question solver of `method`, and the library functions it may use."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    dataset, modules, store = data.dataset, data.modules, session.store
    limits, cap = session.config.agents, session.config.llm.max_tokens
    library = store.functions(FunctionStatus.IMPLEMENTED) if method == "vadar" else []
    api_text = render_api(library)

    if method in ("vadar", "static-api"):
        program_agent = ProgramAgent(session.llm, session.executor, max_attempts=limits.program_attempts,
                                     max_reply_tokens=cap)
        settings = session.config.library
        retriever = LibraryRetriever(library, settings.retrieve_k)
        examples = ExampleRetriever(store.verified_programs(correct_only=True), settings.examples_k,
                                    {f.name for f in library}) if method == "vadar" else None

        def solve_with_program(question: Question) -> ProgramOutcome:
            namespace = program_namespace(dataset.image(question), modules, library)  # all callable
            shown = render_api(retriever.select(question.question))
            worked = examples.render(question.question) if examples is not None else None
            return program_agent.solve(question.question, shown, namespace, worked)

        return solve_with_program, library

    if method == "tool-agent":
        tool_agent = ToolAgent(session.llm, session.executor, budget=limits.tool_budget, max_reply_tokens=cap)

        def solve_with_tools(question: Question) -> ProgramOutcome:
            namespace = program_namespace(dataset.image(question), modules)
            return tool_agent.solve(question.question, api_text, namespace)

        return solve_with_tools, library

    direct = DirectAnswerer(session.llm, max_reply_tokens=cap)
    oracle_perception = all(backend == "oracle" for backend in data.backends.values())

    def solve_directly(question: Question) -> ProgramOutcome:
        scene = dataset.scene(question.image_id) if oracle_perception else None
        return direct.solve(question.question, scene=scene, image_path=None if scene else question.image_path)

    return solve_directly, library
