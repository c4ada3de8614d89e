"""A small throughput benchmark for an OpenAI-compatible chat endpoint (`vadar llm bench`).

It measures what matters for vadar's agents: prompt processing (long system prompts full of API
docs) and decode speed (generated programs), plus whether a repeated prompt prefix is served from
llama.cpp's prompt cache. llama.cpp reports exact server-side `timings`; for other servers we fall
back to wall-clock time, which mixes prompt processing into the decode figure.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any

_FILLER = (
    "def box_center(box):\n"
    "    x0, y0, x1, y1 = box\n"
    "    return ((x0 + x1) / 2, (y0 + y1) / 2)\n"
)
_CHARS_PER_TOKEN = 2.0  # measured on this filler with the Qwen tokenizer; the server reports the exact count


@dataclass
class RequestStats:
    """One chat request's figures; `source` is 'server' (llama.cpp timings) or 'wall clock'."""

    label: str
    prompt_tokens: int
    cached_tokens: int | None
    prompt_tokens_per_s: float | None
    completion_tokens: int
    decode_tokens_per_s: float | None
    wall_s: float
    source: str


@dataclass
class BenchReport:
    """All requests plus medians over the cold (uncached) ones."""

    base_url: str
    model: str
    requests: list[RequestStats] = field(default_factory=list)

    @property
    def cold(self) -> list[RequestStats]:
        return [r for r in self.requests if r.label.startswith("cold")]

    @property
    def prompt_tokens_per_s(self) -> float | None:
        return _median([r.prompt_tokens_per_s for r in self.cold])

    @property
    def decode_tokens_per_s(self) -> float | None:
        return _median([r.decode_tokens_per_s for r in self.cold])

    @property
    def repeat(self) -> RequestStats | None:
        return next((r for r in self.requests if r.label == "repeat"), None)


def build_prompt(prompt_tokens: int, nonce: int) -> str:
    """A code-like prompt of roughly `prompt_tokens` tokens; the nonce up front defeats the cache."""
    head = f"Request {nonce}. Here is a helper library:\n\n"
    body_chars = max(0, int(prompt_tokens * _CHARS_PER_TOKEN) - len(head) - 80)
    body = (_FILLER * (body_chars // len(_FILLER) + 1))[:body_chars]
    return head + body + "\n\nWrite a long Python function that uses these helpers. Explain each step."


def run_bench(
    client: Any,
    model: str,
    *,
    prompt_tokens: int = 512,
    max_tokens: int = 64,
    repeats: int = 2,
    ignore_eos: bool = True,
) -> BenchReport:
    """Send `repeats` distinct prompts, then repeat the last one to see cached-prefix reuse.

    `client` is an `openai.OpenAI`. `ignore_eos` (llama.cpp only) makes every request decode
    exactly `max_tokens` tokens so decode figures are comparable.
    """
    report = BenchReport(base_url=str(client.base_url), model=model)
    extra = {"ignore_eos": True} if ignore_eos else None
    prompt = ""
    for i in range(max(1, repeats)):
        prompt = build_prompt(prompt_tokens, nonce=i + int(time.time()))
        report.requests.append(_one(client, model, prompt, max_tokens, extra, label=f"cold {i + 1}"))
    report.requests.append(_one(client, model, prompt, max_tokens, extra, label="repeat"))
    return report


def _one(client: Any, model: str, prompt: str, max_tokens: int, extra: dict | None, *, label: str) -> RequestStats:
    started = time.perf_counter()
    response = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": prompt}],
        max_tokens=max_tokens,
        temperature=0.0,
        extra_body=extra,
    )
    wall = time.perf_counter() - started
    usage = response.usage
    prompt_n = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_n = int(getattr(usage, "completion_tokens", 0) or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    timings = (response.model_extra or {}).get("timings") or {}
    if timings.get("prompt_ms") and timings.get("predicted_ms"):
        return RequestStats(
            label=label,
            prompt_tokens=prompt_n,
            cached_tokens=cached if cached is not None else timings.get("cache_n"),
            prompt_tokens_per_s=_rate(timings.get("prompt_n"), timings.get("prompt_ms")),
            completion_tokens=int(timings.get("predicted_n") or completion_n),
            decode_tokens_per_s=_rate(timings.get("predicted_n"), timings.get("predicted_ms")),
            wall_s=wall,
            source="server",
        )
    return RequestStats(
        label=label,
        prompt_tokens=prompt_n,
        cached_tokens=cached,
        prompt_tokens_per_s=None,
        completion_tokens=completion_n,
        decode_tokens_per_s=completion_n / wall if wall > 0 else None,
        wall_s=wall,
        source="wall clock",
    )


def _rate(n: Any, ms: Any) -> float | None:
    try:
        return float(n) / (float(ms) / 1000.0) if n and ms else None
    except (TypeError, ValueError):
        return None


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None
