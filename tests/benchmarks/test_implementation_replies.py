"""benchmarks/implementation_replies.py: implementation conversations rebuilt from a build's recorded requests."""

from __future__ import annotations

import sys
from pathlib import Path

from api_store import ApiStore
from vadar.llm.cache import ResponseCache
from vadar.llm.chat import ChatResponse

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import implementation_replies  # noqa: E402

SYSTEM = {"role": "system", "content": "You implement helper functions of a Python API"}
BROKEN, WORKS = "```python\ndef _f(x):\n    return y\n```", "```python\ndef _f(x):\n    return x\n```"


def test_conversations_are_chained_and_copies_counted(tmp_path, capsys):
    cache = ResponseCache(tmp_path / "llm_cache.sqlite")
    opening = [SYSTEM, {"role": "user", "content": "Implement _f"}]
    conversation = list(opening)
    for n in range(3):  # greedy: a failed reply, then two copies of it
        cache.put(f"g{n}", {"model": "m", "temperature": 0.0, "messages": list(conversation)},
                  ChatResponse(BROKEN, completion_tokens=10))
        conversation += [{"role": "assistant", "content": BROKEN}, {"role": "user", "content": f"error {n}"}]
    cache.put("s0", {"model": "m", "temperature": 0.8, "seed": 1, "messages": opening},
              ChatResponse(WORKS, completion_tokens=7))
    cache.put("other", {"model": "m", "messages": [{"role": "system", "content": "You write programs"}]},
              ChatResponse("x"))
    with ApiStore(tmp_path / "vadar.sqlite") as store:
        store.propose("_f", "(x)", "Identity.")
        store.record_attempt("_f", 1, code="def _f(x):\n    return x", error=None, passed=True)
    chains = implementation_replies.conversations(implementation_replies.turns(tmp_path))
    assert sorted(len(c) for c in chains) == [1, 3]
    sys.argv = ["implementation_replies.py", str(tmp_path)]
    implementation_replies.main()
    out = capsys.readouterr().out
    assert "greedy: conversations 1, replies 3, tokens 30, first reply ran 0, retries 2" in out
    assert "copies 2, copy tokens 20, replies after a copy 1, tokens after a copy 10" in out
    assert "sampled: conversations 1, replies 1, tokens 7, first reply ran 1, retries 0" in out
