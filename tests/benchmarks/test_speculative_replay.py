"""benchmarks/speculative.py --replay: the recorded requests of one agent, in the order they were made."""

from __future__ import annotations

import sys
from pathlib import Path

from vadar.llm.cache import ResponseCache
from vadar.llm.chat import ChatResponse

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import speculative  # noqa: E402


def test_replay_takes_the_first_requests_whose_system_prompt_matches(tmp_path):
    cache = ResponseCache(tmp_path / "llm_cache.sqlite")
    for index, system in enumerate(["You implement helper functions: A", "You write short Python programs",
                                    "You implement helper functions: B", "You implement helper functions: C"]):
        request = {"model": "m", "max_tokens": 500 + index,
                   "messages": [{"role": "system", "content": system}, {"role": "user", "content": str(index)}]}
        cache.put(f"key{index}", request, ChatResponse("reply"))
    found = speculative.recorded_requests(tmp_path / "llm_cache.sqlite", "You implement helper functions", 2)
    assert [(messages[1]["content"], max_tokens) for messages, max_tokens in found] == [("0", 500), ("2", 502)]
