"""Reasoning techniques off: the Program agent's requests are byte for byte those recorded before
the techniques existed (tests/fixtures/program_requests_options_off.json), cache keys included,
so replies recorded in the response cache still replay.

After a deliberate change of the Program agent's prompts, record the fixture again with
`python tests/agents/test_options_off.py` (from the repository root) and review its diff.
"""

from __future__ import annotations

import json

from vadar.config import VadarConfig
from vadar.llm.chat import ChatRequest, request_key
from vadar.llm.client import LLMClient
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.methods import LibrarySnapshot, build_answerer
from vadar.runs.prepare import DataSelection
from vadar.sandbox import execute

from recorded_requests import RECORDED, SCRIPT  # noqa: E402


def run(code, namespace):
    return execute(code, dict(namespace), timeout_s=20, memory_mb=1024)


def scripted_requests(config: VadarConfig, script: list[str] = SCRIPT) -> list[dict]:
    """Every request of a scripted static-api and vadar run on two sample questions, with its cache key."""
    client = LLMClient(config.llm, base_url="http://127.0.0.1:9/v1", cache=None)  # never called: keys only
    data = DataSelection(limit=2).prepare(config)
    requests = []
    for method in ("static-api", "vadar"):
        llm = ScriptedLLM(script)
        answer = build_answerer(method, LibrarySnapshot(), llm=llm, executor=run, config=config,
                                dataset=data.dataset, modules=data.modules, backends=data.backends)
        for question in data.questions:
            answer(question)
        for request in llm.requests:
            options = {k: v for k, v in request.items() if k != "messages" and v is not None}
            key = request_key(**client.request_for(ChatRequest(request["messages"], **options)))
            requests.append({"method": method, **request, "key": key})
    return json.loads(json.dumps(requests))


def test_options_off_send_the_requests_recorded_before_the_techniques():
    config = VadarConfig()
    assert (config.reasoning.samples, config.reasoning.formalize, config.reasoning.reflect) == (1, False, False)
    assert scripted_requests(config) == json.loads(RECORDED.read_text(encoding="utf-8"))


def test_a_second_sample_adds_requests_with_their_own_seed_and_keeps_the_first_ones():
    config = VadarConfig()
    config.reasoning.samples = 2
    config.reasoning.vote_until_decided = False  # else a working greedy program decides a vote of two
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    sampled = scripted_requests(config, SCRIPT * 2)
    assert sampled != recorded and {r["key"] for r in recorded} <= {r["key"] for r in sampled}  # greedy ones replay
    assert {r["seed"] for r in sampled if "seed" in r} == {1}


if __name__ == "__main__":
    RECORDED.write_text(json.dumps(scripted_requests(VadarConfig()), indent=1, sort_keys=True), encoding="utf-8")
    print(f"recorded {RECORDED}")
