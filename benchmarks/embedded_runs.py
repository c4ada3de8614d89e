"""The embedded-model parts of `throughput.py`: new defaults against a baseline commit, and load.

Both need the machine to themselves: any other CPU work changes the figures.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import openai

from vadar.config import load_config
from vadar.llm.bench import run_bench
from vadar.llm.embedded import open_endpoint

REPO = Path(__file__).resolve().parent.parent
CLI = "import sys; from vadar.cli import main; sys.argv[0] = 'vadar'; main()"


@dataclass
class EvalRun:
    label: str
    seconds: float
    questions: int
    correct: int
    completion_tokens: int
    replies: int

    def line(self) -> str:
        n = max(self.questions, 1)
        return (f"{self.label:<22}{self.questions:>4} questions in {self.seconds:7.1f}s = "
                f"{self.questions / self.seconds * 60:5.2f} questions/minute, "
                f"{self.completion_tokens / n:6.1f} completion tokens and {self.replies / n:.2f} replies "
                f"per question, {self.correct}/{self.questions} right")


def embedded_speedup(baseline: str, data: Path, split: str, count: int) -> float:
    """Answer the same questions with `baseline`'s code and with this checkout's; print both."""
    with tempfile.TemporaryDirectory(prefix="vadar-embedded-speedup-") as tmp:
        root = Path(tmp)
        worktree = root / "baseline"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(worktree), baseline],
                       check=True, capture_output=True)
        try:
            old = _evaluate(f"baseline {baseline}", worktree, root / "old", data, split, count)
            print(old.line(), flush=True)
            new = _evaluate("this checkout", REPO, root / "new", data, split, count)
            print(new.line(), flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)],
                           check=False, capture_output=True)
    speedup = (new.questions / new.seconds) / (old.questions / old.seconds)
    print(f"embedded speedup: {speedup:.2f}")
    return speedup


def _evaluate(label: str, code: Path, work: Path, data: Path, split: str, count: int) -> EvalRun:
    """`vadar eval` (static-api, oracle modules) run by the code in `code`, in a fresh home."""
    env = dict(os.environ, PYTHONPATH=str(code), VADAR_HOME=str(work / "home"))
    assembled = sorted(load_config().paths.model_cache.glob("*.gguf"))
    if assembled:  # older code assembled the model inside its home; hand it the shared copy
        env["VADAR_EMBEDDED_MODEL_PATH"] = str(assembled[0])
    out = work / "run"
    command = [sys.executable, "-c", CLI, "eval", "--data", str(data.resolve()), "--split", split,
               "--limit", str(count), "--method", "static-api", "--modules", "oracle", "--out", str(out)]
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, cwd=work.parent, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    return EvalRun(label, seconds, len(rows), sum(bool(r["correct"]) for r in rows),
                   sum(int(r["completion_tokens"]) for r in rows), sum(int(r["attempts"]) for r in rows))


def decode_under_load(max_tokens: int = 128, repeats: int = 3) -> float:
    """Decode tokens/s with default settings, idle and then with one core kept busy."""
    idle = _decode_rate(max_tokens, repeats)
    print(f"decode, idle machine:  {idle:5.1f} tokens/s", flush=True)
    with _one_core_busy():
        loaded = _decode_rate(max_tokens, repeats)
    print(f"decode, one core busy: {loaded:5.1f} tokens/s")
    share = loaded / idle
    print(f"decode under load: {share:.0%} of idle")
    return share


def _decode_rate(max_tokens: int, repeats: int) -> float:
    config = load_config()
    with open_endpoint(config, announce=lambda line: print("  " + line, flush=True)) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="none")
        report = run_bench(client, config.llm.model, max_tokens=max_tokens, repeats=repeats)
    rates = [r.decode_tokens_per_s for r in report.cold if r.decode_tokens_per_s]
    return statistics.median(rates)


@contextmanager
def _one_core_busy() -> Iterator[None]:
    """A child spinning on one core; started a second early so the server's thread choice sees it."""
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(1.0)
        yield
    finally:
        child.kill()
        child.wait()
