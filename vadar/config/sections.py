"""The configuration's sections: one small dataclass each, with its defaults and the checks its
values must pass (`CHECKS`, applied by `vadar.config.checks.check_section`).

`vadar.config.loading` fills them from a TOML file, `VADAR_*` variables and `--set`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import platformdirs

from base_modules.registry import BackendError, resolve
from vadar.config.checks import (DAY_S, Check, ConfigError, HeaderText, HttpUrl, ModuleSlots, NotEmpty, OneOf,
                                 Range)

POSITIVE = Range(0, above=True)
TIMEOUT = Range(0, DAY_S, above=True, unit="a day")
TEMPERATURE = Range(0.0, 2.0)
SHARE = Range(0.0, 1.0)

# Every count has a ceiling (tests/config/test_config_checks.py walks them all): a count of 10**12
# passes a "positive" check and then writes 10**12 programs or never ends a loop.
ATTEMPTS = Range(1, 20)
"""Tries of one agent at one thing: past 20 a small model only repeats itself."""
MANY = Range(1, 1000)
"""Counts of things a build or evaluation handles (helpers, questions, uses)."""
TOKENS = Range(0, 1_048_576, above=True, unit="a million tokens")
"""A reply's or a context window's length: no model in use reads more than a million tokens."""
THREADS = Range(0, 1024, above=True)
"""Threads, slots, jobs and actors: more than this machine, or a cluster's worth of them, has."""

MEMORY_MB = Range(128, 1_048_576, unit="1 TiB")
"""The sandbox's address-space limit: below 128 MB the worker cannot unwind and report, and above
1 TiB the limit stops being one (`2**43` was taken and every program then died at start)."""


def default_home() -> Path:
    """Where vadar keeps its database and LLM cache by default."""
    return Path(platformdirs.user_data_dir("vadar", appauthor=False))


def default_model_cache() -> Path:
    """Where the assembled embedded model lives: one per user, shared by every VADAR_HOME."""
    return Path(platformdirs.user_cache_dir("vadar", appauthor=False)) / "models"


@dataclass
class LLMConfig:
    """How to reach the chat-completions endpoint. `base_url=None` means: start the embedded one."""

    base_url: str | None = None
    api_key: str = "sk-no-key-needed"
    model: str = "qwen2.5-coder-1.5b-instruct"
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = 0
    timeout_s: float = 600.0  # the whole call, retries included
    # No byte for this long: that attempt failed (a silent endpoint gets 2 attempts, so a hung
    # one is reported after about a minute). The embedded model uses embedded.inactivity_timeout_s.
    inactivity_timeout_s: float = 30.0
    max_retries: int = 4
    cache: bool = True
    stream: bool = True
    # Stop a reply once a block of lines has come this many times in a row (0: never); see
    # vadar/llm/repetition.py. Such a reply is handed back with finish_reason "repetition".
    stop_repeats: int = 3

    CHECKS: ClassVar[Mapping[str, Check]] = {
        "base_url": HttpUrl(), "api_key": HeaderText(), "model": NotEmpty(), "temperature": TEMPERATURE,
        "max_tokens": TOKENS, "seed": Range(0, 2**32 - 1), "timeout_s": TIMEOUT, "inactivity_timeout_s": TIMEOUT,
        "max_retries": Range(0, 20), "stop_repeats": Range(2, 100, off=True),
    }


SPECULATIVE_TYPES = ("none", "ngram-simple", "ngram-map-k", "ngram-mod")
"""The n-gram speculative decoding modes of the embedded llama.cpp server (`embedded.speculative`)."""


@dataclass
class EmbeddedLLMConfig:
    """The offline llama.cpp server vadar starts on 127.0.0.1 when no endpoint is configured."""

    model_path: Path | None = None  # an explicit .gguf; default: assembled from the PyPI parts
    host: str = "127.0.0.1"
    port: int | None = None  # None: pick a free port
    n_ctx: int = 8192
    n_threads: int | None = None  # None: all cores
    n_parallel: int = 1
    startup_timeout_s: float = 180.0
    # A CPU model may read a long prompt for minutes before its first token: the embedded
    # server's silence limit (in place of llm.inactivity_timeout_s).
    inactivity_timeout_s: float = 180.0
    # Speculative decoding from the prompt itself (llama.cpp n-gram drafts): "none", "ngram-simple",
    # "ngram-map-k", "ngram-mod". Lossless; worth it only where programs copy long spans of the prompt.
    speculative: str = "none"

    CHECKS: ClassVar[Mapping[str, Check]] = {
        "host": NotEmpty(), "port": Range(1, 65535), "n_ctx": TOKENS, "n_threads": THREADS, "n_parallel": THREADS,
        "startup_timeout_s": TIMEOUT, "inactivity_timeout_s": TIMEOUT, "speculative": OneOf(SPECULATIVE_TYPES),
    }


@dataclass
class SandboxConfig:
    """Limits for every piece of generated code."""

    timeout_s: float = 30.0
    memory_mb: int = 2048
    max_stdout_chars: int = 10_000

    # A zero or negative limit would remove it (memory) or fail every program (time).
    CHECKS: ClassVar[Mapping[str, Check]] = {
        "timeout_s": TIMEOUT, "memory_mb": MEMORY_MB, "max_stdout_chars": Range(0, 1_000_000)}


@dataclass
class AgentsConfig:
    """Attempt limits of the agents; the 5 implementation attempts follow the VADAR paper."""

    signature_attempts: int = 3
    max_new_functions: int = 5
    implementation_attempts: int = 5
    program_attempts: int = 5
    program_same_error_limit: int = 3  # give a question up after the same error this many times in a row
    tool_budget: int = 8
    # send back a program that runs but answers another kind of answer than its question asks (a
    # list for "How many", a sentence for "What color"): `vadar.programs.answer_kinds`
    answer_kind_check: bool = True
    # the API agent's replies start with the stub (`def` line and docstring) sent for the model to
    # continue, so it writes only the body: `vadar.agents.api.ApiAgent`
    implementation_prefill: bool = True

    # Every limit must be at least 1 (a zero would silently disable an agent) and at most 20 (64 tool
    # replies): each is a model request.
    CHECKS: ClassVar[Mapping[str, Check]] = {
        **{name: ATTEMPTS for name in ("signature_attempts", "implementation_attempts", "program_attempts",
                                       "program_same_error_limit")},
        "max_new_functions": Range(1, 50), "tool_budget": Range(1, 64)}


MAX_SAMPLES = 16
"""Most programs per question (`reasoning.samples`, `--samples`): each is an LLM request (and a sandbox
run), and the measured gain came from 3 (docs/results/techniques.md); 1,000 would write 1,000 programs
a question."""


MAX_SEARCH_SAMPLES = 64
"""Most sampled implementations of one helper per round (`library.search_samples`): each is an LLM
request and a run over every ground-truth case."""


MAX_OUTCOME_SUPPORT = 1000
"""Most supporting build questions a search by outcome may ask for (`library.outcome_min_support`): a
batch never holds that many questions, so the bound already turns the search off."""


@dataclass
class LibraryConfig:
    """How the library grows and how much of it a Program-agent prompt shows."""

    admission: str = "labelled"  # labelled (gold answers), unlabelled (majority answers) or off
    # a rejected helper gets one repair from the evidence. Off: of 13 repairs recorded over 25 builds'
    # stores, none was admitted, and each cost up to five implementation requests
    repair: bool = False
    retrieve_k: int = 6  # library functions shown per question (most relevant first); 0: all
    examples_k: int = 2  # verified worked examples shown per question; 0: the fixed example
    fallback: bool = True  # a question left without a working program is asked once more without the library
    retire_min_uses: int = 4  # judged programs on build questions before a function can be retired
    retire_below: float = 0.25  # retire when fewer than this share of those programs were right
    propose: bool = True  # top-down: the Signature and API agents propose and implement helpers
    aim: bool = True  # show the Signature agent what the batch asks for, what no program got right, checkable names
    admit_min_uses: int = 3  # a proposed helper needs this many programs using it on its batch
    distill: bool = True  # bottom-up: helpers distilled from the right build programs (labelled mode)
    distill_min_uses: int = 3  # questions whose programs share a pattern before it can become a helper
    distill_max_helpers: int = 3  # helpers distilled per batch at most (each route)
    distill_groups: bool = True  # also one LLM-written helper per group of similar right questions
    build_tries: int = 3  # labelled build: programs per build question until one is right (not yes/no)
    # right build programs per shape family after which its other build questions get none (0: no
    # limit): a question is shown examples_k examples of its shape or family, and in 100-question
    # builds these programs were 40% of the completion tokens
    build_programs_per_shape: int = 2
    # replies per program a build writes (its tries, the helpers' evidence, the validation gate), at
    # most agents.program_attempts. 2: over a 100-question CLEVR build (its ten batches and its gate),
    # first and second replies wrote 73 of its 74 right build programs; the third to fifth 1, in 112
    # replies (12,476 of its 69,255 recorded tokens; benchmarks/program_replies.py)
    build_program_attempts: int = 2
    scene_checks: int = 4  # other build scenes a right build program must also be right on (0: its own only)
    # Generate-and-test for a helper whose name makes a checkable claim (1: one greedy implementation)
    search_samples: int = 8  # implementations sampled per round until one passes the ground-truth cases
    # rounds: each later one shows the closest implementation its failing cases. 1: of 173 searches
    # recorded over 20 builds, none kept a sample of a later round; 27 drew one, up to 8 samples each
    search_rounds: int = 1
    search_temperature: float = 0.8  # temperature of the sampled implementations (each with its own seed)
    search_seed: int = 0  # sample k of a search is drawn with seed search_seed + k; another value, other samples
    # Search by outcome for a helper whose name claims nothing checkable (labelled builds)
    outcome_min_support: int = 3  # build questions whose programs must call it before its samples are judged
    shape_helpers_per_batch: int = 3  # question-shape helpers (one call answers a shape) tried per batch; 0: none
    # implementations sampled per round for a question-shape helper. 4: of the 46 such searches
    # recorded over 25 builds, 31 kept a sample among the first 4, 3 a later one, 12 none after 8-16
    shape_search_samples: int = 4
    # the latest build questions of its shape a question-shape helper is searched and judged on, weighed
    # as the gate weighs evidence (a yes/no question half; 0: every one): each costs two programs
    shape_search_support: float = 5.0
    # The validation gate: each batch's questions answered without what that batch added; what loses is withdrawn
    validation: bool = True
    # build questions it answers at most, spread evenly over the built batches (0: every one); each
    # costs about two programs, so a 100-question build's gate costs what a 30-question build's does
    validation_questions: int = 30
    withdraw_p: float = 0.2  # one-sided sign test level: losses count as evidence for withdrawing at or below it

    @property
    def shape_route(self) -> bool:
        """Whether builds try question-shape helpers: only gold answers can judge a helper whose
        name claims nothing, so unlabelled builds never do."""
        return self.admission == "labelled" and self.shape_helpers_per_batch > 0

    CHECKS: ClassVar[Mapping[str, Check]] = {
        "admission": OneOf(("labelled", "unlabelled", "off")), "retrieve_k": Range(0, 1000),
        "examples_k": Range(0, 100), "retire_below": SHARE, "withdraw_p": SHARE, "search_temperature": TEMPERATURE,
        **{name: MANY for name in ("retire_min_uses", "admit_min_uses", "distill_min_uses")},
        "distill_max_helpers": Range(1, 100), "build_tries": Range(1, MAX_SAMPLES),
        "build_programs_per_shape": Range(0, 1000),
        "build_program_attempts": ATTEMPTS,
        "search_samples": Range(1, MAX_SEARCH_SAMPLES), "search_rounds": Range(1, MAX_SAMPLES),
        "outcome_min_support": Range(1, MAX_OUTCOME_SUPPORT), "shape_helpers_per_batch": Range(0, 20),
        "shape_search_samples": Range(1, MAX_SEARCH_SAMPLES), "shape_search_support": Range(0, 1000),
        "scene_checks": Range(0, 100), "validation_questions": Range(0, 100_000),
        "search_seed": Range(0, 2**31 - 1),
    }


@dataclass
class ReasoningConfig:
    """Reasoning techniques of the Program agent (docs/agents.md); all off by default. Off, every
    request is exactly what it was without them, so recorded replies still replay."""

    samples: int = 1  # programs per question: the first greedy, the rest sampled; plurality answer
    sample_temperature: float = 0.7  # temperature of the sampled programs (each with its own seed)
    vote_tolerance: float = 1e-3  # numbers within this relative difference are one answer in the vote
    vote_until_decided: bool = True  # stop sampling once the programs left cannot change the vote's answer
    formalize: bool = False  # a formal task constraint (JSON schema) first, then the program bound by it
    reflect: bool = False  # check the answer against the question and constraint; one revision at most
    tests: bool = False  # the model writes tiny scenes with known answers; programs run on them (oracles)
    size_priors: bool = False  # typical sizes of the question's nouns in the prompt (docs/size-priors.md)
    size_priors_shown: bool = True  # false: the priors serve only the reflect step's range check
    find_order: bool = False  # the objects of the question's relation chains listed innermost first

    CHECKS: ClassVar[Mapping[str, Check]] = {
        "samples": Range(1, MAX_SAMPLES), "sample_temperature": TEMPERATURE, "vote_tolerance": Range(0)}

    def label(self) -> str:
        """A short name of the techniques in use, e.g. `samples=3+formalize`; `none` when all are off."""
        parts = [f"samples={self.samples}"] if self.samples > 1 else []
        parts += [name for name in ("formalize", "reflect", "tests") if getattr(self, name)]
        parts += [("size_priors" if self.size_priors_shown else "size_priors=check")] if self.size_priors else []
        parts += ["find_order"] if self.find_order else []
        return "+".join(parts) or "none"


EXECUTORS: tuple[str, ...] = ("local", "ray")


@dataclass
class EvalConfig:
    """How questions are answered: on this machine `jobs` at once (threads; each has its own
    sandbox worker), or as tasks on a Ray cluster (`executor = "ray"`, see `[ray]`)."""

    jobs: int = 1
    executor: str = "local"
    # After an endpoint outage (retries spent): False stops the run (it resumes exactly); True
    # records the question as an infrastructure error, goes on, and a rerun asks it again.
    keep_going: bool = False

    CHECKS: ClassVar[Mapping[str, Check]] = {"jobs": THREADS, "executor": OneOf(EXECUTORS)}


@dataclass
class RayConfig:
    """Where and how questions run on Ray (the `ray` extra), used when `eval.executor = "ray"`.

    Questions are tasks of `task_cpus` CPUs each; model-backed modules live in `module_actors`
    actors per backend (0: one per GPU of the cluster), each holding `module_gpus` GPUs.
    """

    address: str | None = None  # None: start a local cluster; "auto" or HOST:PORT: join one
    task_cpus: float = 1.0
    max_retries: int = 3  # a question whose worker died is run again this often
    module_actors: int = 0
    module_gpus: float | None = None  # None: 1 when the cluster has GPUs, else 0
    module_cpus: float = 1.0

    CHECKS: ClassVar[Mapping[str, Check]] = {
        "task_cpus": POSITIVE, "max_retries": Range(0, 100), "module_actors": Range(0, 1024),
        "module_gpus": Range(0), "module_cpus": Range(0)}


@dataclass
class PathsConfig:
    """Where persistent state lives. Empty paths are derived from `home`."""

    home: Path = field(default_factory=default_home)
    db_path: Path | None = None
    llm_cache_path: Path | None = None
    model_cache_dir: Path | None = None

    CHECKS: ClassVar[Mapping[str, Check]] = {}  # each a path (its type); `home` is set by VADAR_HOME

    @property
    def database(self) -> Path:
        return self.db_path or self.home / "vadar.sqlite"

    @property
    def llm_cache(self) -> Path:
        return self.llm_cache_path or self.home / "llm_cache.sqlite"

    @property
    def model_cache(self) -> Path:
        """Not under `home`: a 1.1 GB model is assembled once per user, not once per home."""
        return self.model_cache_dir or default_model_cache()


@dataclass
class ModulesConfig:
    """Backend per perception module: `oracle`, `real`, or the name of an entry-point plugin.

    `backend` is the default of every slot; `per_module` maps a slot (as written in TOML
    `[modules] depth = "real"`, `VADAR_MODULES_DEPTH`, `--set modules.depth=real`, or several at
    once: `VADAR_MODULES_PER_MODULE=depth=real,vqa=real`) to its own backend. Slot names and their
    checks live in `base_modules.registry`, the one owner of the five slots.
    """

    backend: str = "oracle"
    per_module: dict[str, str] = field(default_factory=dict)

    CHECKS: ClassVar[Mapping[str, Check]] = {"backend": NotEmpty(), "per_module": ModuleSlots()}

    def resolved(self, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
        """The backend of every slot, lower-cased, after per-slot settings and `overrides`."""
        try:
            return resolve(self.backend, self.per_module, overrides or {})
        except BackendError as exc:
            raise ConfigError(f"[modules] {exc}") from None
