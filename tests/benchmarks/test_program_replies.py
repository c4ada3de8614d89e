"""benchmarks/program_replies.py: which reply of a build's program conversations wrote its right programs."""

from __future__ import annotations

import sys
from pathlib import Path

from api_store import ApiStore
from vadar.llm.cache import ResponseCache
from vadar.llm.chat import ChatResponse

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import program_replies  # noqa: E402

SYSTEM = {"role": "system", "content": "You write short Python programs that answer questions"}
WRONG, RIGHT = "```python\nfinal_result = 1\n```", "```python\nfinal_result = len(loc(image, 'cube'))\n```"


def conversation(cache: ResponseCache, key: str, question: str, replies: list[str], errors: list[str]) -> None:
    messages = [SYSTEM, {"role": "user", "content": f"Question: {question}"}]
    for n, reply in enumerate(replies):
        cache.put(f"{key}{n}", {"model": "m", "temperature": 0.0, "messages": list(messages)},
                  ChatResponse(reply, completion_tokens=10 * (n + 1)))
        if n < len(errors):
            messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": errors[n]}]


def test_replies_are_counted_by_number_and_after_a_repeated_feedback(tmp_path, capsys, monkeypatch):
    cache = ResponseCache(tmp_path / "llm_cache.sqlite")
    conversation(cache, "a", "How many cubes?", [WRONG, RIGHT], ["line 1: wrong"])
    # the same error twice (line numbers aside), then a third reply: counted after the repeat
    conversation(cache, "b", "How many balls?", [WRONG, WRONG, WRONG],
                 ["line 1: NameError\nHint: x", "line 2: NameError\nHint: y"])
    cache.put("other", {"model": "m", "messages": [{"role": "system", "content": "You implement helper"}]},
              ChatResponse(RIGHT))
    with ApiStore(tmp_path / "vadar.sqlite") as store:
        store.record_verified_program(batch_id=None, question_id="1", question="How many cubes?", variant="build",
                                      code=RIGHT.split("\n")[1],
                                      answer="2", gold="2", error=None, correct=True, uses=[])
    chains = program_replies.conversations(program_replies.turns(tmp_path, program_replies.SYSTEM))
    by_reply, after_repeat = program_replies.tally(chains, program_replies.right_programs(tmp_path))
    assert sorted(len(chain) for chain in chains) == [2, 3]
    assert [by_reply[(n, "right")] for n in (1, 2, 3)] == [0, 1, 0]  # the right program is a second reply
    assert [by_reply[(n, "tokens")] for n in (1, 2, 3)] == [20, 40, 30]
    assert dict(after_repeat) == {"replies": 1, "tokens": 30, "right": 0}  # line numbers and hints aside
    monkeypatch.setattr(sys, "argv", ["program_replies.py", str(tmp_path)])
    program_replies.main()
    assert "reply 2: replies 2, tokens 40, right build programs 1" in capsys.readouterr().out
