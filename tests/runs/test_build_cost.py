"""What a build spent, stage by stage: requests and model seconds per build question."""

from __future__ import annotations

import json

from vadar.config import VadarConfig
from vadar.library.hand import add_functions
from vadar.llm.chat import ChatResponse
from vadar.llm.doubles import ScriptedLLM
from vadar.llm.usage import UsageTracker, usage_scope
from vadar.runs.build_cost import COST_FILE, build_cost
from vadar.runs.pipeline import build_api
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session
from scripted_jobs import looking_program_of_its_kind, program_of_its_kind

HELPER = '''
def _named(image: Image) -> str:
    """A word, after looking at the image."""
    loc(image, "objects")
    return "word"
'''


def response(seconds: float, *, cached: bool = False) -> ChatResponse:
    return ChatResponse(text="x", prompt_tokens=10, completion_tokens=5, latency_s=seconds, from_cache=cached)


def test_a_stage_counts_its_requests_and_only_fresh_ones_count_seconds():
    usage = UsageTracker()
    with usage_scope("proposals"):
        usage.record(response(20.0))
        with usage_scope("gate programs"):
            usage.record(response(30.0))
            usage.record(response(0.01, cached=True))  # replayed by a resumed build
    with usage_scope("validation"):
        usage.record(response(25.0))
    cost = build_cost(usage, 5)
    stages = {s.stage: (s.requests, s.fresh, s.seconds) for s in cost.stages}
    assert stages["proposals"] == (3, 2, 50.0) and stages["gate programs"] == (2, 1, 30.0)
    assert stages["validation"] == (1, 1, 25.0) and stages["question shapes"] == (0, 0, 0.0)
    assert (cost.total.requests, cost.total.seconds, cost.seconds_per_question) == (4, 75.0, 15.0)
    assert cost.line().startswith("model time 75 s, 15 s per build question: proposals 50 s (3 requests)")


def test_a_build_writes_what_each_stage_asked_of_the_model(tmp_path):
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s = 10
    config.library.propose = config.library.distill = False  # the hand helper alone: validation only
    data = DataSelection(limit=4).prepare()
    llm = ScriptedLLM([looking_program_of_its_kind] * 40, usage=UsageTracker())
    with open_session(config, llm=llm) as session:
        add_functions(session.store, HELPER)
        build_api(session, data, tmp_path / "build", batch_size=4)
    cost = json.loads((tmp_path / "build" / COST_FILE).read_text())
    stages = {s["stage"]: s["requests"] for s in cost["stages"]}
    assert cost["questions"] == 4 and cost["total"]["requests"] == len(llm.calls) > 0
    assert stages["validation"] == len(llm.calls) and stages["proposals"] == stages["gate programs"] == 0
    from vadar.app.evaluation import Build

    assert Build(tmp_path / "build").cost.total.requests == len(llm.calls)


def test_a_build_writes_what_each_of_its_batches_asked_of_the_model(tmp_path):
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s = 10
    config.library.propose, config.library.validation = False, False  # distillation's programs alone
    config.library.distill_groups, config.library.build_tries, config.library.scene_checks = False, 1, 0
    config.library.build_programs_per_shape = 0
    data = DataSelection(limit=5).prepare()
    llm = ScriptedLLM([program_of_its_kind] * 40, usage=UsageTracker())
    with open_session(config, llm=llm) as session:
        build_api(session, data, tmp_path / "build", batch_size=2)
    cost = json.loads((tmp_path / "build" / COST_FILE).read_text())
    batches = [(b["stage"], b["requests"]) for b in cost["batches"]]
    assert [stage for stage, _ in batches] == ["batch 1", "batch 2", "batch 3"]
    assert [requests for _, requests in batches] == [2, 2, 1]  # one program for each build question
    assert sum(requests for _, requests in batches) == cost["total"]["requests"]
    from vadar.app.evaluation import Build

    assert [b.stage for b in Build(tmp_path / "build").cost.batches] == ["batch 1", "batch 2", "batch 3"]


def test_a_cost_file_written_before_batches_were_counted_still_reads():
    from vadar.runs.build_cost import BuildCost

    cost = BuildCost.from_dict({"questions": 2, "total": {"stage": "build", "requests": 1, "fresh": 1, "seconds": 3.0,
                                                          "completion_tokens": 9}, "stages": []})
    assert cost.batches == () and cost.total.seconds == 3.0
